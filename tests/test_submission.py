"""Submissions: the format round-trips, and every malformed submission is refused clearly.

The corpus below builds each bad submission from a good one, validates it, and checks
that its own problem code is reported with the id or entry at fault, quickly, and that
validation wrote nothing: not into the submission, the working folder or the temp folder.
"""
import gzip
import hashlib
import io
import json
import os
import pickle
import shutil
import signal
import stat
import struct
import subprocess
import tarfile
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from phybench.data.generate import generate
from phybench.data.split import SplitError, SplitReader, make_plan, read_manifest
from phybench.submission import (
    Submission,
    SubmissionError,
    open_submission,
    submission_hash,
    submission_meta,
    validate,
    write_submission,
)
from phybench.tasks import get_task

N = 4
TIME_LIMIT_S = 10  # per validation; a bomb or a FIFO must not get anywhere near it


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def split_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("split") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, N, None), out, progress=False)
    return out


@pytest.fixture(scope="session")
def manifest(split_dir) -> dict:
    return read_manifest(split_dir)


@pytest.fixture(scope="session")
def videos(split_dir) -> list[tuple[str, np.ndarray]]:
    """The ground truth as a model's output: a perfect submission."""
    reader = SplitReader(split_dir)
    return [(row["sample_id"], reader.video(row)) for row in reader.rows()]


@pytest.fixture(scope="session")
def good(tmp_path_factory, manifest, videos) -> Path:
    return write_submission(tmp_path_factory.mktemp("good") / "sub", submission_meta(manifest, "ground-truth"), videos)


def ids(videos) -> list[str]:
    return [sample_id for sample_id, _ in videos]


# ------------------------------------------------------------------ helpers
def snapshot(path: Path) -> dict:
    """Names, types, sizes, mtimes and content hashes under path, links not followed."""
    out = {}
    paths = [path]
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path, followlinks=False):
            paths += [Path(root) / n for n in dirs + files]
    for p in paths:
        st = p.lstat()
        digest = None
        if stat.S_ISREG(st.st_mode):
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            digest = os.readlink(p)
        out[os.fsencode(p)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def checked_validate(sub: Path, split_dir: Path, tmp_path: Path, monkeypatch) -> "object":
    """validate(), asserting it is quick and writes nothing anywhere."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmpdir"
    cwd.mkdir(parents=True)
    tmp.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    before = snapshot(sub) if os.path.lexists(sub) else None
    t0 = time.perf_counter()
    report = validate(sub, split_dir)
    elapsed = time.perf_counter() - t0
    assert elapsed < TIME_LIMIT_S, f"validate took {elapsed:.1f} s"
    assert (snapshot(sub) if os.path.lexists(sub) else None) == before, "validate changed the submission"
    assert list(cwd.iterdir()) == [] and list(tmp.iterdir()) == [], "validate wrote files"
    return report


@pytest.fixture(autouse=True)
def hang_guard():
    """A hang (a FIFO read, a stuck decoder) fails the test instead of the run."""
    def _alarm(*_):
        raise TimeoutError("test hung")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def copy(good: Path, tmp: Path) -> Path:
    dst = tmp / "sub"
    shutil.copytree(good, dst, symlinks=True)
    return dst


def video_path(sub: Path, sample_id: str, ext: str = ".npy") -> Path:
    return sub / "videos" / f"{sample_id}{ext}"


def edit_meta(sub: Path, **changes) -> None:
    meta = json.loads((sub / "submission.json").read_text())
    for key, value in changes.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    (sub / "submission.json").write_text(json.dumps(meta))


def save_npy(path: Path, array: np.ndarray, **kw) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.save(f, array, **kw)


def png_folder(sub: Path, sample_id: str, video: np.ndarray, mode: str | None = None) -> Path:
    folder = sub / "videos" / sample_id
    folder.mkdir(parents=True)
    for t, frame in enumerate(video):
        image = Image.fromarray(frame)
        if mode == "RGBA":
            image = image.convert("RGBA")
        elif mode == "I;16":
            image = Image.fromarray((frame[..., 0].astype(np.uint16) * 257)).convert("I;16")
        image.save(folder / f"{t:05d}.png")
    return folder


def mp4_bytes(video: np.ndarray) -> bytes:
    import imageio.v3 as iio

    return iio.imwrite("<bytes>", video, extension=".mp4", fps=10)


def zip_of(folder: Path | None, out: Path, extra=(), prefix: str = "", method=zipfile.ZIP_DEFLATED) -> Path:
    """A zip of folder's files (names relative to it), then extra (name or ZipInfo, bytes) entries."""
    with zipfile.ZipFile(out, "w", method) as zf:
        if folder is not None:
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    zf.write(p, prefix + p.relative_to(folder).as_posix())
        with warnings.catch_warnings():  # extra entries may repeat a name on purpose
            warnings.simplefilter("ignore", UserWarning)
            for name, data in extra:
                zf.writestr(name, data)
    return out


def tar_of(folder: Path | None, out: Path, extra=(), mode: str = "w") -> Path:
    """A tar of folder's files, then extra (TarInfo, bytes or None) members."""
    with tarfile.open(out, mode) as tf:
        if folder is not None:
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    tf.add(p, p.relative_to(folder).as_posix())
        for info, data in extra:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return out


def patch_zip_field(path: Path, name: bytes, field: str, value: int) -> None:
    """Overwrite a field of `name`'s central directory record (what zipfile trusts)."""
    data = bytearray(path.read_bytes())
    offsets = {"flags": (8, "<H"), "file_size": (24, "<I")}
    at, fmt = offsets[field]
    i = data.find(b"PK\x01\x02")
    while i >= 0:
        n = struct.unpack("<H", data[i + 28 : i + 30])[0]
        if bytes(data[i + 46 : i + 46 + n]) == name:
            struct.pack_into(fmt, data, i + at, value)
        i = data.find(b"PK\x01\x02", i + 4)
    path.write_bytes(bytes(data))


def tar_member(name: str, type_: bytes = tarfile.REGTYPE, size: int = 0, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = type_, size, linkname
    return info


# ------------------------------------------------------------------ good submissions
def test_good_submission_folder_zip_tar(good, split_dir, tmp_path, monkeypatch, videos):
    z = zip_of(good, tmp_path / "sub.zip")
    wrapped = zip_of(good, tmp_path / "wrapped.zip", prefix="my-model/")  # an archive of the folder itself
    t = tar_of(good, tmp_path / "sub.tar")
    tgz = tar_of(good, tmp_path / "sub.tar.gz", mode="w:gz")
    hashes = set()
    for i, sub in enumerate((good, z, wrapped, t, tgz)):
        report = checked_validate(sub, split_dir, tmp_path / str(i), monkeypatch)
        assert report.ok, report.to_text()
        assert report.problems == [] and report.checked_videos == N and report.found_ids == N
        hashes.add(report.submission_hash)
    assert len(hashes) == 1 and None not in hashes
    assert submission_hash(good) == hashes.pop()


def test_submission_hash_matches_the_documented_shell_command(good):
    if not shutil.which("sha256sum") or not shutil.which("find"):
        pytest.skip("needs coreutils")
    out = subprocess.run(
        "find submission.json videos -type f | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum",
        shell=True, cwd=good, capture_output=True, text=True, check=True).stdout.split()[0]
    assert out == submission_hash(good)


@pytest.mark.parametrize("fmt", ["npy", "npz", "png"])
def test_write_then_read_is_lossless(fmt, manifest, videos, split_dir, tmp_path):
    sub = write_submission(tmp_path / fmt, submission_meta(manifest, "gt", notes="ground truth"), videos, fmt=fmt)
    assert validate(sub, split_dir).ok
    with Submission(tmp_path / fmt, manifest=manifest) as opened:
        assert opened.meta["model"] == {"name": "gt"} and opened.ids == ids(videos)
        got = dict(opened.iter_videos())
    for sample_id, video in videos:
        assert got[sample_id].dtype == np.uint8 and np.array_equal(got[sample_id], video)


def test_tar_gz_reads_in_storage_order(good, manifest, videos, tmp_path):
    tgz = tar_of(good, tmp_path / "sub.tgz", mode="w:gz")
    with open_submission(tgz, manifest=manifest) as sub:
        assert sub.kind == "tar"
        assert [i for i, _ in sub.iter_videos(reversed(sub.ids))] == sub.ids  # pairs by id, stored order
        assert np.array_equal(sub.read(videos[2][0]), videos[2][1])


def test_mp4_is_accepted_with_a_warning(good, videos, split_dir, tmp_path, monkeypatch):
    sub = copy(good, tmp_path)
    sample_id, video = videos[0]
    video_path(sub, sample_id).unlink()
    video_path(sub, sample_id, ".mp4").write_bytes(mp4_bytes(video))
    report = checked_validate(sub, split_dir, tmp_path, monkeypatch)
    assert report.ok, report.to_text()
    assert [p.code for p in report.problems] == ["lossy_mp4"] and "moves the scores" in report.problems[0].message
    decoded = Submission(sub).read(sample_id)
    assert decoded.shape == video.shape and np.abs(decoded.astype(int) - video).mean() < 8  # lossy, but close


def test_stray_files_are_warnings(good, split_dir, tmp_path, monkeypatch):
    sub = copy(good, tmp_path)
    (sub / "README.md").write_text("my model")
    (sub / "videos" / ".DS_Store").write_bytes(b"\0")
    report = checked_validate(sub, split_dir, tmp_path, monkeypatch)
    assert report.ok and report.counts() == {"unexpected_file": 1}
    assert report.submission_hash == submission_hash(good)  # only submission.json and videos count


def test_reports_every_problem_at_once(good, videos, split_dir, tmp_path, monkeypatch):
    sub = copy(good, tmp_path)
    edit_meta(sub, split_hash="0" * 64)
    video_path(sub, videos[1][0]).unlink()
    save_npy(video_path(sub, videos[2][0]), videos[2][1].astype(np.float32) / 255)
    report = checked_validate(sub, split_dir, tmp_path, monkeypatch)
    assert not report.ok and report.submission_hash is None
    assert set(report.counts()) == {"split_hash_mismatch", "missing_id", "dtype"}
    text = report.to_text()
    assert "FAILED: 3 error(s)" in text and videos[1][0] in text and videos[2][0] in text


def test_repetitive_problems_are_capped_in_text_but_all_counted(good, videos, split_dir, tmp_path):
    sub = copy(good, tmp_path)
    shutil.rmtree(sub / "videos")
    report = validate(sub, split_dir)
    assert report.counts() == {"missing_id": N}
    text = report.to_text(max_per_code=1)
    assert f"... and {N - 1} more" in text and videos[1][0] not in text
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["counts"] == {"missing_id": N} and len(data["problems"]) == N


def test_bad_split_dir_is_the_callers_error(good, tmp_path):
    with pytest.raises(SplitError):
        validate(good, tmp_path)


def test_meta_raises_when_invalid(good, tmp_path):
    sub = copy(good, tmp_path)
    edit_meta(sub, seeds=None)
    with Submission(sub) as opened, pytest.raises(SubmissionError, match="seeds"):
        opened.meta


def test_write_submission_is_atomic_and_checks_input(manifest, videos, tmp_path):
    meta = submission_meta(manifest, "m")
    out = tmp_path / "out"
    bad = [*videos[:2], (videos[2][0], videos[2][1].astype(np.float32))]
    with pytest.raises(SubmissionError, match="dtype float32"):
        write_submission(out, meta, bad)
    assert list(tmp_path.iterdir()) == []  # no half-written folder, no temp folder
    with pytest.raises(ValueError, match="twice"):
        write_submission(out, meta, [videos[0], videos[0]])
    with pytest.raises(ValueError, match="path"):
        write_submission(out, meta, [("../escape", videos[0][1])])
    with pytest.raises(SubmissionError, match="fps"):
        write_submission(out, {**meta, "fps": "ten"}, videos)
    assert list(tmp_path.iterdir()) == []
    write_submission(out, meta, videos[:1])
    with pytest.raises(FileExistsError):
        write_submission(out, meta, videos[:1])


DOCS = Path(__file__).parent.parent / "docs" / "submission.md"


def test_docs_example_is_schema_valid_and_lists_every_code():
    import re

    import phybench.submission as module
    from phybench.submission import schema_problems

    text = DOCS.read_text()
    example = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))
    assert schema_problems(example) == []
    source = "".join(p.read_text() for p in sorted(Path(module.__file__).parent.glob("*.py")))
    codes = set(re.findall(r'_(?:error|warning)\(\s*"(\w+)"', source)) | set(re.findall(r'add\("(\w+)"', source))
    codes |= {"task_mismatch", "split_mismatch"}  # built as f"{key}_mismatch"
    assert len(codes) > 30
    assert [c for c in sorted(codes) if f"`{c}`" not in text] == []


# ------------------------------------------------------------------ the corpus
# Each case: (name, build(sub_folder_copy, tmp, videos) -> submission path, code, needle).
# `needle` is a text the problem's message must hold: the id or entry at fault, or the fix.
def _rm_meta(sub, tmp, v):
    (sub / "submission.json").unlink()
    return sub


def _meta_text(text: bytes):
    def build(sub, tmp, v):
        (sub / "submission.json").write_bytes(text)
        return sub
    return build


def _meta(**changes):
    def build(sub, tmp, v):
        edit_meta(sub, **changes)
        return sub
    return build


def _meta_schema(sub, tmp, v):
    edit_meta(sub, seeds=None, frames="32", colour="blue")
    return sub


def _meta_duplicate_keys(sub, tmp, v):
    text = (sub / "submission.json").read_text()
    (sub / "submission.json").write_text(text.replace('"fps"', '"task": "uniform", "fps"', 1))
    return sub


def _rm_video(sub, tmp, v):
    video_path(sub, v[3][0]).unlink()
    return sub


def _extra_video(sub, tmp, v):
    save_npy(video_path(sub, "uniform/id-eval/0000099"), v[0][1])
    return sub


def _flat_name(sub, tmp, v):
    video_path(sub, v[0][0]).rename(sub / "videos" / (v[0][0].replace("/", "-") + ".npy"))
    return sub


def _dup_mp4(sub, tmp, v):
    video_path(sub, v[0][0], ".mp4").write_bytes(b"not even an mp4")
    return sub


def _dup_png(sub, tmp, v):
    png_folder(sub, v[1][0], v[1][1][:2])
    return sub


def _replace(transform, ext=".npy", **kw):
    def build(sub, tmp, v):
        sample_id, video = v[0]
        video_path(sub, sample_id).unlink()
        save_npy(video_path(sub, sample_id, ext), transform(video), **kw)
        return sub
    return build


def _float_nan(video):
    x = video.astype(np.float32) / 255
    x[0, 0, 0, 0] = np.nan
    return x


def _npy_bytes(sub, tmp, v, data: bytes, ext=".npy"):
    video_path(sub, v[0][0]).unlink()
    video_path(sub, v[0][0], ext).write_bytes(data)
    return sub


def _truncated_npy(sub, tmp, v):
    data = video_path(sub, v[0][0]).read_bytes()
    return _npy_bytes(sub, tmp, v, data[: len(data) // 2])


def _object_npy(sub, tmp, v):
    video_path(sub, v[0][0]).unlink()
    save_npy(video_path(sub, v[0][0]), np.array([v[0][1], "x"], dtype=object), allow_pickle=True)
    return sub


def _npz(**arrays):
    def build(sub, tmp, v):
        buf = io.BytesIO()
        np.savez_compressed(buf, **{k: (v[0][1] if a is None else a) for k, a in arrays.items()})
        return _npy_bytes(sub, tmp, v, buf.getvalue(), ".npz")
    return build


def _png(mode=None, edit=None):
    def build(sub, tmp, v):
        sample_id, video = v[0]
        video_path(sub, sample_id).unlink()
        folder = png_folder(sub, sample_id, video, mode)
        if edit:
            edit(folder)
        return sub
    return build


def _truncate_frame(folder):
    frame = folder / "00007.png"
    frame.write_bytes(frame.read_bytes()[:200])


def _mp4(make):
    def build(sub, tmp, v):
        return _npy_bytes(sub, tmp, v, make(v[0][1]), ".mp4")
    return build


def _zip(*extra, keep=True):
    def build(sub, tmp, v):
        return zip_of(sub if keep else None, tmp / "bad.zip", extra)
    return build


def _symlink_info(name):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def _zip_bomb(sub, tmp, v):
    """32 MB of zeros in 32 KB, where a 1.5 MB video belongs."""
    video_path(sub, v[0][0]).unlink()
    return zip_of(sub, tmp / "bomb.zip", [(f"videos/{v[0][0]}.npy", bytes(32 << 20))])


def _zip_declared_huge(sub, tmp, v):
    path = zip_of(sub, tmp / "huge.zip", [("videos/padding.bin", b"x")])
    patch_zip_field(path, b"videos/padding.bin", "file_size", 0xFFFFFFF0)
    return path


def _zip_lying_size(sub, tmp, v):
    """Headers claim 1,000 bytes; the data inflates to 32 MB."""
    video_path(sub, v[0][0]).unlink()
    name = f"videos/{v[0][0]}.npy"
    path = zip_of(sub, tmp / "liar.zip", [(name, bytes(32 << 20))])
    patch_zip_field(path, name.encode(), "file_size", 1000)
    return path


def _zip_bad_name(sub, tmp, v):
    path = zip_of(sub, tmp / "names.zip", [("videos/QQQQ.npy", b"x")])
    path.write_bytes(path.read_bytes().replace(b"QQQQ", b"\xff\xfe\xfd\xfc"))
    return path


def _zip_many(sub, tmp, v):
    return zip_of(sub, tmp / "many.zip", [(f"junk/{i}", b"") for i in range(1200)])


def _zip_encrypted(sub, tmp, v):
    name = f"videos/{v[0][0]}.npy"
    path = zip_of(sub, tmp / "locked.zip")
    patch_zip_field(path, name.encode(), "flags", 0x1)
    return path


def _file(name, data):
    def build(sub, tmp, v):
        (tmp / name).write_bytes(data(sub) if callable(data) else data)
        return tmp / name
    return build


def _half(path: Path) -> bytes:
    data = path.read_bytes()
    return data[: len(data) // 2]


def _zip_corrupt_member(sub, tmp, v):
    """One stored member with a flipped byte: its CRC no longer matches."""
    data = video_path(sub, v[0][0]).read_bytes()
    path = zip_of(sub, tmp / "flipped.zip", method=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    raw[raw.find(data) + len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    return path


def _tar(*extra, mode="w"):
    def build(sub, tmp, v):
        return tar_of(sub, tmp / ("bad.tar.gz" if "gz" in mode else "bad.tar"), extra, mode)
    return build


def _tar_pax_bomb(sub, tmp, v):
    """A pax header that says it is 200 MB long (and is): tarfile would read it whole."""
    header = tar_member("././@PaxHeader", tarfile.XHDTYPE, 200_000_000).tobuf(tarfile.USTAR_FORMAT)
    path = tmp / "pax.tar.gz"
    path.write_bytes(gzip.compress(header + bytes(200_000_000), 1))
    return path


def _tar_declared_huge(sub, tmp, v):
    header = tar_member(f"videos/{v[0][0]}.npy", size=10**10).tobuf(tarfile.GNU_FORMAT)
    path = tmp / "huge.tar.gz"
    path.write_bytes(gzip.compress(header + bytes(4096)))
    return path


def _folder_symlink(sub, tmp, v):
    target = video_path(sub, v[0][0])
    target.rename(tmp / "elsewhere.npy")
    target.symlink_to(tmp / "elsewhere.npy")
    return sub


def _folder_symlinked_videos(sub, tmp, v):
    (sub / "videos").rename(tmp / "videos-elsewhere")
    (sub / "videos").symlink_to(tmp / "videos-elsewhere", target_is_directory=True)
    return sub


def _folder_fifo(sub, tmp, v):
    video_path(sub, v[0][0]).unlink()
    os.mkfifo(video_path(sub, v[0][0]))
    return sub


def _folder_bad_name(sub, tmp, v):
    name = os.fsencode(sub / "videos") + b"/\xff\xfe.npy"
    with open(name, "wb") as f:
        f.write(b"x")
    return sub


ID0 = "uniform/id-eval/0000000"  # asserted against the split in test_corpus_ids
ID3 = "uniform/id-eval/0000003"
CORPUS = [
    ("no_submission_json", _rm_meta, "missing_submission_json", "submission.json"),
    ("meta_truncated_json", _meta_text(b'{"model": {"name": '), "invalid_json", "not valid JSON"),
    ("meta_not_utf8", _meta_text(b'{"notes": "\xff\xfe"}'), "invalid_json", "UTF-8"),
    ("meta_nan", _meta_text(b'{"fps": NaN}'), "invalid_json", "NaN"),
    ("meta_duplicate_keys", _meta_duplicate_keys, "invalid_json", "duplicate key"),
    ("meta_schema", _meta_schema, "schema", "submission.json at .frames: '32' is not of type 'integer'"),
    ("meta_wrong_split_hash", _meta(split_hash="ab" * 32), "split_hash_mismatch", "phybench generate"),
    ("meta_wrong_task", _meta(task="parabola"), "task_mismatch", "parabola"),
    ("meta_frames_without_condition", _meta(frames=29), "frames_mismatch", "condition frames"),
    ("meta_fps", _meta(fps=24), "fps_mismatch", "10 fps"),
    ("meta_condition_frames", _meta(condition_frames=1), "condition_frames_mismatch", "first 3 frames"),
    ("missing_id", _rm_video, "missing_id", ID3),
    ("extra_id", _extra_video, "extra_id", "uniform/id-eval/0000099"),
    ("flat_file_name", _flat_name, "extra_id", f"did you mean '{ID0}'"),
    ("duplicate_npy_mp4", _dup_mp4, "duplicate_id", f"videos/{ID0}.mp4"),
    ("duplicate_npy_png", _dup_png, "duplicate_id", "uniform/id-eval/0000001/"),
    ("shape_no_colour_axis", _replace(lambda x: x[..., 0]), "shape", ID0),
    ("shape_channels_first", _replace(lambda x: x.transpose(0, 3, 1, 2)), "shape", "channels-first"),
    ("frame_count_generated_only", _replace(lambda x: x[3:]), "frame_count", "condition frames"),
    ("resolution", _replace(lambda x: x[:, ::2, ::2]), "resolution", "64x64"),
    ("float_with_nan", _replace(_float_nan), "dtype", "(x*255).round().clip(0,255).astype(np.uint8)"),
    ("int64", _replace(lambda x: x.astype(np.int64)), "dtype", "dtype int64"),
    ("truncated_npy", _truncated_npy, "truncated", ID0),
    ("pickled_object_npy", _object_npy, "pickled_array", ID0),
    ("raw_pickle_as_npy", lambda s, t, v: _npy_bytes(s, t, v, pickle.dumps(v[0][1])), "pickled_array", "pickle"),
    ("text_as_npy", lambda s, t, v: _npy_bytes(s, t, v, b"hello, world\n"), "not_npy", ID0),
    ("npz_two_arrays", _npz(video=None, extra=np.zeros(3)), "npz_members", "extra.npy"),
    ("npz_garbage", lambda s, t, v: _npy_bytes(s, t, v, b"PK\x03\x04garbage", ".npz"), "unreadable", ID0),
    ("png_rgba", _png("RGBA"), "png_format", "RGBA 8-bit"),
    ("png_16bit_grey", _png("I;16"), "png_format", "greyscale 16-bit"),
    ("png_gap", _png(edit=lambda f: (f / "00005.png").unlink()), "bad_frame_names", "missing 00005.png"),
    ("png_truncated_frame", _png(edit=_truncate_frame), "unreadable", "00007.png"),
    ("mp4_garbage", _mp4(lambda x: b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8), "unreadable", ID0),
    ("mp4_truncated", _mp4(lambda x: mp4_bytes(x)[:3000]), "unreadable", ID0),
    ("unknown_video_format", lambda s, t, v: _npy_bytes(s, t, v, b"RIFF", ".avi"), "unknown_video_file", ".avi"),
    ("zip_slip", _zip(("../../evil.npy", b"x")), "unsafe_path", "../../evil.npy"),
    ("zip_absolute_path", _zip(("/tmp/evil.npy", b"x")), "unsafe_path", "absolute"),
    ("zip_backslash_path", _zip(("..\\..\\evil.npy", b"x")), "unsafe_path", "backslash"),
    ("zip_symlink", _zip((_symlink_info("videos/link.npy"), b"/etc/passwd")), "link", "videos/link.npy"),
    ("zip_bomb", _zip_bomb, "entry_too_large", ID0),
    ("zip_declared_huge", _zip_declared_huge, "too_large", "videos/padding.bin"),
    ("zip_lying_size", _zip_lying_size, "entry_unreadable", ID0),
    ("zip_duplicate_entry", _zip(("submission.json", b"{}")), "duplicate_entry", "submission.json"),
    ("zip_non_utf8_name", _zip_bad_name, "bad_name_encoding", r"\xff"),
    ("zip_too_many_entries", _zip_many, "too_many_entries", "more than"),
    ("zip_encrypted_entry", _zip_encrypted, "encrypted_entry", ID0),
    ("zip_garbage", _file("sub.zip", b"PK\x05\x06 not really a zip"), "archive_unreadable", "sub.zip"),
    ("zip_truncated", _file("cut.zip", lambda s: _half(zip_of(s, s.parent / "whole.zip"))),
     "archive_unreadable", "cut.zip"),
    ("zip_corrupt_member", _zip_corrupt_member, "entry_unreadable", ID0),
    ("tar_symlink", _tar((tar_member("videos/l.npy", tarfile.SYMTYPE, linkname="/etc/passwd"), None)),
     "link", "videos/l.npy"),
    ("tar_hardlink", _tar((tar_member("videos/h.npy", tarfile.LNKTYPE, linkname="submission.json"), None)),
     "link", "hardlink"),
    ("tar_fifo", _tar((tar_member("videos/f.npy", tarfile.FIFOTYPE), None)), "special_file", "videos/f.npy"),
    ("tar_device", _tar((tar_member("videos/d.npy", tarfile.CHRTYPE), None)), "special_file", "videos/d.npy"),
    ("tar_dotdot", _tar((tar_member("videos/../../evil.npy", size=1), b"x")), "unsafe_path", "'..'"),
    ("tar_gz_declared_huge", _tar_declared_huge, "too_large", ID0),
    ("tar_gz_pax_bomb", _tar_pax_bomb, "too_large", "decompression bomb"),
    ("tar_truncated", _file("cut.tar", lambda s: _half(tar_of(s, s.parent / "whole.tar"))),
     "archive_unreadable", "cut short"),
    ("folder_symlink", _folder_symlink, "link", f"videos/{ID0}.npy"),
    ("folder_symlinked_videos_dir", _folder_symlinked_videos, "link", "path 'videos' is a symlink"),
    ("folder_fifo", _folder_fifo, "special_file", f"videos/{ID0}.npy"),
    ("folder_non_utf8_name", _folder_bad_name, "bad_name_encoding", r"\xff\xfe.npy"),
    ("not_a_container", _file("sub.txt", b"hello"), "unsupported_container", "sub.txt"),
    ("not_found", lambda s, t, v: t / "nowhere", "not_found", "nowhere"),
]


def test_corpus_ids(videos):
    assert ids(videos)[0] == ID0 and ids(videos)[3] == ID3
    assert len(CORPUS) >= 25 and len({c[0] for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("name,build,code,needle", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_is_refused(name, build, code, needle, good, videos, split_dir, tmp_path, monkeypatch):
    work = tmp_path / "build"
    work.mkdir()
    sub = build(copy(good, work), work, videos)
    report = checked_validate(sub, split_dir, tmp_path, monkeypatch)
    assert not report.ok and report.submission_hash is None
    hits = [p for p in report.errors if p.code == code]
    assert hits, f"no {code!r} in:\n{report.to_text()}"
    assert any(needle in p.message for p in hits), f"{needle!r} not in: {[p.message for p in hits]}"
    assert all(p.message and p.code for p in report.problems)


def test_archive_readers_load_nothing_but_the_standard_library_and_numpy():
    """The capped readers are the security boundary: reviewable alone, so they import alone."""
    import subprocess
    import sys

    code = (
        "import sys; before = set(sys.modules); import phybench.submission.archive; "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert "phybench.submission.archive" in loaded
    assert not any(m.startswith("phybench.tasks") for m in loaded)
    ours = {m for m in loaded if m.split(".")[0] == "phybench"}
    assert ours == {"phybench", "phybench._version", "phybench.problems", "phybench.submission", "phybench.submission.archive"}, ours
    stdlib = set(sys.stdlib_module_names)
    foreign = sorted(m for m in loaded if m.split(".")[0] not in stdlib | {"phybench", "numpy"} and not m.startswith("_"))
    assert foreign == [], foreign

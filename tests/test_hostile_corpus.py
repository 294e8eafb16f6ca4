"""The hostile-input corpus (issue 27): every entry point, each refusal one line with a stable code.

Each case builds one hostile input from good fixtures and runs the command in-process
(`phybench.cli.main`).  It must exit 2 with exactly one stderr line
``phybench CMD: error [CODE]: ...`` (CODE as listed in docs/submission.md), no traceback,
and leave every folder as it was: the case's own (inputs and outputs) and the shared
fixtures (compared before and after).  Entry points: submissions (score), pack inputs,
HDF5 imports, local split manifests (score, verify, export-inputs, pack), results files,
output paths, model plug-ins (run) and model names.  Fault tests at the end: SIGKILL
mid-write, a read-only target, a full disk (injected ENOSPC), stray worker processes.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hostile import (  # noqa: E402
    Ctx, FullDisk, check_refused, edit_json, mp4_bytes, npy_bytes, npy_header_only, npz_bytes, png_bytes, real_png,
    tree,
)

from phybench.cli import main  # noqa: E402

HDF5 = Path(__file__).parent / "fixtures" / "phyworld" / "uniform_128.hdf5"
N = 3


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan, read_manifest
    from phybench.submission import submission_meta, write_submission
    from phybench.submission.inputs import export_inputs
    from phybench.tasks import get_task

    root = tmp_path_factory.mktemp("corpus")
    split = root / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, N, None), split, progress=False)
    reader = SplitReader(split)
    videos = {row["sample_id"]: reader.video(row) for row in reader.rows()}
    ids = list(videos)
    sub = write_submission(root / "sub", submission_meta(read_manifest(split), "gt"), videos.items(), fmt="npz")
    inputs = export_inputs(split, root / "inputs", progress=False)
    gen = root / "gen"
    for sid, video in videos.items():
        (gen / sid).parent.mkdir(parents=True, exist_ok=True)
        np.save(f"{gen / sid}.npy", video)
    return dict(root=root, split=split, sub=sub, inputs=inputs, gen=gen, ids=ids, videos=videos)


@pytest.fixture
def ctx(shared, tmp_path):
    work = tmp_path / "case"
    work.mkdir()
    return Ctx(work, shared["split"], shared["sub"], shared["inputs"], shared["gen"], shared["ids"], shared["videos"])


def refused(ctx: Ctx, capsys, argv: list[str], code: str, *, allowed: set[str] = frozenset(),
            allowed_under: tuple[str, ...] = ()) -> str:
    """Run argv; one line with `code`, exit 2, nothing written anywhere (the paths in `allowed`, and
    under `allowed_under`, may appear)."""
    shared = [ctx.split, ctx.sub, ctx.inputs, ctx.gen]
    before = tree(ctx.tmp, *shared)
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err
    line = check_refused(rc, err, code)
    after = tree(ctx.tmp, *shared)
    new = {p for p in after if p not in before and p not in allowed and not p.startswith(allowed_under)}
    changed = {p for p in before if p not in after or (after[p] != before[p] and after[p][0] != "dir")}
    assert not new and not changed, (sorted(new)[:5], sorted(changed)[:5])
    return line


# ================================================================== 1. submissions (score)
def _score(ctx: Ctx, sub: Path) -> list[str]:
    return ["score", str(sub), "--data", str(ctx.split), "--metrics", "ssim", "--out", str(ctx.tmp / "r.json"),
            "--details", str(ctx.tmp / "d.parquet"), "--quiet"]


def meta(fn):
    def build(ctx):
        sub = ctx.copy(ctx.sub)
        edit_json(sub / "submission.json", fn)
        return _score(ctx, sub)
    return build


def meta_text(text: str | bytes):
    def build(ctx):
        sub = ctx.copy(ctx.sub)
        (sub / "submission.json").write_bytes(text.encode() if isinstance(text, str) else text)
        return _score(ctx, sub)
    return build


def setkey(key, value):
    def fn(doc):
        doc[key] = value
        return doc
    return fn


def name(value):
    def fn(doc):
        doc["model"]["name"] = value
        return doc
    return fn


def video(write, k: int = 0):
    """Replace the k-th video: write(ctx, path_without_suffix, original)."""
    def build(ctx):
        sub = ctx.copy(ctx.sub)
        path = ctx.video_file(sub, k)
        path.unlink()
        write(ctx, path.with_suffix(""), ctx.videos[ctx.ids[k]])
        return _score(ctx, sub)
    return build


def sub_edit(fn):
    def build(ctx):
        sub = ctx.copy(ctx.sub)
        fn(ctx, sub)
        return _score(ctx, sub)
    return build


def as_npy(transform, **kw):
    return lambda ctx, p, v: Path(f"{p}.npy").write_bytes(npy_bytes(transform(v), **kw))


def raw(suffix: str, data: bytes):
    return lambda ctx, p, v: Path(f"{p}{suffix}").write_bytes(data)


def png_folder(frames):
    def write(ctx, p, v):
        p.mkdir()
        for t, data in enumerate(frames(v)):
            (p / f"{t:05d}.png").write_bytes(data)
    return write


def archive(kind: str, add):
    """A zip or tar of the good submission, with `add(handle, ctx)` putting in the hostile part."""
    def build(ctx):
        path = ctx.tmp / f"sub.{kind}"
        files = sorted(p for p in ctx.sub.rglob("*") if p.is_file())
        if kind == "zip":
            with zipfile.ZipFile(path, "w") as z:
                for f in files:
                    z.write(f, f.relative_to(ctx.sub).as_posix())
                add(z, ctx)
        else:
            with tarfile.open(path, "w") as t:
                for f in files:
                    t.add(f, f.relative_to(ctx.sub).as_posix())
                add(t, ctx)
        return _score(ctx, path)
    return build


def tar_member(name: str, kind: bytes, linkname: str = "", data: bytes = b""):
    def add(t, ctx):
        import io

        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.size = kind, linkname, len(data)
        t.addfile(info, io.BytesIO(data) if data else None)
    return add


def zip_member(name: str, data: bytes = b"x", mode: int | None = None, flags: int = 0):
    def add(z, ctx):
        info = zipfile.ZipInfo(name)
        if mode is not None:
            info.external_attr = mode << 16
        z.writestr(info, data)
        if flags:
            z.infolist()[-1].flag_bits |= flags
    return add


def cut(suffix: str, keep: float):
    def build(ctx):
        good = ctx.tmp / f"good{suffix}"
        if suffix == ".zip":
            shutil.make_archive(str(good.with_suffix("")), "zip", ctx.sub)
        else:
            with tarfile.open(good, "w:gz" if suffix.endswith("gz") else "w") as t:
                t.add(ctx.sub, ".")
        path = ctx.tmp / f"cut{suffix}"
        data = good.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])
        good.unlink()
        return _score(ctx, path)
    return build


def tar_cut_at_member_end(ctx):
    good = ctx.tmp / "good.tar"
    with tarfile.open(good, "w") as t:
        t.add(ctx.sub, ".")
    with tarfile.open(good) as t:
        m = [m for m in t.getmembers() if m.isfile()][1]
    end = m.offset_data + (m.size + 511) // 512 * 512  # a cut right where the next header belongs
    (ctx.tmp / "cut.tar").write_bytes(good.read_bytes()[:end])
    good.unlink()
    return _score(ctx, ctx.tmp / "cut.tar")


def nested(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def _hardlink(ctx, sub):
    other = ctx.tmp / "elsewhere.npz"
    shutil.copy(ctx.video_file(sub, 0), other)
    ctx.video_file(sub, 0).unlink()
    os.link(other, ctx.video_file(sub, 0))


def _symlink(ctx, sub):
    ctx.video_file(sub, 0).unlink()
    ctx.video_file(sub, 0).symlink_to(ctx.video_file(ctx.sub, 0))


def _fifo(ctx, sub):
    ctx.video_file(sub, 0).unlink()
    os.mkfifo(ctx.video_file(sub, 0))


def _bad_name(ctx, sub):
    (sub / "videos" / os.fsdecode(b"bad-\xff.npz")).write_bytes(b"x")


def _backslash(ctx, sub):
    (sub / "videos" / "uniform\\x.npz").write_bytes(b"x")


def _zip_many(ctx):
    path = ctx.tmp / "many.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(1200):  # the split can need N * (frames + 2) + 1000 entries
            z.writestr(f"e{i}", b"")
    return _score(ctx, path)


def _huge_meta(ctx):
    sub = ctx.copy(ctx.sub)
    edit_json(sub / "submission.json", lambda d: {**d, "notes": "x" * (2 << 20)})
    return _score(ctx, sub)


def _sparse(suffix: str, size: int):
    def write(ctx, p, v):
        with open(f"{p}{suffix}", "wb") as f:
            f.truncate(size)
    return write


SUBMISSIONS = [
    ("no-submission-json", sub_edit(lambda c, s: (s / "submission.json").unlink()), "missing_submission_json"),
    ("json-garbage", meta_text("{not json"), "invalid_json"),
    ("json-not-utf8", meta_text(b'{"a": "\xff"}'), "invalid_json"),
    ("json-lone-surrogate", meta(lambda d: json.dumps({**d, "notes": "X"}).replace('"X"', '"\\ud800"')), "invalid_json"),
    ("json-nan", meta(lambda d: json.dumps({**d, "fps": "X"}).replace('"X"', "NaN")), "invalid_json"),
    ("json-infinity", meta(lambda d: json.dumps({**d, "fps": "X"}).replace('"X"', "Infinity")), "invalid_json"),
    ("json-duplicate-key", meta(lambda d: json.dumps(d).replace('"fps"', '"task": "uniform", "fps"', 1)),
     "invalid_json"),
    ("json-deeply-nested", meta_text(nested()), "invalid_json"),
    ("json-nested-in-extra", meta(lambda d: json.dumps({**d, "extra": "X"}).replace('"X"', nested(50_000))),
     "invalid_json"),
    ("json-a-list", meta_text("[1, 2]"), "schema"),
    ("json-too-large", _huge_meta, "entry_too_large"),
    ("schema-no-model", meta(lambda d: {k: v for k, v in d.items() if k != "model"}), "schema"),
    ("schema-unknown-field", meta(setkey("colour", "blue")), "schema"),
    ("schema-negative-seed", meta(setkey("seeds", [-1])), "schema"),
    ("schema-frames-string", meta(setkey("frames", "32")), "schema"),
    ("schema-model-name-number", meta(name(7)), "schema"),
    ("task-mismatch", meta(setkey("task", "parabola")), "task_mismatch"),
    ("split-mismatch", meta(setkey("split", "ood-eval")), "split_mismatch"),
    ("split-hash-mismatch", meta(setkey("split_hash", "0" * 64)), "split_hash_mismatch"),
    ("frames-mismatch", meta(setkey("frames", 16)), "frames_mismatch"),
    ("resolution-mismatch", meta(setkey("resolution", 256)), "resolution_mismatch"),
    ("condition-frames-mismatch", meta(setkey("condition_frames", 1)), "condition_frames_mismatch"),
    ("fps-mismatch", meta(setkey("fps", 24)), "fps_mismatch"),
    ("name-escape", meta(name("evil\x1b[2J")), "model_name"),
    ("name-bell", meta(name("ding\x07")), "model_name"),
    ("name-rlo", meta(name("abc\u202egnp.exe")), "model_name"),
    ("name-newline", meta(name("two\nlines")), "model_name"),
    ("name-nul", meta(name("a\x00b")), "model_name"),
    ("missing-video", sub_edit(lambda c, s: c.video_file(s, 1).unlink()), "missing_id"),
    ("extra-video", sub_edit(lambda c, s: shutil.copy(c.video_file(s, 0), s / "videos" / "uniform" / "id-eval" /
                                                         "9999999.npz")), "extra_id"),
    ("two-videos-one-id", sub_edit(lambda c, s: c.video_file(s, 0).with_suffix(".npy").write_bytes(
        npy_bytes(c.videos[c.ids[0]]))), "duplicate_id"),
    ("unknown-file-in-videos", sub_edit(lambda c, s: (s / "videos" / "notes.txt").write_text("x")),
     "unknown_video_file"),
    ("pickled-npy", video(lambda c, p, v: Path(f"{p}.npy").write_bytes(b"\x80\x04K\x01.")), "pickled_array"),
    ("object-array", video(as_npy(lambda v: np.array([{"x": 1}], dtype=object), allow_pickle=True)),
     "pickled_array"),
    ("not-npy", video(raw(".npy", b"hello world, not an array")), "not_npy"),
    ("npy-negative-size", video(raw(".npy", npy_header_only((-1, 128, 128, 3)))), "not_npy"),
    ("npy-1e8-frames", video(raw(".npy", npy_header_only((10 ** 8, 128, 128, 3)))), "frame_count"),
    ("npy-truncated", video(lambda c, p, v: Path(f"{p}.npy").write_bytes(npy_bytes(v)[:-1000])), "truncated"),
    ("float64", video(as_npy(lambda v: v / 255.0)), "dtype"),
    ("int64", video(as_npy(lambda v: v.astype(np.int64))), "dtype"),
    ("bool", video(as_npy(lambda v: v > 0)), "dtype"),
    ("channels-first", video(as_npy(lambda v: v.transpose(0, 3, 1, 2))), "shape"),
    ("greyscale", video(as_npy(lambda v: v[..., 0])), "shape"),
    ("batch-of-one", video(as_npy(lambda v: v[None])), "shape"),
    ("too-few-frames", video(as_npy(lambda v: v[:20])), "frame_count"),
    ("generated-frames-only", video(as_npy(lambda v: v[3:])), "frame_count"),
    ("wrong-resolution", video(as_npy(lambda v: v[:, ::2, ::2])), "resolution"),
    ("npz-two-arrays", video(lambda c, p, v: Path(f"{p}.npz").write_bytes(npz_bytes(video=v, more=v))),
     "npz_members"),
    ("npz-garbage", video(raw(".npz", b"PK\x03\x04 broken")), "unreadable"),
    ("npz-bomb", video(lambda c, p, v: Path(f"{p}.npz").write_bytes(
        npz_bytes(video=np.zeros((400, 128, 128, 3), np.uint8)))), "entry_too_large"),
    ("npz-pickled-inside", video(lambda c, p, v: Path(f"{p}.npz").write_bytes(_npz_with(b"\x80\x04K\x01."))),
     "pickled_array"),
    ("mp4-garbage", video(raw(".mp4", b"\x00\x00\x00\x18ftypmp42 not really")), "unreadable"),
    ("mp4-2048-px-bomb", video(lambda c, p, v: Path(f"{p}.mp4").write_bytes(mp4_bytes(2048, 2))), "entry_too_large"),
    ("mp4-five-frames", video(lambda c, p, v: Path(f"{p}.mp4").write_bytes(mp4_bytes(128, 5))), "frame_count"),
    ("png-two-frames", video(png_folder(lambda v: [real_png(f) for f in v[:2]])), "frame_count"),
    ("png-misnamed", video(lambda c, p, v: (p.mkdir(), (p / "frame1.png").write_bytes(real_png(v[0])))),
     "bad_frame_names"),
    ("png-16-bit", video(png_folder(lambda v: [png_bytes(128, 128, depth=16)] * 32)), "png_format"),
    ("png-palette", video(png_folder(lambda v: [png_bytes(128, 128, colour=3)] * 32)), "png_format"),
    ("png-40000-px", video(png_folder(lambda v: [png_bytes(40000, 40000)] * 32)), "resolution"),
    ("png-not-png", video(png_folder(lambda v: [b"GIF89a"] * 32)), "unreadable"),
    ("png-corrupt-data", video(png_folder(lambda v: [png_bytes(128, 128, idat=b"junk")] * 32)), "unreadable"),
    ("video-file-too-large", video(_sparse(".npy", 20 << 20)), "entry_too_large"),
    ("submission-too-large", video(_sparse(".npy", 200 << 20)), "too_large"),
    ("symlink-video", sub_edit(_symlink), "link"),
    ("hard-link-video", sub_edit(_hardlink), "link"),
    ("fifo-video", sub_edit(_fifo), "special_file"),
    ("name-not-utf8", sub_edit(_bad_name), "bad_name_encoding"),
    ("name-backslash", sub_edit(_backslash), "unsafe_path"),
    ("not-found", lambda c: _score(c, c.tmp / "nothing-here"), "not_found"),
    ("not-a-container", lambda c: (c.tmp.joinpath("sub.rar").write_bytes(b"Rar!"), _score(c, c.tmp / "sub.rar"))[1],
     "unsupported_container"),
    ("zip-slip", archive("zip", zip_member("../../evil.txt")), "unsafe_path"),
    ("zip-absolute", archive("zip", zip_member("/etc/evil")), "unsafe_path"),
    ("zip-symlink", archive("zip", zip_member("videos/link.npz", b"/etc/passwd", mode=0o120777)), "link"),
    ("zip-device", archive("zip", zip_member("videos/dev.npz", b"", mode=0o020666)), "special_file"),
    ("zip-duplicate", archive("zip", lambda z, c: _dup_zip(z)), "duplicate_entry"),
    ("zip-encrypted", archive("zip", zip_member("videos/enc.npz", b"x", flags=0x1)), "encrypted_entry"),
    ("zip-too-many-entries", _zip_many, "too_many_entries"),
    ("zip-cut", cut(".zip", 0.5), "archive_unreadable"),
    ("zip-garbage", lambda c: (c.tmp.joinpath("s.zip").write_bytes(b"PK garbage"), _score(c, c.tmp / "s.zip"))[1],
     "archive_unreadable"),
    ("tar-slip", archive("tar", tar_member("../evil.txt", tarfile.REGTYPE, data=b"x")), "unsafe_path"),
    ("tar-absolute", archive("tar", tar_member("/tmp/evil.txt", tarfile.REGTYPE, data=b"x")), "unsafe_path"),
    ("tar-symlink", archive("tar", tar_member("videos/l.npz", tarfile.SYMTYPE, "/etc/passwd")), "link"),
    ("tar-hardlink", archive("tar", tar_member("videos/h.npz", tarfile.LNKTYPE, "submission.json")), "link"),
    ("tar-device", archive("tar", tar_member("videos/d.npz", tarfile.CHRTYPE)), "special_file"),
    ("tar-fifo", archive("tar", tar_member("videos/f.npz", tarfile.FIFOTYPE)), "special_file"),
    ("tar-cut-mid-member", cut(".tar", 0.5), "archive_unreadable"),
    ("tar-cut-at-member-end", tar_cut_at_member_end, "archive_unreadable"),
    ("tar-gz-cut", cut(".tar.gz", 0.5), "archive_unreadable"),
    ("tar-garbage", lambda c: (c.tmp.joinpath("s.tar").write_bytes(b"x" * 1000), _score(c, c.tmp / "s.tar"))[1],
     "archive_unreadable"),
]


def _npz_with(member: bytes) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("video.npy", member)
    return buf.getvalue()


def _dup_zip(z):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.writestr("submission.json", b"{}")


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in SUBMISSIONS])
def test_submission(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


# ================================================================== 2. pack inputs
def _pack(ctx: Ctx, gen: Path, inputs: Path | None = None, name: str = "m", out: Path | None = None) -> list[str]:
    return ["pack", str(gen), "--inputs", str(inputs or ctx.inputs), "--out", str(out or ctx.tmp / "out" / "sub"),
            "--name", name, "--quiet"]


def gen_edit(fn):
    def build(ctx):
        gen = ctx.copy(ctx.gen)
        fn(ctx, gen)
        return _pack(ctx, gen)
    return build


def gen_video(write, k: int = 1):
    """Replace the k-th generated video (not the first: the check must hold past it)."""
    def fn(ctx, gen):
        path = gen / f"{ctx.ids[k]}.npy"
        path.unlink()
        write(ctx, gen / ctx.ids[k], ctx.videos[ctx.ids[k]])
    return gen_edit(fn)


def inputs_edit(fn):
    def build(ctx):
        inputs = ctx.copy(ctx.inputs)
        fn(ctx, inputs)
        return _pack(ctx, ctx.gen, inputs)
    return build


def _gen_symlink(ctx, gen):
    path = gen / f"{ctx.ids[1]}.npy"
    path.unlink()
    path.symlink_to(ctx.gen / f"{ctx.ids[1]}.npy")


def _gen_fifo(ctx, gen):
    path = gen / f"{ctx.ids[1]}.npy"
    path.unlink()
    os.mkfifo(path)


def _inputs_ids_differ(ctx, inputs):
    edit_json(inputs / "manifest.json", lambda d: {**d, "sample_ids": d["sample_ids"][::-1]})


PACK = [
    ("missing-video", gen_edit(lambda c, g: (g / f"{c.ids[2]}.npy").unlink()), "missing_id"),
    ("unknown-id", gen_edit(lambda c, g: shutil.copy(g / f"{c.ids[0]}.npy", g / "uniform" / "id-eval" / "777.npy")),
     "extra_id"),
    ("unknown-id-png-folder", gen_edit(lambda c, g: ((g / "stray").mkdir(), (g / "stray" / "00000.png").write_bytes(
        real_png(c.videos[c.ids[0]][0])))), "extra_id"),
    ("flat-name", gen_edit(lambda c, g: (g / f"{c.ids[1]}.npy").rename(g / (c.ids[1].replace("/", "-") + ".npy"))),
     "extra_id"),
    ("symlink", gen_edit(_gen_symlink), "link"),
    ("fifo", gen_edit(_gen_fifo), "special_file"),
    ("two-videos-one-id", gen_edit(lambda c, g: shutil.copy(g / f"{c.ids[1]}.npy", g / f"{c.ids[1]}.mp4")),
     "duplicate_id"),
    ("pickled", gen_video(lambda c, p, v: Path(f"{p}.npy").write_bytes(b"\x80\x04K\x01.")), "pickled_array"),
    ("object-array", gen_video(as_npy(lambda v: np.array([{"x": 1}], dtype=object), allow_pickle=True)),
     "pickled_array"),
    ("garbage-npy", gen_video(raw(".npy", b"nope")), "not_npy"),
    ("npy-1e8-frames", gen_video(raw(".npy", npy_header_only((10 ** 8, 128, 128, 3)))), "truncated"),
    ("npy-truncated", gen_video(lambda c, p, v: Path(f"{p}.npy").write_bytes(npy_bytes(v)[:-100])), "truncated"),
    ("float32", gen_video(as_npy(lambda v: v.astype(np.float32) / 255)), "dtype"),
    ("channels-first", gen_video(as_npy(lambda v: v.transpose(0, 3, 1, 2))), "shape"),
    ("greyscale", gen_video(as_npy(lambda v: v[..., 0])), "shape"),
    ("wrong-resolution", gen_video(as_npy(lambda v: v[:, ::2, ::2])), "resolution"),
    ("wrong-frame-count", gen_video(as_npy(lambda v: v[:10])), "frame_count"),
    ("npz-two-arrays", gen_video(lambda c, p, v: Path(f"{p}.npz").write_bytes(npz_bytes(a=v, b=v))), "npz_members"),
    ("npz-bomb", gen_video(lambda c, p, v: Path(f"{p}.npz").write_bytes(
        npz_bytes(video=np.zeros((400, 128, 128, 3), np.uint8)))), "entry_too_large"),
    ("npz-garbage", gen_video(raw(".npz", b"PK\x03\x04")), "unreadable"),
    ("npy-huge-file", gen_video(_sparse(".npy", 1 << 30)), "entry_too_large"),
    ("mp4-huge-file", gen_video(_sparse(".mp4", 1 << 30)), "entry_too_large"),
    ("mp4-garbage", gen_video(raw(".mp4", b"\x00\x00\x00\x18ftypmp42")), "unreadable"),
    ("mp4-2048-px-bomb", gen_video(lambda c, p, v: Path(f"{p}.mp4").write_bytes(mp4_bytes(2048, 2))),
     "entry_too_large"),
    ("mp4-five-frames", gen_video(lambda c, p, v: Path(f"{p}.mp4").write_bytes(mp4_bytes(128, 5))), "frame_count"),
    ("png-40000-px", gen_video(png_folder(lambda v: [png_bytes(40000, 40000)] * 32)), "resolution"),
    ("png-16-bit", gen_video(png_folder(lambda v: [png_bytes(128, 128, depth=16)] * 32)), "png_format"),
    ("png-not-png", gen_video(png_folder(lambda v: [b"GIF89a"] * 32)), "unreadable"),
    ("png-corrupt", gen_video(png_folder(lambda v: [png_bytes(128, 128, idat=b"junk")] * 32)), "unreadable"),
    ("png-too-few", gen_video(png_folder(lambda v: [real_png(f) for f in v[:5]])), "frame_count"),
    ("png-gap", gen_video(lambda c, p, v: (p.mkdir(), (p / "00000.png").write_bytes(real_png(v[0])),
                                          (p / "00002.png").write_bytes(real_png(v[1])))), "bad_frame_names"),
    ("png-frame-is-link", gen_video(lambda c, p, v: (p.mkdir(), *[(p / f"{t:05d}.png").symlink_to("/etc/passwd")
                                                                   for t in range(32)])), "link"),
    ("generated-not-a-folder", lambda c: (c.tmp.joinpath("g").write_text("x"), _pack(c, c.tmp / "g"))[1],
     "not_found"),
    ("generated-a-link", lambda c: ((c.tmp / "g").symlink_to(c.gen), _pack(c, c.tmp / "g"))[1], "not_found"),
    ("inputs-missing", lambda c: _pack(c, c.gen, c.tmp / "nothing"), "inputs_invalid"),
    ("inputs-not-json", inputs_edit(lambda c, i: (i / "manifest.json").write_text("{")), "inputs_invalid"),
    ("inputs-nested", inputs_edit(lambda c, i: (i / "manifest.json").write_text(nested())), "inputs_invalid"),
    ("inputs-wrong-kind", inputs_edit(lambda c, i: edit_json(i / "manifest.json", setkey("kind", "x"))),
     "inputs_invalid"),
    ("inputs-frames-string", inputs_edit(lambda c, i: edit_json(i / "manifest.json", setkey("frames", "32"))),
     "inputs_invalid"),
    ("inputs-ids-not-list", inputs_edit(lambda c, i: edit_json(i / "manifest.json", setkey("sample_ids", 3))),
     "inputs_invalid"),
    ("inputs-ids-differ", inputs_edit(_inputs_ids_differ), "inputs_invalid"),
    ("inputs-npz-missing", inputs_edit(lambda c, i: (i / "condition_frames.npz").unlink()), "inputs_invalid"),
    ("inputs-npz-pickle", inputs_edit(lambda c, i: (i / "condition_frames.npz").write_bytes(b"\x80\x04K\x01.")),
     "inputs_invalid"),
    ("name-escape", lambda c: _pack(c, c.gen, name="m\x1b]0;pwned\x07"), "model_name"),
    ("name-rlo", lambda c: _pack(c, c.gen, name="x\u202egpj"), "model_name"),
    ("name-empty", lambda c: _pack(c, c.gen, name=" "), "model_name"),
    ("out-exists", lambda c: ((c.tmp / "o").mkdir(), _pack(c, c.gen, out=c.tmp / "o"))[1], "out_exists"),
]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in PACK])
def test_pack(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


# ================================================================== 3. HDF5 imports
def h5(edit):
    """A copy of the phyworld fixture with edit(f, src) applied."""
    def build(ctx):
        out = ctx.tmp / "in.hdf5"
        with h5py.File(HDF5, "r") as src, h5py.File(out, "w") as f:
            edit(f, src, ctx)
        return ["import", "phyworld", str(out), "--task", "uniform", "--out", str(ctx.tmp / "split"), "--quiet"]
    return build


def _copy_all(f, src, skip=()):
    for key in ("video_streams", "position_streams", "init_streams"):
        if key not in skip:
            src.copy(key, f)


def positions(change):
    def edit(f, src, ctx):
        _copy_all(f, src, skip=("position_streams",))
        pos = src["position_streams"][()]
        change(pos)
        f["position_streams"] = pos
    return edit


def init(change):
    def edit(f, src, ctx):
        _copy_all(f, src, skip=("init_streams",))
        values = src["init_streams"][()].astype(np.float64)
        change(values)
        f["init_streams"] = values
    return edit


def _external(f, src, ctx):
    _copy_all(f, src, skip=("position_streams",))
    secret = ctx.tmp / "secret.bin"
    secret.write_bytes(np.zeros(src["position_streams"].shape, np.float32).tobytes())
    f.create_dataset("position_streams", shape=src["position_streams"].shape, dtype=np.float32,
                     external=[(str(secret), 0, secret.stat().st_size)])


def _link(kind):
    def edit(f, src, ctx):
        _copy_all(f, src, skip=("position_streams",))
        f["real"] = src["position_streams"][()]
        if kind == "soft":
            f["position_streams"] = h5py.SoftLink("/real")
        elif kind == "loop":
            f["position_streams"] = h5py.SoftLink("/position_streams")
        else:
            f["position_streams"] = h5py.ExternalLink(str(HDF5), "/position_streams")
    return edit


def _virtual(f, src, ctx):
    _copy_all(f, src, skip=("position_streams",))
    shape = src["position_streams"].shape
    layout = h5py.VirtualLayout(shape=shape, dtype=np.float32)
    layout[:] = h5py.VirtualSource(str(HDF5), "position_streams", shape=shape)
    f.create_virtual_dataset("position_streams", layout)


def _rows(n):
    def edit(f, src, ctx):
        f.create_dataset("video_streams", shape=(n,), dtype=h5py.vlen_dtype(np.uint8), chunks=(1024,))
        f.create_dataset("position_streams", shape=(n, 32, 2), dtype=np.float32, chunks=(1024, 32, 2))
        f.create_dataset("init_streams", shape=(n, 2), dtype=np.float32, chunks=(1024, 2))
    return edit


def _missing(key):
    return lambda f, src, ctx: _copy_all(f, src, skip=(key,))


def _positions_as_text(f, src, ctx):
    _copy_all(f, src, skip=("position_streams",))
    f["position_streams"] = np.array(["a"] * src["position_streams"].shape[0], dtype="S1")


def _plain_file(ctx):
    (ctx.tmp / "x.hdf5").write_bytes(b"not hdf5 at all")
    return ["import", "phyworld", str(ctx.tmp / "x.hdf5"), "--task", "uniform", "--out", str(ctx.tmp / "s"), "--quiet"]


IMPORTS = [
    ("external-storage", h5(_external), "import_refused"),
    ("soft-link", h5(_link("soft")), "import_refused"),
    ("soft-link-loop", h5(_link("loop")), "import_refused"),
    ("external-link", h5(_link("external")), "import_refused"),
    ("virtual-dataset", h5(_virtual), "import_refused"),
    ("billion-rows", h5(_rows(10 ** 9)), "import_refused"),
    ("nan-position", h5(positions(lambda p: p.__setitem__((1, 4, 0), np.nan))), "import_refused"),
    ("inf-position", h5(positions(lambda p: p.__setitem__((0, 0, 1), np.inf))), "import_refused"),
    ("negative-radius", h5(init(lambda v: v.__setitem__((2, 0), -1.0))), "import_refused"),
    ("infinite-radius", h5(init(lambda v: v.__setitem__((2, 0), np.inf))), "import_refused"),
    ("zero-radius", h5(init(lambda v: v.__setitem__((0, 0), 0.0))), "import_refused"),
    ("no-positions", h5(_missing("position_streams")), "import_refused"),
    ("no-videos", h5(_missing("video_streams")), "import_refused"),
    ("positions-as-text", h5(_positions_as_text), "import_refused"),
    ("not-hdf5", _plain_file, "import_refused"),
    ("no-such-file", lambda c: ["import", "phyworld", str(c.tmp / "none.hdf5"), "--task", "uniform", "--out",
                                str(c.tmp / "s"), "--quiet"], "import_refused"),
]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in IMPORTS])
def test_hdf5_import(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


# ================================================================== 4. local split manifests
def manifest(change, command: str):
    def build(ctx):
        split = ctx.copy(ctx.split)
        path = split / "manifest.json"
        if isinstance(change, str):
            path.write_text(change)
        else:
            edit_json(path, change)
        if command == "score":
            return _score(ctx, ctx.sub)[:3] + [str(split)] + _score(ctx, ctx.sub)[4:]
        if command == "verify":
            return ["verify", str(split), "--quiet"]
        return ["export-inputs", "--data", str(split), "--out", str(ctx.tmp / "in"), "--quiet"]
    return build


def shard(name):
    def fn(d):
        d["shards"][0]["file"] = name
        return d
    return fn


MANIFEST_EDITS = [
    ("shard-etc-passwd", shard("/etc/passwd"), "manifest_path"),
    ("shard-dotdot", shard("../../../../etc/passwd"), "manifest_path"),
    ("shard-dotdot-inside", shard("data/../../manifest.parquet"), "manifest_path"),
    ("shard-not-parquet", shard("data/shard.json"), "manifest_path"),
    ("shards-not-list", setkey("shards", "data/x.parquet"), "manifest_path"),
    ("nested", nested(), "invalid_json"),
    ("not-json", "{", "invalid_json"),
    ("a-list", "[]", "split_invalid"),
    ("format-version", setkey("format_version", 99), "split_invalid"),
]
MANIFESTS = [(f"{n}-{cmd}", manifest(change, cmd), code) for n, change, code in MANIFEST_EDITS
             for cmd in ("score", "verify", "export-inputs")]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in MANIFESTS])
def test_local_manifest(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


# ================================================================== 5. output paths
def score_out(*extra, make=None):
    def build(ctx):
        if make:
            make(ctx)
        base = ["score", str(ctx.sub), "--data", str(ctx.split), "--metrics", "ssim", "--quiet"]
        return base + [a.format(tmp=ctx.tmp, split=ctx.split, sub=ctx.sub) for a in extra]
    return build


OUTPUTS = [
    ("score-out-is-split-manifest", score_out("--out", "{split}/manifest.json"), "out_in_input"),
    ("score-out-inside-submission", score_out("--out", "{sub}/r.json"), "out_in_input"),
    ("score-details-inside-split", score_out("--details", "{split}/data/d.parquet"), "out_in_input"),
    ("score-out-equals-details", score_out("--out", "{tmp}/x", "--details", "{tmp}/x"), "out_same_file"),
    ("score-out-is-folder", score_out("--out", "{tmp}"), "out_is_folder"),
    ("score-details-is-folder", score_out("--details", "{tmp}"), "out_is_folder"),
    ("score-out-under-a-file", score_out("--out", "{tmp}/f/r.json", make=lambda c: (c.tmp / "f").write_text("x")),
     "os_error"),
    ("export-inputs-out-exists", lambda c: ((c.tmp / "e").mkdir(), ["export-inputs", "--data", str(c.split), "--out",
                                                                    str(c.tmp / "e"), "--quiet"])[1], "out_exists"),
    ("pack-out-exists", lambda c: ((c.tmp / "p").mkdir(), _pack(c, c.gen, out=c.tmp / "p"))[1], "out_exists"),
    ("pack-out-under-a-file", lambda c: ((c.tmp / "f").write_text("x"), _pack(c, c.gen, out=c.tmp / "f" / "s"))[1],
     "os_error"),
]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in OUTPUTS])
def test_output_path(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


# ================================================================== 6. model plug-ins (run)
GOOD_MODEL = """
import numpy as np
class Model:
    def __init__(self, **kw):
        self.kw = kw
    def generate(self, condition, num_frames):
        return np.repeat(condition[:, -1:], num_frames, axis=1)
"""


def model_file(body: str, spec: str = "Model", *, args: str | None = None, name: str | None = None):
    def build(ctx):
        path = ctx.tmp / "m.py"
        path.write_text(body)
        argv = ["run", "--model", f"{path}:{spec}", "--data", str(ctx.split), "--out", str(ctx.tmp / "run"),
                "--metrics", "ssim", "--quiet"]
        return argv + (["--model-args", args] if args is not None else []) + (["--name", name] if name else [])
    return build


def generate_body(ret: str, init: str = "pass") -> str:
    return f"""
import numpy as np
class Model:
    def __init__(self):
        {init}
    def generate(self, condition, num_frames):
        B, C, H, W, _ = condition.shape
        return {ret}
"""


MODELS = [
    ("no-colon", lambda c: ["run", "--model", "phybench.examples.shift", "--data", str(c.split), "--out",
                            str(c.tmp / "r"), "--quiet"], "model_spec"),
    ("no-such-module", lambda c: ["run", "--model", "no_such_module_xyz:Model", "--data", str(c.split), "--out",
                                  str(c.tmp / "r"), "--quiet"], "model_import"),
    ("no-such-class", lambda c: ["run", "--model", "phybench.examples.shift:Nope", "--data", str(c.split), "--out",
                                 str(c.tmp / "r"), "--quiet"], "model_import"),
    ("no-such-file", lambda c: ["run", "--model", f"{c.tmp}/none.py:Model", "--data", str(c.split), "--out",
                                str(c.tmp / "r"), "--quiet"], "model_import"),
    ("syntax-error", model_file("def broken(:\n"), "model_import"),
    ("raises-on-import", model_file("raise RuntimeError('boom at import')\n"), "model_import"),
    ("not-callable", model_file("Model = 3\n"), "model_import"),
    ("needs-argument", model_file("class Model:\n    def __init__(self, ckpt):\n        pass\n"), "model_init"),
    ("unknown-argument", model_file(GOOD_MODEL.replace("**kw", "x=1"), args="y=2"), "model_init"),
    ("constructor-raises", model_file("class Model:\n    def __init__(self):\n        raise ValueError('no GPU')\n"),
     "model_init"),
    ("no-generate", model_file("class Model:\n    pass\n"), "model_init"),
    ("bad-model-args", model_file(GOOD_MODEL, args="novalue"), "model_args"),
    ("name-escape", model_file(GOOD_MODEL, name="m\x1b[31m"), "model_name"),
    ("name-rlo", model_file(GOOD_MODEL, name="m\u202eevil"), "model_name"),
    ("name-newline", model_file(GOOD_MODEL, name="a\nb"), "model_name"),
]
# Each of these writes the run's own state (run.json and the exported inputs; a traceback for
# model_error) and nothing else: no video, submission or results.
RUN_STATE = {"run", "run/uniform-id-eval", "run/uniform-id-eval/run.json", "run/uniform-id-eval/generate-error.txt",
             "run/uniform-id-eval/inputs"}
GENERATES = [
    ("generate-raises", model_file(generate_body("1 / 0")), "model_error"),
    ("generate-raises-keyerror", model_file(generate_body("{}['x']")), "model_error"),
    ("returns-float", model_file(generate_body("np.zeros((B, num_frames, H, W, 3), np.float32)")), "model_output"),
    ("returns-wrong-size", model_file(generate_body("np.zeros((B, num_frames, 64, 64, 3), np.uint8)")),
     "model_output"),
    ("returns-wrong-frames", model_file(generate_body("np.zeros((B, 7, H, W, 3), np.uint8)")), "model_output"),
    ("returns-short-batch", model_file(generate_body("np.zeros((B - 1, num_frames, H, W, 3), np.uint8)")),
     "model_output"),
    ("returns-one-video", model_file(generate_body("np.zeros((num_frames, H, W, 3), np.uint8)")), "model_output"),
    ("returns-none", model_file(generate_body("None")), "model_output"),
    ("returns-channels-first", model_file(generate_body("np.zeros((B, num_frames, 3, H, W), np.uint8)")),
     "model_output"),
]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in MODELS])
def test_model_plugin(ctx, capsys, monkeypatch, build, code):
    # Python writes bytecode unless told not to (this environment may say PYTHONDONTWRITEBYTECODE): a model file
    # compiled and then raising at import must still leave no __pycache__ beside it
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    refused(ctx, capsys, build(ctx), code)


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in GENERATES])
def test_model_output(ctx, capsys, build, code):
    argv = build(ctx)
    refused(ctx, capsys, argv, code, allowed={str(ctx.tmp / p) for p in RUN_STATE},
            allowed_under=(str(ctx.tmp / "run" / "uniform-id-eval" / "inputs") + os.sep,))
    gen = ctx.tmp / "run" / "uniform-id-eval" / "generated"
    assert not gen.exists() or not any(gen.rglob("*.npy"))  # checked before anything was written


# ================================================================== 7. results files
def _results(ctx, text: str) -> Path:
    path = ctx.tmp / "results" / "uniform-id-eval-m.json"
    path.parent.mkdir()
    path.write_text(text)
    return path


RESULTS = [
    ("rescore-nested", lambda c: ["rescore", str(_results(c, nested())), "--submission", str(c.sub), "--data",
                                  str(c.split), "--out", str(c.tmp / "o.json"), "--quiet"], "score_error"),
    ("rescore-not-json", lambda c: ["rescore", str(_results(c, "{")), "--submission", str(c.sub), "--data",
                                    str(c.split), "--out", str(c.tmp / "o.json"), "--quiet"], "score_error"),
    ("rescore-a-list", lambda c: ["rescore", str(_results(c, "[1]")), "--submission", str(c.sub), "--data",
                                  str(c.split), "--out", str(c.tmp / "o.json"), "--quiet"], "score_error"),
    ("rescore-no-provenance", lambda c: ["rescore", str(_results(c, '{"kind": "phybench-results"}')),
                                         "--submission", str(c.sub), "--data", str(c.split), "--out",
                                         str(c.tmp / "o.json"), "--quiet"], "score_error"),
    # leaderboard-nested: its own test below (the board lists refused files, one line each)
    # the Hub's Eval Results export (issue 36 item 8): nothing is written on a refusal
    ("export-nested", lambda c: _export(_results(c, nested())), "results_unreadable"),
    ("export-not-results", lambda c: _export(_results(c, '{"kind": "phybench-samples"}')), "not_results"),
    ("export-task-is-a-path", lambda c: _export(_results(c, json.dumps(
        {"kind": "phybench-results", "task": "../../x", "split": "id-eval"}))), "results_names"),
    ("export-link-to-dev-zero", lambda c: _export(_special(c, "link")), "results_link"),
    ("export-fifo", lambda c: _export(_special(c, "fifo")), "results_not_regular"),
    ("export-bad-benchmark", lambda c: _export(_results(c, "{}"), benchmark="../x"), "benchmark_id"),
    ("build-from-hub-bad-repo", lambda c: ["leaderboard", "build", "--from-hub", "../etc", "--revision", "main",
                                           "--out", str(c.tmp / "site")], "hub_repo"),
    ("build-from-hub-bad-revision", lambda c: ["leaderboard", "build", "--from-hub", "o/n", "--revision", "main; x",
                                               "--out", str(c.tmp / "site")], "hub_revision"),
]


def _export(path: Path, benchmark: str = "phybench/board") -> list[str]:
    return ["export", str(path), "--eval-results", str(path.parent.parent / "out"), "--benchmark", benchmark]


def _special(ctx, kind: str) -> Path:
    path = ctx.tmp / "results" / "uniform-id-eval-m.json"
    path.parent.mkdir()
    if kind == "link":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in RESULTS])
def test_results_file(ctx, capsys, build, code):
    refused(ctx, capsys, build(ctx), code)


def test_leaderboard_build_refuses_a_deeply_nested_results_file(ctx, capsys):
    """Refused by the bounded reader (phybench.jsonsafe: json_too_deep) before any recursion, as a
    refused file of the board (`results_format`, exit 2, nothing written); it was the CLI's catch
    of a RecursionError (`nested_too_deeply`) before issue 51."""
    folder = _results(ctx, nested()).parent
    capsys.readouterr()
    rc = main(["leaderboard", "build", str(folder), "--out", str(ctx.tmp / "site")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "[results_format]" in err and "nested too deeply" in err, err
    assert not (ctx.tmp / "site").exists()


# ================================================================== 8. phybench run: resume keyed on the model
def _run(ctx, model: Path, *extra: str, out: str = "run") -> tuple[int, str]:
    return _main(["run", "--model", f"{model}:Model", "--data", str(ctx.split), "--out", str(ctx.tmp / out),
                  "--metrics", "ssim", "--quiet", *extra])


def _main(argv):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, err.getvalue()


@pytest.mark.slow
def test_run_refuses_another_model_and_resumes_the_same(ctx):
    a, b = ctx.tmp / "a.py", ctx.tmp / "b.py"
    a.write_text(GOOD_MODEL)
    b.write_text(GOOD_MODEL.replace("condition[:, -1:]", "condition[:, :1]"))
    assert _run(ctx, a)[0] == 0
    work = ctx.tmp / "run" / "uniform-id-eval"
    videos = sorted((work / "generated").rglob("*.npy"))
    stamps = [p.stat().st_mtime_ns for p in videos]
    results = sorted((ctx.tmp / "run" / "results").glob("*.json"))
    snapshot = tree(ctx.tmp / "run")
    rc, err = _run(ctx, b, "--name", "a")  # another class under the first one's name: never mixed
    line = check_refused(rc, err, "run_mismatch")
    assert "--restart" in line and "new --out" in line and str(b) in line
    assert tree(ctx.tmp / "run") == snapshot
    rc, err = _run(ctx, a, "--model-args", "seed=1")  # the same class, other arguments
    assert "model_args differ" in check_refused(rc, err, "run_mismatch")
    assert _run(ctx, a)[0] == 0  # the same model again: everything reused
    assert [p.stat().st_mtime_ns for p in videos] == stamps
    assert sorted((ctx.tmp / "run" / "results").glob("*.json")) == results
    rc, err = _run(ctx, b, "--restart")
    assert rc == 0, err
    assert json.loads((work / "run.json").read_text())["model"] == f"{b}:Model"
    assert (ctx.tmp / "run" / "results" / "uniform-id-eval-b.json").is_file()


@pytest.mark.slow
def test_run_keys_on_the_checkpoint_bytes(ctx):
    model = ctx.tmp / "m.py"
    model.write_text(GOOD_MODEL)
    ckpt = ctx.tmp / "w.bin"
    ckpt.write_bytes(b"weights v1")
    assert _run(ctx, model, "--model-args", f"ckpt={ckpt}")[0] == 0
    ckpt.write_bytes(b"weights v2")
    rc, err = _run(ctx, model, "--model-args", f"ckpt={ckpt}")
    assert "checkpoint_sha256 differ" in check_refused(rc, err, "run_mismatch")
    folder = ctx.tmp / "ckpt-dir"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"v1")
    assert _run(ctx, model, "--model-args", f"ckpt={folder}", "--restart")[0] == 0
    (folder / "model.safetensors").write_bytes(b"v2 retrained")  # a folder: names, sizes and times
    rc, err = _run(ctx, model, "--model-args", f"ckpt={folder}")
    assert "checkpoint_sha256 differ" in check_refused(rc, err, "run_mismatch")


def test_run_refuses_a_folder_it_cannot_attribute(ctx):
    model = ctx.tmp / "m.py"
    model.write_text(GOOD_MODEL)
    stale = ctx.tmp / "run" / "uniform-id-eval" / "generated" / "uniform" / "id-eval"
    stale.mkdir(parents=True)
    np.save(stale / "0000000.npy", np.zeros((32, 128, 128, 3), np.uint8))  # an older phybench's, or by hand
    rc, err = _run(ctx, model)
    check_refused(rc, err, "run_unkeyed")
    (ctx.tmp / "run" / "uniform-id-eval" / "run.json").write_text(nested())
    rc, err = _run(ctx, model)
    check_refused(rc, err, "run_record")


FLAKY = """
import os
import numpy as np
class Model:
    def generate(self, condition, num_frames):
        self.calls = getattr(self, "calls", 0) + 1
        if os.path.exists(os.environ["PHYBENCH_TEST_FAIL_FLAG"]) and self.calls == 2:
            raise RuntimeError("CUDA out of memory")
        return np.repeat(condition[:, -1:], num_frames, axis=1)
"""


def test_a_failing_generate_names_the_batch_and_a_rerun_resumes(ctx, monkeypatch):
    model = ctx.tmp / "m.py"
    model.write_text(FLAKY)
    flag = ctx.tmp / "fail"
    flag.write_text("")
    monkeypatch.setenv("PHYBENCH_TEST_FAIL_FLAG", str(flag))
    rc, err = _run(ctx, model, "--batch-size", "1")
    line = check_refused(rc, err, "model_error")
    assert "RuntimeError: CUDA out of memory on batch 2 of 3" in line and ctx.ids[1] in line, line
    assert "1 video(s) written before it are kept" in line and "run the same command again to resume" in line
    work = ctx.tmp / "run" / "uniform-id-eval"
    assert "CUDA out of memory" in (work / "generate-error.txt").read_text()
    first = work / "generated" / f"{ctx.ids[0]}.npy"
    stamp = first.stat().st_mtime_ns
    flag.unlink()  # "fixed"
    rc, err = _run(ctx, model, "--batch-size", "1")
    assert rc == 0, err
    assert first.stat().st_mtime_ns == stamp  # resumed, not redone
    assert not (work / "generate-error.txt").exists()


# ================================================================== 9. faults
CHILD_WRITE = """
import os, sys, time
import phybench.io as pio
ready = sys.argv[2]
real = os.fsync
def hang(fd):
    open(ready, "w").close()
    time.sleep(600)
os.fsync = hang
pio.atomic_write_bytes(sys.argv[1], b"x" * 100_000)
"""

CHILD_PACK = """
import sys, time
import numpy as np
from phybench.cli import main
import phybench.submission.writer as w
ready = sys.argv[5]
real = np.savez_compressed
calls = []
def slow(f, **kw):
    calls.append(1)
    if len(calls) == 2:
        open(ready, "w").close()
        time.sleep(600)
    return real(f, **kw)
w.np.savez_compressed = slow
sys.exit(main(["pack", sys.argv[1], "--inputs", sys.argv[2], "--out", sys.argv[3], "--name", sys.argv[4], "--quiet"]))
"""


def _kill_when_ready(code: str, args: list[str], ready: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", code, *args, str(ready)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None, "the child ended before the write"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()


def test_sigkill_mid_write_leaves_no_file_and_the_next_write_cleans_up(ctx):
    from phybench.io import atomic_write_bytes

    target = ctx.tmp / "out" / "results.json"
    _kill_when_ready(CHILD_WRITE, [str(target)], ctx.tmp / "ready1")
    assert not target.exists()
    left = list(target.parent.glob(".results.json.*.tmp"))
    assert len(left) == 1  # the killed writer's temporary file, never the target
    atomic_write_bytes(target, b"{}")
    assert target.read_bytes() == b"{}" and not list(target.parent.glob(".*.tmp"))
    # pack killed between two videos: its hidden folder is removed by the next pack
    out = ctx.tmp / "out" / "sub"
    _kill_when_ready(CHILD_PACK, [str(ctx.gen), str(ctx.inputs), str(out), "m"], ctx.tmp / "ready2")
    assert not out.exists() and len(list(out.parent.glob(".sub.*.tmp"))) == 1
    rc, err = _main(["pack", str(ctx.gen), "--inputs", str(ctx.inputs), "--out", str(out), "--name", "m", "--quiet"])
    assert rc == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.json", "sub"]


def _commands(ctx, model: Path) -> dict[str, list[str]]:
    out = ctx.tmp / "out"
    return {
        "score": ["score", str(ctx.sub), "--data", str(ctx.split), "--metrics", "ssim", "--out",
                  str(out / "r" / "r.json"), "--details", str(out / "r" / "d.parquet"), "--quiet"],
        "pack": ["pack", str(ctx.gen), "--inputs", str(ctx.inputs), "--out", str(out / "p" / "sub"), "--name", "m",
                 "--quiet"],
        "export-inputs": ["export-inputs", "--data", str(ctx.split), "--out", str(out / "e" / "in"), "--quiet"],
        "generate": ["generate", "uniform", "--split", "id-eval", "--limit", "2", "--out", str(out / "g" / "split"),
                     "--quiet"],
        "run": ["run", "--model", f"{model}:Model", "--data", str(ctx.split), "--out", str(out / "run"), "--metrics",
                "ssim", "--quiet"],
    }


@pytest.mark.parametrize("budget", [0, 2000])
@pytest.mark.parametrize("fault,code", [(errno.ENOSPC, "disk_full"), (errno.EROFS, "read_only")])
@pytest.mark.parametrize("command", ["score", "pack", "export-inputs", "generate", "run"])
def test_full_or_read_only_disk(ctx, capsys, monkeypatch, command, fault, code, budget):
    """An injected ENOSPC or EROFS after `budget` bytes (each command writes more): one line, exit 2,
    nothing left behind: no partial file, no temporary, no empty folder.  `run` may keep what it
    finished (its run.json, the exported inputs): that is what a re-run resumes from."""
    model = ctx.tmp / "m.py"
    model.write_text(GOOD_MODEL)
    (ctx.tmp / "out").mkdir()
    argv = _commands(ctx, model)[command]
    FullDisk(monkeypatch, ctx.tmp / "out", budget=budget, err=fault)
    state = ctx.tmp / "out" / "run" / "uniform-id-eval"
    refused(ctx, capsys, argv, code, allowed={str(ctx.tmp / "out" / "run"), str(state), str(state / "run.json"),
                                              str(state / "inputs")}, allowed_under=(str(state / "inputs") + os.sep,))
    assert not list((ctx.tmp / "out").rglob("*.tmp")) and not list((ctx.tmp / "out").rglob(".*"))


def test_score_writes_results_and_sidecar_as_a_unit(ctx, monkeypatch):
    """The results file's bytes fail after its sidecar's were written: neither is left."""
    from phybench import io as pio

    real = pio.os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, "I/O error", str(dst))
        return real(src, dst)

    monkeypatch.setattr(pio.os, "replace", failing)
    out = ctx.tmp / "r.json"
    rc, err = _main(["score", str(ctx.sub), "--data", str(ctx.split), "--metrics", "ssim", "--out", str(out),
                     "--quiet"])
    check_refused(rc, err, "os_error")
    assert len(calls) == 2 and Path(calls[0]).name == "r.samples.json"  # the sidecar was renamed, then removed
    assert sorted(os.listdir(ctx.tmp)) == []


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    """A 4-sample split and its ground truth: enough for `score --workers 2` to start its pool (n >= 2 x workers)."""
    root = tmp_path_factory.mktemp("four")
    split, sub = root / "split", root / "sub"
    assert main(["generate", "uniform", "--split", "id-eval", "--limit", "4", "--out", str(split), "--quiet"]) == 0
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    return split, sub


@pytest.mark.slow
def test_score_workers_leave_no_process_behind(four):
    """`score --workers 2` in its own session: when it has exited, no process of that session is left."""
    split, sub = four
    proc = subprocess.Popen([sys.executable, "-m", "phybench.cli", "score", str(sub), "--data", str(split),
                             "--metrics", "ssim", "--workers", "2", "--quiet"], start_new_session=True,
                            stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                [str(Path(__file__).parent.parent), os.environ.get("PYTHONPATH", "")])})
    assert proc.wait(timeout=300) == 0
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getsid(int(pid)) == proc.pid:
                left.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120])
        except OSError:
            pass
    assert left == []


# ================================================================== 10. the codes are documented
def test_every_code_of_the_corpus_is_in_the_docs():
    from phybench.cli import _OS_CODES, _TYPE_CODES

    text = (Path(__file__).parent.parent / "docs" / "submission.md").read_text()
    tables = SUBMISSIONS + PACK + IMPORTS + MANIFEST_EDITS + OUTPUTS + MODELS + GENERATES + RESULTS
    codes = {case[-1] for case in tables} | set(_OS_CODES.values()) | set(_TYPE_CODES.values())
    codes |= {"usage", "run_mismatch", "run_unkeyed", "run_record", "run_restart", "run_error"}
    assert len(SUBMISSIONS + PACK + IMPORTS + MANIFESTS + OUTPUTS + MODELS + GENERATES + RESULTS) >= 150
    assert sorted(c for c in codes if f"`{c}`" not in text) == []


# ================================================================== 11. Hub manifests
@pytest.fixture(scope="module")
def hub():
    from hubserver import HubServer

    with HubServer() as server:
        yield server


def _hub_repo(hub, name: str, manifest: bytes, shard: bytes | None = None) -> str:
    from hubserver import Blob, Commit, Repo

    files = {"uniform/id-eval/manifest.json": Blob(manifest, False), "README.md": Blob(b"# hostile\n", False)}
    if shard is not None:
        files["uniform/id-eval/data/shard-00000-of-00001.parquet"] = Blob(shard, True)
    repo = Repo("dataset", f"hostile/{name}", False, "tester")
    commit = Commit(f"{abs(hash(name)):040x}"[:40], None, "init", "2026-01-01T00:00:00.000Z", files)
    repo.commits[commit.sha] = commit
    repo.refs["main"] = commit.sha
    hub.state.repos[("dataset", repo.repo_id)] = repo
    return repo.repo_id


def _hub_manifest(change):
    def build(ctx, hub):
        doc = json.loads((ctx.split / "manifest.json").read_text())
        text = change if isinstance(change, str) else json.dumps(change(doc))
        return _hub_repo(hub, f"m{zlib_crc(text)}", text.encode(),
                         (ctx.split / "data" / "shard-00000-of-00001.parquet").read_bytes())
    return build


def zlib_crc(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode())


def _tiled(n: int, size: int, same_file: bool = False, same_hash: bool = False, ranges=None):
    """The split's one shard re-listed as `n` samples in shards of `size` (issue 36: sizes that do not add up)."""
    def fn(d):
        one = d["shards"][0]
        spans = ranges or [(i, min(i + size, n)) for i in range(0, n, size)]
        d["num_samples"], d["shard_size"] = n, size
        d["shards"] = [{**one, "start": a, "stop": b,
                        "file": one["file"] if same_file else f"data/shard-{k:05d}.parquet",
                        "sha256": one["sha256"] if same_hash else f"{k:064x}"} for k, (a, b) in enumerate(spans)]
        return d
    return fn


HUB_SIZES = [
    ("one-shard-5000-times", lambda d: {**d, "shards": d["shards"] * 5000}),
    ("same-file-three-times", _tiled(3, 1, same_file=True, same_hash=True)),
    ("same-bytes-two-names", _tiled(3, 2, same_hash=True)),
    ("rows-overlap", _tiled(3, 2, ranges=[(0, 2), (1, 3)])),
    ("rows-gap", _tiled(4, 2, ranges=[(0, 2), (3, 4)])),
    ("shard-over-its-size", _tiled(3, 1, ranges=[(0, 2), (2, 3), (3, 3)])),
    ("rows-short", _tiled(3, 3, ranges=[(0, 2)])),
    ("samples-a-trillion", setkey("num_samples", 10**12)),
    ("samples-zero", setkey("num_samples", 0)),
    ("shard-size-string", setkey("shard_size", "3")),
    ("resolution-huge", setkey("resolution", 10**6)),
    ("start-not-a-number", lambda d: {**d, "shards": [{**d["shards"][0], "start": "0"}]}),
]
HUB = [(f"hub-{n}", _hub_manifest(change), code) for n, change, code in MANIFEST_EDITS] + [
    ("hub-other-task", _hub_manifest(setkey("task", "parabola")), "hub"),
    ("hub-hash-lies", _hub_manifest(setkey("split_hash", "f" * 64)), "hub"),
] + [(f"hub-{n}", _hub_manifest(change), "manifest_sizes") for n, change in HUB_SIZES]


@pytest.mark.parametrize("build,code", [pytest.param(b, c, id=n) for n, b, c in HUB])
def test_hub_manifest(ctx, monkeypatch, tmp_path_factory, hub, build, code):
    """What `score --from-hub` loads (`load_split` from a repo id), against a Hub whose manifest is hostile:
    a SplitError whose line has the code; nothing is written outside the HF cache."""
    from phybench.cli import error_line
    from phybench.data.download import load_split
    from phybench.data.split import SplitError

    monkeypatch.setenv("PHYBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    repo = build(ctx, hub)
    before = tree(ctx.tmp, ctx.split)
    with pytest.raises(SplitError) as exc:
        load_split("uniform", "id-eval", repo, endpoint=hub.url, cache_dir=tmp_path_factory.mktemp("hf"))
    check_refused(2, error_line("score", exc.value) + "\n", code)
    assert tree(ctx.tmp, ctx.split) == before
    if code != "hub":
        assert str(exc.value).startswith(f"{repo}:uniform/id-eval at revision ")


def test_hub_manifest_listing_one_shard_5000_times_is_refused_by_its_sizes_at_once(ctx, monkeypatch,
                                                                                   tmp_path_factory, hub):
    """Issue 36: the shard is neither hashed nor decoded 5,000 times; the counts refuse it first."""
    import time

    from phybench.data.download import load_split
    from phybench.data.split import SplitError

    import phybench.data.download as download_module

    monkeypatch.setenv("PHYBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    cache = tmp_path_factory.mktemp("hf")
    load_split("uniform", "id-eval", _hub_manifest(lambda d: d)(ctx, hub), endpoint=hub.url, cache_dir=cache)  # warm
    checked = []
    monkeypatch.setattr(download_module, "check_split", lambda *a, **k: checked.append(1) or ([], None))
    repo = _hub_manifest(lambda d: {**d, "shards": d["shards"] * 5000})(ctx, hub)
    t0 = time.perf_counter()
    with pytest.raises(SplitError) as exc:
        load_split("uniform", "id-eval", repo, endpoint=hub.url, cache_dir=cache)
    assert time.perf_counter() - t0 < 1.0
    assert exc.value.code == "manifest_sizes" and checked == [], str(exc.value)  # no shard hashed or decoded
    assert "it lists 5,000 shard(s); 3 samples in shards of" in str(exc.value)
    assert "`manifest_sizes`" in (Path(__file__).parents[1] / "docs" / "submission.md").read_text()


def test_a_shard_file_larger_than_its_rows_can_be_is_refused_unopened(ctx, tmp_path):
    """Byte sizes: a (sparse) 64 GB shard file under a manifest that declares 3 rows is refused by
    its size alone (lstat through the cache link; never read)."""
    from phybench.data.manifest_bounds import max_shard_bytes, size_problem

    folder = ctx.copy(ctx.split)
    doc = json.loads((folder / "manifest.json").read_text())
    assert size_problem(doc, folder) is None
    shard_file = folder / doc["shards"][0]["file"]
    with open(shard_file, "r+b") as f:
        f.truncate(64 << 30)
    why = size_problem(doc, folder)
    assert why is not None and "68,719,476,736 bytes" in why and f"{max_shard_bytes(doc, 3):,}" in why


@pytest.mark.slow
def test_score_workers_leave_no_child_process(four, monkeypatch):
    """The same in this process, deterministic: when `score --workers 2` returns, this process has no
    child left (the pool's workers joined, and the resource tracker the spawned pool started stopped)."""
    def children() -> list[int]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat_line = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if int(stat_line.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(pid))
        return found

    import phybench.scoring.run.loop as loop_module  # the pass that owns the pool

    pools = []
    real = loop_module.ProcessPoolExecutor
    monkeypatch.setattr(loop_module, "ProcessPoolExecutor", lambda *a, **k: pools.append(1) or real(*a, **k))
    split, sub = four
    before = children()
    rc, err = _main(["score", str(sub), "--data", str(split), "--metrics", "ssim", "--workers", "2", "--quiet"])
    assert rc == 0, err
    assert pools == [1]  # the pool was used
    assert [p for p in children() if p not in before] == []


# ================================================================== 12. condition frames
@pytest.mark.parametrize("change", ["zeroed", "another-sample"])
def test_pack_and_score_report_changed_condition_frames(ctx, change):
    gen = ctx.copy(ctx.gen)
    path = gen / f"{ctx.ids[0]}.npy"
    video = np.load(path)
    video[:3] = 0 if change == "zeroed" else ctx.videos[ctx.ids[1]][:3]
    np.save(path, video)
    rc, err = _main(["pack", str(gen), "--inputs", str(ctx.inputs), "--out", str(ctx.tmp / "sub"), "--name", "m",
                     "--quiet"])
    assert rc == 0, err
    assert "warning: 1 video(s) have condition frames that differ from the exported ones" in err and ctx.ids[0] in err
    rc, err = _main(["score", str(ctx.tmp / "sub"), "--data", str(ctx.split), "--metrics", "ssim", "--quiet"])
    assert rc == 0 and "condition frames that differ from the split's" in err, err

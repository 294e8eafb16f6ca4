"""Submissions: the videos a model hands in for one split, and `Submission`, their reader.

Layout (a folder, or a .zip / .tar / .tar.gz / .tar.bz2 / .tar.xz holding one)::

    SUB/
      submission.json                   model, task, split, split hash, settings
      videos/<sample_id>.npy            uint8 (T, H, W, 3), condition frames included
      videos/<sample_id>.npz            the same array, alone, under the key "video"
      videos/<sample_id>/00000.png ...  one 8-bit RGB PNG per frame
      videos/<sample_id>.mp4            accepted with a warning: lossy coding moves scores

Sample ids hold slashes (``uniform/id-eval/0000012``), so the path of a video is its id:
``videos/uniform/id-eval/0000012.npy``.  Nothing else is read out of file names.
The container is read by `archive` (capped, never extracted), the videos decoded by
`arrays`; only `writer.write_submission` writes files.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .. import jsonsafe
from ..data.video import decode_mp4
from ..problems import LimitExceeded, Problem
from ..problems import error as _error
from ..problems import warning as _warning
from .archive import ArchiveEntry, ArchiveListing, Limits, ReadError, SubmissionError, is_junk, open_source
from .arrays import PNG_COLOURS, Tally, check_array, decode_png_rgb, parse_npy, parse_npz, png_header
from ..data.documents import Manifest

SCHEMA_VERSION = 1
META = "submission.json"
VIDEO_DIR = "videos"
FILE_FORMATS = (".npy", ".npz", ".mp4")  # one file per video; PNG frames go in a folder
FRAME_NAME = re.compile(r"^(\d{5})\.png$")


@dataclass
class _Video:
    sample_id: str
    fmt: str  # npy, npz, mp4 or png
    entries: list[ArchiveEntry]  # one file, or the frames of a PNG folder in name order

    @property
    def order(self) -> int:
        return min(e.order for e in self.entries)

    @property
    def where(self) -> str:
        return self.entries[0].name if self.fmt != "png" else f"{VIDEO_DIR}/{self.sample_id}"


# Control characters and bidi overrides: refused in model names (they would reach a terminal or a
# page raw: ESC moves the cursor, BEL rings, RLO reverses what follows).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _schema() -> dict[str, Any]:
    from importlib.resources import files

    return json.loads((files("phybench.submission") / "schemas" / "submission.schema.json").read_text("utf-8"))


def schema_problems(meta: Any) -> list[Problem]:
    """Every way `meta` breaks the submission.json schema, each with its JSON path."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    problems = []
    for err in sorted(validator.iter_errors(meta), key=lambda e: list(map(str, e.absolute_path))):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        hint = ""
        if err.validator == "additionalProperties" and not err.absolute_path:
            hint = "; free-form fields go under `extra`"
        where = f"{META} at {path}" if path else META
        problems.append(_error("schema", f"{where}: {err.message}{hint}", entry=META))
    name = meta.get("model", {}).get("name") if isinstance(meta, dict) and isinstance(meta.get("model"), dict) else None
    if isinstance(name, str) and CONTROL.search(name):
        problems.append(_error("model_name", f"{META} at .model.name: {ascii(name)} holds a control character; "
                               "model names are printable text on one line", entry=META))
    return problems


def parse_meta(data: bytes) -> tuple[Any, list[Problem]]:
    try:
        meta = jsonsafe.loads(data)
    except jsonsafe.JSONError as exc:
        if exc.code == jsonsafe.NOT_UTF8:
            return None, [_error("invalid_json", f"{META} is not UTF-8 text ({exc}); save it as UTF-8", entry=META)]
        if exc.code == jsonsafe.NONFINITE:
            return None, [_error("invalid_json", f"{META} is not valid JSON ({exc.code}): {exc}; use a number or null",
                                 entry=META)]
        return None, [_error("invalid_json", f"{META} is not valid JSON ({exc.code}): {exc}", entry=META)]
    bad = _unencodable(meta)
    if bad:  # a lone surrogate ("\ud800") is valid JSON but no text: it would fail when written back
        return None, [_error("invalid_json", f"{META}: {bad} holds an escaped lone surrogate, which is not text; "
                                             "remove it", entry=META)]
    return meta, schema_problems(meta)


def lossy_source_problems(meta: Any) -> list[Problem]:
    """A `lossy_mp4` warning when `phybench pack` recorded mp4 sources (submission.json `sources`).

    Pack stores every video losslessly, so the videos/ folder alone no longer shows that they came
    from a lossy codec; the record does, and the warning the docs promise for mp4 must not vanish
    just because the frames were repacked."""
    sources = meta.get("sources") if isinstance(meta, dict) else None
    if not isinstance(sources, dict) or not sources:
        return []
    from ..data.source import is_lossy, source_counts

    lossy = {s: n for s, n in source_counts(sources).items() if is_lossy(s)}
    if not lossy:
        return []
    n = sum(lossy.values())
    every = f"all {n}" if n == len(sources) else f"{n} of {len(sources)}"
    kinds = ", ".join(f"{k} x{v}" for k, v in lossy.items())
    return [_warning("lossy_mp4", f"{every} videos were packed from a lossy mp4 ({kinds}; submission.json "
                     "sources): the codec changed pixels before packing, which moves the scores (ball positions "
                     "are measured from pixels); pack lossless .npy, .npz or PNG frames for a result you report",
                     entry=META)]


def _unencodable(value: Any, where: str = "the document") -> str | None:
    """Where a string (key or value) in decoded JSON cannot be encoded as UTF-8, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _unencodable(k, f"a key in {where}") or _unencodable(v, f"{where}[{k!r}]")
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _unencodable(v, f"{where}[{i}]")
            if found:
                return found
    return None

# Mean absolute difference (grey levels) allowed between a submission's condition frames and
# the split's: lossy mp4 of our frames measures ~0.2; a channel swap or a blank frame tens.
# `score` warns above it; the board refuses (`validate(board=True)`).
CONDITION_TOLERANCE = 2.0


class Submission:
    """A submission folder or archive, opened for reading; nothing is extracted.

    manifest: the split's manifest.json (`read_manifest(split_dir)`): videos are then
    checked against its frame count and resolution, and the size limits fit it.
    Problems found while opening (unsafe entries, unknown files, an invalid
    submission.json) are in `problems`; a submission that cannot be opened at all
    raises SubmissionError.

        with Submission("sub.zip", manifest=read_manifest("data/uniform-id-eval")) as sub:
            for sample_id, video in sub.iter_videos():  # uint8 (T, H, W, 3)
                ...
    """

    def __init__(self, path: str | os.PathLike[str], *, manifest: Manifest | None = None,
                 limits: Limits | None = None) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self.limits = limits or (Limits.for_split(manifest) if manifest else Limits())
        listing = ArchiveListing(self.limits)
        self._source = open_source(self.path, listing)
        self.kind: str = self._source.kind
        self.problems: list[Problem] = listing.problems
        self._meta: Any = None
        self._meta_ok = False
        self._meta_digest: str | None = None
        self._videos: dict[str, list[_Video]] = {}
        try:
            files = self._strip_root(listing.files)
            self._classify(files)
        except BaseException:
            self._source.close()
            raise

    # -------------------------------------------------------------- opening
    def _strip_root(self, files: dict[str, ArchiveEntry]) -> dict[str, ArchiveEntry]:
        """Accept an archive of the folder itself as well as of its contents."""
        if META in files:
            return files
        roots = [n[: -len(META)] for n in files if n.count("/") == 1 and n.endswith("/" + META)]
        if len(roots) != 1:
            return files
        prefix = roots[0]
        kept = {}
        for name, entry in files.items():
            if name.startswith(prefix):
                entry.name = name[len(prefix):]
                kept[entry.name] = entry
            elif not is_junk(name):
                self.problems.append(_warning("unexpected_file", f"{name!r} is outside the submission folder "
                                              f"{prefix[:-1]!r}; it is ignored", entry=name))
        return kept

    def _classify(self, files: dict[str, ArchiveEntry]) -> None:
        found: dict[str, dict[str, list[ArchiveEntry]]] = {}
        for name, entry in files.items():
            if name == META:
                self._read_meta(entry)
            elif is_junk(name):
                continue
            elif not name.startswith(VIDEO_DIR + "/"):
                self.problems.append(_warning("unexpected_file", f"{name!r} is not part of the submission format "
                                              f"({META} and {VIDEO_DIR}/); it is ignored", entry=name))
            else:
                rel = name[len(VIDEO_DIR) + 1:]
                stem, ext = posixpath.splitext(rel)
                if ext in FILE_FORMATS and stem and not stem.endswith("/"):
                    found.setdefault(stem, {}).setdefault(ext[1:], []).append(entry)
                elif ext == ".png" and "/" in rel:
                    found.setdefault(posixpath.dirname(rel), {}).setdefault("png", []).append(entry)
                else:
                    self.problems.append(_error(
                        "unknown_video_file",
                        f"{name!r} is not a video phybench reads: use videos/<sample_id>.npy, .npz, .mp4, or "
                        "a folder videos/<sample_id>/ of 00000.png, 00001.png, ...", entry=name))
        mp4 = 0
        for sample_id, formats in sorted(found.items()):
            videos = [_Video(sample_id, fmt, sorted(es, key=lambda e: e.name)) for fmt, es in sorted(formats.items())]
            self._videos[sample_id] = videos
            mp4 += "mp4" in formats
            if len(videos) > 1:
                where = ", ".join(v.where + ("/" if v.fmt == "png" else "") for v in videos)
                self.problems.append(_error(
                    "duplicate_id", f"{sample_id}: {len(videos)} videos ({where}); keep exactly one",
                    sample_id, videos[0].where))
        if mp4:
            self.problems.append(_warning(
                "lossy_mp4",
                f"{mp4} video(s) are mp4: lossy coding changes pixels, which moves the scores (ball positions "
                "are measured from pixels); submit lossless .npy, .npz or PNG frames for a result you report"))
        if META not in files:
            self.problems.append(_error(
                "missing_submission_json",
                f"no {META} at the top of the submission; write one (see docs/submission.md), or use "
                "phybench.submission.write_submission", entry=META))

    def _read_meta(self, entry: ArchiveEntry) -> None:
        try:
            data = self._read_entry(entry, self.limits.meta_bytes)
        except ReadError as exc:
            self.problems.append(exc.problem)
            return
        self._meta_digest = hashlib.sha256(data).hexdigest()
        meta, problems = parse_meta(data)
        self._meta = meta
        self._meta_ok = not problems
        self.problems.extend(problems)
        if not problems:
            self.problems.extend(lossy_source_problems(meta))

    def _read_entry(self, entry: ArchiveEntry, limit: int) -> bytes:
        if entry.size > limit:
            raise ReadError(_error("entry_too_large", f"{entry.name!r} is {entry.size:,} bytes (uncompressed), over "
                                    f"the {limit:,}-byte limit for it; refused unread", entry=entry.name))
        try:
            return self._source.read(entry, limit)
        except LimitExceeded:
            raise ReadError(_error("entry_too_large", f"{entry.name!r} decompresses past the {limit:,}-byte limit "
                                    "(its header claims less); refused", entry=entry.name)) from None

    # -------------------------------------------------------------- public
    @property
    def meta(self) -> dict[str, Any]:
        """submission.json, parsed and schema-valid; else SubmissionError says why."""
        if not self._meta_ok:
            raise SubmissionError([p for p in self.problems if p.entry == META]
                                  or [_error("missing_submission_json", f"no valid {META}")])
        return self._meta

    @property
    def ids(self) -> list[str]:
        """Sample ids with a video (sorted), including ids with more than one."""
        return sorted(self._videos)

    def storage_order(self, ids: Iterable[str]) -> list[str]:
        """`ids` in the order they are stored: the fast order for reading a compressed tar."""
        return sorted(ids, key=lambda i: min((v.order for v in self._videos.get(i, [])), default=-1))

    def _expected(self) -> tuple[int, int, int] | None:
        source = self.manifest if self.manifest else (self._meta if self._meta_ok else None)
        if source is None:
            return None
        return int(source["frames"]), int(source["resolution"]), int(source["condition_frames"])

    def inspect(self, sample_id: str) -> tuple[np.ndarray | None, list[Problem], dict[str, str]]:
        """(video or None, its problems, sha256 of each file read by path); never raises for bad data."""
        videos = self._videos.get(sample_id)
        if not videos:
            return None, [_error("missing_id", f"{sample_id}: no video at {VIDEO_DIR}/{sample_id}.npy "
                                 "(or .npz, .mp4, or a folder of PNG frames)", sample_id)], {}
        if len(videos) > 1:
            return None, [p for p in self.problems if p.code == "duplicate_id" and p.sample_id == sample_id], {}
        video = videos[0]
        digests: dict[str, str] = {}
        try:
            if video.fmt == "png":
                array, problems = self._read_png_folder(video, digests)
            else:
                entry = video.entries[0]
                data = self._read_entry(entry, self.limits.video_bytes)
                digests[entry.name] = hashlib.sha256(data).hexdigest()
                array, problems = self._decode_file(video, data)
        except ReadError as exc:
            p = exc.problem
            return None, [Problem(p.severity, p.code, sample_id, p.message, p.entry)], digests
        return array, problems, digests

    def read(self, sample_id: str) -> np.ndarray:
        """One video, uint8 (T, H, W, 3); SubmissionError lists everything wrong with it."""
        array, problems, _ = self.inspect(sample_id)
        if array is None:
            raise SubmissionError(problems)
        return array

    def iter_videos(self, ids: Iterable[str] | None = None) -> Iterator[tuple[str, np.ndarray]]:
        """(sample_id, video) for `ids` (default: all), in storage order; pair them by id."""
        for sample_id in self.storage_order(self.ids if ids is None else ids):
            yield sample_id, self.read(sample_id)

    def close(self) -> None:
        self._source.close()

    def __enter__(self) -> "Submission":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -------------------------------------------------------------- decoding
    def _decode_file(self, video: _Video, data: bytes) -> tuple[np.ndarray | None, list[Problem]]:
        sid, where, expected = video.sample_id, video.where, self._expected()
        if video.fmt == "npy":
            return parse_npy(data, sid, where, expected)
        if video.fmt == "npz":
            return parse_npz(data, sid, where, expected, self.limits.video_bytes)
        try:
            array = decode_mp4(data, max_bytes=self.limits.video_bytes, timeout_s=self.limits.mp4_timeout_s)
        except LimitExceeded:
            return None, [_error("entry_too_large", f"{where}: decodes to more than {self.limits.video_bytes:,} "
                                 "bytes of frames, far more than the split's videos", sid, where)]
        except (ValueError, OSError, RuntimeError) as exc:
            return None, [_error("unreadable", f"{where}: cannot be decoded as mp4 ({exc}); the file is corrupt, "
                                 "truncated or not an mp4: write it again, or better, submit .npy", sid, where)]
        return array, check_array(array.shape, array.dtype, expected, sid, where)

    def _read_png_folder(self, video: _Video, digests: dict[str, str]) -> tuple[np.ndarray | None, list[Problem]]:
        sid, folder, expected = video.sample_id, video.where, self._expected()
        names = [posixpath.basename(e.name) for e in video.entries]
        numbers = [int(m.group(1)) for m in map(FRAME_NAME.match, names) if m]
        bad = [n for n in names if not FRAME_NAME.match(n)]
        gaps = sorted(set(range(len(names))) - set(numbers))
        if bad or gaps:
            detail = (f"unexpected names {', '.join(bad[:3])}" if bad
                      else f"missing {', '.join(f'{g:05d}.png' for g in gaps[:3])}")
            return None, [_error("bad_frame_names", f"{folder}/: {detail}; frames must be named 00000.png, "
                                 "00001.png, ... with no gaps", sid, folder)]
        problems = check_array((len(names), 0, 0, 3), np.dtype(np.uint8), expected, sid, folder)
        problems = [p for p in problems if p.code != "resolution"]  # frame sizes are checked below
        if expected and len(names) > expected[0]:
            return None, problems  # more frames than the split: not worth decoding
        total = sum(e.size for e in video.entries)
        if total > self.limits.video_bytes:
            return None, problems + [_error("entry_too_large", f"{folder}/: {total:,} bytes of PNG, over the "
                                            f"{self.limits.video_bytes:,}-byte limit for one video", sid, folder)]
        tally, frames, pixels = Tally(), [], 0
        for entry, name in zip(video.entries, names):
            data = self._read_entry(entry, self.limits.video_bytes)
            digests[entry.name] = hashlib.sha256(data).hexdigest()
            header = png_header(data)
            if header is None:
                tally.add("unreadable", name, f"not a PNG (it starts with {data[:8]!r})")
                continue
            width, height, depth, colour = header
            if (depth, colour) != (8, 2):
                tally.add("png_format", name, f"{PNG_COLOURS.get(colour, f'colour type {colour}')} {depth}-bit")
                continue
            if expected and (height, width) != (expected[1], expected[1]):
                tally.add("resolution", name, f"{height}x{width} pixels (H x W), the split is "
                          f"{expected[1]}x{expected[1]}")
                continue
            pixels += width * height
            if 3 * pixels > self.limits.video_bytes:
                return None, problems + [_error("entry_too_large", f"{folder}/: the frames decode to more than "
                                                f"{self.limits.video_bytes:,} bytes", sid, folder)]
            try:
                frames.append(decode_png_rgb(data))
            except Exception as exc:  # Pillow and zlib raise many types for broken files
                tally.add("unreadable", name, f"cannot be decoded ({type(exc).__name__}: {exc})")
        problems += tally.problems(sid, folder, {
            "unreadable": "the PNG is truncated or corrupt: write it again",
            "png_format": "frames must be 8-bit RGB: Image.fromarray(frame).convert('RGB'), "
                          "16-bit data as (x >> 8).astype(np.uint8)",
            "resolution": f"generate at {expected[1] if expected else '?'} px",
        })
        if any(p.severity == "error" for p in problems):
            return None, problems
        if len({f.shape for f in frames}) != 1:
            return None, problems + [_error("shape", f"{folder}/: frame sizes differ "
                                            f"({sorted({f.shape[:2] for f in frames})})", sid, folder)]
        return np.stack(frames), problems


def open_submission(path: str | os.PathLike[str], *, manifest: Manifest | None = None,
                    limits: Limits | None = None) -> Submission:
    """`Submission(path, ...)`: open a submission folder or archive for reading (a context manager)."""
    return Submission(path, manifest=manifest, limits=limits)


def hash_lines(digests: dict[str, str]) -> str:
    lines = "".join(f"{digest}  {path}\n" for path, digest in sorted(digests.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def submission_hash(sub: Submission | str | os.PathLike[str]) -> str:
    """sha256 over `sha256sum`-style lines, one per file of the submission.

    The files are submission.json and every video file under videos/ (each frame of a
    PNG folder), named by their path inside the submission and sorted by it; the
    same for a folder, a .zip or a .tar of it.  From a shell, for a clean folder:
    ``cd SUB && find submission.json videos -type f | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum``
    """
    if not isinstance(sub, Submission):
        with Submission(sub) as opened:
            return submission_hash(opened)
    if sub._meta_digest is None:
        raise SubmissionError([p for p in sub.problems if p.entry == META]
                              or [_error("missing_submission_json", f"no {META}")])
    digests = {META: sub._meta_digest}
    entries = sorted((e for vs in sub._videos.values() for v in vs for e in v.entries), key=lambda e: e.order)
    for entry in entries:
        try:
            data = sub._read_entry(entry, sub.limits.video_bytes)
        except ReadError as exc:
            raise SubmissionError([exc.problem]) from None
        digests[entry.name] = hashlib.sha256(data).hexdigest()
    return hash_lines(digests)

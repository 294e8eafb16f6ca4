"""Submissions: the videos a model hands in for one split, read safely, and `validate`.

Layout (a folder, or a .zip / .tar / .tar.gz / .tar.bz2 / .tar.xz holding one)::

    SUB/
      submission.json                   model, task, split, split hash, settings
      videos/<sample_id>.npy            uint8 (T, H, W, 3), condition frames included
      videos/<sample_id>.npz            the same array, alone, under the key "video"
      videos/<sample_id>/00000.png ...  one 8-bit RGB PNG per frame
      videos/<sample_id>.mp4            accepted with a warning: lossy coding moves scores

Sample ids hold slashes (``uniform/id-eval/0000012``), so the path of a video is its id:
``videos/uniform/id-eval/0000012.npy``.  Nothing else is read out of file names.

Submissions come from outside.  Archives are read member by member in memory, never
extracted; names, types and declared sizes are checked before anything is decompressed,
and every read stops at its size limit whatever the headers claim.  Folders are read
without following links.  Only `write_submission` writes files.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import posixpath
import re
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..data.frames import PNG_SIGNATURE, encode_png
from ..data.video import LimitExceeded as _LimitExceeded  # one limit type: the decoder's
from ..data.video import decode_mp4
from ..data.split import SplitReader, read_manifest

SCHEMA_VERSION = 1
META = "submission.json"
VIDEO_DIR = "videos"
FILE_FORMATS = (".npy", ".npz", ".mp4")  # one file per video; PNG frames go in a folder
WRITE_FORMATS = ("npy", "npz", "png")  # no mp4: write_submission never makes a lossy copy
FRAME_NAME = re.compile(r"^(\d{5})\.png$")
JUNK_NAMES = {".DS_Store", "Thumbs.db", "desktop.ini"}  # left by file managers; ignored
MAX_NAME_BYTES = 1024


# ------------------------------------------------------------------ problems
from ..problems import Problem  # noqa: E402  (re-exported: phybench.scoring.submission.Problem)
from ..problems import error as _error  # noqa: E402
from ..problems import warning as _warning  # noqa: E402


class SubmissionError(Exception):
    """A submission (or one of its videos) cannot be used; `problems` says why."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems if p.severity == "error") or "invalid submission")


class _ReadError(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem




# ------------------------------------------------------------------ limits
@dataclass(frozen=True)
class Limits:
    """Sizes past which a submission is refused without reading it (bytes, counts)."""

    video_bytes: int = 256 << 20  # one video file, or one PNG frame folder in all
    total_bytes: int = 64 << 30  # every file, uncompressed
    entries: int = 1_000_000  # files and folders in the submission
    meta_bytes: int = 1 << 20  # submission.json
    mp4_timeout_s: float = 60.0  # wall-clock seconds to decode one mp4

    @classmethod
    def for_split(cls, manifest: dict[str, Any]) -> "Limits":
        """Limits that fit the split: 8x its raw video size per file and in all.

        8x, so that a float64 video is still read far enough to be told its dtype."""
        raw = int(manifest["frames"]) * int(manifest["resolution"]) ** 2 * 3
        n = int(manifest["num_samples"])
        return cls(
            video_bytes=8 * raw + (1 << 20),  # + headers, PNG overhead, mp4 containers
            total_bytes=8 * n * raw + (64 << 20),
            entries=n * (int(manifest["frames"]) + 2) + 1000,  # a PNG folder per video, plus folders
        )


# ------------------------------------------------------------------ names
def _shown(name: str) -> str:
    """A name as it can be printed: undecodable bytes as \\xNN escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _valid_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _safe_relpath(name: str) -> tuple[str | None, str]:
    """(normalised posix path, "") or (None, why it is refused); ("", "") for the root itself."""
    if "\x00" in name:
        return None, "contains a NUL character"
    if "\\" in name:
        return None, "contains a backslash; archive paths must use '/' (a Windows path could escape the folder)"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None, "is an absolute path"
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        return None, f"is longer than {MAX_NAME_BYTES} bytes"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, "has a '..' component, so it would land outside the submission folder"
    return "/".join(parts), ""


def _is_junk(name: str) -> bool:
    parts = name.split("/")
    return "__MACOSX" in parts or parts[-1] in JUNK_NAMES or parts[-1].startswith("._")


@dataclass
class _Entry:
    name: str  # path inside the submission, root prefix removed
    size: int  # declared size in bytes (uncompressed)
    order: int  # position in storage: a compressed tar reads forward cheaply, backward not
    handle: Any  # ZipInfo, TarInfo or filesystem path


class _Listing:
    """Collects the entries of a container, refusing unsafe ones, counting everything."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.files: dict[str, _Entry] = {}
        self.problems: list[Problem] = []
        self.count = 0
        self.declared = 0

    def add(self, name: str, kind: str, size: int, handle: Any, where: str) -> None:
        """kind: file, dir, symlink, hardlink or special.  where: "archive entry" or "path"."""
        self.count += 1
        if self.count > self.limits.entries:
            raise SubmissionError([_error(
                "too_many_entries",
                f"the submission holds more than {self.limits.entries:,} files and folders, more than the "
                "split can need; it is refused unread (is it the right folder?)")])
        if not _valid_utf8(name):
            self.problems.append(_error(
                "bad_name_encoding",
                f"{where} '{_shown(name)}': the name is not valid UTF-8; rename it (sample ids are ASCII)",
                entry=_shown(name)))
            return
        clean, why = _safe_relpath(name)
        if clean is None:
            self.problems.append(_error("unsafe_path", f"{where} {name!r} {why}; it is ignored: make the "
                                        "archive from inside the submission folder", entry=name))
            return
        if not clean or kind == "dir":
            return
        if kind in ("symlink", "hardlink"):
            self.problems.append(_error("link", f"{where} {clean!r} is a {kind}; links are refused: "
                                        "store the file itself (tar -h, or copy it in)", entry=clean))
            return
        if kind == "special":
            self.problems.append(_error("special_file", f"{where} {clean!r} is not a regular file "
                                        "(device, FIFO or socket); remove it", entry=clean))
            return
        if clean in self.files:
            self.problems.append(_error("duplicate_entry", f"{where} {clean!r} appears more than once; "
                                        "keep one copy (re-create the archive from a clean folder)", entry=clean))
            return
        self.declared += size
        if self.declared > self.limits.total_bytes:
            raise SubmissionError([_error(
                "too_large",
                f"the submission holds more than {self.limits.total_bytes:,} bytes (uncompressed) by the time "
                f"of {where} {clean!r}, over the limit for the whole submission; it is refused unread "
                "(a decompression bomb, or videos far larger than the split's?)", entry=clean)])
        self.files[clean] = _Entry(clean, size, len(self.files), handle)


def _read_capped(f: Any, limit: int) -> bytes:
    """Read f to its end, or raise _LimitExceeded past `limit` bytes (headers may lie)."""
    chunks, total = [], 0
    while True:
        chunk = f.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise _LimitExceeded
        chunks.append(chunk)


# ------------------------------------------------------------------ containers
class _FolderSource:
    kind = "folder"
    where = "path"

    def __init__(self, root: Path, listing: _Listing) -> None:
        self.root = root
        stack = [(str(root), "")]
        while stack:
            path, rel = stack.pop()
            try:
                with os.scandir(path) as it:
                    items = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                listing.problems.append(_error("entry_unreadable", f"folder {rel or '.'!r} cannot be listed ({exc})",
                                               entry=rel or "."))
                continue
            for item in items:
                name = rel + item.name
                if item.is_symlink():
                    listing.add(name, "symlink", 0, item.path, self.where)
                elif item.is_dir(follow_symlinks=False):
                    listing.add(name + "/", "dir", 0, item.path, self.where)
                    if _safe_relpath(name)[0] is not None and _valid_utf8(name):
                        stack.append((item.path, name + "/"))
                elif item.is_file(follow_symlinks=False):
                    listing.add(name, "file", item.stat(follow_symlinks=False).st_size, item.path, self.where)
                else:
                    listing.add(name, "special", 0, item.path, self.where)

    def read(self, entry: _Entry, limit: int) -> bytes:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(entry.handle, flags)  # no follow, no blocking: a swapped-in link or FIFO fails here
        except OSError as exc:
            raise _ReadError(_error("entry_unreadable", f"file {entry.name!r} cannot be opened ({exc.strerror})",
                                    entry=entry.name)) from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise _ReadError(_error("special_file", f"file {entry.name!r} is not a regular file", entry=entry.name))
            try:
                return _read_capped(f, limit)
            except OSError as exc:
                raise _ReadError(_error("entry_unreadable", f"file {entry.name!r} cannot be read ({exc})",
                                        entry=entry.name)) from None

    def close(self) -> None:
        pass


def _zip_entry_count(f: Any) -> int | None:
    """Entries a zip declares, read from its end record before zipfile loads them all."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    start = max(0, size - (22 + 0xFFFF))  # end record + the longest comment
    f.seek(start)
    tail = f.read()
    i = tail.rfind(b"PK\x05\x06")
    if i < 0 or len(tail) - i < 22:
        return None  # not a zip: zipfile says so
    (count,) = struct.unpack("<H", tail[i + 10 : i + 12])
    locator = start + i - 20
    if count == 0xFFFF and locator >= 0:  # zip64: the real count is in the zip64 end record
        f.seek(locator)
        loc = f.read(20)
        if loc[:4] == b"PK\x06\x07":
            (offset,) = struct.unpack("<Q", loc[8:16])
            f.seek(offset)
            record = f.read(56)
            if record[:4] == b"PK\x06\x06":
                (count,) = struct.unpack("<Q", record[32:40])
    return count


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if stat.S_IFMT(mode):
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISDIR(mode):
            return "dir"
        if not stat.S_ISREG(mode):
            return "special"
    return "dir" if info.filename.endswith("/") else "file"


_ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, NotImplementedError,
                    RuntimeError, ValueError)


class _ZipSource:
    kind = "zip"
    where = "archive entry"

    def __init__(self, path: Path, listing: _Listing) -> None:
        self._file = open(path, "rb")
        try:
            count = _zip_entry_count(self._file)
            if count is not None and count > listing.limits.entries:
                raise SubmissionError([_error(
                    "too_many_entries",
                    f"{path.name} declares {count:,} entries, more than the {listing.limits.entries:,} the split "
                    "can need; refused unread")])
            self._file.seek(0)
            try:
                self._zip = zipfile.ZipFile(self._file)
            except UnicodeDecodeError as exc:
                raise SubmissionError([_error(
                    "bad_name_encoding",
                    f"{path.name}: an entry name is flagged UTF-8 but is not ({exc.object[:60]!r}); "
                    "re-create the archive with ASCII names")]) from None
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error) as exc:
                raise SubmissionError([_error(
                    "archive_unreadable",
                    f"{path.name} is not a readable zip archive ({exc}); was the upload cut short? "
                    "Re-create it, e.g. `cd SUB && zip -r ../sub.zip .`")]) from None
            for info in self._zip.infolist():
                name = info.orig_filename
                if not info.flag_bits & 0x800:  # not flagged UTF-8: zipfile decoded it as cp437
                    raw = name.encode("cp437")
                    if not raw.isascii():
                        name = raw.decode("utf-8", "surrogateescape")
                if info.flag_bits & 0x1:
                    listing.problems.append(_error(
                        "encrypted_entry",
                        f"archive entry '{_shown(name)}' is encrypted; submissions must not be: "
                        "re-create the archive without a password", entry=_shown(name)))
                    continue
                listing.add(name, _zip_kind(info), info.file_size, info, self.where)
        except BaseException:
            self._file.close()
            raise

    def read(self, entry: _Entry, limit: int) -> bytes:
        try:
            with self._zip.open(entry.handle) as f:
                return _read_capped(f, limit)
        except _ZIP_READ_ERRORS as exc:
            raise _ReadError(_error(
                "entry_unreadable",
                f"archive entry {entry.name!r} cannot be decompressed ({exc}); the archive is damaged "
                "or its headers are wrong: re-create it", entry=entry.name)) from None

    def close(self) -> None:
        self._zip.close()
        self._file.close()


class _CappedStream:
    """A read-only stream that refuses to go past `cap` bytes: bounds the work a
    compressed tar can cause, however large its headers say its members are."""

    def __init__(self, raw: Any, cap: int) -> None:
        self._raw, self._cap, self._pos = raw, cap, 0

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = self._cap + 1 - self._pos
        if self._pos + n > self._cap:
            raise _LimitExceeded
        data = self._raw.read(n)
        self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        target = offset if whence == os.SEEK_SET else self._pos + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR):
            raise OSError("cannot seek from the end of a submission archive")
        if target > self._cap:
            raise _LimitExceeded
        self._pos = self._raw.seek(target)
        return self._pos

    def tell(self) -> int:
        return self._pos


_TAR_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.isreg():
        return "file"
    if member.isdir():
        return "dir"
    if member.issym():
        return "symlink"
    if member.islnk():
        return "hardlink"
    return "special"


class _TarSource:
    kind = "tar"
    where = "archive entry"

    def __init__(self, path: Path, listing: _Listing) -> None:
        self._file = open(path, "rb")
        try:
            magic = self._file.read(6)
            self._file.seek(0)
            if magic.startswith(b"\x1f\x8b"):
                raw: Any = gzip.GzipFile(fileobj=self._file, mode="rb")
            elif magic.startswith(b"BZh"):
                raw = bz2.BZ2File(self._file)
            elif magic == b"\xfd7zXZ\x00":
                raw = lzma.LZMAFile(self._file)
            else:
                raw = self._file
            limits = listing.limits
            cap = limits.total_bytes + 1024 * limits.entries + (1 << 20)  # data + two header blocks per entry
            self._stream = _CappedStream(raw, cap)
            try:
                self._tar = tarfile.open(fileobj=self._stream, mode="r:", encoding="utf-8", errors="surrogateescape")
                while (member := self._tar.next()) is not None:
                    listing.add(member.name, _tar_kind(member), member.size if member.isreg() else 0, member,
                                self.where)
            except _LimitExceeded:
                raise SubmissionError([_error(
                    "too_large",
                    f"{path.name} decompresses to more than {cap:,} bytes, over the limit for the whole "
                    "submission; refused (a decompression bomb?)")]) from None
            except _TAR_ERRORS as exc:
                raise SubmissionError([_error(
                    "archive_unreadable",
                    f"{path.name} is not a readable tar archive ({exc}); was the upload cut short? "
                    "Re-create it, e.g. `tar -czf sub.tar.gz -C SUB .`")]) from None
        except BaseException:
            self._file.close()
            raise

    def read(self, entry: _Entry, limit: int) -> bytes:
        try:
            f = self._tar.extractfile(entry.handle)
            if f is None:
                raise tarfile.TarError("not a regular file")
            return _read_capped(f, limit)
        except _LimitExceeded:
            raise
        except _TAR_ERRORS as exc:
            raise _ReadError(_error(
                "entry_unreadable",
                f"archive entry {entry.name!r} cannot be read ({exc}); the archive is truncated or damaged: "
                "re-create it", entry=entry.name)) from None

    def close(self) -> None:
        self._tar.close()
        self._file.close()


def _open_source(path: Path, listing: _Listing) -> Any:
    if path.is_dir():
        return _FolderSource(path, listing)
    if not path.exists():
        raise SubmissionError([_error("not_found", f"{path} does not exist")])
    if not path.is_file():
        raise SubmissionError([_error("unsupported_container", f"{path} is neither a folder nor an archive file")])
    name = path.name.lower()
    if name.endswith(".zip"):
        return _ZipSource(path, listing)
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")):
        return _TarSource(path, listing)
    raise SubmissionError([_error(
        "unsupported_container",
        f"{path.name}: a submission is a folder, a .zip, or a .tar (.tar.gz, .tar.bz2, .tar.xz) of one")])


# ------------------------------------------------------------------ arrays
def _dtype_hint(dtype: np.dtype) -> str:
    if dtype.kind == "f":
        return "(x*255).round().clip(0,255).astype(np.uint8) if x is in [0, 1], after replacing any NaN"
    if dtype.kind in "iub":
        return "x.clip(0,255).astype(np.uint8)"
    return "np.asarray(x, dtype=np.uint8)"


def _check_array(shape: tuple[int, ...], dtype: np.dtype, expected: tuple[int, int, int] | None,
                 sample_id: str | None, where: str) -> list[Problem]:
    """Problems with a video's header: dtype, layout, frame count, resolution.

    expected: (frames, resolution, condition_frames) of the split, if known."""
    problems = []
    if dtype != np.uint8:
        problems.append(_error("dtype", f"{where}: dtype {dtype}, expected uint8 (convert with {_dtype_hint(dtype)})",
                               sample_id, where))
    if len(shape) != 4 or shape[-1] != 3:
        if len(shape) == 4 and shape[1] == 3:
            hint = "it looks channels-first (T, 3, H, W): use x.transpose(0, 2, 3, 1)"
        elif len(shape) == 3:
            hint = "one video is (T, H, W, 3), colour last; greyscale must be repeated to 3 channels"
        elif len(shape) == 5:
            hint = "is it a batch? save one video per sample id"
        else:
            hint = "save one video per sample id, colour last"
        problems.append(_error("shape", f"{where}: shape {tuple(shape)}, expected (T, H, W, 3); {hint}",
                               sample_id, where))
        return problems
    if expected is not None:
        frames, resolution, condition = expected
        if shape[0] != frames:
            problems.append(_error(
                "frame_count",
                f"{where}: {shape[0]} frames, the split has {frames}; videos are full length: the {condition} "
                f"condition frames first, then {frames - condition} generated ones", sample_id, where))
        if tuple(shape[1:3]) != (resolution, resolution):
            problems.append(_error(
                "resolution",
                f"{where}: {shape[1]}x{shape[2]} pixels (H x W), the split is {resolution}x{resolution}; "
                f"generate at {resolution} px", sample_id, where))
    return problems


def _parse_npy(data: bytes, sample_id: str | None, where: str,
               expected: tuple[int, int, int] | None) -> tuple[np.ndarray | None, list[Problem]]:
    """An .npy file's bytes -> array, checking its header before touching the data."""
    if data[:1] == b"\x80":  # pickle protocol 2+ opcode
        return None, [_error("pickled_array", f"{where}: a Python pickle, not an .npy array; pickles can run code "
                             "and are never loaded: save with np.save(path, video, allow_pickle=False)",
                             sample_id, where)]
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"npy format version {version[0]}.{version[1]}, expected 1.0 or 2.0")
    except (ValueError, SyntaxError, TypeError, EOFError, OverflowError) as exc:
        return None, [_error("not_npy", f"{where}: not a readable .npy file ({exc}; it starts with {data[:10]!r}); "
                             "write it with np.save(path, video)", sample_id, where)]
    if any(n < 0 for n in shape):
        return None, [_error("not_npy", f"{where}: the header declares a negative size {shape}; the file is "
                             "corrupt: write it with np.save(path, video)", sample_id, where)]
    if dtype.hasobject:
        return None, [_error("pickled_array", f"{where}: an array of Python objects (dtype {dtype}), stored as a pickle; "
                             "pickles can run code and are never loaded: save a uint8 array with "
                             "np.save(path, np.asarray(video, dtype=np.uint8), allow_pickle=False)", sample_id, where)]
    problems = _check_array(shape, dtype, expected, sample_id, where)
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    have = len(data) - f.tell()
    if have < need:
        problems.append(_error("truncated", f"{where}: the header promises {need:,} data bytes but the file holds "
                               f"{have:,}: it is truncated (an interrupted write or upload?); write it again",
                               sample_id, where))
    elif have > need:
        problems.append(_warning("trailing_bytes", f"{where}: {have - need:,} bytes after the array data are ignored",
                                 sample_id, where))
    if any(p.severity == "error" for p in problems):
        return None, problems
    return np.load(io.BytesIO(data), allow_pickle=False), problems


def _parse_npz(data: bytes, sample_id: str, where: str, expected: tuple[int, int, int] | None,
               limit: int) -> tuple[np.ndarray | None, list[Problem]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            arrays = [i for i in infos if i.filename.endswith(".npy")]
            if len(infos) != 1 or len(arrays) != 1:
                names = ", ".join(i.filename for i in infos[:5]) + (", ..." if len(infos) > 5 else "")
                return None, [_error("npz_members", f"{where}: holds {len(infos)} members ({names or 'none'}); "
                                     "expected exactly one array: np.savez_compressed(path, video=video)",
                                     sample_id, where)]
            info = arrays[0]
            if info.file_size > limit:
                return None, [_error("entry_too_large", f"{where}: its array is {info.file_size:,} bytes "
                                     f"uncompressed, over the {limit:,}-byte limit", sample_id, where)]
            with zf.open(info) as f:
                inner = _read_capped(f, limit)
    except _LimitExceeded:
        return None, [_error("entry_too_large", f"{where}: its array decompresses past the {limit:,}-byte limit",
                             sample_id, where)]
    except _ZIP_READ_ERRORS as exc:
        return None, [_error("unreadable", f"{where}: not a readable .npz file ({exc}); write it with "
                             "np.savez_compressed(path, video=video)", sample_id, where)]
    key = info.filename[:-4]
    problems = []
    if key != "video":
        problems.append(_warning("npz_key", f"{where}: the array is named {key!r}; name it 'video' "
                                 "(np.savez_compressed(path, video=video))", sample_id, where))
    array, more = _parse_npy(inner, sample_id, f"{where}:{key}", expected)
    return array, problems + more


_PNG_COLOURS = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale+alpha", 6: "RGBA"}


def _png_header(data: bytes) -> tuple[int, int, int, int] | None:
    """(width, height, bit depth, colour type) from the IHDR chunk, or None if not a PNG."""
    if not data.startswith(PNG_SIGNATURE) or len(data) < 29 or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, depth, colour


def _decode_png_rgb(data: bytes) -> np.ndarray:
    """An 8-bit RGB PNG (IHDR checked by the caller) -> uint8 (H, W, 3).

    Pillow inflates into an image of the declared size and stops there, so compressed
    data that would inflate far past it (a bomb) cannot; `frames.decode_png`'s fast
    path inflates everything first, which is fine for our own splits, not for uploads."""
    from PIL import Image

    with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
        image.load()
        if image.mode != "RGB":
            raise ValueError(f"decodes as {image.mode}, not RGB")
        return np.asarray(image, dtype=np.uint8).copy()


class _Tally:
    """First example and count of each kind of problem across a video's frames."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[str, str]] = {}
        self.count: Counter[str] = Counter()

    def add(self, code: str, frame: str, text: str) -> None:
        self.first.setdefault(code, (frame, text))
        self.count[code] += 1

    def problems(self, sample_id: str, folder: str, hints: dict[str, str]) -> list[Problem]:
        out = []
        for code, (frame, text) in self.first.items():
            more = self.count[code] - 1
            out.append(_error(code, f"{folder}/{frame}: {text}" + (f" (and {more} more frames)" if more else "")
                              + f"; {hints[code]}", sample_id, f"{folder}/{frame}"))
        return out


# ------------------------------------------------------------------ submission
@dataclass
class _Video:
    sample_id: str
    fmt: str  # npy, npz, mp4 or png
    entries: list[_Entry]  # one file, or the frames of a PNG folder in name order

    @property
    def order(self) -> int:
        return min(e.order for e in self.entries)

    @property
    def where(self) -> str:
        return self.entries[0].name if self.fmt != "png" else f"{VIDEO_DIR}/{self.sample_id}"


def _schema() -> dict[str, Any]:
    from importlib.resources import files

    return json.loads((files("phybench.scoring") / "schemas" / "submission.schema.json").read_text("utf-8"))


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
    return problems


def _parse_meta(data: bytes) -> tuple[Any, list[Problem]]:
    def _no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON; use a number or null")

    def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        dups = sorted({k for k in keys if keys.count(k) > 1})
        if dups:
            raise ValueError(f"duplicate key(s) {', '.join(map(repr, dups))}")
        return dict(pairs)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [_error("invalid_json", f"{META} is not UTF-8 text ({exc}); save it as UTF-8", entry=META)]
    try:
        meta = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_duplicates)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        return None, [_error("invalid_json", f"{META} is not valid JSON: {exc}", entry=META)]
    return meta, schema_problems(meta)


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

    def __init__(self, path: str | os.PathLike[str], *, manifest: dict[str, Any] | None = None,
                 limits: Limits | None = None) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self.limits = limits or (Limits.for_split(manifest) if manifest else Limits())
        listing = _Listing(self.limits)
        self._source = _open_source(self.path, listing)
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
    def _strip_root(self, files: dict[str, _Entry]) -> dict[str, _Entry]:
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
            elif not _is_junk(name):
                self.problems.append(_warning("unexpected_file", f"{name!r} is outside the submission folder "
                                              f"{prefix[:-1]!r}; it is ignored", entry=name))
        return kept

    def _classify(self, files: dict[str, _Entry]) -> None:
        found: dict[str, dict[str, list[_Entry]]] = {}
        for name, entry in files.items():
            if name == META:
                self._read_meta(entry)
            elif _is_junk(name):
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
                "phybench.scoring.submission.write_submission", entry=META))

    def _read_meta(self, entry: _Entry) -> None:
        try:
            data = self._read_entry(entry, self.limits.meta_bytes)
        except _ReadError as exc:
            self.problems.append(exc.problem)
            return
        self._meta_digest = hashlib.sha256(data).hexdigest()
        meta, problems = _parse_meta(data)
        self._meta = meta
        self._meta_ok = not problems
        self.problems.extend(problems)

    def _read_entry(self, entry: _Entry, limit: int) -> bytes:
        if entry.size > limit:
            raise _ReadError(_error("entry_too_large", f"{entry.name!r} is {entry.size:,} bytes (uncompressed), over "
                                    f"the {limit:,}-byte limit for it; refused unread", entry=entry.name))
        try:
            return self._source.read(entry, limit)
        except _LimitExceeded:
            raise _ReadError(_error("entry_too_large", f"{entry.name!r} decompresses past the {limit:,}-byte limit "
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
        except _ReadError as exc:
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
            return _parse_npy(data, sid, where, expected)
        if video.fmt == "npz":
            return _parse_npz(data, sid, where, expected, self.limits.video_bytes)
        try:
            array = decode_mp4(data, max_bytes=self.limits.video_bytes, timeout_s=self.limits.mp4_timeout_s)
        except _LimitExceeded:
            return None, [_error("entry_too_large", f"{where}: decodes to more than {self.limits.video_bytes:,} "
                                 "bytes of frames, far more than the split's videos", sid, where)]
        except (ValueError, OSError, RuntimeError) as exc:
            return None, [_error("unreadable", f"{where}: cannot be decoded as mp4 ({exc}); the file is corrupt, "
                                 "truncated or not an mp4: write it again, or better, submit .npy", sid, where)]
        return array, _check_array(array.shape, array.dtype, expected, sid, where)

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
        problems = _check_array((len(names), 0, 0, 3), np.dtype(np.uint8), expected, sid, folder)
        problems = [p for p in problems if p.code != "resolution"]  # frame sizes are checked below
        if expected and len(names) > expected[0]:
            return None, problems  # more frames than the split: not worth decoding
        total = sum(e.size for e in video.entries)
        if total > self.limits.video_bytes:
            return None, problems + [_error("entry_too_large", f"{folder}/: {total:,} bytes of PNG, over the "
                                            f"{self.limits.video_bytes:,}-byte limit for one video", sid, folder)]
        tally, frames, pixels = _Tally(), [], 0
        for entry, name in zip(video.entries, names):
            data = self._read_entry(entry, self.limits.video_bytes)
            digests[entry.name] = hashlib.sha256(data).hexdigest()
            header = _png_header(data)
            if header is None:
                tally.add("unreadable", name, f"not a PNG (it starts with {data[:8]!r})")
                continue
            width, height, depth, colour = header
            if (depth, colour) != (8, 2):
                tally.add("png_format", name, f"{_PNG_COLOURS.get(colour, f'colour type {colour}')} {depth}-bit")
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
                frames.append(_decode_png_rgb(data))
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


def open_submission(path: str | os.PathLike[str], *, manifest: dict[str, Any] | None = None,
                    limits: Limits | None = None) -> Submission:
    """`Submission(path, ...)`: open a submission folder or archive for reading (a context manager)."""
    return Submission(path, manifest=manifest, limits=limits)


# ------------------------------------------------------------------ hash
def _hash_lines(digests: dict[str, str]) -> str:
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
        except _ReadError as exc:
            raise SubmissionError([exc.problem]) from None
        digests[entry.name] = hashlib.sha256(data).hexdigest()
    return _hash_lines(digests)


# ------------------------------------------------------------------ writing
def _check_sample_id(sample_id: Any) -> str:
    if not isinstance(sample_id, str) or not sample_id:
        raise ValueError(f"sample id must be a non-empty string, got {sample_id!r}")
    clean, why = _safe_relpath(sample_id)
    if clean != sample_id or posixpath.splitext(sample_id)[1] in (*FILE_FORMATS, ".png"):
        raise ValueError(f"sample id {sample_id!r} cannot be a path inside videos/ ({why or 'not normalised'})")
    return sample_id


def write_submission(out_dir: str | os.PathLike[str], meta: dict[str, Any],
                     videos: Iterable[tuple[str, np.ndarray]], fmt: str = "npy") -> Path:
    """Write a submission folder atomically: all of it, or nothing.

    meta: submission.json (`schema_version` is filled in); checked against the schema
    before anything is written.  videos: (sample_id, uint8 (T, H, W, 3)) pairs, full
    length, condition frames included.  fmt: "npy", "npz" or "png" (lossless only).
    The folder is built beside `out_dir` under a temporary name, then renamed; an
    existing `out_dir` is never overwritten.
    """
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(WRITE_FORMATS)}, got {fmt!r}")
    out = Path(out_dir)
    if out.exists():
        raise FileExistsError(f"{out} exists; write_submission never overwrites: choose a new folder or remove it")
    meta = {"schema_version": SCHEMA_VERSION, **meta}
    problems = schema_problems(meta)
    if problems:
        raise SubmissionError(problems)
    expected = (meta["frames"], meta["resolution"], meta["condition_frames"])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        seen: set[str] = set()
        for sample_id, video in videos:
            _check_sample_id(sample_id)
            if sample_id in seen:
                raise ValueError(f"sample id {sample_id!r} given twice")
            seen.add(sample_id)
            video = np.asarray(video)
            problems = _check_array(video.shape, video.dtype, expected, sample_id, sample_id)
            if problems:
                raise SubmissionError(problems)
            path = tmp / VIDEO_DIR / sample_id
            path.parent.mkdir(parents=True, exist_ok=True)
            if fmt == "npy":
                with open(f"{path}.npy", "wb") as f:
                    np.save(f, np.ascontiguousarray(video), allow_pickle=False)
            elif fmt == "npz":
                with open(f"{path}.npz", "wb") as f:
                    np.savez_compressed(f, video=video)
            else:
                path.mkdir()
                for t, frame in enumerate(video):
                    (path / f"{t:05d}.png").write_bytes(encode_png(np.ascontiguousarray(frame)))
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def submission_meta(manifest: dict[str, Any], model: str, *, sampler: dict[str, Any] | None = None,
                    seeds: list[int] | None = None, notes: str = "", **extra: Any) -> dict[str, Any]:
    """A submission.json for a split, its fields copied from the split's manifest."""
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "model": {"name": model},
        "task": manifest["task"],
        "split": manifest["split"],
        "split_hash": manifest["split_hash"],
        "condition_frames": int(manifest["condition_frames"]),
        "frames": int(manifest["frames"]),
        "resolution": int(manifest["resolution"]),
        "fps": 1.0 / float(manifest["frame_interval"]),
        "sampler": sampler or {},
        "seeds": seeds if seeds is not None else [0],
    }
    if notes:
        meta["notes"] = notes
    if extra:
        meta["extra"] = extra
    return meta


# ------------------------------------------------------------------ validate
@dataclass
class ValidationReport:
    """Everything wrong with a submission, checked against one split."""

    submission: str
    split_dir: str
    task: str
    split: str
    expected_ids: int = 0
    found_ids: int = 0
    checked_videos: int = 0
    problems: list[Problem] = field(default_factory=list)
    submission_hash: str | None = None  # set when the submission is valid

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        """Problems per code."""
        return dict(Counter(p.code for p in self.problems))

    def to_dict(self) -> dict[str, Any]:
        return {
            "submission": self.submission, "split_dir": self.split_dir, "task": self.task, "split": self.split,
            "ok": self.ok, "errors": len(self.errors), "warnings": len(self.warnings),
            "expected_ids": self.expected_ids, "found_ids": self.found_ids, "checked_videos": self.checked_videos,
            "counts": self.counts(), "submission_hash": self.submission_hash,
            "problems": [p.to_dict() for p in self.problems],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_text(self, max_per_code: int = 10) -> str:
        """For people: errors first, at most `max_per_code` lines per code, then a count."""
        lines = [f"{self.submission}: {self.task}/{self.split} submission, checked against {self.split_dir}",
                 f"  {self.found_ids} of {self.expected_ids} sample ids present, {self.checked_videos} videos read"]
        for severity in ("error", "warning"):
            shown: Counter[str] = Counter()
            group = [p for p in self.problems if p.severity == severity]
            totals = Counter(p.code for p in group)
            for p in group:
                shown[p.code] += 1
                if shown[p.code] <= max_per_code:
                    lines.append(f"  {severity:<7} {p.code:<22} {p.message}")
                elif shown[p.code] == totals[p.code]:
                    lines.append(f"  {severity:<7} {p.code:<22} ... and {totals[p.code] - max_per_code} more")
        if self.ok:
            lines.append(f"OK ({len(self.warnings)} warning(s))  submission hash {self.submission_hash}")
        else:
            lines.append(f"FAILED: {len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        return "\n".join(lines)


def _check_meta(meta: Any, manifest: dict[str, Any], split_dir: str) -> list[Problem]:
    """submission.json against the split's manifest: one problem per field that differs."""
    if not isinstance(meta, dict):
        return []
    problems = []
    command = manifest.get("command") or f"phybench generate {manifest['task']} --split {manifest['split']}"

    def differs(key: str, kind: type) -> bool:
        value = meta.get(key)
        return isinstance(value, kind) and not isinstance(value, bool) and value != manifest[key]

    for key in ("task", "split"):
        if differs(key, str):
            problems.append(_error(f"{key}_mismatch", f"{META}: {key} {meta[key]!r}, but {split_dir} holds "
                                   f"{key} {manifest[key]!r}; validate against the right split, or fix the field",
                                   entry=META))
    if differs("split_hash", str):
        problems.append(_error(
            "split_hash_mismatch",
            f"{META}: split_hash {meta['split_hash']}, but the split in {split_dir} has {manifest['split_hash']} "
            f"(its manifest.json): the videos answer another version or subset of the split. Get the split again "
            f"(`{command}`, or re-download it), run the model on it, and copy split_hash from its manifest.json",
            entry=META))
    if differs("frames", int):
        problems.append(_error("frames_mismatch", f"{META}: frames {meta['frames']}, the split has "
                               f"{manifest['frames']} per video, the {manifest['condition_frames']} condition frames "
                               "included", entry=META))
    if differs("resolution", int):
        problems.append(_error("resolution_mismatch", f"{META}: resolution {meta['resolution']}, the split is "
                               f"{manifest['resolution']} px", entry=META))
    if differs("condition_frames", int):
        problems.append(_error("condition_frames_mismatch", f"{META}: condition_frames {meta['condition_frames']}, "
                               f"the split conditions on the first {manifest['condition_frames']} frames; "
                               "condition the model on exactly those", entry=META))
    fps = meta.get("fps")
    want = 1.0 / float(manifest["frame_interval"])
    if isinstance(fps, (int, float)) and not isinstance(fps, bool) and abs(fps - want) > 1e-6 * want:
        problems.append(_error("fps_mismatch", f"{META}: fps {fps:g}, but the split's frames are "
                               f"{manifest['frame_interval']:g} s apart ({want:g} fps); the videos must keep "
                               "that time step", entry=META))
    return problems


def _near_ids(extra: list[str], expected: Iterable[str]) -> dict[str, str]:
    """extra id -> the expected id it was probably meant to be (separators mangled)."""
    plain = {re.sub(r"[^0-9a-z]", "", e.lower()): e for e in expected}
    return {x: plain[k] for x in extra if (k := re.sub(r"[^0-9a-z]", "", x.lower())) in plain}


def validate(submission_path: str | os.PathLike[str], split_dir: str | os.PathLike[str], *,
             limits: Limits | None = None) -> ValidationReport:
    """Check a submission against a split and report every problem at once.

    Reads the submission (folder or archive) without writing anything anywhere.
    A split folder that cannot be read raises SplitError: that is the caller's mistake,
    not the submission's."""
    manifest = read_manifest(split_dir)
    expected_ids = [row["sample_id"] for row in SplitReader(split_dir).rows(columns=["sample_id"])]
    report = ValidationReport(str(submission_path), str(split_dir), manifest["task"], manifest["split"],
                              expected_ids=len(expected_ids))
    try:
        sub = Submission(submission_path, manifest=manifest, limits=limits)
    except SubmissionError as exc:
        report.problems.extend(exc.problems)
        return report
    with sub:
        report.problems.extend(sub.problems)
        report.problems.extend(_check_meta(sub._meta, manifest, str(split_dir)))
        expected, found = set(expected_ids), set(sub.ids)
        report.found_ids = len(expected & found)
        missing = [i for i in expected_ids if i not in found]
        for n, sample_id in enumerate(missing):
            where = f" (expected at {VIDEO_DIR}/{sample_id}.npy, .npz, .mp4, or a folder of PNG frames)" if n == 0 else ""
            report.problems.append(_error("missing_id", f"{sample_id}: no video{where}", sample_id))
        extra = sorted(found - expected)
        near = _near_ids(extra, expected_ids)
        for sample_id in extra:
            hint = (f"did you mean {near[sample_id]!r}? Ids contain '/', so that video belongs at "
                    f"{VIDEO_DIR}/{near[sample_id]}.npy" if sample_id in near else "remove it")
            report.problems.append(_error(
                "extra_id", f"{sample_id}: not a sample of {manifest['task']}/{manifest['split']} "
                f"({sub._videos[sample_id][0].where}); {hint}", sample_id, sub._videos[sample_id][0].where))
        digests = {META: sub._meta_digest} if sub._meta_digest else {}
        readable = [i for i in sub.ids if i in expected and len(sub._videos[i]) == 1]
        for sample_id in sub.storage_order(readable):
            _, problems, files = sub.inspect(sample_id)
            report.problems.extend(problems)
            digests.update(files)
            report.checked_videos += 1
        if report.ok:
            report.submission_hash = _hash_lines(digests)
    return report

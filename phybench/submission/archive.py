"""The capped readers of a submission container: a folder, a .zip, or a .tar (.gz, .bz2, .xz).

This module is the security boundary of the reader, so it stands alone: the standard library,
numpy and `phybench.problems` only (tests/test_submission.py checks what importing it loads).

Submissions come from outside.  Archives are read member by member in memory, never
extracted; names, types and declared sizes are checked before anything is decompressed,
and every read stops at its size limit whatever the headers claim.  Folders are read
without following links.  What the files mean (submission.json, videos/) is `format`'s job.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..problems import LimitExceeded, Problem
from ..problems import error as _error

if TYPE_CHECKING:  # the readers import alone (the security boundary): the type is for mypy only
    from ..data.documents import Manifest

JUNK_NAMES = {".DS_Store", "Thumbs.db", "desktop.ini"}  # left by file managers; ignored
MAX_NAME_BYTES = 1024


class SubmissionError(Exception):
    """A submission (or one of its videos) cannot be used; `problems` says why."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems if p.severity == "error") or "invalid submission")


class ReadError(Exception):
    """One entry cannot be read; the submission as a whole still can."""

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
    def for_split(cls, manifest: Manifest) -> "Limits":
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


def safe_relpath(name: str) -> tuple[str | None, str]:
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


def is_junk(name: str) -> bool:
    parts = name.split("/")
    return "__MACOSX" in parts or parts[-1] in JUNK_NAMES or parts[-1].startswith("._")


@dataclass
class ArchiveEntry:
    name: str  # path inside the submission, root prefix removed
    size: int  # declared size in bytes (uncompressed)
    order: int  # position in storage: a compressed tar reads forward cheaply, backward not
    handle: Any  # ZipInfo, TarInfo or filesystem path


class ArchiveListing:
    """Collects the entries of a container, refusing unsafe ones, counting everything."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.files: dict[str, ArchiveEntry] = {}
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
        clean, why = safe_relpath(name)
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
        self.files[clean] = ArchiveEntry(clean, size, len(self.files), handle)


def read_capped(f: Any, limit: int) -> bytes:
    """Read f to its end, or raise LimitExceeded past `limit` bytes (headers may lie)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = f.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise LimitExceeded
        chunks.append(chunk)


# ------------------------------------------------------------------ containers
class _FolderSource:
    kind = "folder"
    where = "path"

    def __init__(self, root: Path, listing: ArchiveListing) -> None:
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
                    if safe_relpath(name)[0] is not None and _valid_utf8(name):
                        stack.append((item.path, name + "/"))
                elif item.is_file(follow_symlinks=False):
                    st = item.stat(follow_symlinks=False)
                    # A hard link is a second name for a file that may live outside the folder (made by
                    # whoever could link it, read by the scorer): refused like a symbolic link.
                    listing.add(name, "hardlink" if st.st_nlink > 1 else "file", st.st_size, item.path, self.where)
                else:
                    listing.add(name, "special", 0, item.path, self.where)

    def read(self, entry: ArchiveEntry, limit: int) -> bytes:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(entry.handle, flags)  # no follow, no blocking: a swapped-in link or FIFO fails here
        except OSError as exc:
            raise ReadError(_error("entry_unreadable", f"file {entry.name!r} cannot be opened ({exc.strerror})",
                                    entry=entry.name)) from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ReadError(_error("special_file", f"file {entry.name!r} is not a regular file", entry=entry.name))
            try:
                return read_capped(f, limit)
            except OSError as exc:
                raise ReadError(_error("entry_unreadable", f"file {entry.name!r} cannot be read ({exc})",
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


ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, NotImplementedError,
                    RuntimeError, ValueError)


class _ZipSource:
    kind = "zip"
    where = "archive entry"

    def __init__(self, path: Path, listing: ArchiveListing) -> None:
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

    def read(self, entry: ArchiveEntry, limit: int) -> bytes:
        try:
            with self._zip.open(entry.handle) as f:
                return read_capped(f, limit)
        except ZIP_READ_ERRORS as exc:
            raise ReadError(_error(
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
        self.last_read = (0, 0)  # (asked, got) of the latest read: tells a cut archive from a finished one

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = self._cap + 1 - self._pos
        if self._pos + n > self._cap:
            raise LimitExceeded
        data = self._raw.read(n)
        self._pos += len(data)
        self.last_read = (n, len(data))
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        target = offset if whence == os.SEEK_SET else self._pos + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR):
            raise OSError("cannot seek from the end of a submission archive")
        if target > self._cap:
            raise LimitExceeded
        self._pos = self._raw.seek(target)
        return self._pos

    def tell(self) -> int:
        return self._pos

    # the rest of tarfile's file-object protocol; reading a tar calls neither
    def write(self, b: bytes) -> int:
        raise io.UnsupportedOperation("a submission archive is read only")

    def close(self) -> None:
        """Nothing to do: the file underneath belongs to the reader, which closes it."""


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

    def __init__(self, path: Path, listing: ArchiveListing) -> None:
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
                members = 0  # as many as tarfile has read (its undocumented `members` list)
                while (member := self._tar.next()) is not None:
                    members += 1
                    listing.add(member.name, _tar_kind(member), member.size if member.isreg() else 0, member,
                                self.where)
                asked, got = self._stream.last_read
                if got < asked:  # tarfile met the end of the bytes where a header or the end marker belongs
                    raise tarfile.ReadError(f"it ends after {members} member(s) without the "
                                            "end-of-archive marker")
            except LimitExceeded:
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

    def read(self, entry: ArchiveEntry, limit: int) -> bytes:
        try:
            f = self._tar.extractfile(entry.handle)
            if f is None:
                raise tarfile.TarError("not a regular file")
            return read_capped(f, limit)
        except LimitExceeded:
            raise
        except _TAR_ERRORS as exc:
            raise ReadError(_error(
                "entry_unreadable",
                f"archive entry {entry.name!r} cannot be read ({exc}); the archive is truncated or damaged: "
                "re-create it", entry=entry.name)) from None

    def close(self) -> None:
        self._tar.close()
        self._file.close()


def open_source(path: Path, listing: ArchiveListing) -> Any:
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

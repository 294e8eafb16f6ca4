"""Reading the results folder: regular files only, each size-capped before it is opened.

A results folder comes from git or the Hub, and git stores symbolic links: ``zero.json ->
/dev/zero`` would read until memory runs out, and a FIFO named ``*.json`` would hang the
build on its first read.  So every ``*.json`` under the folder is `lstat`ed before anything
opens it: a link is refused (`results_link`), anything that is not a regular file (a FIFO,
a device, a socket) is refused (`results_not_regular`), and a file larger than
`MAX_FILE_BYTES` is refused (`results_too_large`), all without opening it.  `read_regular`
then opens with ``O_NOFOLLOW | O_NONBLOCK``, checks the opened file is the one `lstat`
saw, and reads at most the cap: a file swapped for a FIFO or grown in between is refused
too.  Folders are walked without following links (`scan`); `is_probe_file` tells a probe
results file from a board's.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_FILE_BYTES = 64 * 1024 * 1024  # a results file of the largest split, or its sidecar, is a few MB

RESULTS_LINK = "results_link"  # a link (or a file resolving outside the folder): never read
NOT_REGULAR = "results_not_regular"  # a FIFO, device or socket named *.json: never opened
TOO_LARGE = "results_too_large"  # larger than MAX_FILE_BYTES: never read


class UnsafeFile(Exception):
    """A file the board will not open or read: a link, not a regular file, or too large."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return word
    return "not a regular file"


def check_regular(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> os.stat_result:
    """`lstat` the path: a regular file of at most `limit` bytes, or `UnsafeFile` (nothing opened)."""
    name = Path(path).name
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(RESULTS_LINK, f"{name} is a link or lies outside the results folder (a symbolic link is never "
                                        "read); copy the file in instead")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(NOT_REGULAR, f"{name} is {_kind(st.st_mode)}, not a regular file (never opened)")
    if st.st_size > limit:
        raise UnsafeFile(TOO_LARGE, f"{name} is {st.st_size:,} bytes; at most {limit:,} (never read)")
    return st


def read_regular(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; `UnsafeFile` for anything else.

    Checked by `lstat` before opening, opened without following a link and without blocking
    (a FIFO put in its place between the two), checked again on the open descriptor, and
    read up to the cap only."""
    before = check_regular(path, limit)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnsafeFile(RESULTS_LINK if os.path.islink(path) else NOT_REGULAR,
                         f"{Path(path).name} could not be opened as a regular file ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise UnsafeFile(NOT_REGULAR, f"{Path(path).name} changed while it was opened (not the regular file "
                                          "it was); never read")
        chunks, left = [], limit + 1
        while left > 0:
            block = os.read(fd, min(left, 1 << 20))
            if not block:
                break
            chunks.append(block)
            left -= len(block)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UnsafeFile(TOO_LARGE, f"{Path(path).name} grew past {limit:,} bytes while it was read")
    return data


def scan(root: Path, skip: Path | None = None) -> tuple[list[Path], list[tuple[Path, str, str]]]:
    """(regular ``*.json`` files, [(path, code, reason)] refused) under `root`, each sorted by its
    relative path.  Hidden folders and files are left out, and `skip` (a site built inside the
    folder); folder links are not followed; every candidate is `lstat`ed, none is opened."""
    root = Path(root)
    skip_real = skip.resolve() if skip is not None else None
    ok: list[Path] = []
    bad: list[tuple[Path, str, str]] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not (skip_real is not None and (here / d).resolve() == skip_real))
        for name in sorted(names):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            path = here / name
            try:
                check_regular(path)
            except UnsafeFile as exc:
                bad.append((path, exc.code, str(exc)))
                continue
            except OSError as exc:  # vanished while listed
                bad.append((path, NOT_REGULAR, f"{name} could not be examined ({exc.strerror})"))
                continue
            ok.append(path)
    key = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    return sorted(ok, key=key), sorted(bad, key=lambda b: key(b[0]))


def is_probe_file(path: Path) -> bool:
    """True for a regular JSON file that says it is a probe results file (checked later, by the
    Probes page, `site.probes_page.read_probe_results`; here because the build's and `leaderboard verify`'s
    listings both skip them).  A link, a FIFO, a device or an oversized file is never opened (`read_regular`):
    not a probe file (the board refuses it with its own code)."""
    from ... import jsonsafe, probes

    try:
        doc = jsonsafe.loads(read_regular(path))
    except (UnsafeFile, OSError, ValueError):  # jsonsafe.JSONError is a ValueError (a 5,000-digit int too)
        return False
    return isinstance(doc, dict) and doc.get("schema") == probes.SCHEMA

"""One `leaderboard sync` at a time per board: an advisory lock on a file in its results folder.

Two syncs of one board at once would each find the same open pull requests, score them
twice and post two "admitted" comments per PR (issue 36).  `sync` therefore holds
``RESULTS/.phybench-sync.lock`` with ``fcntl.flock(LOCK_EX | LOCK_NB)`` for its whole run; a
second sync finds it held and exits at once (``sync_busy``, exit 2) before it reads the Hub,
so it posts nothing.

Stale locks: the lock is the kernel's ``flock``, not the file's existence, so a sync that dies
in any way (an exception, Ctrl-C, SIGKILL, a lost runner) releases it with its process; the
file stays behind, empty (a sync that finds nothing to do writes no byte, so the lock does not
write one either).  There is nothing to clean up by hand: a lock file left by a dead sync never
blocks the next one; `fuser RESULTS/.phybench-sync.lock` names the process that holds it.  The file is hidden, so the build and the sync's own
scans of the results folder skip it, and `publish` (which the workflow's sync runs) never sends it.
Limits: ``flock`` is POSIX (Linux, macOS), and on a network file system it may not lock
across machines; keep a board's results folder on a local disk, as the workflow does.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .submit import IntakeError

LOCK_NAME = ".phybench-sync.lock"
READ_ONLY = "sync_read_only"  # the results folder cannot be written: nothing read from the Hub, nothing done


class SyncBusy(IntakeError):
    """Another sync of the same board holds its lock; this one did nothing."""

    code = "sync_busy"


@contextmanager
def sync_lock(results: Path) -> Iterator[Path]:
    """Hold the board's sync lock for the body, or raise SyncBusy at once if another sync holds it."""
    import fcntl

    path = Path(results) / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:  # a read-only results folder: a coded one-line error, not a traceback
        raise IntakeError(f"cannot open the sync lock {path}: {exc.strerror or exc}; the results folder must be "
                          "writable (the sync writes its journal, records and rows there)", READ_ONLY) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncBusy(f"another `leaderboard sync` of this board is running (it holds {path}); this one "
                           "did nothing and posted nothing. Run it again when that one has finished (a dead "
                           "sync's lock is released with its process)") from None
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (it is not the lock)

"""One `leaderboard sync` at a time per board: an advisory lock on a file in its results folder.

Two syncs of one board at once would each find the same open pull requests, score them
twice and post two "admitted" comments per PR (issue 36).  `sync` therefore holds
``RESULTS/.phybench-sync.lock`` with ``fcntl.flock(LOCK_EX | LOCK_NB)`` for its whole run; a
second sync finds it held and exits at once (``sync_busy``, exit 2) before it reads the Hub,
so it posts nothing.

Stale locks: the lock is the kernel's ``flock``, not the file's existence, so a sync that dies
in any way (an exception, Ctrl-C, SIGKILL, a lost runner) releases it with its process; the
file stays behind and only records who held it last (pid, host, start time), shown in the
message of a sync that finds it busy.  There is nothing to clean up by hand: a lock file left
by a dead sync never blocks the next one.  The file is hidden, so the build and the sync's own
scans of the results folder skip it, and the workflow commits only ``RESULTS/hub/``.
Limits: ``flock`` is POSIX (Linux, macOS), and on a network file system it may not lock
across machines; keep a board's results folder on a local disk, as the workflow does.
"""
from __future__ import annotations

import datetime
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .intake_submit import IntakeError

LOCK_NAME = ".phybench-sync.lock"


class SyncBusy(IntakeError):
    """Another sync of the same board holds its lock; this one did nothing."""

    code = "sync_busy"


def _holder(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
    except OSError:
        return "unknown"


@contextmanager
def sync_lock(results: Path) -> Iterator[Path]:
    """Hold the board's sync lock for the body, or raise SyncBusy at once if another sync holds it."""
    import fcntl

    path = Path(results) / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise IntakeError(f"cannot open the sync lock {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncBusy(f"another `leaderboard sync` of this board is running (it holds {path}: "
                           f"{_holder(fd)}); this one did nothing and posted nothing. Run it again when "
                           "that one has finished (a dead sync's lock is released with its process)") from None
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()[:100]}, since {now}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (it is not the lock)

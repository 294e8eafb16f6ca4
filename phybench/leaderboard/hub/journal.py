"""The sync's journal: what each run did, so that a run killed at any point is finished by the next.

`phybench leaderboard sync` does, per pull request: download (into a temporary folder), score
(write the results file and its signed record), commit the scored files onto the Hub's
``main``, comment, close; then it builds the site.  A kill between two of these steps used to
lose work the Hub no longer shows: killed after the close and before the build, the next run
saw no open pull request and printed "nothing new", and the admitted row never reached the
site (issue 36); killed before the commit, the row's results stayed in the results folder
although ``main`` never got the submission.  So every step is written down as it completes,
in one JSON file replaced atomically (`phybench.io.atomic_write_bytes`), under
``RESULTS/.sync/`` (a hidden folder: the build and the duplicate checks never read it):

- per pull request: ``downloaded`` (the pinned head), ``scoring`` (the results file about to be
  written), ``scored`` (its sha256 and the Hub's id of every scored file), ``committed`` (the
  commit on ``main``), ``commented``; the entry is dropped when the pull request is closed;
- for the board: ``site`` = the results folder's state (a hash of every results file's path and
  bytes) the site in a given folder was last built from.

`recover` runs before any pull request is handled: a row scored but not on ``main`` is
removed (its pull request, still open, is judged again at its head), a row whose files are on
``main`` counts as committed (the open pull request is then closed by the sync's "already
admitted" path).  After the pull requests, the site is rebuilt whenever the results folder is
not in the state the site was built from, whether or not anything was admitted in this run.

Downloads go to ``RESULTS/.sync/.download.<pid>-<host>.<random>.tmp`` folders (the names of
`phybench.io.tmp_prefix`), removed in ``finally`` on every exit path; a folder left by a
killed run (its process gone) is removed at the next start (`Journal.clean_stale`).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import signal
import threading
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ... import jsonsafe
from ...io import atomic_write_bytes, file_sha256, remove_stale_tmp, tmp_prefix

WORK_DIR = ".sync"  # under --results; hidden, so `files.scan` (the build, the duplicate checks) skips it
JOURNAL = "journal.json"
STEPS = ("downloaded", "scoring", "scored", "committed", "commented")
VERSION = 1


def hub_id(sibling: Any) -> str:
    """What the Hub says a file is: its LFS sha256, or its git blob id (as `Syncer._same_file` compares)."""
    lfs = getattr(sibling, "lfs", None)
    return f"sha256:{lfs.sha256}" if lfs is not None else f"blob:{getattr(sibling, 'blob_id', '')}"


def results_state(results_dir: Path, site: Path | None = None) -> str:
    """A hash of every results file the build reads (relative path and bytes; a site built inside
    the folder left out, as the build leaves it out): the site is current when built from this state."""
    from ..common.files import scan

    h = hashlib.sha256()
    for path in scan(results_dir, skip=site)[0]:
        h.update(f"{path.relative_to(results_dir).as_posix()}\0{file_sha256(path)}\n".encode())
    return h.hexdigest()


class Journal:
    """The journal of the sync that keeps its results in `results_dir` (one sync at a time per folder)."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = Path(results_dir)
        self.work = self.results_dir / WORK_DIR
        self.path = self.work / JOURNAL
        self.doc = self._load()

    def _load(self) -> dict[str, Any]:
        empty: dict[str, Any] = {"version": VERSION, "prs": {}, "site": {}}
        try:
            doc = jsonsafe.read(self.path)
        except FileNotFoundError:
            return empty
        except (OSError, ValueError):  # hand-edited or unreadable: start over (the Hub is the truth)
            return empty
        if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("prs"), dict):
            return empty
        doc.setdefault("site", {})
        return doc

    def _save(self) -> None:
        atomic_write_bytes(self.path, (json.dumps(self.doc, indent=1, sort_keys=True) + "\n").encode())

    # ------------------------------------------------------------ per pull request
    def entry(self, num: int) -> dict[str, Any] | None:
        found = self.doc["prs"].get(str(num))
        return found if isinstance(found, dict) else None

    def mark(self, num: int, step: str, **fields: Any) -> None:
        """Write down that `step` of pull request `num` is done (with what it produced)."""
        assert step in STEPS, step
        entry = {**(self.entry(num) or {}), **fields, "step": step}
        self.doc["prs"][str(num)] = entry
        self._save()

    def forget(self, num: int) -> None:
        """Pull request `num` needs nothing more (closed, or its leftovers removed)."""
        if self.doc["prs"].pop(str(num), None) is not None:
            self._save()

    def numbers(self) -> list[int]:
        return sorted(int(n) for n in self.doc["prs"] if str(n).isdigit())

    # ------------------------------------------------------------ the site
    def site_current(self, site: Path, state: str) -> bool:
        """The site in `site` exists and was built from results in `state`."""
        built = self.doc.get("site") or {}
        return (site / "index.html").is_file() and built.get("dir") == str(site.resolve()) \
            and built.get("state") == state

    def site_built(self, site: Path, state: str) -> None:
        self.doc["site"] = {"dir": str(site.resolve()), "state": state}
        self._save()

    # ------------------------------------------------------------ temporary folders
    def clean_stale(self) -> list[Path]:
        """Remove the download folders of syncs that were killed (their process is gone)."""
        return remove_stale_tmp(self.work / "download") if self.work.is_dir() else []

    @contextlib.contextmanager
    def download_folder(self) -> Iterator[Path]:
        """A fresh folder for one pull request's downloads, removed on every way out of the block
        (an exception, a KeyboardInterrupt, SystemExit); after a SIGKILL, by `clean_stale`."""
        self.work.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=tmp_prefix(self.work / "download"), suffix=".tmp", dir=self.work))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _remove_row(results_dir: Path, rel: str) -> None:
    """The results file `rel`, its sidecar and its record, removed (a row that never reached main)."""
    from ...scoring.run.layout import record_path, samples_path

    path = results_dir / rel
    for leftover in (path, samples_path(path), record_path(path)):
        leftover.unlink(missing_ok=True)


def recover(journal: Journal, main_files: dict[str, Any], log: Callable[[str], None], only: int | None = None) -> None:
    """Finish or undo what a killed sync left, from its journal and the Hub's ``main``.

    A row written but not (known to be) committed: if every scored file is on ``main`` with the
    scored bytes, the commit happened (the kill came after it) and the row stays; otherwise the
    row is removed, and its pull request, still open, is judged again at its head by this run.
    A committed row needs nothing here: its pull request, if still open, is closed by the
    sync's "already admitted" path, and the site is rebuilt because the results changed.
    `only`: just that pull request (its commit failed in this run)."""
    for num in journal.numbers() if only is None else [only]:
        entry = journal.entry(num) or {}
        step, rel = entry.get("step"), entry.get("results")
        if step in ("scoring", "scored") and isinstance(rel, str):
            files = entry.get("files") or {}
            on_main = step == "scored" and bool(files) and all(
                p in main_files and hub_id(main_files[p]) == want for p, want in files.items())
            if on_main:
                journal.mark(num, "committed", commit=None)
                log(f"#{num}: committed onto main by a sync that stopped; finishing it")
                continue
            _remove_row(journal.results_dir, rel)
            log(f"#{num}: results not (known to be) on main removed; the pull request is judged again")
            journal.forget(num)
        elif step == "downloaded":
            journal.forget(num)  # nothing was written outside the download folder


@contextlib.contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Within the block, SIGTERM (a cancelled job, `kill PID`) raises SystemExit(143) instead of ending
    the process on the spot, so every ``finally`` runs (the download folders are removed).  Only the
    main thread can install a handler; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)

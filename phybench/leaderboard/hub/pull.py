"""`phybench leaderboard pull`: the admitted rows the board's Hub dataset repository keeps, back
into a local results folder (issue 36 item 8).

Why: the scheduled workflow keeps admitted results only on the Hub (`leaderboard sync --publish`
writes them under ``results/hub/``), not in git.  A fresh checkout has no ``RESULTS/hub/``; a
`sync --publish` from it would be refused (``publish_stale``: publish never deletes a row its
folder did not pull) and its duplicate checks (``intake-duplicate``, ``videos_reused``) would not
see them.  So the workflow pulls them first.

What it does: lists the repository at `revision` with `hub_board.list_board`'s bounds (every
path under ``results/`` in the board's layout, ``hub_path``; at most `hub_board.MAX_FILES`,
``hub_too_many``; each file and the total under their caps, ``hub_too_large``; the revision
resolved to a commit id, ``hub_revision``), downloads the files under ``results/hub/`` at that
commit and turns each Parquet sidecar back into its exact JSON bytes (`hub_board.download_board`,
``hub_changed`` when a download is not what the listing said).

What it will not do (the safe, simple behaviour):
- overwrite: a local file under ``RESULTS/hub/`` whose bytes differ from the Hub's (or that is
  not a regular file) refuses the pull (``pull_conflict``), and nothing is written; there is no
  ``--force`` (move the local file away if the Hub's is the one to keep);
- delete: local files the Hub does not have (rows admitted by a sync that was never published)
  are kept, and the next publish writes them;
- forget: the commit it pulled is remembered in RESULTS (`hub_base`), and `publish` deletes only
  files that commit held (a row committed after the pull is never deleted: ``publish_stale``);
- half-write: everything is downloaded and checked in a hidden scratch folder inside RESULTS
  (same file system, skipped by the build's scans); the new ``RESULTS/hub/`` (the Hub's rows plus
  the local-only files) replaces the old one by rename, so a pull that fails leaves RESULTS as it
  was.  It holds the sync lock (`sync_lock`) so that it never swaps a folder a sync is writing;
  under it, a killed pull's scratch folder is removed (`_recover`).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import write_base
from .board import RESULTS_PREFIX, SHA, HubBoardError, Listing, _api, check_ids, download_board, list_board
from .admission import RESULTS_SUBDIR

HUB_PREFIX = f"{RESULTS_PREFIX}{RESULTS_SUBDIR}/"  # the admitted rows in the board's Hub layout
SCRATCH = ".phybench-pull-"  # hidden: the build and the sync's scans skip it


@dataclass
class Pulled:
    """What a pull did: the commit it read, the files it added (RESULTS-relative), those already
    there with the same bytes, and the local files the Hub does not have (kept)."""

    sha: str
    added: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)
    local_only: list[str] = field(default_factory=list)


def _local_files(folder: Path) -> dict[str, Path]:
    """{relative path: path} of every entry under `folder` that is not a directory (links not followed)."""
    found: dict[str, Path] = {}
    if not folder.exists():
        return found
    for here, dirs, names in os.walk(folder, followlinks=False):
        for name in names + [d for d in dirs if (Path(here) / d).is_symlink()]:
            path = Path(here) / name
            found[path.relative_to(folder).as_posix()] = path
    return found


def _compare(pulled: dict[str, Path], local: dict[str, Path], hub_dir: Path) -> Pulled:
    """Sort the pulled files into added and same; refuse (`pull_conflict`) any local file that differs."""
    from ..common.files import UnsafeFile, read_regular

    result = Pulled("")
    conflicts = []
    for rel, path in sorted(pulled.items()):
        if rel not in local:
            result.added.append(rel)
            continue
        try:
            same = read_regular(local[rel]) == path.read_bytes()
        except (UnsafeFile, OSError):
            same = False
        (result.same.append(rel) if same else conflicts.append(rel))
    if conflicts:
        raise HubBoardError("pull_conflict", f"{len(conflicts)} local file(s) under {hub_dir} differ from the Hub's "
                                             f"(nothing written; move them away to take the Hub's), first: "
                                             f"{conflicts[0][:200]}")
    result.local_only = sorted(set(local) - set(pulled))
    return result


def _recover(results: Path, hub_dir: Path, log: Callable[[str], None]) -> None:
    """Remove the scratch folders of a killed pull (under the lock none is live); one killed between
    its two renames holds the old RESULTS/hub as ``old``, which is put back first."""
    for stale in sorted(results.glob(SCRATCH + "*")):
        if not stale.is_dir() or stale.is_symlink():
            continue
        old = stale / "old"
        if old.is_dir() and not old.is_symlink() and not hub_dir.exists() and not hub_dir.is_symlink():
            os.rename(old, hub_dir)
            log(f"put back {hub_dir} from a pull killed while replacing it")
        shutil.rmtree(stale)


def _swap_in(new: Path, hub_dir: Path, scratch: Path) -> None:
    """Put `new` at `hub_dir` by rename; the old folder (if any) is put back if the second rename fails."""
    if not hub_dir.exists() and not hub_dir.is_symlink():
        os.rename(new, hub_dir)
        return
    old = scratch / "old"
    os.rename(hub_dir, old)
    try:
        os.rename(new, hub_dir)
    except BaseException:
        os.rename(old, hub_dir)
        raise


def pull(repo: str, results_dir: str | Path, *, revision: str = "main", api: Any = None,
         log: Callable[[str], None] = print) -> Pulled:
    """Bring the Hub's admitted rows (``results/hub/**`` of `repo` at `revision`) into
    RESULTS/hub/; see the module's docstring for what it refuses."""
    from .lock import sync_lock

    check_ids(repo, revision)
    results = Path(results_dir)
    if not results.is_dir() or results.is_symlink():
        raise HubBoardError("pull_results", f"--results {results} is not a folder (create it first)")
    hub_dir = results / RESULTS_SUBDIR
    if hub_dir.is_symlink() or (hub_dir.exists() and not hub_dir.is_dir()):
        raise HubBoardError("pull_conflict", f"{hub_dir} is not a folder")
    api = _api(api)
    check_main_revision(api, repo, revision)
    listing = list_board(api, repo, revision, allow_empty=True)  # every bound checks the whole results/ listing
    with sync_lock(results):
        _recover(results, hub_dir, log)
        done = _pull_locked(api, repo, listing, results, hub_dir)
        write_base(results, repo, listing.sha)  # what `publish` may delete: only files this commit held
    _report(repo, results, done, log)
    return done


def check_main_revision(api: Any, repo: str, revision: str) -> None:
    """Only ``main`` or a commit id on main's history may be pulled: ``refs/pr/N``, another branch,
    a tag or a pull request's head commit would bring rows no sync admitted (``pull_revision``)."""
    if revision == "main":
        return
    if not SHA.fullmatch(revision):
        raise HubBoardError("pull_revision", f"--revision {revision[:80]!r}: give main or a 40-hex commit id of main "
                                             "(a pull request's ref, a branch or a tag holds rows no sync admitted)")
    history = api.list_repo_commits(repo, repo_type="dataset", revision="main")
    if revision not in {str(getattr(c, "commit_id", "")) for c in history}:
        raise HubBoardError("pull_revision", f"--revision {revision[:12]} is not a commit of main's history (an "
                                             "unmerged pull request's commit?): pull main or one of its commits")


def _pull_locked(api: Any, repo: str, listing: Listing, results: Path, hub_dir: Path) -> Pulled:
    """The download, the checks and the swap, in a scratch folder removed on every way out."""
    ours = Listing(listing.sha, {p: s for p, s in listing.sizes.items() if p.startswith(HUB_PREFIX)})
    with tempfile.TemporaryDirectory(prefix=SCRATCH, dir=results) as tmp:
        scratch = Path(tmp)
        staged = download_board(api, repo, ours, scratch) / RESULTS_SUBDIR
        staged.mkdir(exist_ok=True)
        local = _local_files(hub_dir)
        done = _compare(_local_files(staged), local, hub_dir)
        done.sha = listing.sha
        if done.added:
            for rel in done.local_only:  # kept: the new folder is the Hub's rows plus these
                (staged / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(local[rel], staged / rel, follow_symlinks=False)
            _swap_in(staged, hub_dir, scratch)
    return done


def _report(repo: str, results: Path, done: Pulled, log: Callable[[str], None]) -> None:
    for rel in done.added[:20]:
        log(f"  + {RESULTS_SUBDIR}/{rel}")
    if len(done.added) > 20:
        log(f"  ... and {len(done.added) - 20:,} more")
    log(f"pulled {len(done.added)} new file(s) from {repo} at {done.sha} into {results / RESULTS_SUBDIR} "
        f"({len(done.same)} already there, {len(done.local_only)} local file(s) the Hub does not have kept)")

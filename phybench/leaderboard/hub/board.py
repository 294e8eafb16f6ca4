"""The board's results on the Hub (issue 36 item 8): `publish_board` writes them into the board's Hub
dataset repository, `build_from_hub` builds the site from that repository at a pinned revision.

Layout of the dataset repository (beside ``submissions/``, which the intake writes):

    eval.yaml                            the benchmark declaration (`hub_eval.eval_yaml`)
    results/<path>.json                  each results file (and probe file) of the board, as in RESULTS/
    results/<path>.verified.json         its signed verification record, unchanged
    results/<path>.samples.parquet       its per-video sidecar as Parquet (`samples_parquet`)

`publish_board` refuses a board that would not build with ``--require-verified`` (every record
signed by the board's keyring and pinning its files), then writes all of it in one commit
whose parent is the main it read (`create_commit(parent_commit=...)`): a concurrent change
fails the commit instead of mixing with it.  It is compare-and-swap against the folder's last
pull (`hub_base`: the commit of main it pulled or published, remembered in RESULTS): files under
``results/`` the board no longer has are deleted in the same commit only when that commit held
them; a file on main that the pulled commit did not hold (a row admitted after the pull) is
never deleted, and the publish is refused (``publish_stale``: pull again, then publish).  Main
may move outside ``results/`` in between (the intake's admitted ``submissions/``): that changes
no row, and the commit's parent is then the main read at publish time.

How a record that pins the JSON sidecar's sha256 verifies when the Hub holds Parquet: the
Parquet is converted back to the exact canonical JSON bytes (`samples_parquet.canonical_json`;
`publish_board` refuses a sidecar whose round trip is not byte-exact), written as
``<path>.samples.json`` in a scratch folder with the downloaded results files and records,
and the existing build checks every record against those bytes with its signature.  Nothing
new is signed; a Parquet changed by one number no longer gives the pinned bytes, and its row
is refused (``verify-stale``), as a changed JSON sidecar is.

`hub_pull.pull` brings the admitted rows (``results/hub/**``) back into a local results folder
with the same listing bounds and download (`list_board`, `download_board`).

`build_from_hub` reads the file list at the revision first and refuses, before downloading
anything, a path outside ``results/`` layout (`hub_path`), more than `MAX_FILES` files
(`hub_too_many`), a file over its cap or a total over `MAX_TOTAL_BYTES` (`hub_too_large`); it
downloads exactly those files at the resolved commit (`snapshot_download(revision=sha)`), checks
each downloaded file is a regular file of the listed size (`hub_changed`), and removes the
scratch folder on every way out.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...scoring.run.layout import RECORD_SUFFIX, SAMPLES_SUFFIX, is_samples
from .base import read_base, write_base
from ..common.samples_parquet import PARQUET_SUFFIX, MAX_PARQUET_BYTES, SidecarError

RESULTS_PREFIX = "results/"
MAX_FILES = 20_000  # a board of 1,000 models x 6 splits x 3 files is 18,000
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,199}"
HUB_PATH = re.compile(rf"^results/(?:{SEGMENT}/){{0,8}}{SEGMENT}(?:\.samples\.parquet|\.json)$")
SHA = re.compile(r"^[0-9a-f]{40}$")


class HubBoardError(Exception):
    """The board's Hub repository (or what would go into it) is refused; `code` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


def _api(api: Any) -> Any:
    if api is not None:
        return api
    from huggingface_hub import HfApi

    return HfApi()


# ---------------------------------------------------------------- publish
def board_files(results_dir: str | Path) -> dict[str, bytes]:
    """{path in the Hub repository: bytes} of a board's results folder: every results, probe and
    record file as it is, each sidecar as Parquet, and the eval.yaml."""
    from ..common.files import read_regular, scan
    from .eval_results import EVAL_YAML, dump_yaml, eval_yaml
    from ..common.samples_parquet import canonical_json, read_any_sidecar, to_parquet

    root = Path(results_dir)
    found, refused = scan(root)
    if refused:
        path, code, reason = refused[0]
        raise HubBoardError(code, f"{len(refused)} file(s) the board will not read, first: {reason}")
    files: dict[str, bytes] = {}
    for path in found:
        rel = path.relative_to(root).as_posix()
        data = read_regular(path)
        if is_samples(path):
            doc = read_any_sidecar(path)
            if canonical_json(doc) != data:  # then the Parquet could not give the pinned bytes back
                raise HubBoardError("samples_not_canonical", f"{rel} is not in canonical form (phybench score's bytes)")
            rel = rel[: -len(SAMPLES_SUFFIX)] + PARQUET_SUFFIX
            data = to_parquet(doc)
        if not HUB_PATH.fullmatch(RESULTS_PREFIX + rel):
            raise HubBoardError("hub_path", f"{rel!r} is not a name the board's Hub layout allows")
        files[RESULTS_PREFIX + rel] = data
    files[EVAL_YAML] = dump_yaml(eval_yaml(root))
    return files


def same_bytes(sibling: Any, data: bytes) -> bool:
    """The Hub's file (a repo_info sibling with metadata) holds exactly `data`: by its LFS sha256,
    else by its git blob id."""
    import hashlib

    lfs = getattr(sibling, "lfs", None)
    if lfs is not None:
        return str(getattr(lfs, "sha256", "")) == hashlib.sha256(data).hexdigest()
    return str(getattr(sibling, "blob_id", "")) == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def publish_board(repo: str, results_dir: str | Path, *, api: Any = None, keys: Any = None,
            log: Callable[[str], None] = print) -> str:
    """Write the board's results into `repo` (a Hub dataset) in one commit; returns its id.

    The board must build with ``--require-verified`` first (`LeaderboardError` otherwise)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    from .. import build

    with tempfile.TemporaryDirectory(prefix="phybench-publish-") as tmp:
        build(results_dir, Path(tmp) / "site", require_verified=True, keys=keys)  # what the public board accepts
    try:
        files = board_files(results_dir)
    except SidecarError as exc:
        raise HubBoardError(exc.code, str(exc)) from None
    api = _api(api)
    info = api.repo_info(repo, repo_type="dataset", revision="main", files_metadata=True)
    parent = str(info.sha)
    there = {str(s.rfilename): s for s in info.siblings or []}
    stale = _deletable(api, repo, results_dir, parent, there, files)
    changed = {p: d for p, d in files.items() if p not in there or not same_bytes(there[p], d)}
    if not changed and not stale:  # a re-run after a kill, or nothing new: no empty commit
        write_base(results_dir, repo, parent)
        log(f"{repo} already holds the board's results at {parent[:12]}")
        return parent
    ops: list[Any] = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=d) for p, d in sorted(changed.items())]
    ops += [CommitOperationDelete(path_in_repo=p) for p in stale]
    commit = api.create_commit(
        repo, ops, repo_type="dataset", parent_commit=parent,
        commit_message=f"Publish the board's results ({sum(p.endswith(RECORD_SUFFIX) for p in files)} signed records)",
        commit_description=f"phybench {__version__} leaderboard publish: {len(changed)} of {len(files)} files written, "
                           f"{len(stale)} removed, on {parent[:12]}.")
    sha = str(getattr(commit, "oid", "") or "")
    if sha:
        write_base(results_dir, repo, sha)  # main's results/ is now exactly this folder's
    log(f"published {len(changed)} changed file(s) of {len(files)} ({len(stale)} removed) to {repo} at {sha[:12] or '?'}")
    return sha


def _deletable(api: Any, repo: str, results_dir: str | Path, main: str, there: dict[str, Any],
              files: dict[str, bytes]) -> list[str]:
    """The files under ``results/`` on main that the publish deletes: only those the folder's base
    commit (its last pull or publish, `hub_base`) held.  A file on main that neither the base nor
    the folder has was committed after the pull: refused (``publish_stale``), nothing written."""
    on_main = sorted(p for p in there if p.startswith(RESULTS_PREFIX))
    base = read_base(results_dir, repo)
    if base == main:
        held = set(on_main)
    elif base is None:
        held = set()
    else:
        try:
            info = api.repo_info(repo, repo_type="dataset", revision=base)
        except Exception as exc:  # noqa: BLE001 - the Hub's answer: that commit is gone (history rewritten)
            raise HubBoardError("publish_stale", f"the commit {base[:12]} this folder last pulled from {repo} cannot "
                                                 f"be read ({type(exc).__name__}); run `phybench leaderboard pull "
                                                 f"--repo {repo}` again, then publish") from None
        held = {str(s.rfilename) for s in info.siblings or [] if str(s.rfilename).startswith(RESULTS_PREFIX)}
    unpulled = [p for p in on_main if p not in held and p not in files]
    if unpulled:
        since = f"since this folder's pull at {base[:12]}" if base else "and this folder never pulled it"
        raise HubBoardError("publish_stale", f"main of {repo} moved to {main[:12]}: {len(unpulled)} file(s) under "
                                             f"results/ are there {since} (first: {unpulled[0][:200]}); nothing "
                                             f"published: run `phybench leaderboard pull --repo {repo} --results "
                                             f"{results_dir}` again, then publish")
    return [p for p in on_main if p in held and p not in files]


# ---------------------------------------------------------------- build from the Hub
@dataclass
class Listing:
    sha: str
    sizes: dict[str, int]


def _cap(path: str) -> int:
    from ..common.files import MAX_FILE_BYTES

    return MAX_PARQUET_BYTES if path.endswith(PARQUET_SUFFIX) else MAX_FILE_BYTES


def list_board(api: Any, repo: str, revision: str, *, allow_empty: bool = False) -> Listing:
    """The revision's commit and {path: size} of its board files, refused before any download
    when a path, the count or a size is not what the board allows (`allow_empty`: a repository
    with no board files yet is an empty listing, for `hub_pull`, instead of ``hub_empty``)."""
    from .eval_results import EVAL_YAML

    info = api.repo_info(repo, repo_type="dataset", revision=revision, files_metadata=True)
    sha = str(info.sha)
    if not SHA.fullmatch(sha):
        raise HubBoardError("hub_revision", f"the Hub answered a revision that is not a commit id ({sha[:50]!r})")
    sizes: dict[str, int] = {}
    bad = []
    for s in info.siblings or []:
        name = str(s.rfilename)
        if name == EVAL_YAML or not name.startswith(RESULTS_PREFIX):
            continue
        if not HUB_PATH.fullmatch(name) or ".." in name.split("/"):
            bad.append(name)
            continue
        size = getattr(s, "size", None)
        if not isinstance(size, int) or size < 0 or size > _cap(name):
            raise HubBoardError("hub_too_large", f"{name[:200]} is {size!r} bytes; at most {_cap(name):,}")
        sizes[name] = size
        if len(sizes) > MAX_FILES:
            raise HubBoardError("hub_too_many", f"more than {MAX_FILES:,} files under {RESULTS_PREFIX}")
    if bad:
        raise HubBoardError("hub_path", f"{len(bad)} file(s) under {RESULTS_PREFIX} outside the board's layout, "
                                        f"first: {bad[0][:200]!r}")
    if sum(sizes.values()) > MAX_TOTAL_BYTES:
        raise HubBoardError("hub_too_large", f"{sum(sizes.values()):,} bytes in all; at most {MAX_TOTAL_BYTES:,}")
    if not sizes and not allow_empty:
        raise HubBoardError("hub_empty", f"no board files under {RESULTS_PREFIX} at {revision[:64]}")
    return Listing(sha, sizes)


def _stage(download: Path, listing: Listing, staging: Path) -> None:
    """The downloaded board as a results folder the build reads: each Parquet back to its exact
    JSON sidecar, each file checked to be the regular file of the size the listing gave."""
    from ...io import atomic_write_bytes
    from ..common.files import UnsafeFile, read_regular
    from ..common.samples_parquet import canonical_json, from_parquet

    for name, size in sorted(listing.sizes.items()):
        try:
            data = read_regular(download / name, size)
        except (UnsafeFile, FileNotFoundError) as exc:
            raise HubBoardError("hub_changed", f"{name[:200]} is not the file the listing gave: {exc}") from None
        if len(data) != size:
            raise HubBoardError("hub_changed", f"{name[:200]} has {len(data):,} bytes, the listing said {size:,}")
        rel = name[len(RESULTS_PREFIX):]
        if rel.endswith(PARQUET_SUFFIX):
            rel = rel[: -len(PARQUET_SUFFIX)] + SAMPLES_SUFFIX
            if RESULTS_PREFIX + rel in listing.sizes:  # the listing's keys keep their results/ prefix
                raise HubBoardError("hub_two_sidecars", f"{name[:200]} and its JSON sidecar are both there")
            try:
                data = canonical_json(from_parquet(data))
            except SidecarError as exc:
                raise HubBoardError(exc.code, f"{name[:200]}: {exc}") from None
        target = staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)


def check_ids(repo: str, revision: str) -> None:
    """Refuse a dataset id or a revision the Hub would not name (before any request)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}", repo or ""):
        raise HubBoardError("hub_repo", f"{str(repo)[:100]!r} is not a Hub dataset id OWNER/NAME")
    if not revision or len(revision) > 256 or not re.fullmatch(r"[A-Za-z0-9._/-]+", revision):
        raise HubBoardError("hub_revision", "--revision must be a commit id, tag or branch name")


def download_board(api: Any, repo: str, listing: Listing, scratch: Path) -> Path:
    """Download exactly the listed files at the listing's commit into `scratch`/download and
    return `scratch`/results, the results folder they make (each Parquet back to its exact JSON
    sidecar, each file checked against the listing: `_stage`).  The caller removes `scratch`."""
    from huggingface_hub import snapshot_download

    download, staging = scratch / "download", scratch / "results"
    if listing.sizes:
        snapshot_download(repo, repo_type="dataset", revision=listing.sha, local_dir=download,
                          allow_patterns=sorted(listing.sizes), token=getattr(api, "token", None))
    staging.mkdir()
    _stage(download, listing, staging)
    return staging


def build_from_hub(repo: str, revision: str, out_dir: str | Path, *, api: Any = None, keys: Any = None,
                   allow_partial: bool = False, registry_check: bool = True,
                   log: Callable[[str], None] = print) -> Any:
    """Build the site from the board's Hub dataset `repo` at `revision`, with --require-verified
    semantics; returns the `BuildReport`.  The scratch folder goes on every way out."""
    from .. import build

    check_ids(repo, revision)
    api = _api(api)
    listing = list_board(api, repo, revision)
    with tempfile.TemporaryDirectory(prefix="phybench-hub-board-") as tmp:
        staging = download_board(api, repo, listing, Path(tmp))
        report = build(staging, out_dir, registry_check=registry_check, allow_partial=allow_partial,
                       require_verified=True, keys=keys)
    log(f"built from {repo} at {listing.sha} ({len(listing.sizes)} files)")
    return report

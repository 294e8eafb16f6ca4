"""The Hub commit a results folder last agreed with: what `publish` may delete (issue 51, item 3).

`leaderboard pull` and `leaderboard publish` remember, per board repository, the commit of main
whose ``results/`` the folder last matched (the commit pulled, or the commit published), in a
hidden file of the results folder (`BASE_FILE`; the build's and the sync's scans skip hidden
names, and `publish` never sends it).  `publish` then deletes only files that commit held: a
row committed to the Hub after the pull is not the folder's to delete, and the publish is
refused (``publish_stale``) until the maintainer pulls again.
"""
from __future__ import annotations

from pathlib import Path

from ... import jsonsafe
from ...io import atomic_write_bytes

BASE_FILE = ".phybench-hub-base"  # no .json: no results scan (hidden or not) takes it for a row
KIND = "phybench-hub-base"
MAX_BYTES = 1 << 20


def _doc(results_dir: Path) -> dict[str, str]:
    """{repo: commit} from the folder's base file; empty when it has none or it is not ours."""
    try:
        doc = jsonsafe.read(Path(results_dir) / BASE_FILE, max_bytes=MAX_BYTES)
    except (OSError, ValueError):
        return {}
    repos = doc.get("repos") if isinstance(doc, dict) and doc.get("kind") == KIND else None
    if not isinstance(repos, dict):
        return {}
    return {str(k): v for k, v in repos.items() if isinstance(v, str)}


def read_base(results_dir: str | Path, repo: str) -> str | None:
    """The commit of `repo`'s main this folder last pulled or published, or None."""
    return _doc(Path(results_dir)).get(repo)


def write_base(results_dir: str | Path, repo: str, sha: str) -> None:
    """Remember `sha` as the commit of `repo` the folder now matches (atomic)."""
    import json

    repos = _doc(Path(results_dir))
    repos[repo] = sha
    data = json.dumps({"kind": KIND, "repos": dict(sorted(repos.items()))}, indent=1, sort_keys=True) + "\n"
    atomic_write_bytes(Path(results_dir) / BASE_FILE, data.encode())

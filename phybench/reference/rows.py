"""The cheap reference rows of a split no shipped row matches, scored by `phybench run` itself (issue 49).

A ``run --limit`` smoke test or the author's own split has a split hash of its own, so no
shipped reference row reads against it.  The cheap reference baselines (ground truth: the
metric's floor; copy-last: a model that learnt nothing; linear extrapolation: constant
velocity) need no training split and no network, so `run` writes their submissions and
results on that same split under ``OUT/reference/`` (reused on a re-run) and the printed
table ranks the model among them.
"""
from __future__ import annotations

from .. import jsonsafe
import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

CHEAP = ("ground-truth", "copy-last", "linear-extrapolation")
ROWS_DIR = "reference"  # OUT/reference/<task>-<split>/<name>/ (submissions), OUT/reference/results/ (results)


def score_cheap(split_dir: str | os.PathLike[str], out: str | os.PathLike[str], metrics: Sequence[str] | None,
                *, names: Sequence[str] = CHEAP, progress: bool = False,
                say: Callable[[str], None] | None = None) -> list[Path]:
    """Each of `names` answers `split_dir` and is scored with `metrics`; returns the results files
    (OUT/reference/results/<task>-<split>-<name>.json, reused when there: a re-run scores nothing)."""
    from ..data.split import read_manifest
    from ..scoring.run.score import score, write_results
    from . import run_baseline

    m = read_manifest(split_dir)
    root = Path(out) / ROWS_DIR
    files = []
    for name in names:
        path = root / "results" / f"{m['task']}-{m['split']}-{name}.json"
        if path.is_file() and _split_hash(path) != m["split_hash"]:  # another split under the same name
            path.unlink()
            shutil.rmtree(root / f"{m['task']}-{m['split']}" / name, ignore_errors=True)
        if not path.is_file():
            if say:
                say(f"reference row {name} on {m['task']}/{m['split']} (its own split: no shipped row matches)")
            sub = root / f"{m['task']}-{m['split']}" / name
            if not (sub / "submission.json").is_file():
                run_baseline(name, split_dir, sub, None, progress, fmt="npz")
            path.parent.mkdir(parents=True, exist_ok=True)
            write_results(path, score(sub, split_dir, metrics, progress=progress))
        files.append(path)
    return files


def _split_hash(path: Path) -> str | None:
    """The split hash a results file of ours names (None when unreadable: it is then made again)."""
    try:
        doc = jsonsafe.read(path, path.name)
        return str(doc["provenance"]["split_hash"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None

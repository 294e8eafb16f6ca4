"""phybench: does a video generation model learn physical laws, or only mimic its data?

The public API, in the order a model author meets it (in the spirit of lm-eval's
`simple_evaluate`: one import, the whole loop)::

    import phybench

    spec = phybench.get_task(name)                            # a versioned, hash-pinned task (`phybench tasks`)
    split = phybench.SplitReader("data/uniform-id-eval")       # `phybench generate` wrote it
    phybench.write_submission("sub", phybench.submission_meta(split.manifest, "my-model"), videos)
    report = phybench.validate("sub", "data/uniform-id-eval")  # every problem at once
    out = phybench.score("sub", "data/uniform-id-eval")        # results, per-video details
    files = phybench.run(model, "my-model", ["data/uniform-id-eval"], "runs/m")  # generate, pack, score
    phybench.build_leaderboard("runs/m/results", "site")

Every name is imported on first use, so ``import phybench`` stays cheap and the readers of
untrusted input (`phybench.submission.archive`) load nothing they do not need.  The modules
behind each name are the documented import paths too (`phybench.data.split`,
`phybench.submission`, `phybench.scoring.run.score`, `phybench.data.download`, ...).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

# name -> (module, attribute)
_API: dict[str, tuple[str, str]] = {
    # tasks
    "get_task": ("phybench.tasks", "get_task"),
    "TaskSpec": ("phybench.tasks.spec", "TaskSpec"),
    # splits
    "SplitReader": ("phybench.data.split", "SplitReader"),
    "SplitError": ("phybench.data.split", "SplitError"),
    "read_manifest": ("phybench.data.split", "read_manifest"),
    "load_hf_dataset": ("phybench.data.split", "load_hf_dataset"),
    "verify": ("phybench.data.verify", "verify"),
    # the Hub
    "load_split": ("phybench.data.download", "load_split"),
    "fetch_split": ("phybench.data.download", "fetch_split"),
    "publish": ("phybench.data.hub", "publish"),
    # submissions
    "Submission": ("phybench.submission.format", "Submission"),
    "SubmissionError": ("phybench.submission.archive", "SubmissionError"),
    "open_submission": ("phybench.submission.format", "open_submission"),
    "submission_meta": ("phybench.submission.writer", "submission_meta"),
    "write_submission": ("phybench.submission.writer", "write_submission"),
    "validate": ("phybench.submission.validation", "validate"),
    # scoring
    "score": ("phybench.scoring.run.score", "score"),
    "ScoreError": ("phybench.scoring.run.score", "ScoreError"),
    "ScoreOutput": ("phybench.scoring.run.score", "ScoreOutput"),
    "write_results": ("phybench.scoring.run.score", "write_results"),
    # the whole loop for a model class, and the board
    "run": ("phybench.pipeline", "run"),
    "build_leaderboard": ("phybench.leaderboard", "build"),
}

__all__ = [
    "__version__",
    "get_task", "TaskSpec",
    "SplitReader", "SplitError", "read_manifest", "load_hf_dataset", "verify",
    "load_split", "fetch_split", "publish",
    "Submission", "SubmissionError", "open_submission", "submission_meta", "write_submission", "validate",
    "score", "ScoreError", "ScoreOutput", "write_results",
    "run", "build_leaderboard",
]
assert sorted(__all__) == sorted(["__version__", *_API])

if TYPE_CHECKING:  # pragma: no cover
    from .data.download import fetch_split, load_split
    from .data.hub import publish
    from .data.split import SplitError, SplitReader, load_hf_dataset, read_manifest
    from .data.verify import verify
    from .leaderboard import build as build_leaderboard
    from .scoring.run.score import ScoreError, ScoreOutput, score, write_results
    from .submission.archive import SubmissionError
    from .submission.format import Submission, open_submission
    from .pipeline import run
    from .submission.validation import validate
    from .submission.writer import submission_meta, write_submission
    from .tasks import get_task
    from .tasks.spec import TaskSpec


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'phybench' has no attribute {name!r}")
    module, attr = _API[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

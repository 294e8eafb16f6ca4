"""Submissions: what a model hands in for a split, read safely, written atomically, validated.

One job per module, in the order a submission travels:

* `archive`   the capped folder / zip / tar readers (the security boundary; stdlib and numpy only)
* `arrays`    video bytes -> uint8 arrays (.npy, .npz, PNG frames), every header checked first
* `format`    the layout (submission.json + videos/), `Submission` the reader, `submission_hash`
* `writer`    `write_submission`, `submission_meta`
* `validation` `validate`: a submission against a split, every problem at once
* `inputs`    the producer: `phybench export-inputs` / `pack` (`phybench run`, which also
  scores, is `phybench.pipeline`, above the scorer; nothing here imports a later stage)

The public names below are imported lazily, so ``import phybench.submission.archive`` loads
the archive readers and nothing else of phybench.

    from phybench.submission import submission_meta, write_submission, validate
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the module that defines it.  The function `validate` lives in `validation.py`: a
# submodule named `validate` would replace the function on this package once imported.
_EXPORTS = {
    "Limits": "archive",
    "SubmissionError": "archive",
    "META": "format",
    "SCHEMA_VERSION": "format",
    "VIDEO_DIR": "format",
    "Submission": "format",
    "open_submission": "format",
    "schema_problems": "format",
    "submission_hash": "format",
    "WRITE_FORMATS": "writer",
    "submission_meta": "writer",
    "write_submission": "writer",
    "ValidationReport": "validation",
    "validate": "validation",
}

__all__ = [
    "META", "SCHEMA_VERSION", "VIDEO_DIR", "WRITE_FORMATS", "Limits", "Submission", "SubmissionError",
    "ValidationReport", "open_submission", "schema_problems", "submission_hash", "submission_meta", "validate",
    "write_submission",
]
assert sorted(__all__) == sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .archive import Limits, SubmissionError
    from .format import META, SCHEMA_VERSION, VIDEO_DIR, Submission, open_submission, schema_problems, submission_hash
    from .validation import ValidationReport, validate
    from .writer import WRITE_FORMATS, submission_meta, write_submission


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'phybench.submission' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

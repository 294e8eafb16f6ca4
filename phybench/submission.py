"""Stable import path for model authors' scripts: submissions live in `phybench.scoring.submission`."""
from .scoring.submission import open_submission, submission_meta, validate, write_submission

__all__ = ["open_submission", "submission_meta", "validate", "write_submission"]

"""The one problem type of every report: submission validation, split verification, leaderboard builds.

A `Problem` has a severity, a stable `code` (for scripts and tests; listed in
docs/submission.md), the sample it concerns if any, a message that says what is wrong and
how to fix it, and the file or archive entry at fault.  ``str(problem)`` is its message.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or doubtful)."""

    severity: str  # "error" or "warning"
    code: str  # stable, for scripts and tests: see docs/submission.md
    sample_id: str | None
    message: str  # what is wrong, where, and how to fix it
    entry: str | None = None  # the file or archive entry at fault, if one is

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LimitExceeded(Exception):
    """A read or a decode would pass its size limit (headers may lie: the bytes are counted).

    One type for the mp4 decoder and the capped archive readers, so a caller catches one."""


def error(code: str, message: str, sample_id: str | None = None, entry: str | None = None) -> Problem:
    return Problem("error", code, sample_id, message, entry)


def warning(code: str, message: str, sample_id: str | None = None, entry: str | None = None) -> Problem:
    return Problem("warning", code, sample_id, message, entry)

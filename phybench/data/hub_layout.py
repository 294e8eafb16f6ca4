"""The Hub's errors and repo layout, at the bottom of `phybench.data`'s Hub modules.

`hub` (publish), `download` (load) and `card` (the dataset card) all name them; keeping them
here lets the card raise `DatasetCardError` without importing the client that renders it, so the
card and the hub import one way (card -> hub_layout <- hub).
"""
from __future__ import annotations

from .split import SplitError

REPO_TYPE = "dataset"


class HubError(SplitError):
    """Publishing or loading through the Hub failed; the message says why and what to do."""

    code = "hub"


class DatasetCardError(HubError):
    """A rendered dataset card lacks a required field or section."""

    code = "hub_card"


# ------------------------------------------------------------------ paths
def repo_folder(task: str, split: str) -> str:
    """Where a split lives in the repo: `<task>/<split>`."""
    return f"{task}/{split}"

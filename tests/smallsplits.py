"""Small evaluation splits generated once per test process and shared by the tests that read them.

Why a module and not a fixture: the tests that use these call them from helper functions as well
as from test bodies, and a split of a few rows is worth generating once per process, not once
per test (generation with videos costs a second or more on 2 cores).
"""
from __future__ import annotations

import tempfile
from functools import lru_cache

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.tasks import get_task


@lru_cache(maxsize=None)
def small_split(task: str, split: str, limit: int) -> SplitReader:
    """The first `limit` rows of `task`'s `split`, generated into a fresh temporary folder."""
    out = f"{tempfile.mkdtemp(prefix='phybench-small-')}/{task}-{split}"
    generate(make_plan(get_task(task), split, limit=limit), out, progress=False)
    return SplitReader(out)

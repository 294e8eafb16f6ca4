"""The one error type of the reference baselines."""
from __future__ import annotations



class BaselineError(Exception):
    """A baseline cannot run on these inputs; the message says why and what to do."""

"""Stable import path for scripts: Hub publishing and loading live in `phybench.data.hub`."""
from .data.hub import fetch_split, load_split, publish

__all__ = ["fetch_split", "load_split", "publish"]

"""Stable import path for model authors' scripts: the split reader lives in `phybench.data.split`."""
from .data.split import SplitError, SplitReader, load_hf_dataset, read_manifest, verify

__all__ = ["SplitError", "SplitReader", "load_hf_dataset", "read_manifest", "verify"]

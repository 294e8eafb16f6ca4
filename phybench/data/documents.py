"""The split's document as types: the manifest (``manifest.json``) and its shard list.

`TypedDict`s, not classes: on disk and at runtime they are the same JSON objects and dicts as
before (no byte moves, no conversion), but mypy now knows their keys, so a misspelt
``manifest["resolutoin"]`` is a type error instead of a `KeyError` at run time
(`tests/test_documents.py` shows the gate catching one).  It has one writer and one reader:

* `Manifest`: written by `phybench.data.split.build_manifest` (and the importer, which adds
  the three keys marked "imported"), read by `phybench.data.split.read_manifest`, which checks
  its format version, shard paths and declared sizes (`manifest_bounds`) before anyone reads
  a key.  Its values are checked only as far as those checks go: a manifest is untrusted input.

A split row is not typed here (yet): a family adds its own parameter columns (``x0``, ``v0``,
``velocity``, ...) read by name from its DoFs (``row[dof.name]``), which a closed `TypedDict`
cannot express; typing `SplitReader.rows` gives 31 first-order mypy errors, each opening more.

Keys are listed in the order the writers write them (the manifest is written without sorting).
"""
from __future__ import annotations

from typing import Any, TypedDict


class ShardEntry(TypedDict):
    """One shard of a split, as the manifest lists it."""

    file: str  # data/shard-00000-of-00004.parquet
    start: int  # first row index
    stop: int  # one past the last
    sha256: str  # of the Parquet file's bytes
    content_sha256: str  # of the shard's sample digests, concatenated


# A key that may be absent sits in a `total=False` subclass (Python 3.10 has no NotRequired).
class _Identity(TypedDict):

    format_version: int
    task: str
    task_version: int
    spec_hash: str
    split: str
    resolution: int  # px (square frames)
    num_samples: int
    shard_size: int
    with_video: bool


class PlanIdentity(_Identity, total=False):
    """What two runs writing into one folder must share (`SplitPlan.identity`); the split hash
    covers it (all but the shard size)."""

    with_states: bool  # present (False) only for training rows without trajectories


class _Manifest(PlanIdentity):
    phybench_version: str
    full_size: int  # samples of the full protocol (readers of an untrusted split still check it is one)
    frames: int
    frame_interval: float  # s
    condition_frames: int
    world_size: float  # m (the square world's side)
    dofs: list[str]
    hf_split: str  # the `datasets` split name
    levels: dict[str, int]  # level -> rows
    command: str | None
    shards: list[ShardEntry]
    split_hash: str


class Manifest(_Manifest, total=False):
    """A split's ``manifest.json`` (docs/submission.md): its identity (`PlanIdentity`), the task's
    geometry, what was made, its shards and its hash; an imported split has three keys more."""

    pixel_mapping: str  # imported: the reference data's pixel mapping ("grid")
    time_offset: float  # imported: s, the reference data's frame 0
    imported: dict[str, Any]  # imported: the source file and its hash

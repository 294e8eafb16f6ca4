"""The split's documents as types: the manifest (``manifest.json``), its shard list and a row.

`TypedDict`s, not classes: on disk and at runtime they are the same JSON objects and dicts as
before (no byte moves, no conversion), but mypy now knows their keys, so a misspelt
``manifest["resolutoin"]`` is a type error instead of a `KeyError` at run time
(`tests/test_documents.py` shows the gate catching one).  Each has one writer and one reader:

* `Manifest`: written by `phybench.data.split.build_manifest` (and the importer, which adds
  the three keys marked "imported"), read by `phybench.data.split.read_manifest`, which checks
  its format version, shard paths and declared sizes (`manifest_bounds`) before anyone reads
  a key.  Its values are checked only as far as those checks go: a manifest is untrusted input.

* `SplitRow`: one row of a split's Parquet shards, written by `phybench.data.split.generate_sample`
  (and the importer's `build_row`), read by `phybench.data.split.SplitReader.rows` (through
  `phybench.data.arrow.table_rows`).  Its fixed columns are typed; a family adds its own
  parameter columns (its DoFs' and categorical names, ``x0``, ``velocity_1``, ...) and extra
  columns (`Family.extra_columns`), which a closed `TypedDict` cannot list: they are read by
  name through ONE accessor, `dof_value(row, name)`, so a misspelt fixed key still fails mypy
  while a parameter name (known only at run time, from the task spec) stays a runtime lookup.
  A writer's dict becomes a row through `split_row` (a cast: the Parquet bytes are unchanged).
  ``rows(columns=[...])`` reads a projection: only the asked-for columns are present then (the
  type still says the fixed ones are; a reader that projects reads only what it asked for).
  Code below the data layer (`phybench.tasks`) takes rows as ``Mapping[str, Any]``, which a
  `SplitRow` is; `row_scene` / `render_row` take `RowStates` (or any mapping of state columns:
  `datasets` batches, the viewer's slices).

Keys are listed in the order the writers write them (the manifest is written without sorting).
"""
from __future__ import annotations

from typing import Any, Mapping, TypedDict, cast


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


class RowStates(TypedDict, total=False):
    """A row's trajectory columns: what `render_row` and `row_scene` read (absent from
    parameter-only training rows, ``with_states`` False; angles and bodies only for families
    with `stores_bodies`)."""

    positions: Any  # float32 (T, B, 2), world units (m)
    velocities: Any  # float32 (T, B, 2), m/s
    radii: Any  # float32 (B,), m
    colours: Any  # uint8 (B, 3)
    angles: Any  # float32 (T, B), rad
    bodies: str  # JSON of the bodies


class _SplitRow(TypedDict):
    sample_id: str  # "<task>/<split>/<index:07d>"
    index: int  # the row's sample index in the split (its seed is derived from it)
    level: str  # "in" / "ood" / ... (`classify_level`)
    contact_time: float  # s after frame 0; NaN where the family has no contact
    frames_in_view: int  # frames with every body wholly inside the square


class SplitRow(_SplitRow, RowStates, total=False):
    """One row of a split (`phybench.data.arrow.features` is its schema): the fixed columns
    every row has, then the trajectory (absent from parameter-only training rows, ``with_states``
    False), the bodies of families that store them, and the video of evaluation splits.  The
    family's parameter and extra columns are there too, untyped: read them with `dof_value`."""

    video: Any  # list of PNG bytes per frame (as read) or uint8 (T, H, W, 3) (as loaded by `datasets`)


def split_row(columns: Mapping[str, Any]) -> SplitRow:
    """A row a writer has built (fixed columns, the family's, the states) as a `SplitRow`: the
    one place a dict becomes a row (`generate_sample`, the importer's `build_row`,
    `arrow.table_rows`); no copy, no check (`tests/test_documents.py` checks the writers' keys)."""
    return cast(SplitRow, columns)


_ABSENT: Any = object()  # `dof_value`'s "no default": a missing column raises KeyError


def dof_value(row: SplitRow | Mapping[str, Any], name: str, default: Any = _ABSENT) -> Any:
    """The value of a family's own column (a DoF, a categorical, an extra column) by its name;
    with a ``default``, that default where the row lacks the column (``row.get(name, default)``).

    The one door for a key mypy cannot check: one known only at run time (``dof.name``) or one
    only some families write (``"velocity"``, ``"outcome"``).  The fixed columns are typed keys
    of `SplitRow`; read them as ``row["sample_id"]``, so a misspelling fails mypy."""
    columns = cast(Mapping[str, Any], row)
    return columns[name] if default is _ABSENT else columns.get(name, default)


"""A split's rows as Arrow / `datasets` tables: the features (schema), rows to a table and back.

`datasets` is imported lazily (it is slow to import); a table row is a plain dict of numpy arrays.
"""
from __future__ import annotations

from typing import Any, Iterator
import numpy as np
from ..tasks import family_of
from .documents import SplitRow, dof_value, split_row
from ..tasks.spec import TaskSpec


STATE_COLUMNS = ("positions", "velocities", "radii", "colours")  # every row: the trajectory
BODY_COLUMNS = ("angles", "bodies")  # rows of families with `stores_bodies`
# ------------------------------------------------------------------ arrow
def features(spec: TaskSpec, with_video: bool, with_states: bool = True):
    """The `datasets.Features` of a split (imported lazily: `datasets` is slow to import)."""
    from datasets import Features, Image, List, Value

    family = family_of(spec)
    cols: dict[str, Any] = {
        "sample_id": Value("string"),
        "index": Value("int64"),
        "level": Value("string"),
        **{d.name: Value("float64") for d in spec.dofs},
        **{c.name: Value("string") for c in spec.categorical},
        "contact_time": Value("float64"),
        **{name: Value("float64") for name in family.extra_columns},
        "frames_in_view": Value("int32"),
    }
    if with_states:
        cols.update({
            "positions": List(List(List(Value("float32")))),
            "velocities": List(List(List(Value("float32")))),
            "radii": List(Value("float32")),
            "colours": List(List(Value("uint8"))),
        })
    if family.stores_bodies and with_states:
        cols["angles"] = List(List(Value("float32")))
        cols["bodies"] = Value("string")
    if with_video:
        cols["video"] = List(Image())
    return Features(cols)


def _nested(values: np.ndarray | list[np.ndarray]):
    """Rows of numpy arrays -> arrow list<...list<value>>, one list per row.

    One (n, d1, ..., dk) array: zero-copy values.  A list of arrays of one ndim but
    different shapes (scenes with different numbers of bodies): ragged lists."""
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        arr = pa.array(values.reshape(-1))
        count = values.size
        for size in reversed(values.shape[1:]):
            count //= size
            arr = pa.ListArray.from_arrays(pa.array(np.arange(count + 1, dtype=np.int32) * size), arr)
        return arr
    arr = pa.array(np.concatenate([v.reshape(-1) for v in values]))
    for axis in reversed(range(values[0].ndim)):
        # lists at this depth: prod(shape[:axis]) per row, each of length shape[axis]
        lengths = np.concatenate([np.full(int(np.prod(v.shape[:axis], dtype=np.int64)), v.shape[axis], np.int32)
                                  for v in values])
        arr = pa.ListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)), arr)
    return arr


def _stack(arrays: list[np.ndarray]) -> np.ndarray | list[np.ndarray]:
    return np.stack(arrays) if len({a.shape for a in arrays}) == 1 else arrays


def _unnest(col, n: int) -> np.ndarray | list[np.ndarray]:
    """Inverse of `_nested`: one array (n, ...) when every row has one shape, else a list."""
    values, shape, uniform = col, [n], True
    while hasattr(values.type, "value_type"):
        lengths = values.value_lengths().to_numpy(zero_copy_only=False)
        if len(lengths) and (lengths != lengths[0]).any():
            uniform = False
            break
        shape.append(int(lengths[0]) if len(lengths) else 0)
        values = values.flatten()
    if uniform:
        return values.to_numpy(zero_copy_only=False).reshape(shape)
    return [_unnest(col.slice(i, 1), 1)[0] for i in range(n)]


def rows_to_table(spec: TaskSpec, rows: list[SplitRow], pngs: list[list[bytes]] | None, with_states: bool = True):
    import pyarrow as pa

    feats = features(spec, pngs is not None, with_states)
    schema = feats.arrow_schema
    cols: dict[str, Any] = {}
    for name in schema.names:
        if name in ("video", "bodies") or name in STATE_COLUMNS or name == "angles":
            continue
        cols[name] = pa.array([dof_value(r, name) for r in rows], type=schema.field(name).type)
    for name in STATE_COLUMNS + ("angles",):
        if name in schema.names:
            cols[name] = _nested(_stack([np.asarray(dof_value(r, name)) for r in rows]))
    if "bodies" in schema.names:
        cols["bodies"] = pa.array([r["bodies"] for r in rows], type=pa.string())
    if pngs is not None:
        flat = [p for video in pngs for p in video]
        frames = pa.StructArray.from_arrays(
            [pa.array(flat, type=pa.binary()), pa.nulls(len(flat), type=pa.string())],
            names=["bytes", "path"],
        )
        offsets = np.cumsum([0] + [len(v) for v in pngs], dtype=np.int32)
        cols["video"] = pa.ListArray.from_arrays(pa.array(offsets), frames)
    return pa.Table.from_arrays([cols[f.name] for f in schema], schema=schema)


def table_rows(table) -> Iterator[SplitRow]:
    """Arrow table -> rows with numpy arrays (videos as PNG lists)."""
    n = table.num_rows
    out: dict[str, Any] = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if name in STATE_COLUMNS or name == "angles":
            out[name] = _unnest(col, n)
        elif name == "video":
            out[name] = [[f["bytes"] for f in v] for v in col.to_pylist()]
        else:
            out[name] = col.to_pylist()
    for i in range(n):
        yield split_row({k: v[i] for k, v in out.items()})

"""Conditions beyond frames, over stored rows and splits: each sample's state and text, and their files.

The wording and the state of a scene are pure and live on the task layer
(`phybench.tasks.conditions`: `scene_state`, `describe_state`; a family's words:
`phybench.tasks.family.family_text`); this module reads rows and splits
(`phybench.data.split`) and writes and reads the files:

* `condition_state(spec, row)`: a stored row's state at its last condition frame, and
  `condition_text(spec, row)` its family's words for it.
* `write_conditions(split_dir, folder)` writes ``prompts.csv`` (sample_id,text) and
  ``states.jsonl`` (one state per line, in the split's order) plus ``conditions.json``
  (version and hashes); `phybench export-inputs` calls it.  `read_conditions` reads them back.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..tasks.conditions import (
    CONDITIONS_FILE,
    CONDITIONS_KIND,
    CONDITIONS_VERSION,
    PROMPTS_FILE,
    STATES_FILE,
    scene_state,
)
from ..tasks.family import family_text
from ..tasks.spec import TaskSpec
from ..world.scene import Scene
from .documents import SplitRow

# Row columns a scene is built from (`phybench.data.split.row_scene`); nothing else is read.
_SCENE_COLUMNS = ("sample_id", "positions", "velocities", "radii", "colours", "angles", "bodies")


def condition_scene(spec: TaskSpec, row: SplitRow) -> Scene:
    """The row's scene cut to its condition frames: all that the conditions may read."""
    from .split import row_scene

    return row_scene(row).frames(slice(0, spec.condition_frames))


def condition_state(spec: TaskSpec, row: SplitRow) -> dict[str, Any]:
    """The numeric state of a sample at its last condition frame (see the module docstring)."""
    return scene_state(spec, condition_scene(spec, row))


def condition_text(spec: TaskSpec, row: SplitRow) -> str:
    """The plain-words description of a sample, worded by its family from the state alone."""
    return family_text(spec, condition_state(spec, row))


# ------------------------------------------------------------------ files
def _jsonl_line(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"


def conditions_hash(states_bytes: bytes, prompts_bytes: bytes) -> str:
    """sha256 over `sha256sum`-style lines of the two files (sorted by name): the conditions' own hash."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                    for name, data in sorted({PROMPTS_FILE: prompts_bytes, STATES_FILE: states_bytes}.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def split_conditions(split_dir: str | os.PathLike[str]) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(sample ids, states, texts) of every sample of a split, in its stored order."""
    import pyarrow.parquet as pq

    from .split import SplitReader

    reader = SplitReader(split_dir)
    spec = reader.spec
    names = set(pq.read_schema(reader.folder / reader.manifest["shards"][0]["file"]).names)
    ids, states, texts = [], [], []
    for row in reader.rows(columns=[c for c in _SCENE_COLUMNS if c in names]):
        if row.get("positions") is None:
            raise ValueError(f"{split_dir}: rows without states (a parameter-only training split) have no conditions")
        state = condition_state(spec, row)
        ids.append(str(row["sample_id"]))
        states.append(state)
        texts.append(family_text(spec, state))
    return ids, states, texts


def write_conditions(split_dir: str | os.PathLike[str], folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Write prompts.csv, states.jsonl and conditions.json into `folder`; returns conditions.json's data."""
    from .split import SplitReader

    manifest = SplitReader(split_dir).manifest
    ids, states, texts = split_conditions(split_dir)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["sample_id", "text"])
    writer.writerows(zip(ids, texts, strict=True))
    prompts = buf.getvalue().encode("utf-8")
    lines = "".join(_jsonl_line({"sample_id": sid, **state}) for sid, state in zip(ids, states, strict=True)).encode("utf-8")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROMPTS_FILE).write_bytes(prompts)
    (folder / STATES_FILE).write_bytes(lines)
    doc = {
        "kind": CONDITIONS_KIND,
        "conditions_version": CONDITIONS_VERSION,
        "task": manifest["task"],
        "split": manifest["split"],
        "split_hash": manifest["split_hash"],
        "samples": len(ids),
        "state_frame": int(manifest["condition_frames"]) - 1,
        "conditions_hash": conditions_hash(lines, prompts),
        "files": {PROMPTS_FILE: "sample_id,text: a plain-words description of the scene at the last condition frame",
                  STATES_FILE: "one JSON object per sample: world settings and every body's state at that frame"},
    }
    (folder / CONDITIONS_FILE).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return doc


def read_conditions(folder: str | os.PathLike[str]) -> tuple[dict[str, str], dict[str, dict[str, Any]]] | None:
    """(texts, states) by sample id from an inputs folder; None when it has none (an older export)."""
    folder = Path(folder)
    if not (folder / PROMPTS_FILE).is_file() or not (folder / STATES_FILE).is_file():
        return None
    with open(folder / PROMPTS_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != ["sample_id", "text"] or any(len(r) != 2 for r in rows[1:]):
        raise ValueError(f"{folder / PROMPTS_FILE}: expected a sample_id,text header and two columns per row")
    texts = {r[0]: r[1] for r in rows[1:]}
    states: dict[str, dict[str, Any]] = {}
    for k, line in enumerate((folder / STATES_FILE).read_text(encoding="utf-8").splitlines()):
        doc = jsonsafe.loads(line, f"{STATES_FILE} line {k + 1}")
        if not isinstance(doc, dict) or not isinstance(doc.get("sample_id"), str):
            raise ValueError(f"{folder / STATES_FILE}: line {k + 1} is not an object with a sample_id")
        sid = doc.pop("sample_id")
        states[sid] = doc
    return texts, states


def example(spec: TaskSpec) -> tuple[str, dict[str, Any], str]:
    """(sample id, state, text) of the first sample of the task's first evaluation split (`tasks show`)."""
    from .split import generate_sample, make_plan

    row, _ = generate_sample(make_plan(spec, spec.eval_splits[0], limit=1), 0)
    state = condition_state(spec, row)
    return str(row["sample_id"]), state, family_text(spec, state)

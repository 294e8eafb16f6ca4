"""The typed documents (issue 50): the manifest, a split row, a results file and its sidecar are
`TypedDict`s (`phybench.data.documents`, `phybench.scoring.run.documents`), so mypy catches a
misspelt key (a split row's family columns are read through `dof_value`).

Two kinds of test: the gate works (a snippet with a misspelt key fails `mypy`, the same snippet
spelt right passes), and the types describe the real documents (the keys a fresh split's
manifest and rows and the shipped results files and sidecars hold are the types' keys, required ones
always present), so the gate checks against what is on disk.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from phybench.data.documents import Manifest, ShardEntry, SplitRow
from phybench.scoring.run.documents import Provenance, Results, Sidecar, SidecarRow

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "leaderboard" / "results"

SNIPPET = '''
from typing import Any

from phybench.data.documents import Manifest, SplitRow, dof_value
from phybench.scoring.run.documents import Results, Sidecar


def resolution(manifest: Manifest) -> int:
    return manifest["{manifest_key}"]


def split_hash(results: Results) -> str:
    return results["provenance"]["{provenance_key}"]


def first_generated(sidecar: Sidecar) -> float | None:
    return sidecar["samples"][0]["{row_key}"]


def sample_id(row: SplitRow) -> str:
    return row["{split_row_key}"]


def velocity(row: SplitRow) -> Any:  # a family's own column: by name, through the one accessor
    return dof_value(row, "velocity")
'''
RIGHT = {"manifest_key": "resolution", "provenance_key": "split_hash", "row_key": "generated_velocity",
         "split_row_key": "sample_id"}
MISSPELT = {"manifest_key": "resolutoin", "provenance_key": "split_hsah", "row_key": "generated_velocty",
            "split_row_key": "sampel_id"}


def _mypy(folder: Path, cache: Path, keys: dict[str, str], untyped: bool = False) -> tuple[str, int]:
    from mypy import api

    text = SNIPPET.format(**keys)
    if untyped:  # the documents as they were before issue 50: dicts of anything
        text = text.replace(": Manifest)", ": dict[str, Any])").replace(
            ": Results)", ": dict[str, Any])").replace(": Sidecar)", ": dict[str, Any])").replace(": SplitRow)", ": dict[str, Any])")
    module = folder / "snippet.py"
    module.write_text(text)
    out, err, status = api.run([str(module), "--follow-imports=silent", "--no-error-summary", "--show-error-codes",
                                "--cache-dir", str(cache), "--python-version", "3.10"])
    return out + err, status


@pytest.mark.slow  # mypy: ~30 CPU s the first time (typeshed), a few s with its cache warm
def test_mypy_catches_a_misspelt_document_key(tmp_path, request):
    cache = Path(request.config.cache.mkdir("mypy-documents"))  # .pytest_cache: warm from the second run on
    out, status = _mypy(tmp_path, cache, RIGHT)
    assert status == 0, f"the right keys must type-check:\n{out}"
    out, status = _mypy(tmp_path, cache, MISSPELT)
    assert status == 1, out
    for doc, key in (("Manifest", "resolutoin"), ("Provenance", "split_hsah"), ("SidecarRow", "generated_velocty"),
                     ("SplitRow", "sampel_id")):
        assert f'TypedDict "{doc}" has no key "{key}"' in out, out
    # the same misspellings on untyped documents (dict[str, Any], as before): mypy cannot see them
    out, status = _mypy(tmp_path, cache, MISSPELT, untyped=True)
    assert status == 0, out


def _keys(typed: type) -> tuple[frozenset[str], frozenset[str]]:
    """(required keys, every key) of a TypedDict."""
    return typed.__required_keys__, typed.__required_keys__ | typed.__optional_keys__  # type: ignore[attr-defined]


def _fits(doc: dict, typed: type, where: str) -> None:
    required, allowed = _keys(typed)
    assert required <= set(doc), f"{where}: {typed.__name__} keys missing: {sorted(required - set(doc))}"
    assert set(doc) <= allowed, f"{where}: keys {typed.__name__} does not list: {sorted(set(doc) - allowed)}"


@pytest.mark.slow  # a 3-sample split generated: ~3 s on two shared cores
def test_a_fresh_manifest_is_a_manifest(tmp_path):
    from phybench.data.generate import generate
    from phybench.data.split import make_plan, read_manifest
    from phybench.tasks import get_task

    generate(make_plan(get_task("uniform"), "id-eval", None, 3, 2), tmp_path / "s", progress=False)
    manifest = read_manifest(tmp_path / "s")
    _fits(dict(manifest), Manifest, "manifest.json")
    for shard in manifest["shards"]:
        _fits(dict(shard), ShardEntry, "manifest.json shards[]")
    # the identity keys come first, in the order the writer writes them (the file is not sorted)
    assert list(manifest)[:3] == ["format_version", "task", "task_version"]


@pytest.mark.slow  # two 3-sample splits generated and read back: ~4 s on two shared cores
@pytest.mark.parametrize("task", ["uniform", "collision"])
def test_a_fresh_split_rows_are_split_rows(tmp_path, task):
    """Every row `SplitReader.rows` gives holds the fixed keys of `SplitRow`; the rest are the
    family's own columns (its DoFs, categoricals and extra columns: what `dof_value` reads)."""
    from phybench.data.documents import dof_value
    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan
    from phybench.tasks import family_of, get_task

    spec = get_task(task)
    generate(make_plan(spec, "id-eval", None, 3, 2), tmp_path / "s", progress=False)
    family = {d.name for d in spec.dofs} | {c.name for c in spec.categorical} | set(family_of(spec).extra_columns)
    assert family, "a family without parameter columns?"
    required, allowed = _keys(SplitRow)
    rows = list(SplitReader(tmp_path / "s").rows())
    assert len(rows) == 3
    for row in rows:
        assert required <= set(row), f"SplitRow keys missing: {sorted(required - set(row))}"
        assert set(row) - allowed == family, f"columns neither typed nor the family's: {sorted(set(row) - allowed - family)}"
        assert {"positions", "velocities", "radii", "colours", "video"} <= set(row)  # an evaluation split
        for name in family:
            assert dof_value(row, name) is not None
    assert [row["index"] for row in rows] == [0, 1, 2]
    assert all(row["sample_id"].startswith(f"{task}/id-eval/") for row in rows)


def _shipped(suffix: str) -> list[Path]:
    files = sorted(p for p in SHIPPED.rglob("*.json") if p.name.endswith(suffix))
    if suffix == ".json":
        files = [p for p in files if not p.name.endswith((".samples.json", ".verified.json"))]
    return files


def test_the_shipped_results_files_are_results():
    from phybench.scoring.run.layout import read_results

    files = [p for p in _shipped(".json") if json.loads(p.read_bytes()).get("kind") == "phybench-results"]
    assert len(files) >= 10, "the shipped results files moved?"
    for path in files:
        doc = read_results(path)
        _fits(dict(doc), Results, str(path.relative_to(ROOT)))
        _fits(dict(doc["provenance"]), Provenance, f"{path.relative_to(ROOT)} provenance")
        assert set(doc["summary"]) == {"overall", "levels"}


def test_the_shipped_sidecars_are_sidecars():
    from phybench.scoring.run.layout import read_sidecar

    files = _shipped(".samples.json")
    assert files, "no shipped sidecar"
    for path in files:
        doc = read_sidecar(path)
        _fits(dict(doc), Sidecar, str(path.relative_to(ROOT)))
        for row in doc["samples"]:
            _fits(dict(row), SidecarRow, f"{path.relative_to(ROOT)} samples[]")

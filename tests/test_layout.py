"""The results layout has one owner: `phybench.scoring.run.layout` names the results file, its
samples sidecar and its verification record; no other module spells those names in code."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from phybench.scoring.run import layout

ROOT = Path(__file__).resolve().parents[1]


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings (help texts are prose, and say the names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_only_the_layout_spells_the_sidecar_and_record_names():
    owner = ROOT / "phybench" / "scoring" / "run" / "layout.py"
    spelled = []
    for path in [*sorted((ROOT / "phybench").rglob("*.py")), *sorted((ROOT / "leaderboard" / "scripts").glob("*.py"))]:
        if path == owner:
            continue
        for line, text in _code_strings(path):
            if (layout.SAMPLES_SUFFIX in text or layout.RECORD_SUFFIX in text) and "\n" not in text:
                spelled.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert not spelled, spelled


def test_the_three_names_pair_up(tmp_path):
    results = tmp_path / "uniform-id-eval-copy-last.json"
    side, record = layout.samples_path(results), layout.record_path(results)
    assert side.name == "uniform-id-eval-copy-last.samples.json" and record.name == "uniform-id-eval-copy-last.verified.json"
    assert layout.results_of(side) == layout.results_of(record) == layout.results_of(results) == results
    assert layout.is_samples(side) and layout.is_record(record) and layout.is_beside(side) and layout.is_beside(record)
    assert not layout.is_beside(results)


def test_output_files_are_the_bytes_score_always_wrote(tmp_path):
    from phybench.scoring.run.results import results_bytes

    results = {"kind": "phybench-results", "b": 1.0, "a": float("nan")}
    samples = {"samples": [{"sample_id": "x", "true_velocity": 1.5}], "dof": "velocity"}
    files = layout.output_files(tmp_path / "r.json", results, samples)
    assert files == [(tmp_path / "r.samples.json", (json.dumps(samples, sort_keys=True) + "\n").encode()),
                     (tmp_path / "r.json", results_bytes(results))]
    assert layout.output_files(tmp_path / "r.json", results, None) == files[1:]
    assert layout.parse(files[1][1]) == {"kind": "phybench-results", "b": 1.0, "a": None}


def test_seed_k_gets_its_own_results_name(tmp_path):
    """Issue 51 item 6: seed k != 0 of a model is ``<task>-<split>-<model>.seed<k>.json`` (its sidecar and
    record follow), seed 0 (or a card without seeds) keeps the plain name every shipped file has."""
    plain = tmp_path / "uniform-id-eval-toy.json"
    assert layout.seeded_path(plain, [0]) == plain and layout.seeded_path(plain, None) == plain
    assert layout.seeded_path(plain, []) == plain and layout.seeded_path(plain, ["1"]) == plain
    one = layout.seeded_path(plain, [1])
    assert one.name == "uniform-id-eval-toy.seed1.json" and layout.seeded_path(one, [1]) == one
    assert layout.samples_path(one).name == "uniform-id-eval-toy.seed1.samples.json"
    assert layout.record_path(one).name == "uniform-id-eval-toy.seed1.verified.json"
    assert layout.results_of(layout.record_path(one)) == one
    assert layout.seeded_path(plain, [2, 1, 2]).name == "uniform-id-eval-toy.seed1-2.json"
    assert layout.results_name("uniform", "id-eval", "toy", [3]) == "uniform-id-eval-toy.seed3.json"
    assert layout.results_name("uniform", "id-eval", "toy") == "uniform-id-eval-toy.json"

"""benchmarks/law_recall.py: the counts behind docs/results.md "Naming the wrong law".

On tiny splits: the exact ground truth names no wrong law, restitution-0 is named wherever the
model's fit exists, slow-3 names the acceleration, and the Wilson interval is the textbook one.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.tasks import get_task

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "law_recall.py"


@pytest.fixture(scope="module")
def law_recall():
    spec = importlib.util.spec_from_file_location("law_recall", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wilson_interval(law_recall):
    lo, hi = law_recall.wilson(0, 200)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.01884, abs=1e-4)
    lo, hi = law_recall.wilson(9, 10)
    assert (lo, hi) == pytest.approx((0.5958, 0.9821), abs=1e-3)


@pytest.mark.slow
def test_counts_on_tiny_splits(law_recall, tmp_path):
    folders = {}
    for task, n in (("collision", 6), ("uniform", 4)):
        folders[task] = tmp_path / task
        generate(make_plan(get_task(task), "id-eval", limit=n), folders[task], progress=False)
    coll = law_recall.run_split(str(folders["collision"]), show_misses=2)
    truth = coll[law_recall.TRUTH]
    assert truth["named"] == 0 and truth["named"] + truth["clean"] + truth["no fit"] + truth["excluded"] == 6
    for kind in ("restitution-0", "equal-mass", "momentum-1.5"):
        c = coll[kind]
        assert c["hit"] + c["miss"] + c["no fit"] + c["excluded"] + c["skipped"] == 6, kind
    assert coll["restitution-0"]["miss"] == 0 and coll["restitution-0"]["hit"] >= 4
    uni = law_recall.run_split(str(folders["uniform"]), show_misses=2)
    assert uni["slow-3"]["hit"] == 4 and uni[law_recall.TRUTH]["named"] == 0
    table = law_recall.table({"collision/id-eval": coll, "uniform/id-eval": uni})
    assert "| uniform/id-eval | slow-3 | acceleration | 4 | 4 | 100.0%" in table

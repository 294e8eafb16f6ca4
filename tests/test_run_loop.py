"""`phybench run` closes the author's loop (issue 49): its viewers show the judge, it prints numbers beside
the reference rows, and its site links the viewers it built."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.tasks import get_task


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("loop") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), out, progress=False)
    return out


class Freeze:
    """Every video freezes on its last condition frame: the judge's freeze rule fires on each."""

    def generate(self, condition, num_frames):
        return np.repeat(condition[:, -1:], num_frames, axis=1)


def page_data(out: Path) -> dict:
    text = (out / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', text, flags=re.S)
    assert m, "no inline data"
    return json.loads(m.group(1))


@pytest.mark.slow
def test_run_view_shows_the_judge(split, tmp_path, capsys):
    """`run --view` writes the split's details and hands them to its viewer: judge cards in the gallery,
    the abnormal column filled and the findings per video, as the standalone `view --details` shows."""
    out = tmp_path / "run"
    assert main(["run", "--model", "test_run_loop:Freeze", "--data", str(split), "--out", str(out),
                 "--metrics", "velocity_error", "--view", "--quiet"]) == 0
    work = out / "uniform-id-eval"
    assert (work / "details.parquet").is_file()
    data = page_data(work / "view")
    kinds = {k["kind"]: k for k in data["gallery"]}
    assert "rule:freeze" in kinds, sorted(kinds)
    cells = {v["id"]: v["cells"][0] for v in data["videos"]}
    assert all(c["abnormal"] == 1.0 for c in cells.values())
    for sid in kinds["rule:freeze"]["ids"]:
        assert any(f["rule"] == "freeze" for f in cells[sid]["findings"])

"""The board's learned-law table and scatter (`phybench.leaderboard.law`, issue 24 item 3)."""
from __future__ import annotations

import json
from pathlib import Path

from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.leaderboard import build
from phybench.reference import run_baseline
from phybench.scoring.score import score, write_results
from phybench.tasks import get_task


def test_learned_law_table_and_scatter(tmp_path: Path) -> None:
    data = tmp_path / "parabola"
    generate(make_plan(get_task("parabola"), "id-eval", limit=8), data, progress=False)
    results = tmp_path / "results"
    results.mkdir()
    for name in ("ground-truth", "copy-last"):
        sub = run_baseline(name, data, tmp_path / name, progress=False)
        write_results(results / f"parabola-id-eval-{name}.json", score(sub, data, ("velocity_error",), progress=False))
    report = build(results, tmp_path / "site", registry_check=False)
    assert report.ok, report.refused
    md = (tmp_path / "site" / "leaderboard.md").read_text()
    law = md.split("Learned law, `gravity`")[1]
    assert "| ground truth \\(fitted to the split's own videos\\) | 2.5 [2.5, 2.5] |" in law
    assert "| ground-truth | 2.5 [2.5, 2.5] |" in law
    html = (tmp_path / "site" / "index.html").read_text()
    assert "Learned law: gravity" in html
    assert "fitted gravity against the ground truth" in html  # the per-video scatter


def test_hostile_law_blocks_show_nothing(tmp_path: Path) -> None:
    from phybench.leaderboard.law import law_cell

    assert law_cell({"fit": "x", "params": {"gravity": {"model": {"median": "2.5<script>"}}}}) is None
    assert law_cell({"fit": "x", "params": {"gravity": {"model": {"median": float("nan")}}}}) is None
    cell = law_cell({"fit": "x", "videos": 3, "params": {"gravity": {"model": {"median": 2.0, "iqr": ["a", 1]}}}})
    assert cell == {"fit": "x", "videos": 3, "params": {"gravity": {"model": {"median": 2.0, "iqr": None, "count": None}}}}
    assert json.dumps(cell)

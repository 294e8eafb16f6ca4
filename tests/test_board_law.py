"""The board's learned-law table and scatter (`phybench.leaderboard.site.law`, issue 24 item 3)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.leaderboard import build
from phybench.reference import run_baseline
from phybench.scoring.run.score import score, write_results
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
    from phybench.leaderboard.site.law import law_cell

    assert law_cell({"fit": "x", "params": {"gravity": {"model": {"median": "2.5<script>"}}}}) is None
    assert law_cell({"fit": "x", "params": {"gravity": {"model": {"median": float("nan")}}}}) is None
    cell = law_cell({"fit": "x", "videos": 3, "params": {"gravity": {"model": {"median": 2.0, "iqr": ["a", 1]}}}})
    assert cell == {"fit": "x", "videos": 3, "params": {"gravity": {"model": {"median": 2.0, "iqr": None, "count": None}}}}
    assert json.dumps(cell)


@pytest.mark.slow
def test_law_table_fits_the_page_in_chromium(tmp_path: Path) -> None:
    """Every level's column of long numbers (linear extrapolation fits gravity ~1e-05) in a
    1400 px window: the page never scrolls sideways, each cell shows its median over its
    interquartile range."""
    from test_leaderboard import chromium_or_skip, open_tab

    results = tmp_path / "results"
    results.mkdir()
    for split in ("id-eval", "ood-eval"):
        data = tmp_path / split
        generate(make_plan(get_task("parabola"), split, limit=8), data, progress=False)
        for name in ("ground-truth", "linear-extrapolation"):
            sub = run_baseline(name, data, tmp_path / f"{name}-{split}", progress=False)
            write_results(results / f"parabola-{split}-{name}.json", score(sub, data, ("velocity_error",), progress=False))
    assert build(results, tmp_path / "site", registry_check=False).ok
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        cdp("Page.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (tmp_path / "site" / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        columns = js("document.querySelectorAll('table.law thead th').length")
        assert columns >= 5  # model, ID, OOD overall and the OOD levels
        assert js("document.documentElement.scrollWidth") <= 1400
        cell = js("[...document.querySelectorAll('table.law td.num')].map(td => td.innerText)[0]")
        assert "\n[" in cell  # the median, then its interquartile range on its own line
    finally:
        browser.close()

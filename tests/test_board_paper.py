"""The paper's own numbers on the board (issue 47): Figure 3 and Table 2, quoted, never ranked."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from phybench.leaderboard.site.paper import FIGURE3, TABLE2, add_paper_references, figure3_rows, reference_for, table2_rows
from phybench.tasks import family_of, get_task

ROOT = Path(__file__).parent.parent
COMBINATORIAL = ROOT / "leaderboard" / "results" / "combinatorial"


def test_figure3_is_the_papers_table():
    """Spot checks against the issue's table (digitised Figure 3) and the text's quoted numbers."""
    rows = {r["model"]: r for r in figure3_rows("uniform")}
    assert len(rows) == 10  # 3 models x 3 sizes + the floor
    assert rows["DiT-S · 30K videos"]["cells"] == {"id": 0.022, "ood-overall": 0.435}  # the text: 0.022
    assert rows["DiT-L · 3M videos"]["cells"] == {"id": 0.012, "ood-overall": 0.427}  # the text: 0.012, 0.427
    assert rows["DiT-B · 300K videos"]["approx"] == ["id"] and rows["DiT-B · 300K videos"]["cells"]["id"] == 0.015
    assert [rows[f"DiT-B · {s} videos"]["cells"]["ood-overall"] for s in ("30K", "300K", "3M")] == [0.433, 0.328, 0.358]
    assert rows["ground truth (their videos, 256 px)"]["cells"] == {"id": 0.0099, "ood-overall": 0.0104}
    floor = {r["model"]: r for r in figure3_rows("collision")}["ground truth (their videos, 256 px)"]
    assert floor["cells"] == {"id": 0.0117}  # the paper gives no collision OOD floor
    assert {r["model"]: r for r in figure3_rows("parabola")}["DiT-L · 3M videos"]["cells"]["id"] == 0.033
    assert set(FIGURE3) == {"Figure 3, uniform motion", "Figure 3, collision", "Figure 3, parabola"} == {
        family_of(get_task(t)).paper_quote for t in ("uniform", "collision", "parabola")}
    assert figure3_rows("combinatorial") == []


def test_table2_is_the_papers_table():
    rows = {r["model"]: r["cells"] for r in table2_rows()}
    assert rows == {
        "DiT-XL · 6 templates": {"in-template-eval": 0.03, "out-of-template-eval": 0.67},
        "DiT-XL · 30 templates": {"in-template-eval": 0.03, "out-of-template-eval": 0.18},
        "DiT-XL · 60 templates": {"in-template-eval": 0.02, "out-of-template-eval": 0.10},
        "DiT-B · 60 templates": {"in-template-eval": 0.03, "out-of-template-eval": 0.24},
    }
    assert len(TABLE2) == 4


def test_quoted_only_beside_the_metric_they_compare_with():
    """A board gets the block only when it shows the quoted metric; its rows stay out of the ranked rows."""
    with_metric = {"task": "uniform", "metrics": [{"name": "velocity_error"}, {"name": "velocity_error_paper"}],
                   "rows": []}
    without = {"task": "uniform", "metrics": [{"name": "velocity_error"}], "rows": []}
    other = {"task": "interpolation-gaps", "metrics": [{"name": "velocity_error_paper"}], "rows": []}
    add_paper_references([with_metric, without, other])
    assert with_metric["paper"]["metric"] == "velocity_error_paper" and with_metric["rows"] == []
    assert "quoted from the paper" in with_metric["paper"]["note"]
    assert "paper" not in without and "paper" not in other
    assert reference_for("combinatorial")["metric"] == "abnormal" and reference_for("no-such-task") is None


@pytest.mark.slow
def test_combinatorial_board_quotes_table2_beside_abnormal(tmp_path):
    """The shipped combinatorial results report `abnormal`: Table 2's rows sit under its split columns."""
    from phybench.leaderboard import build

    results = tmp_path / "results"
    results.mkdir()
    for f in COMBINATORIAL.glob("*-ground-truth*.json"):
        shutil.copy(f, results / f.name)
    build(results, tmp_path / "site")
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    (board,) = [b for b in data["boards"] if b["task"] == "combinatorial"]
    keys = {level["key"] for level in board["levels"]}
    assert board["paper"]["metric"] == "abnormal"
    assert all(set(r["cells"]) <= keys for r in board["paper"]["rows"])  # the board's own columns
    assert [r["model"] for r in board["rows"]] == ["ground-truth"]  # not a ranked row
    page = (tmp_path / "site" / "index.html").read_text()
    assert "DiT-XL · 6 templates" in page and "quoted from the paper" in page


@pytest.mark.slow
def test_fundamental_board_quotes_figure3_under_the_papers_convention(tmp_path):
    """A uniform results file with `velocity_error_paper` gets Figure 3's rows on its board."""
    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan
    from phybench.leaderboard import build
    from phybench.scoring.run.results import results_bytes
    from phybench.scoring.run.score import score
    from phybench.submission import submission_meta, write_submission
    from phybench.tasks import get_task

    split = tmp_path / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 6, None), split, progress=False)
    reader = SplitReader(split)
    sub = write_submission(tmp_path / "sub", submission_meta(reader.manifest, "ground-truth"),
                           ((row["sample_id"], reader.video(row)) for row in reader.rows()))
    res = score(sub, split, ["velocity_error"], progress=False).results
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "gt.json").write_bytes(results_bytes(res))
    build(tmp_path / "r", tmp_path / "site")
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    (board,) = data["boards"]
    assert board["paper"]["rows"] == figure3_rows("uniform")
    assert [r["model"] for r in board["rows"]] == ["ground-truth"]
    assert "velocity_error_paper" in board["paper"]["note"]


@pytest.mark.slow
def test_the_page_draws_the_quoted_rows_unranked(tmp_path):
    """Headless Chromium: under `abnormal` Table 2's rows follow the ranked rows, marked "paper" and never
    numbered; under another metric one line says where they are."""
    from phybench.leaderboard import build
    from test_board_page import _open, _problems

    results = tmp_path / "results"
    results.mkdir()
    for f in COMBINATORIAL.glob("*-ground-truth*.json"):
        shutil.copy(f, results / f.name)
    build(results, tmp_path / "site")
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    (board,) = [b for b in data["boards"] if b["task"] == "combinatorial"]
    browser, cdp, js = _open(tmp_path, tmp_path / "site" / "index.html", 1280)
    sec = "#" + board["id"]

    def choose(metric: str) -> None:
        js(f"(() => {{ const s = document.querySelector('{sec} select.metric-select'); s.value = '{metric}';"
           " s.dispatchEvent(new Event('change')); })()")

    try:
        choose("abnormal")
        rows = js(f"[...document.querySelectorAll('{sec} tbody.paper tr.paper-row')].map(tr => "
                  "[tr.dataset.paper, tr.querySelector('td.rank').textContent, "
                  "[...tr.querySelectorAll('td.num .mean')].map(m => parseFloat(m.textContent))])")
        assert [r[0] for r in rows] == [r["model"] for r in table2_rows()]
        assert all(r[1] == "paper" for r in rows)
        assert rows[0][2] == pytest.approx([0.03, 0.67])  # DiT-XL, 6 templates: in-template, out-of-template
        assert js(f"document.querySelector('{sec} tbody.paper th').textContent").startswith("Paper: quoted from the paper")
        assert js(f"document.querySelectorAll('{sec} tr.main').length") == 1  # the ranked rows: ours only
        # the long note wraps: the table does not grow past the page (it did before `white-space: normal`)
        assert js(f"(() => {{ const t = document.querySelector('{sec} table.lb'); "
                  "return t.scrollWidth <= t.parentNode.clientWidth + 1; })()") is True
        choose("ssim")
        assert js(f"document.querySelectorAll('{sec} tbody.paper tr.paper-row').length") == 0
        assert "quoted under Abnormal" in js(f"document.querySelector('{sec} tbody.paper').textContent")
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()


def test_the_scaling_plot_draws_figure3_as_reference_lines():
    """Under velocity_error_paper the training-size plot adds the paper's three models, hollow and grey,
    at 30K / 300K / 3M; under another metric, or on a board without the block, nothing is added."""
    from phybench.leaderboard.site.plots import plot_scaling
    from phybench.leaderboard.site.paper import figure3_series

    def cell(v):
        return {"metrics": {"velocity_error_paper": {"mean": v}, "velocity_error": {"mean": v}}}

    rows = [{"model": m, "meta": {"train_size": ts, "size": "DiT-S"}, "cells": {"id": cell(v), "ood-overall": cell(10 * v)}}
            for m, ts, v in (("ours-30k", "30k", 0.02), ("ours-300k", "300k", 0.015))]
    board = {"task": "uniform", "paper": reference_for("uniform")}
    svg = plot_scaling(board, "dit", rows, "train_size", "velocity_error_paper")
    assert svg.count('fill="white"') == 18  # 3 models x (ID, OOD) x 3 sizes, hollow
    assert "paper DiT-L · OOD" in svg and "DiT-L at 3M videos, quoted from the paper" in svg
    assert figure3_series("uniform")[2][1][2] == (3e6, 0.012)  # DiT-L, ID, 3M
    plain = plot_scaling(board, "dit", rows, "train_size", "velocity_error")
    assert "quoted from the paper" not in plain
    assert "quoted from the paper" not in plot_scaling({"task": "uniform"}, "dit", rows, "train_size",
                                                       "velocity_error_paper")


def test_leaderboard_md_quotes_them_in_a_table_of_their_own():
    from phybench.leaderboard.site.paper import quoted_markdown

    board = {"levels": [{"key": "id", "label": "ID"}, {"key": "ood-overall", "label": "OOD overall"},
                        {"key": "r", "label": "OOD r"}], "paper": reference_for("collision")}
    lines = quoted_markdown(board)
    assert lines[1].startswith("Quoted from the paper (Kang et al. 2024") and "not ranked" in lines[1]
    assert lines[3] == "| paper | ID | OOD overall |"  # only the columns the paper gives
    assert "| DiT-B · 300K videos | 0.019 | ~0.167 |" in lines
    assert lines[-1].startswith("| ground truth") and lines[-1].endswith("| 0.0117 | – |")
    assert quoted_markdown({"levels": board["levels"]}) == []

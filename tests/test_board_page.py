"""The board page a visitor can load, and what it answers at a glance (issue 37 items 4b and 4c).

4b: per-video data stays out of index.html (the scatters draw a stated, deterministic sample;
leaderboard.json keeps counts only), so the page stays small however many results files and
sidecars there are, and the build reduces each sidecar as it reads it.  4c: the OOD / ID gap
column with its interval, rows selected and compared, the learned-law table in the board's
order, the law scatter clipped with outliers marked on the edge, and a phone layout where ID,
OOD and the gap stay side by side.  The browser tests use the headless Chromium helpers of
tests/test_leaderboard.py.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from phybench.leaderboard import build
from phybench.leaderboard.site.gap import ratio_interval
from phybench.leaderboard.site.law import law_axis, law_rows, plot_law_scatter
from phybench.leaderboard.site.scatter import PAGE_POINTS, ROW_CAP, merge, reduce, sample_key
from phybench.scoring.run.results import results_bytes

LITE = Path(__file__).parent.parent / "leaderboard" / "results" / "fundamental" / "lite"
PAGE_LIMIT = 2_000_000  # bytes: the board page a visitor loads


def _copies(out: Path, copies: int) -> tuple[int, int]:
    """`copies` copies of every shipped lite results file and sidecar, each a distinct model with its
    own submission hash (no verification record: a record quotes the original's hash); returns
    (results files, sidecar bytes)."""
    out.mkdir(parents=True, exist_ok=True)
    files = side_bytes = 0
    for path in sorted(LITE.glob("*.json")):
        if path.name.endswith((".samples.json", ".verified.json")):
            continue
        side = path.with_name(path.stem + ".samples.json")
        for k in range(copies):
            doc = json.loads(path.read_text())
            doc["model"]["name"] += f" #{k}"
            doc["provenance"]["submission_hash"] = hashlib.sha256(f"{path.name}/{k}".encode()).hexdigest()
            (out / f"{path.stem}-{k}.json").write_bytes(results_bytes(doc))
            files += 1
            if side.is_file():
                sidecar = json.loads(side.read_text())
                sidecar["submission_hash"] = doc["provenance"]["submission_hash"]
                text = json.dumps(sidecar)
                (out / f"{path.stem}-{k}.samples.json").write_text(text)
                side_bytes += len(text)
    return files, side_bytes


# ------------------------------------------------------------------ 4b: a page a visitor can load
@pytest.mark.slow
def test_the_page_stays_small_however_many_sidecars(tmp_path):
    """Four copies of the shipped lite boards (each results file with its 200-video sidecar of
    velocities and law fits): the sidecars are many megabytes, the page stays under 2 MB, holds no
    sample id (no per-video data), and says what its scatters sample."""
    files, side_bytes = _copies(tmp_path / "results", 4)
    report = build(tmp_path / "results", tmp_path / "site")
    assert report.ok and len(report.accepted) == files >= 100
    page = (tmp_path / "site" / "index.html").read_text()
    assert side_bytes > 5 * PAGE_LIMIT and len(page.encode()) < PAGE_LIMIT, (side_bytes, len(page))
    sidecar = json.loads((LITE / "collision-id-eval-copy-last.samples.json").read_text())
    assert not any(s["sample_id"] in page for s in sidecar["samples"][:50])  # per-video data is not in the page
    assert "the videos whose sample id hashes lowest" in page
    dots = sum(int(n) for n in __import__("re").findall(r'class="dots"[^>]*data-n="(\d+)"', page))
    assert 0 < dots <= PAGE_POINTS
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    row = next(r for b in data["boards"] for r in b["rows"] if "scatter" in r)
    assert "points" not in row["scatter"] and row["scatter"]["videos"] > 0  # the export keeps counts, not videos


def test_a_sidecar_is_reduced_as_it_is_read(tmp_path):
    """`read_all` keeps a bounded sample of each sidecar and no per-video lists of the results file."""
    from phybench.leaderboard.site.load import read_all

    _copies(tmp_path / "results", 1)
    entries, refused, _ = read_all(tmp_path / "results", True, None)
    assert not refused and entries
    for e in entries:
        assert "untrackable" not in e.results and "excluded" not in e.results
        assert "metric_settings" not in e.results["provenance"]
        if e.samples is not None:
            assert len(e.samples["points"]) <= ROW_CAP and len(e.samples["laws"]) <= ROW_CAP
            assert e.samples["videos"] == 200


def test_the_scatter_sample_is_the_same_videos_for_every_model():
    """The sample is the ids that hash lowest: the same videos whoever the model, the cap kept,
    and runs merged keep the lowest keys and add their counts."""
    def sidecar(shift: float) -> dict[str, Any]:
        return {"dof": "velocity", "samples": [
            {"sample_id": f"uniform/id-eval/{i:07d}", "level": "id", "true_velocity": 1.0 + i / 1000,
             "generated_velocity": None if i % 7 == 0 else 1.0 + shift} for i in range(1000)], "laws": []}

    a, b = reduce(sidecar(0.1), "uniform", cap=50), reduce(sidecar(0.5), "uniform", cap=50)
    assert len(a["points"]) == 50 and a["measured"] == 1000 - 143 and a["videos"] == 1000
    assert [p[1] for p in a["points"]] == [p[1] for p in b["points"]]  # the same videos
    expected = sorted((sample_key(f"uniform/id-eval/{i:07d}"), i) for i in range(1000) if i % 7)[:50]
    assert [p[1] for p in a["points"]] == [f"uniform/id-eval/{i:07d}" for _, i in expected]
    both = merge(a, b, cap=60)
    assert both["videos"] == 2000 and len(both["points"]) == 60 and both["points"] == sorted(both["points"])


# ------------------------------------------------------------------ 4c: the gap column
def test_gap_ratio_and_interval():
    """OOD over ID, with the interval of two independent log-normal means (gap.py's docstring)."""
    g = ratio_interval({"mean": 1.0, "ci95": [0.9, 1.1]}, {"mean": 3.0, "ci95": [2.4, 3.6]})
    se = math.hypot(math.log(1.1 / 0.9), math.log(3.6 / 2.4)) / (2 * 1.959963984540054)
    assert g is not None and g["ratio"] == 3.0
    assert g["ci95"] == pytest.approx([3 * math.exp(-1.96 * se), 3 * math.exp(1.96 * se)], rel=1e-4)
    assert g["ci95"][0] < 3.0 < g["ci95"][1]
    assert ratio_interval({"mean": 0.0, "ci95": [0, 0]}, {"mean": 1.0, "ci95": [1, 1]}) is None  # no ratio to 0
    assert ratio_interval({"mean": 2.0, "ci95": [0.0, 3.0]}, {"mean": 1.0, "ci95": [0.5, 1.5]}) == {
        "ratio": 0.5, "ci95": [None, None]}  # a bound at 0: the ratio without an interval
    assert ratio_interval(None, {"mean": 1.0}) is None


@pytest.fixture(scope="module")
def small_board(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    """Four synthetic models on uniform and collision (tests/test_leaderboard.py's made-up results)."""
    from test_leaderboard import make_results, write_dir

    docs = {}
    for task in ("uniform", "collision"):
        for model in ("ground-truth", "copy-last", "DiT-S", "DiT-B"):
            for split in ("id-eval", "ood-eval"):
                docs[f"{task}.{model}.{split}.json"] = make_results(model, task, split)
    root = tmp_path_factory.mktemp("board-page")
    assert build(write_dir(root / "results", docs), root / "site").ok
    return root / "site", json.loads((root / "site" / "leaderboard.json").read_text())


def test_the_gap_column_is_the_ratio_of_ood_to_id(small_board):
    _, data = small_board
    board = next(b for b in data["boards"] if b["task"] == "uniform")
    assert board["gap"]["id"] == "id" and board["gap"]["ood"] == "ood-overall" and "log-normal" in board["gap"]["method"]
    for row in board["rows"]:
        for metric in ("velocity_error", "position_error"):
            id_cell, ood_cell = (row["cells"][k]["metrics"][metric] for k in ("id", "ood-overall"))
            gap = row["gap"][metric]
            assert gap["ratio"] == pytest.approx(ood_cell["mean"] / id_cell["mean"], rel=1e-5)
            assert gap["ci95"][0] < gap["ratio"] < gap["ci95"][1]
    dit = next(r for r in board["rows"] if r["model"] == "DiT-S")["gap"]["velocity_error"]["ratio"]
    gt = next(r for r in board["rows"] if r["model"] == "ground-truth")["gap"]["velocity_error"]["ratio"]
    assert dit > 5 > 1.5 > gt  # made up: DiT-S is 9x worse OOD, the ground truth as good


# ------------------------------------------------------------------ 4c: the learned law
def _law_board(fits: dict[str, list[float]], ranked: dict[str, float]) -> dict[str, Any]:
    """A collision board (headline: restitution) whose rows carry law samples and one ranked value."""
    rows = []
    for model, values in fits.items():
        law = {"fit": "collision_1d", "videos": len(values), "params": {"restitution": {
            "model": {"median": sorted(values)[len(values) // 2], "iqr": None, "count": len(values)},
            "truth": {"median": 1.0, "iqr": None, "count": len(values)}}}}
        rows.append({"model": model, "meta": {}, "cells": {"id": {
            "metrics": {"velocity_error_ranked": {"mean": ranked[model], "ci95": [None, None], "count": 1}}, "law": law}},
            "scatter": {"law_param": "restitution", "law_fits": len(values), "law_points": [
                {"sample_id": f"c/{i}", "level": "id", "truth": 0.9 + 0.01 * (i % 10), "fit": v}
                for i, v in enumerate(values)]}})
    return {"task": "collision", "title": "collision", "layout": "levels", "rows": rows,
            "levels": [{"key": "id", "label": "ID"}], "initial_metric": "velocity_error_ranked",
            "metrics": [{"name": "velocity_error_ranked", "higher_is_better": False}]}


def test_the_law_table_is_in_the_boards_order_and_the_scatter_clips_outliers():
    good = [0.9 + 0.01 * (i % 10) for i in range(40)]
    wild = good[:36] + [-14294.0, 5000.0, 812.0, -90.0]  # one model: four absurd fits
    board = _law_board({"a-worst": good, "b-best": good, "c-wild": wild}, {"a-worst": 3.0, "b-best": 0.1, "c-wild": 1.0})
    _, _, rows = law_rows(board, "restitution")
    assert [m for m, _ in rows[1:]] == ["b-best", "c-wild", "a-worst"]  # ranked, not by name
    lo, hi = law_axis([x for x in good], {"c-wild": wild, "b-best": good})
    assert -1 < lo < 0.9 and 1.0 < hi < 2  # the outliers do not stretch the axes
    svg, words = plot_law_scatter(board, {}, cap=ROW_CAP)
    assert 'class="outliers"' in svg and 'data-n="4"' in svg and "c-wild (4 beyond the axes)" in svg
    assert "4 point(s) beyond the axes" in words and "all 120 videos" in words
    assert svg.index("b-best") < svg.index("c-wild") < svg.index("a-worst")  # the legend in the board's order


# ------------------------------------------------------------------ in Chromium
def _open(tmp_path: Path, page: Path, width: int, mobile: bool = False):
    from test_leaderboard import chromium_or_skip, open_tab

    browser = chromium_or_skip(tmp_path)
    cdp, js = open_tab(browser)
    for domain in ("Page", "Runtime", "Log"):
        cdp(f"{domain}.enable")
    cdp("Emulation.setDeviceMetricsOverride", {"width": width, "height": 860, "deviceScaleFactor": 1, "mobile": mobile})
    cdp("Page.navigate", {"url": page.as_uri()})
    browser.wait_for("Page.loadEventFired")
    return browser, cdp, js


def _problems(browser) -> list[Any]:
    return [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]


@pytest.mark.slow
def test_rows_can_be_selected_and_compared(small_board, tmp_path):
    site, data = small_board
    board = next(b for b in data["boards"] if b["task"] == "uniform")
    browser, cdp, js = _open(tmp_path, site / "index.html", 1280)
    try:
        sec = "#" + board["id"]
        assert js(f"document.querySelector('{sec} .compare').hidden") is True
        order = js(f"[...document.querySelectorAll('{sec} tbody tr.main')].map(r => r.dataset.model)")
        gap_text = js(f"document.querySelector('{sec} tr.main[data-model=\"DiT-S\"] td.gap .mean').textContent")
        ratio = next(r for r in board["rows"] if r["model"] == "DiT-S")["gap"][board["initial_metric"]]["ratio"]
        assert gap_text.startswith("×") and float(gap_text[1:]) == pytest.approx(ratio, rel=0.01)
        for model in ("DiT-S", "ground-truth"):
            js(f"document.querySelector('{sec} tr.main[data-model=\"{model}\"] input.pick').click()")
        pane = js(f"(() => {{ const p = document.querySelector('{sec} .compare'); return [p.hidden, "
                  "[...p.querySelectorAll('thead th')].map(th => th.textContent), "
                  "[...p.querySelectorAll('tbody tr')].map(tr => tr.dataset.key)]; })()")
        assert pane[0] is False
        assert pane[1] == ["level"] + [m for m in order if m in ("DiT-S", "ground-truth")]  # in the table's order
        assert pane[2][:3] == ["id", "ood-overall", "gap"] and "r+v" in pane[2]
        same = js(f"[document.querySelector('{sec} .compare tbody tr[data-key=\"id\"] td .mean').textContent, "
                  f"document.querySelector('{sec} tr.main[data-model=\"{order[0]}\"] td[data-value] .mean').textContent]")
        assert same[0] == same[1]
        # the by-level plot shows the selected rows only; the selection survives a re-sort and a metric switch
        assert js(f"[...document.querySelectorAll('{sec} .by-level-plot g.series')].map(g => g.dataset.model).sort()") == [
            "DiT-S", "ground-truth"]
        js(f"document.querySelector('{sec} th[data-key=\"gap\"] button').click()")
        js(f"(() => {{ const s = document.querySelector('{sec} select.metric-select'); s.value = 'ssim';"
           " s.dispatchEvent(new Event('change')); })()")
        assert js(f"[...document.querySelectorAll('{sec} input.pick')].filter(i => i.checked).length") == 2
        assert js(f"document.querySelector('{sec} .compare .compare-head').textContent").startswith("Comparing 2 models")
        js(f"document.querySelector('{sec} .compare button.clear').click()")
        assert js(f"document.querySelector('{sec} .compare').hidden") is True
        assert len(js(f"[...document.querySelectorAll('{sec} .by-level-plot g.series')]")) == 4  # back to every row
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()


@pytest.mark.slow
def test_the_phone_layout_keeps_id_and_ood_together(small_board, tmp_path):
    """At 390 px the page never scrolls sideways, and each board's ID, OOD overall and gap cells are
    all on screen; the OOD levels fold away.  The screenshot goes to the test artifacts."""
    from test_leaderboard import artifacts_dir

    site, _ = small_board
    for page in (site / "index.html",):
        browser, cdp, js = _open(tmp_path, page, 390, mobile=True)
        try:
            assert js("document.documentElement.scrollWidth") <= 390
            cells = js("[...document.querySelectorAll('table.lb tbody tr.main:first-child')].map(tr => "
                       "[...tr.children].filter(td => getComputedStyle(td).display !== 'none').map(td => "
                       "[td.className, Math.round(td.getBoundingClientRect().right)]))")
            for row in cells:
                kinds = [c for c, _ in row]
                assert kinds[2:] == ["num", "num", "num gap"], kinds  # ID, OOD overall, the gap: nothing else
                assert all(right <= 390 for _, right in row), row
            height = js("Math.ceil(document.documentElement.scrollHeight)")
            shot = cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": 390, "height": min(height, 6000), "scale": 1}})
            png = base64.b64decode(shot["data"])
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            (artifacts_dir() / "leaderboard-phone.png").write_bytes(png)
            assert not _problems(browser), _problems(browser)
        finally:
            browser.close()


@pytest.mark.slow
def test_the_shipped_board_on_a_phone(tmp_path):
    """The shipped results (levels and splits boards, law tables and scatters) at phone width."""
    results = tmp_path / "results"
    shutil.copytree(LITE.parent.parent, results)
    assert build(results, tmp_path / "site", allow_partial=False).ok
    browser, cdp, js = _open(tmp_path, tmp_path / "site" / "index.html", 390, mobile=True)
    try:
        assert js("document.documentElement.scrollWidth") <= 390
        assert js("[...document.querySelectorAll('table.lb')].every(t => t.scrollWidth <= t.parentNode.clientWidth + 1)")
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()


MID_WORD = """[...document.querySelectorAll('table.lb td.model .name')].flatMap(el => {
  const range = document.createRange(), chars = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    for (let i = 0; i < n.length; i++) {
      range.setStart(n, i); range.setEnd(n, i + 1);
      const r = range.getClientRects()[0];
      chars.push([n.data[i], r ? Math.round(r.top) : null]);
    }
  const bad = [];
  for (let i = 1; i < chars.length; i++)
    if (chars[i][1] !== null && chars[i - 1][1] !== null && chars[i][1] > chars[i - 1][1]
        && !/[-_.\\/ ]/.test(chars[i - 1][0])) bad.push(el.textContent + ' @' + i);
  return bad;
})"""


@pytest.mark.slow
def test_the_phone_first_screen_shows_a_table_and_names_break_between_words(tmp_path):
    """Issue 49: on a phone the first screen was all prose and model names broke mid-word.  At 390 x 860
    the explanations fold under one line, the first table starts on the first screen, and no model name
    wraps inside a word (only after a hyphen, underscore, dot or slash); at 1280 px they stay open."""
    from test_leaderboard import artifacts_dir

    results = tmp_path / "results"
    shutil.copytree(LITE.parent.parent, results)
    assert build(results, tmp_path / "site", allow_partial=False).ok
    page = tmp_path / "site" / "index.html"
    browser, cdp, js = _open(tmp_path, page, 390, mobile=True)
    try:
        assert js("document.querySelector('details.explainer-fold').open") is False
        assert js("document.querySelector('table.lb tbody tr').getBoundingClientRect().top") < 860
        assert js(MID_WORD) == []
        assert js("document.documentElement.scrollWidth") <= 390
        shot = cdp("Page.captureScreenshot", {"format": "png"})
        (artifacts_dir() / "leaderboard-phone-first-screen.png").write_bytes(base64.b64decode(shot["data"]))
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()
    browser, cdp, js = _open(tmp_path / "wide", page, 1280)
    try:
        assert js("document.querySelector('details.explainer-fold').open") is True
        assert js("document.querySelector('.explainer').getBoundingClientRect().height") > 50
        assert js("getComputedStyle(document.querySelector('details.explainer-fold > summary')).display") == "none"
    finally:
        browser.close()

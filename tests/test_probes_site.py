"""The Probes page in a real browser: built from the committed reference results, it loads without console
errors, every probe's figures render with content, and the priority ranking table is there."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from phybench.leaderboard import build
from phybench import probes
from test_leaderboard import chromium_or_skip, open_tab

RESULTS = Path(__file__).resolve().parents[1] / "leaderboard" / "results" / "probes"


@pytest.fixture(scope="module")
def probe_site(tmp_path_factory):
    """The site built from the committed probe results alone (the main boards are checked elsewhere)."""
    root = tmp_path_factory.mktemp("probe-site")
    shutil.copytree(RESULTS, root / "results" / "probes")
    report = build(root / "results", root / "site")
    assert "probes.html" in report.written
    return root / "site", sorted({probes.load_results(p)["probe"] for p in RESULTS.glob("*.json")})


@pytest.mark.slow
def test_probes_page_in_headless_chromium(probe_site, tmp_path):
    site, probe_names = probe_site
    assert {"priority", "flip", "gaps", "holes", "composition"} <= set(probe_names)
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)

        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (site / "probes.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        assert js("document.title") == "phybench probes"
        assert js("document.querySelector('h1').innerText") == "Generalisation probes"

        # one section per probe with results, each with figures that have drawn content and a size
        figures = js("""Object.fromEntries([...document.querySelectorAll('section[id^="probe-"]')].map(s => [
            s.id.slice(6), [...s.querySelectorAll('figure svg')].map(svg => {
                const r = svg.getBoundingClientRect();
                return [r.width, r.height, svg.querySelectorAll('rect, circle, line').length];
            })]))""")
        assert sorted(figures) == probe_names
        for probe, svgs in figures.items():
            assert svgs, f"{probe}: no figure"
            for width, height, shapes in svgs:
                assert width > 50 and height > 10 and shapes > 0, (probe, width, height, shapes)
        # the holes figure colours its squares, the composition figure draws its shares
        assert js("document.querySelectorAll('#probe-holes rect.probe-square').length") >= 5
        assert js("document.querySelectorAll('#probe-composition rect.probe-share').length") >= 3

        # the ranking table: one row per model, each with a ranking of the four attributes
        ranking = js("""[...document.querySelectorAll('#probe-priority table.probe-ranking tbody tr')].map(
            r => [...r.children].map(td => td.innerText))""")
        models = {row[0] for row in ranking}
        assert {"ground-truth", "physics-oracle", "nearest-neighbour"} <= models
        for row in ranking:
            assert all(a in row[1] for a in ("colour", "size", "velocity", "shape")), row
            assert row[2] == "6 of 6", row

        # the ambiguity table: the reference baselines and the learned model (framear-amb-1t), gap and edge each
        amb = js("""[...document.querySelectorAll('#probe-ambiguity table.probe-ranking tbody tr')].map(
            r => r.children[0].innerText + ' ' + r.children[1].innerText)""")
        for model in ("nearest-neighbour", "framear-amb-1t"):
            assert {f"{model} ambiguity-128/eval-{k}" for k in ("gap", "edge")} <= set(amb), amb

        # no console errors, no uncaught exceptions, no failed loads
        problems = [e for e in browser.events
                    if e.get("method") == "Runtime.exceptionThrown"
                    or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
                    or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")]
        assert not problems, json.dumps(problems)[:2000]
        shot = cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        assert len(shot) > 1000
    finally:
        browser.close()


@pytest.mark.slow
def test_probes_page_shares_the_main_style_and_its_figures_are_readable(probe_site, tmp_path):
    """At a 1400 px window every figure is at least 500 px wide; the page has the main page's margins,
    masthead and bordered tables (it links the same style.css)."""
    site, _ = probe_site
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime"):
            cdp(f"{domain}.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (site / "probes.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        figures = js("[...document.querySelectorAll('figure')].map(f => Math.round(f.getBoundingClientRect().width))")
        drawings = js("[...document.querySelectorAll('figure svg')].map(s => Math.round(s.getBoundingClientRect().width))")
        assert len(figures) >= 20 and len(drawings) >= len(figures)
        assert min(figures) >= 500, sorted(figures)[:5]
        assert min(drawings) >= 500, sorted(drawings)[:5]  # the drawings too, not only their frames
        assert js("[...document.styleSheets].map(s => s.href.split('/').pop())") == ["style.css"]
        left = js("document.querySelector('main').getBoundingClientRect().left")
        assert 60 <= left <= 200  # centred in the .wrap column, as index.html's boards
        assert js("getComputedStyle(document.querySelector('header.masthead')).borderBottomStyle") == "solid"
        cells = js("[...document.querySelectorAll('table.probe-ranking td')].slice(0, 20).map(td => "
                   "getComputedStyle(td).borderTopWidth)")
        assert cells and all(w == "1px" for w in cells)
        assert js("document.querySelector('nav.topnav a').getAttribute('href')") == "index.html"
    finally:
        browser.close()

"""The board's scatter dots open their video in the row's viewer (issue 37, item 3: deep links).

`deep_links`: a dot of a results file with a viewer carries that viewer (``data-href``) and its
sample id (``data-ids``, percent-encoded); ``leaderboard.js`` opens ``viewer#v=<id>`` on a click
near it; ``viewer.js`` opens that video, or says the link names a video it does not hold.
"""
from __future__ import annotations

import json
import re
import time
from urllib.parse import unquote

import pytest

from phybench.leaderboard.site.deep_links import by_viewer, encode_id, fragment, hrefs_of, link_attrs
from phybench.leaderboard.site.plots import plot_velocity_scatter
from test_board_viewers import board, site  # noqa: F401  (module fixtures: a 4-video board with viewers)

HOSTILE = ['"><script>window.__pwned = 1</script>', "<img src=x onerror=\"window.__pwned=1\">", "a b&c'd%zz\u00e9/#?"]


def test_ids_are_percent_encoded_and_round_trip():
    for sid in HOSTILE + ["uniform/id-eval/0000003"]:
        enc = encode_id(sid)
        assert re.fullmatch(r"[A-Za-z0-9%._~/-]+", enc) and unquote(enc) == sid
        assert fragment(sid) == "#v=" + enc
    attrs = link_attrs("viewers/x/index.html", HOSTILE)
    assert "<" not in attrs and "script" in attrs and attrs.count('"') == 6  # three attributes, no quote inside
    assert link_attrs(None, HOSTILE) == ""
    ids = [f"uniform/id-eval/{i:07d}" for i in (3, 12, 7)]  # the common beginning is written once
    assert link_attrs("viewers/x/index.html", ids) == (' data-href="viewers/x/index.html" data-prefix="uniform/id-eval/00000"'
                                                       ' data-ids="03 12 07"')
    assert link_attrs("viewers/x/index.html", ids[:1]) == ' data-href="viewers/x/index.html" data-prefix="" data-ids="uniform/id-eval/0000003"'



def test_only_viewer_hrefs_of_the_board_shape_are_linked():
    row = {"viewers": [{"file": "a.json", "href": "viewers/a/index.html"},
                       {"file": "b.json", "href": "javascript:alert(1)"},
                       {"file": "c.json", "href": "viewers/../../etc/index.html"}]}
    assert hrefs_of(row) == {"a.json": "viewers/a/index.html"}
    assert hrefs_of({}) == {}
    groups = by_viewer([(1.0, 2.0, "s1", "a.json"), (3.0, 4.0, "s2", "x.json"), (5.0, 6.0, "s3", "a.json")], hrefs_of(row))
    assert groups == [("viewers/a/index.html", [(1.0, 2.0), (5.0, 6.0)], ["s1", "s3"]), (None, [(3.0, 4.0)], ["s2"])]


def _row(viewers: bool) -> dict:
    points = [{"sample_id": sid, "level": "id", "true_velocity": 1.0 + i, "generated_velocity": 1.5 + i, "file": "r.json"}
              for i, sid in enumerate(HOSTILE)]
    row = {"model": "m", "scatter": {"points": points, "dof": None}}
    if viewers:
        row["viewers"] = [{"split": "id-eval", "file": "r.json", "href": "viewers/r/index.html"}]
    return row


def test_a_scatter_links_its_dots_only_when_the_row_has_a_viewer():
    table = {"task": "uniform", "levels": [{"key": "id"}]}
    plain = plot_velocity_scatter(table, _row(False))
    linked = plot_velocity_scatter(table, _row(True))
    assert plain is not None and linked is not None
    assert "data-href" not in plain and "data-ids" not in plain
    ids = re.search(r' data-href="viewers/r/index.html" data-prefix="([^"]*)" data-ids="([^"]*)"', linked)
    assert ids and [unquote(ids.group(1) + x) for x in ids.group(2).split(" ")] == HOSTILE
    assert "<script" not in linked and "<img" not in linked
    assert linked.replace(ids.group(0), "") == plain


# ================================================================ in the browser
def _dot_click(cdp, js, selector: str, index: int = 0) -> list[float]:
    """A real mouse click on the `index`-th dot of the first path matching `selector`."""
    box = js(f"""(() => {{
        const path = document.querySelector({json.dumps(selector)});
        path.ownerSVGElement.scrollIntoView({{block: 'center'}});
        const m = [...path.getAttribute('d').matchAll(/M(-?[\\d.]+) (-?[\\d.]+)/g)][{index}];
        const svg = path.ownerSVGElement, p = svg.createSVGPoint();
        p.x = Number(m[1]); p.y = Number(m[2]);
        const q = p.matrixTransform(svg.getScreenCTM());
        return [q.x, q.y];
    }})()""")
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        cdp("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})
    return box


def _wait(js, expression: str, want, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while js(expression) != want:
        assert time.monotonic() < deadline, f"{expression} never became {want!r}"
        time.sleep(0.05)


def _problems(browser) -> list:
    return [e for e in browser.events if (
        e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"))]


@pytest.mark.slow
def test_clicking_a_dot_opens_its_video_in_the_viewer(site, tmp_path):  # noqa: F811
    from test_leaderboard import chromium_or_skip, open_tab

    page = (site / "index.html").read_text(encoding="utf-8")
    assert page.count("data-href=") >= 1, "the fixture's scatter has no linked dots"
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (site / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        selector = ".scatter path.dots[data-ids]"
        want = js(f"(p => p.getAttribute('data-prefix') + p.getAttribute('data-ids').split(' ')[1])"
                  f"(document.querySelector({json.dumps(selector)}))")
        href = js(f"document.querySelector({json.dumps(selector)}).getAttribute('data-href')")
        _dot_click(cdp, js, selector, 1)
        browser.wait_for("Page.loadEventFired")
        assert js("location.href") == (site / href).as_uri() + "#v=" + want
        _wait(js, "document.getElementById('player').dataset.loaded", "yes")
        assert js("document.getElementById('player').dataset.sample") == unquote(want)
        assert js("document.querySelector('#videos tr.current').dataset.id") == unquote(want)
        assert js("document.getElementById('link-note').hidden") is True
        # the player shows that video: its panels and the ground truth's track drawn over them come
        # from that video's media (every video of the fixture has its own trajectory)
        tracks = js("Object.fromEntries(JSON.parse(document.getElementById('viewer-data').textContent).videos"
                    ".map(v => [v.id, v.media.gt[0].filter(Boolean).map(p => p.join(',')).join(' ')]))")
        assert len(set(tracks.values())) == len(tracks) == 4
        drawn = js("document.querySelector('#panels svg.overlay path.track.gt').getAttribute('d')")
        assert " ".join(re.findall(r"-?[\d.]+,-?[\d.]+", drawn)) == tracks[unquote(want)]
        assert js("document.querySelectorAll('#panels canvas').length") == 3
        assert js("document.getElementById('player-title').textContent").startswith(unquote(want))
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()


@pytest.mark.slow
def test_a_hostile_id_in_a_link_stays_inert(site, tmp_path):  # noqa: F811
    from test_leaderboard import chromium_or_skip, open_tab

    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (site / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        viewer = js("document.querySelector('.scatter path.dots[data-ids]').getAttribute('data-href')")
        note = "(document.getElementById('link-note') || {textContent: ''}).textContent"
        for i, sid in enumerate(HOSTILE + ["<b>x</b>"]):
            # the first opens the viewer, the next only change its fragment (the viewer follows `hashchange`);
            # the last is written raw in the URL, not percent-encoded
            url = (site / viewer).as_uri() + (fragment(sid) if i < len(HOSTILE) else "#v=" + sid)
            cdp("Page.navigate", {"url": url})
            if i == 0:
                browser.wait_for("Page.loadEventFired")
            _wait(js, f"{note}.includes({json.dumps(sid[:100])})", True)
            assert js("document.getElementById('link-note').hidden") is False
            assert js("window.__pwned === undefined && !document.querySelector('#link-note *')") is True
            assert js("document.getElementById('player').dataset.sample") != sid  # the viewer's first video instead
        # a known id after a hostile one: the note goes, the video opens
        known = js("JSON.parse(document.getElementById('viewer-data').textContent).videos[2].id")
        cdp("Page.navigate", {"url": (site / viewer).as_uri() + fragment(known)})
        _wait(js, "document.getElementById('player').dataset.sample", known)
        assert js("document.getElementById('link-note').hidden") is True
        assert not _problems(browser), _problems(browser)
    finally:
        browser.close()


def test_the_law_scatter_links_inner_dots_and_clipped_outliers_to_their_own_runs_viewer():
    from phybench.leaderboard.site.law import plot_law_scatter
    from test_board_page import _law_board

    good = [0.9 + 0.01 * (i % 10) for i in range(20)]
    table = _law_board({"wild": good[:18] + [-14294.0, 5000.0], "plain": good}, {"wild": 1.0, "plain": 2.0})
    for row in table["rows"]:
        for k, p in enumerate(row["scatter"]["law_points"]):
            p["file"] = f"{row['model']}-{k % 2}.json"  # two runs: each point links to its own run's viewer
    wild = next(r for r in table["rows"] if r["model"] == "wild")
    wild["viewers"] = [{"split": "id-eval", "file": f"wild-{k}.json", "href": f"viewers/wild-{k}/index.html"} for k in (0, 1)]
    svg, _ = plot_law_scatter(table, {})
    linked = re.findall(r'<path class="(dots|outliers)" d="([^"]*)"[^>]* data-href="viewers/wild-(\d)/index.html" '
                        r'data-prefix="([^"]*)" data-ids="([^"]*)"', svg)
    got = {}
    for cls, d, run, prefix, ids in linked:
        words = ids.split(" ")
        assert len(words) == len(re.findall(r"M", d))  # one id per dot, in the path's order
        for w in words:
            got[unquote(prefix + w)] = (cls, int(run))
    assert got == {f"c/{k}": ("outliers" if k >= 18 else "dots", k % 2) for k in range(20)}
    plain = re.search(r'<g class="points" data-model="plain">.*?</g>', svg)
    assert plain and "data-href" not in plain.group(0)  # a row without a viewer: no link

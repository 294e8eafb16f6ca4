"""`phybench view`: the static per-submission viewer (issue 37): folder, media, gallery, compare, refusals, browser."""
from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard.viewer.viewer import VIEWER_MARKER, ViewerError, write_folder
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

EVIL = '<script>alert("x")</script>&amp;'
SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # createElementNS's name for SVG: never fetched


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("split") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 6, None), out, progress=False)
    return out


def _submission(split_dir: Path, out: Path, name: str, edit=None, drop: int = 0) -> Path:
    reader = SplitReader(split_dir)

    def videos():
        for row in list(reader.rows())[drop:]:
            video = reader.video(row)
            yield row["sample_id"], (edit(video) if edit else video)

    write_submission(out, submission_meta(reader.manifest, name), videos())
    return out


@pytest.fixture(scope="module")
def gt_sub(split_dir, tmp_path_factory) -> Path:
    return _submission(split_dir, tmp_path_factory.mktemp("sub") / "gt", "ground-truth")


@pytest.fixture(scope="module")
def frozen_sub(split_dir, tmp_path_factory) -> Path:
    """Copy-last under a hostile model name: every video freezes after the condition frames."""
    return _submission(split_dir, tmp_path_factory.mktemp("sub") / "frozen", EVIL,
                       lambda v: np.repeat(v[2:3], len(v), axis=0))


@pytest.fixture(scope="module")
def viewer(split_dir, gt_sub, frozen_sub, tmp_path_factory) -> Path:
    """The copy-last model compared with the ground truth, through the CLI."""
    out = tmp_path_factory.mktemp("view") / "viewer"
    code = main(["view", str(frozen_sub), "--data", str(split_dir), "--compare", str(gt_sub), "--out", str(out),
                 "--quiet"])
    assert code == 0
    return out


def page_data(out: Path) -> dict:
    text = (out / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', text, flags=re.S)
    assert m, "no inline data"
    return json.loads(m.group(1))


def test_the_folder_is_self_contained_and_every_row_has_its_media(viewer, split_dir):
    names = sorted(str(p.relative_to(viewer)) for p in viewer.rglob("*") if p.is_file())
    assert {"index.html", "viewer.css", "viewer.js", VIEWER_MARKER} <= set(names)
    media = [n for n in names if n.startswith("media/")]
    assert media and all(re.fullmatch(r"media/v\d{6}\.png", n) for n in media)  # named by position, never by id
    for name in ("index.html", "viewer.css", "viewer.js"):
        text = (viewer / name).read_text(encoding="utf-8")
        urls = [u for u in re.findall(r"https?://[^\s\"'<>)]+", text) if u != SVG_NAMESPACE]
        assert urls == [], (name, urls)
        assert "@import" not in text
        # CSS url() only for the gallery's stills, cut from the folder's own sprites
        assert re.findall(r"url\(", text) == ([] if name != "viewer.js" else ["url("]), name
        if name == "viewer.js":
            assert 'url("${m.src}")' in text
    index = (viewer / "index.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in index  # the CSP: nothing but the folder itself
    data = page_data(viewer)
    ids = [r["sample_id"] for r in SplitReader(split_dir).rows()]
    assert [v["id"] for v in data["videos"]] == ids
    for v in data["videos"]:
        assert v["media"] is not None and (viewer / v["media"]["src"]).is_file()
        m = v["media"]
        assert m["panels"] == 5  # ground truth, then generated | difference per model
        assert len(m["gt"][0]) == data["frames"] and len(m["tracks"]) == 2
    assert data["media"] == {"videos": 6, "total": 6, "cap": 300, "max_bytes": 15_000_000,
                             "bytes": sum((viewer / n).stat().st_size for n in media)}
    assert data["media"]["bytes"] < 6 * 150_000  # small: a sprite per video, not raw frames


@pytest.mark.slow
def test_data_only_writes_the_data_the_standalone_page_carries(capsys, split_dir, gt_sub, tmp_path):
    """`--data-only` (a board's form, issue 50): no page, script or style, and its viewer-data.json is the
    standalone page's inline JSON byte for byte; the folder made standalone later has the same page."""
    from phybench.leaderboard.viewer.app import main as standalone

    alone, data = tmp_path / "alone", tmp_path / "data"
    for out, form in ((alone, "--standalone"), (data, "--data-only")):
        code, stdout, err = run(capsys, "view", gt_sub, "--data", split_dir, "--max-videos", 2, "--out", out, form,
                                "--quiet")
        assert code == 0, err
    assert "data only" in stdout
    names = sorted(str(p.relative_to(data)) for p in data.rglob("*") if p.is_file())
    assert [n for n in names if not n.startswith("media/")] == [VIEWER_MARKER, "viewer-data.json"]
    inline = re.search(r'id="viewer-data">(.*?)</script>', (alone / "index.html").read_text(encoding="utf-8"), re.S)
    assert (data / "viewer-data.json").read_text(encoding="utf-8") == inline.group(1) + "\n"
    assert standalone([str(data)]) == 0
    for name in ("index.html", "viewer.js", "viewer.css"):
        assert (data / name).read_bytes() == (alone / name).read_bytes(), name


def test_the_sprites_hold_the_exact_frames(viewer, split_dir, frozen_sub):
    """Panel p of frame t is at cell (t % rows, (t // rows) * panels + p), lossless (a palette PNG where it fits)."""
    from PIL import Image

    from phybench.submission import open_submission

    data = page_data(viewer)
    reader = SplitReader(split_dir)
    rows = list(reader.rows())
    v = data["videos"][1]
    m = v["media"]
    sprite = np.asarray(Image.open(viewer / m["src"]).convert("RGB"))
    gt = reader.video(rows[1])
    with open_submission(frozen_sub, manifest=reader.manifest) as sub:
        gen = sub.read(v["id"])
    for t in (0, 2, 3, 17, data["frames"] - 1):
        r, c = t % m["rows"], t // m["rows"]

        def cell(p):
            x = (c * m["panels"] + p) * m["w"]
            return sprite[r * m["h"]:(r + 1) * m["h"], x:x + m["w"]]

        assert np.array_equal(cell(0), gt[t]) and np.array_equal(cell(1), gen[t])
        diff = 255 - np.clip(2 * np.abs(gen[t].astype(int) - gt[t].astype(int)), 0, 255)
        assert np.array_equal(cell(2), diff)


def test_the_hostile_model_name_is_escaped_in_the_page(viewer):
    index = (viewer / "index.html").read_text(encoding="utf-8")
    assert EVIL not in index and "<script>alert" not in index
    assert html.escape(EVIL) in index  # the title and h1, escaped
    assert page_data(viewer)["models"][0]["name"] == EVIL  # the JSON keeps it, as text


def test_the_ground_truth_track_lines_up_with_the_ball(viewer, split_dir):
    """The drawn ground-truth path is where the ball's pixels are (its coverage-weighted centre), within a pixel."""
    data = page_data(viewer)
    reader = SplitReader(split_dir)
    row = next(iter(reader.rows()))
    video = reader.video(row).astype(np.float64)
    track = data["videos"][0]["media"]["gt"][0]
    checked = 0
    for t, point in enumerate(track):
        ink = (255.0 - video[t].min(axis=-1)) / 255.0  # coverage of the (red on white) ball
        if point is None or ink.sum() < 20:
            continue
        rows, cols = np.mgrid[0:ink.shape[0], 0:ink.shape[1]]
        touches_border = ink[0].any() or ink[-1].any() or ink[:, 0].any() or ink[:, -1].any()
        if touches_border:
            continue
        c = ((cols + 0.5) * ink).sum() / ink.sum()
        r = ((rows + 0.5) * ink).sum() / ink.sum()
        assert abs(c - point[0]) < 1.0 and abs(r - point[1]) < 1.0, (t, point, (c, r))
        checked += 1
    assert checked >= 5
    # the copy-last model's parsed track stands still after the condition frames
    model = data["videos"][0]["media"]["tracks"][0][0]
    cf = data["condition_frames"]
    after = [p for p in model[cf:] if p is not None]
    assert after and all(p == after[0] for p in after)


def test_the_gallery_names_the_rule_on_the_frames_it_fired(viewer):
    data = page_data(viewer)
    kinds = {k["kind"]: k for k in data["gallery"]}
    assert "rule:freeze" in kinds  # copy-last freezes the ball in mid-air
    cells = {v["id"]: v["cells"] for v in data["videos"]}
    for sid in kinds["rule:freeze"]["ids"]:
        findings = cells[sid][0]["findings"]
        frozen = [f for f in findings if f["rule"] == "freeze"]
        assert frozen and all(t >= data["condition_frames"] for f in frozen for t in f["frames"])
        assert cells[sid][1]["findings"] == []  # the ground truth breaks no rule
    worst = [cells[s][0]["velocity_error"] for s in kinds["velocity_error"]["ids"]]
    assert worst == sorted(worst, reverse=True)
    assert [(lv["level"], lv["videos"]) for lv in data["levels"][0]] == [("id", 6)]  # per level, from the summary
    headline = {m["name"]: m for m in data["headline"][0]}
    assert headline["velocity_error"]["ci95"][0] <= headline["velocity_error"]["value"] <= headline["velocity_error"]["ci95"][1]


@pytest.mark.parametrize("kind, rule", [("vanish", "area"), ("teleport", "teleport")])
def test_planted_violations_are_in_the_gallery_under_their_rule_at_their_onset(split_dir, tmp_path, kind, rule):
    from phybench.leaderboard.viewer.viewer import build_viewer
    from phybench.violations import write_violations

    labels = write_violations(split_dir, tmp_path / "planted", [kind], progress=False)
    report = build_viewer(tmp_path / "planted" / kind, split_dir, tmp_path / "view")
    data = page_data(tmp_path / "view")
    planted = {lab["sample_id"]: lab["onset"] for lab in labels["labels"][kind] if "skipped" not in lab}
    assert planted and report.gallery[f"rule:{rule}"] == min(len(planted), 6)
    (card,) = [k for k in data["gallery"] if k["kind"] == f"rule:{rule}"]
    assert set(card["ids"]) <= set(planted)
    cells = {v["id"]: v["cells"][0] for v in data["videos"]}
    for sid, onset in planted.items():
        frames = {t for f in cells[sid]["findings"] if f["rule"] == rule for t in f["frames"]}
        assert onset in frames, (sid, onset, cells[sid]["findings"])
        assert cells[sid]["abnormal"] == 1.0


def test_the_compare_table_is_ordered_by_disagreement(viewer):
    data = page_data(viewer)
    (comp,) = data["compare"]
    assert comp["a"] == EVIL and comp["b"] == "ground-truth"
    diffs = [r["diff"] for r in comp["rows"]]
    assert len(diffs) == 6 and diffs == sorted(diffs, reverse=True)
    for r in comp["rows"]:
        assert r["diff"] == pytest.approx(abs(r["a"] - r["b"]), rel=1e-5)


@pytest.mark.slow
def test_a_compared_models_failures_get_their_own_cards(split_dir, gt_sub, frozen_sub, tmp_path):
    from phybench.leaderboard.viewer.viewer import build_viewer

    build_viewer(gt_sub, split_dir, tmp_path / "v", compare=[frozen_sub])
    data = page_data(tmp_path / "v")
    kinds = {k["kind"]: k for k in data["gallery"]}
    assert "rule:freeze" not in kinds and kinds["B:rule:freeze"]["model"] == 1
    assert kinds["B:rule:freeze"]["title"].startswith("B: ") and len(kinds["B:rule:freeze"]["ids"]) == 6
    assert "B:velocity_error" not in kinds  # only failures (rules, untrackable) of a compared model are carded


@pytest.mark.slow
def test_board_ranks_the_model_among_results_on_the_same_split(capsys, split_dir, gt_sub, frozen_sub, tmp_path):
    board = tmp_path / "board"
    for sub, name in ((gt_sub, "gt.json"), (frozen_sub, "frozen.json")):
        code, _, err = run(capsys, "score", sub, "--data", split_dir, "--metrics", "velocity_error,ssim,psnr",
                           "--out", board / name, "--quiet")
        assert code == 0, err
    other = json.loads((board / "gt.json").read_text())
    other["provenance"]["split_hash"] = "ab" * 32  # another split: not ranked against
    other["model"]["name"] = "elsewhere"
    (board / "sub").mkdir()
    (board / "sub" / "other.json").write_text(json.dumps(other))
    (board / "junk.json").write_text("{not json")
    out = tmp_path / "v"
    code, _, err = run(capsys, "view", frozen_sub, "--data", split_dir, "--board", board, "--out", out, "--quiet")
    assert code == 0, err
    rank = page_data(out)["rank"]
    assert rank["metric"] == "velocity_error_ranked" and rank["files"] == 1  # itself and the other split left out
    assert [(r["model"], r["this"]) for r in rank["rows"]] == [("ground-truth", False), (EVIL, True)]
    assert rank["rank"] == 2


def test_media_are_capped_gallery_first(capsys, split_dir, frozen_sub, tmp_path):
    out = tmp_path / "capped"
    code, stdout, err = run(capsys, "view", frozen_sub, "--data", split_dir, "--out", out, "--max-videos", "2",
                            "--per-kind", "1", "--quiet")
    assert code == 0, err
    assert "media for 2 of 6 videos" in stdout
    data = page_data(out)
    with_media = [v["id"] for v in data["videos"] if v["media"]]
    assert len(with_media) == 2 and data["media"]["cap"] == 2
    first_of_gallery = {k["ids"][0] for k in data["gallery"]}
    assert first_of_gallery <= set(with_media) or len(first_of_gallery) > 2
    assert len(list((out / "media").iterdir())) == 2
    out = tmp_path / "budget"  # a byte budget smaller than one sprite: the first wanted video only
    code, stdout, err = run(capsys, "view", frozen_sub, "--data", split_dir, "--out", out, "--max-mb", "0.001",
                            "--quiet")
    assert code == 0, err
    data = page_data(out)
    assert [v["id"] for v in data["videos"] if v["media"]] == [data["gallery"][0]["ids"][0]]
    assert "media for 1 of 6 videos" in stdout and "--max-mb 0.001" in stdout


@pytest.mark.slow
def test_results_of_another_submission_are_refused_and_nothing_is_written(capsys, split_dir, gt_sub, frozen_sub,
                                                                           tmp_path):
    results = tmp_path / "gt.json"
    code, _, err = run(capsys, "score", gt_sub, "--data", split_dir, "--metrics", "velocity_error,ssim,psnr",
                       "--out", results, "--quiet")
    assert code == 0, err
    out = tmp_path / "v"
    code, _, err = run(capsys, "view", frozen_sub, "--data", split_dir, "--results", results, "--out", out, "--quiet")
    assert code == 2 and "[results_mismatch]" in err and "another submission" in err
    assert not out.exists()
    for bad in ('{"provenance": {}, "summary": []}', "[1, 2]", "{not json", '{"provenance": 1}'):
        (tmp_path / "bad.json").write_text(bad)
        code, _, err = run(capsys, "view", gt_sub, "--data", split_dir, "--results", tmp_path / "bad.json",
                           "--out", out, "--quiet")
        assert code == 2 and "[results_unreadable]" in err and not out.exists(), (bad, err)
    code, stdout, err = run(capsys, "view", gt_sub, "--data", split_dir, "--results", results, "--out", out, "--quiet")
    assert code == 0, err
    assert page_data(out)["results_file"] == str(results)


def test_a_submission_that_does_not_match_the_split_is_refused(capsys, split_dir, tmp_path):
    short = _submission(split_dir, tmp_path / "short", "short", drop=1)
    out = tmp_path / "v"
    code, _, err = run(capsys, "view", short, "--data", split_dir, "--out", out, "--quiet")
    assert code == 2 and "phybench view: error [" in err and "validate" in err
    assert not out.exists()


def test_the_out_folder_must_be_a_viewer(capsys, split_dir, gt_sub, tmp_path):
    someone = tmp_path / "theirs"
    someone.mkdir()
    (someone / "thesis.tex").write_text("keep me")
    code, _, err = run(capsys, "view", gt_sub, "--data", split_dir, "--out", someone, "--quiet")
    assert code == 2 and "[out_not_viewer]" in err
    assert [p.name for p in someone.iterdir()] == ["thesis.tex"]
    code, _, err = run(capsys, "view", gt_sub, "--data", split_dir, "--out", split_dir / "view", "--quiet")
    assert code == 2 and "[out_in_input]" in err and not (split_dir / "view").exists()
    out = tmp_path / "mine"
    assert run(capsys, "view", gt_sub, "--data", split_dir, "--out", out, "--quiet")[0] == 0
    (out / "stale.txt").write_text("from before")
    assert run(capsys, "view", gt_sub, "--data", split_dir, "--out", out, "--quiet")[0] == 0  # a viewer: rebuilt
    assert not (out / "stale.txt").exists() and (out / VIEWER_MARKER).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "theirs"]  # no temporary folder left beside it


@pytest.mark.parametrize("name", ["../escape.png", "media/../../escape.png", "/tmp/escape.png", "media/a/b.png",
                                  "..", "media/..", "", "media/x\\..\\y.png", "con/../x"])
def test_no_file_name_can_leave_the_folder(tmp_path, name):
    out = tmp_path / "site" / "v"
    with pytest.raises(ViewerError) as err:
        write_folder(out, {"index.html": b"ok", name: b"x"})
    assert err.value.code == "unsafe_name"
    assert not (tmp_path / "site").exists() and not (tmp_path / "escape.png").exists()


@pytest.mark.slow
def test_viewer_in_headless_chromium(viewer, tmp_path):
    from test_leaderboard import chromium_or_skip, open_tab

    data = page_data(viewer)
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)

        def click(selector: str) -> None:
            box = js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
                     " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
            for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                cdp("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

        def wait(expression: str, timeout: float = 10.0) -> None:
            deadline = time.monotonic() + timeout
            while not js(expression):
                assert time.monotonic() < deadline, f"timed out waiting for {expression}"
                time.sleep(0.05)

        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp(f"{domain}.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (viewer / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        wait("document.getElementById('player').dataset.loaded === 'yes'")

        assert js("document.querySelector('h1 .model').textContent") == EVIL
        assert js("document.querySelectorAll('#videos tbody tr').length") == 6
        assert js("document.querySelectorAll('#gallery .g-kind[data-kind=\"rule:freeze\"] .g-item').length") >= 1

        # A table row opens that video in the player: panels drawn from its sprite, tracks over them.
        target = data["videos"][4]
        click(f'#videos tbody tr[data-id="{target["id"]}"] td')
        wait(f"document.getElementById('player').dataset.sample === {json.dumps(target['id'])}"
             " && document.getElementById('player').dataset.loaded === 'yes'")
        assert js("document.querySelectorAll('#panels figure.panel').length") == 5
        assert js("document.querySelector('#videos tbody tr.current').dataset.id") == target["id"]
        gt_path = js("document.querySelector('#panels svg.overlay[data-panel=\"1\"] path.track.gt').getAttribute('d')")
        first = next(p for p in target["media"]["gt"][0] if p)
        assert gt_path.startswith(f"M{first[0]:g},{first[1]:g}") or gt_path.startswith(f"M{first[0]},{first[1]}")
        assert js("document.querySelectorAll('#panels svg.overlay[data-panel=\"1\"] path.track.model').length") == 1

        # The timeline marks the frames the judge named, under the rule's name; condition frames are marked.
        fired = js("[...document.querySelectorAll('#timeline .tl-row.fired')].map(r => [r.dataset.rule, r.dataset.frames,"
                   " [...r.querySelectorAll('.tick.fired')].map(t => Number(t.dataset.t))])")
        expected = {}
        for f in target["cells"][0]["findings"]:
            expected.setdefault(f["rule"], set()).update(f["frames"])
        assert {r: set(ticks) for r, _, ticks in fired} == expected and "freeze" in expected
        assert js("document.querySelectorAll('#timeline .tl-row.frames .tick.cond').length") == data["condition_frames"]

        # The keyboard steps a frame; the gallery shows a still of the generated panel at the rule's first frame.
        js("(() => { const p = document.getElementById('player'); p.focus(); "
           "p.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true})); })()")
        assert js("document.getElementById('player').dataset.frame") == "1"
        thumb = js("(() => { const t = document.querySelector('#gallery .g-kind[data-kind=\"rule:freeze\"] .thumb');"
                   " return [getComputedStyle(t).backgroundImage, t.dataset.frame]; })()")
        assert "media/v" in thumb[0] and int(thumb[1]) >= data["condition_frames"]

        # Playing advances the frame; every panel follows the one slider.
        click("#play")
        wait("Number(document.getElementById('player').dataset.frame) >= 3")
        click("#play")

        # Sorting by a metric column orders the rows by it; the filter narrows them.
        click('#videos th[data-key="0:velocity_error"] button')
        vals = js("[...document.querySelectorAll('#videos tbody tr')].map(r => Number(r.children["
                  "[...document.querySelectorAll('#videos thead th')].findIndex(th => th.dataset.key === '0:velocity_error')"
                  "].dataset.value))")
        assert vals == sorted(vals) and len(vals) == 6
        js("(() => { const f = document.getElementById('filter'); f.value = '0000003'; f.dispatchEvent(new Event('input')); })()")
        assert js("[...document.querySelectorAll('#videos tbody tr')].map(r => r.dataset.id)") == [data["videos"][3]["id"]]

        # The compare table opens its rows too, largest difference first.
        diffs = js("[...document.querySelectorAll('table.compare tbody tr')].map(r => Number(r.dataset.diff))")
        assert diffs == sorted(diffs, reverse=True) and len(diffs) == 6
        click("table.compare tbody tr td")
        wait(f"document.getElementById('player').dataset.sample === {json.dumps(data['compare'][0]['rows'][0]['id'])}")

        # The learned-law scatter: a point per video and model with a fit; a point opens its video.
        fits = sum(1 for v in data["videos"] for c in v["cells"] if c["law"] and c["law"]["fit"] is not None
                   and c["law"]["truth"] is not None)
        assert fits == 12 and js("document.querySelectorAll('#law-plot circle').length") == fits
        sid = data["videos"][2]["id"]
        js(f"document.querySelector('#law-plot circle[data-id=\"{sid}\"]').dispatchEvent(new MouseEvent('click'))")
        assert js("document.getElementById('player').dataset.sample") == sid
        assert js("document.getElementById('level-plot')") is None  # one level (id-eval): no per-level plot

        # Nothing outside the folder was requested, and nothing went wrong.
        urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
        root = viewer.as_uri()
        assert urls and all(u.startswith(root) or u.startswith("data:") for u in urls), urls
        problems = [e for e in browser.events if (
            e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert", "warning"))
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")))]
        assert not problems, problems

        # A phone's width: no horizontal scroll of the page (wide tables scroll inside their own box).
        cdp("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        time.sleep(0.2)
        assert js("document.documentElement.scrollWidth") <= 390
    finally:
        browser.close()


@pytest.mark.slow
def test_run_view_ends_by_printing_a_viewer_path(capsys, split_dir, tmp_path):
    """`phybench run ... --view`: the author's first look at the model is a page beside the results."""
    code, stdout, err = run(capsys, "run", "--model", "phybench.examples.shift:Model", "--data", split_dir,
                            "--out", tmp_path / "runs", "--metrics", "velocity_error,ssim,psnr", "--view", "--quiet")
    assert code == 0, err
    index = tmp_path / "runs" / "uniform-id-eval" / "view" / "index.html"
    assert f"viewer: {index.resolve()}" in stdout or f"viewer: {index}" in stdout
    data = page_data(index.parent)
    assert data["results_file"] and data["results_file"].endswith(".json")
    assert len(data["videos"]) == 6 and all(v["media"] for v in data["videos"])


@pytest.mark.slow
def test_a_family_without_tracked_objects_has_ground_truth_tracks_only(tmp_path):
    """Combinatorial scenes share colours between bodies: no parsed track, the simulator's per body, and the page
    still plays them without an error."""
    from phybench.leaderboard.viewer.viewer import build_viewer
    from test_leaderboard import chromium_or_skip, open_tab

    split = tmp_path / "combinatorial"
    generate(make_plan(get_task("combinatorial"), "in-template-eval", None, 2, None), split, progress=False)
    sub = _submission(split, tmp_path / "gt", "ground-truth")
    build_viewer(sub, split, tmp_path / "view")
    data = page_data(tmp_path / "view")
    rows = list(SplitReader(split).rows())
    for v, row in zip(data["videos"], rows):
        assert v["media"]["tracks"] == [None]
        assert len(v["media"]["gt"]) == np.asarray(row["positions"]).shape[1]
        assert v["cells"][0]["findings"] == []  # the ground truth breaks no rule
    assert "body_position_error" in {k["kind"] for k in data["gallery"]}
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (tmp_path / "view" / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        deadline = time.monotonic() + 10
        while js("document.getElementById('player').dataset.loaded") != "yes":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert js("document.querySelectorAll('#panels path.track.model').length") == 0
        assert js("document.querySelectorAll('#panels svg.overlay[data-panel=\"0\"] path.track.gt').length") == len(
            data["videos"][0]["media"]["gt"])
        problems = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
                    or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning"))
                    or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]
        assert not problems, problems
    finally:
        browser.close()


@pytest.mark.slow
def test_a_planted_violation_in_chromium(split_dir, tmp_path):
    """The issue's "done when": a planted teleport at frame 12 is in the gallery under its rule; its gallery item
    plays it with the rule's row on the timeline marking frame 12 and both tracks drawn."""
    from phybench.leaderboard.viewer.viewer import build_viewer
    from phybench.violations import write_violations
    from test_leaderboard import chromium_or_skip, open_tab

    labels = write_violations(split_dir, tmp_path / "planted", ["teleport"], progress=False)
    onset = {lab["sample_id"]: lab["onset"] for lab in labels["labels"]["teleport"] if "skipped" not in lab}
    build_viewer(tmp_path / "planted" / "teleport", split_dir, tmp_path / "view")
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (tmp_path / "view" / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        items = js("[...document.querySelectorAll('#gallery .g-kind[data-kind=\"rule:teleport\"] .g-item')]"
                   ".map(b => b.dataset.id)")
        assert items and set(items) <= set(onset)
        sid = items[-1]
        js(f"document.querySelector('#gallery .g-kind[data-kind=\"rule:teleport\"] .g-item[data-id=\"{sid}\"]').click()")
        deadline = time.monotonic() + 10
        while js("document.getElementById('player').dataset.loaded") != "yes" or \
                js("document.getElementById('player').dataset.sample") != sid:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        rows = js("[...document.querySelectorAll('#timeline .tl-row.fired')].map(r => [r.dataset.rule,"
                  " [...r.querySelectorAll('.tick.fired')].map(t => Number(t.dataset.t))])")
        assert ["teleport", [onset[sid]]] in rows
        paths = js("[...document.querySelectorAll('#panels svg.overlay[data-panel=\"1\"] path.track')]"
                   ".map(p => [p.dataset.who, p.getAttribute('d').split(/[ML]/).filter(Boolean).length])")
        assert {who for who, _ in paths} == {"gt", "model"} and all(n >= 10 for _, n in paths)
        problems = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
                    or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning"))
                    or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]
        assert not problems, problems
    finally:
        browser.close()


@pytest.mark.slow
def test_gallery_stills_show_a_body(split_dir, tmp_path):
    """Issue 49: many gallery thumbnails were blank white, the still cut at the last frame or at a rule's
    first frame, where the ball had left the view or vanished.  Each still is now a frame where the
    model's parsed track has a body in view (the nearest to that frame, earlier first)."""
    from phybench.leaderboard.viewer.viewer import build_viewer
    from phybench.violations import write_violations
    from test_leaderboard import chromium_or_skip, open_tab

    write_violations(split_dir, tmp_path / "planted", ["vanish"], progress=False)
    build_viewer(tmp_path / "planted" / "vanish", split_dir, tmp_path / "view")
    data = page_data(tmp_path / "view")
    media = {v["id"]: v["media"] for v in data["videos"] if v.get("media")}
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (tmp_path / "view" / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        stills = js("[...document.querySelectorAll('#gallery .g-item')].map(b => [b.closest('.g-kind').dataset.kind,"
                    " b.dataset.id, Number(b.querySelector('.thumb').dataset.frame)])")
        vanished = [s for s in stills if s[0] == "rule:area"]
        assert vanished, stills
        for kind, sid, frame in stills:
            tracks = media[sid]["tracks"][0] or []
            if any(p for tr in tracks for p in tr):  # a video with a body tracked somewhere
                assert any(tr[frame] for tr in tracks), (kind, sid, frame)
    finally:
        browser.close()

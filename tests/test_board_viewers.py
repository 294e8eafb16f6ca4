"""The board links each row to its viewer (issue 37, item 3) and marks indistinguishable neighbours (item 5).

`leaderboard build --viewers SUBS --viewer-data DATA` builds a `phybench view` folder per results
file from its submission (found by hash), `--prebuilt-viewers DIR` copies ones built before (the
repository ships the lite baselines' in leaderboard/viewers/), and the paired comparison reads the
per-video values each viewer's record keeps.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard.viewer.board_viewers import RECORD, headline_of, read_viewer_record, slug_of
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "leaderboard" / "viewers"
RESULTS = REPO / "leaderboard" / "results"
SHIPPED_BUDGET = 10_000_000  # bytes on disk for every shipped viewer together (docs/leaderboard.md)


def _submission(split: Path, out: Path, name: str, edit=None) -> Path:
    reader = SplitReader(split)
    videos = ((row["sample_id"], edit(reader.video(row)) if edit else reader.video(row)) for row in reader.rows())
    write_submission(out, submission_meta(reader.manifest, name), videos)
    return out


def _nudge(video: np.ndarray) -> np.ndarray:
    """One pixel of the first frame changed: another submission (hash), the same physics."""
    video = video.copy()
    video[0, 0, 0, 0] ^= 1
    return video


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> dict[str, Path]:
    """A uniform id-eval split of 4 videos; the ground truth, a twin of it, and copy-last, each scored."""
    root = tmp_path_factory.mktemp("board")
    split = root / "data" / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 4, None), split, progress=False)
    subs, results = root / "subs", root / "results"
    made = {"ground-truth": _submission(split, subs / "gt", "ground-truth"),
            "twin": _submission(split, subs / "twin", "twin", _nudge),
            "copy-last": _submission(split, subs / "frozen", "copy-last", lambda v: np.repeat(v[2:3], len(v), axis=0))}
    for name, sub in made.items():
        assert main(["score", str(sub), "--data", str(split), "--metrics", "velocity_error,ssim,psnr",
                     "--out", str(results / f"uniform-id-eval-{name}.json"), "--quiet"]) == 0
    return {"root": root, "data": root / "data", "subs": subs, "results": results}


def _build(board: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["leaderboard", "build", str(board["results"]), "--out", str(out), *extra])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def site(board, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    assert _build(board, out, "--viewers", str(board["subs"]), "--viewer-data", str(board["data"])) == 0
    return out


def test_every_row_links_its_viewer_with_the_results_files_numbers(site, board):
    data = json.loads((site / "leaderboard.json").read_text())
    rows = {r["model"]: r for b in data["boards"] for r in b["rows"]}
    assert sorted(rows) == ["copy-last", "ground-truth", "twin"]
    for name, row in rows.items():
        file = f"uniform-id-eval-{name}.json"
        assert row["viewers"] == [{"split": "id-eval", "file": file, "href": f"viewers/{slug_of(file)}/index.html"}]
        folder = site / "viewers" / slug_of(file)
        assert (folder / "index.html").is_file() and list((folder / "media").glob("v*.png"))
        record = read_viewer_record(folder)
        results = json.loads((board["results"] / file).read_text())
        assert record["results"] == file
        assert record["results_sha256"] == hashlib.sha256((board["results"] / file).read_bytes()).hexdigest()
        # the per-video ranked values average to the results file's headline, as the scorer rounds it
        assert headline_of(record) == results["summary"]["overall"]["velocity_error_ranked"]["mean"]
        page = (folder / "index.html").read_text()
        viewer = json.loads(re.search(r'id="viewer-data">(.*?)</script>', page, re.S).group(1))
        assert viewer["results_file"] == file  # named as in the results folder, not by a local path
        assert viewer["headline"][0][0]["value"] == pytest.approx(
            results["summary"]["overall"]["velocity_error_ranked"]["mean"], rel=1e-5)


def test_indistinguishable_neighbours_are_marked(site):
    data = json.loads((site / "leaderboard.json").read_text())
    rows = {r["model"]: r for b in data["boards"] for r in b["rows"]}
    # the twin moves no ball: the same per-video values as the ground truth, so not distinguishable from it
    gt_twin = [rows[m].get("paired", {}).get("id") for m in ("ground-truth", "twin")]
    mark = next(m for m in gt_twin if m)
    assert mark["same"] and mark["diff"] == 0.0 and mark["n"] == 4
    frozen = rows["copy-last"]["paired"]["id"]
    assert frozen["above"] in ("ground-truth", "twin") and frozen["diff"] > 0
    md = (site / "leaderboard.md").read_text()
    assert "≈" in md and "statistically indistinguishable" in md


@pytest.mark.slow
def test_a_rebuild_gives_the_same_bytes_and_prebuilt_viewers_are_linked_by_hash(site, board, tmp_path):
    again = tmp_path / "again"
    assert _build(board, again, "--viewers", str(board["subs"]), "--viewer-data", str(board["data"])) == 0
    assert _files(again) == _files(site)  # deterministic: the page, every viewer, every record
    shipped = tmp_path / "shipped"
    shutil.copytree(site / "viewers", shipped)
    copied = tmp_path / "copied"
    assert _build(board, copied, "--prebuilt-viewers", str(shipped)) == 0
    assert _files(copied) == _files(site)  # copied viewers: the same site without the submissions
    # A results file whose bytes changed (re-scored, say) no longer matches its viewer: no link, no mark.
    file = board["results"] / "uniform-id-eval-copy-last.json"
    original = file.read_bytes()
    try:
        file.write_text(json.dumps(json.loads(original), indent=1))
        assert _build(board, tmp_path / "stale", "--prebuilt-viewers", str(shipped)) == 0
        data = json.loads((tmp_path / "stale" / "leaderboard.json").read_text())
        rows = {r["model"]: r for b in data["boards"] for r in b["rows"]}
        assert "viewers" not in rows["copy-last"] and "paired" not in rows["copy-last"]
        assert not (tmp_path / "stale" / "viewers" / "uniform-id-eval-copy-last").exists()
        assert rows["twin"]["viewers"] and rows["ground-truth"]["viewers"]
    finally:
        file.write_bytes(original)


def test_viewers_need_their_splits(board, tmp_path, capsys):
    assert _build(board, tmp_path / "s", "--viewers", str(board["subs"])) == 2
    assert "--viewer-data" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_a_board_without_viewers_links_none(board, tmp_path):
    assert _build(board, tmp_path / "plain") == 0
    data = json.loads((tmp_path / "plain" / "leaderboard.json").read_text())
    assert all("viewers" not in r and "paired" not in r for b in data["boards"] for r in b["rows"])
    assert not (tmp_path / "plain" / "viewers").exists()


# ================================================================ the shipped viewers
def _shipped() -> list[Path]:
    return sorted(p for p in SHIPPED.iterdir() if p.is_dir()) if SHIPPED.is_dir() else []


def test_the_shipped_viewers_match_the_shipped_results():
    """Every shipped viewer names a shipped results file by its exact bytes, and its per-video values average
    to that file's headline: a re-score that forgets to rebuild the viewers fails here."""
    folders = _shipped()
    assert len(folders) == 30  # the lite reference baselines: 3 tasks x ID, OOD x 5 models
    total = 0
    for folder in folders:
        record = read_viewer_record(folder)
        assert record is not None, folder
        path = RESULTS / record["results"]
        assert path.is_file(), (folder.name, record["results"])
        assert folder.name == slug_of(record["results"])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == record["results_sha256"], (
            f"{record['results']} changed since its viewer {folder.name} was built: rebuild leaderboard/viewers "
            "(leaderboard/scripts/viewers.sh)")
        results = json.loads(path.read_text())
        assert record["submission_hash"] == results["provenance"]["submission_hash"]
        assert record["split_hash"] == results["provenance"]["split_hash"]
        assert headline_of(record) == results["summary"]["overall"]["velocity_error_ranked"]["mean"]
        assert len(record["values"]) == results["summary"]["overall"]["videos"]
        assert (folder / "viewer-data.json").is_file() and (folder / RECORD).is_file()
        total += sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total < SHIPPED_BUDGET, total


def test_the_shipped_lite_board_links_every_baseline_and_marks_neighbours(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS / "fundamental" / "lite", results / "fundamental" / "lite")
    out = tmp_path / "site"
    assert main(["leaderboard", "build", str(results), "--out", str(out), "--prebuilt-viewers", str(SHIPPED)]) == 0
    data = json.loads((out / "leaderboard.json").read_text())
    rows = [r for b in data["boards"] for r in b["rows"]]
    assert len(rows) == 15 and all(len(r["viewers"]) == 2 for r in rows)
    for r in rows:
        for v in r["viewers"]:
            assert (out / v["href"]).is_file()
    marks = [m for r in rows for m in (r.get("paired") or {}).values()]
    assert marks and all(m["n"] > 0 for m in marks)


# ================================================================ in the browser
@pytest.mark.slow
def test_a_row_link_opens_its_viewer_in_headless_chromium(site, tmp_path):
    from test_leaderboard import chromium_or_skip, open_tab

    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp(f"{domain}.enable")
        cdp("Page.navigate", {"url": (site / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        links = js("[...document.querySelectorAll('tr.main')].map(r => [r.dataset.model, "
                   "[...r.querySelectorAll('a.viewer-link')].map(a => a.href)])")
        assert sorted(m for m, _ in links) == ["copy-last", "ground-truth", "twin"]
        assert all(len(hrefs) == 1 for _, hrefs in links)
        same = js("[...document.querySelectorAll('tr.main .paired-same')].length")
        assert same >= 1
        target = dict(links)["copy-last"][0]
        assert target == (site / "viewers" / slug_of("uniform-id-eval-copy-last.json") / "index.html").as_uri()
        js("document.querySelector('tr.main[data-model=\"copy-last\"] a.viewer-link').click()")
        browser.wait_for("Page.loadEventFired")
        deadline = time.monotonic() + 10
        while js("(document.getElementById('player') || {dataset: {}}).dataset.loaded") != "yes":
            assert time.monotonic() < deadline, "the viewer did not load"
            time.sleep(0.05)
        assert js("location.href") == target
        assert js("document.querySelector('h1 .model').textContent") == "copy-last"
        urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
        root = site.as_uri()
        assert urls and all(u.startswith(root) or u.startswith("data:") for u in urls), urls
        problems = [e for e in browser.events if (
            e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert", "warning"))
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")))]
        assert not problems, problems
    finally:
        browser.close()


def test_a_prebuilt_viewer_with_a_link_in_it_is_refused(site, board, tmp_path, capsys):
    shipped = tmp_path / "shipped"
    shutil.copytree(site / "viewers", shipped)
    folder = shipped / slug_of("uniform-id-eval-twin.json")
    (folder / "media" / "evil.png").symlink_to("/etc/passwd")
    assert _build(board, tmp_path / "out", "--prebuilt-viewers", str(shipped)) == 2
    assert "is not a plain file of a viewer" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_slugs_are_one_plain_component():
    assert slug_of("fundamental/lite/uniform-id-eval-copy-last.json") == "fundamental-lite-uniform-id-eval-copy-last"
    assert slug_of("hub/../x y.json") == "hub-..-x-y"
    long = slug_of("a/" + "b" * 200 + ".json")
    assert len(long) <= 100 and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", long)

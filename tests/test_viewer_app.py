"""Viewers shipped as data (issue 50, item 2): the application is written once per site.

A shipped viewer folder (``leaderboard/viewers/<slug>/``) holds its record, its data and its
media; the site build writes ``viewers/viewer.js`` and ``viewer.css`` once from the package's
template and each viewer's ``index.html`` (the shell, its data inline) loading them from there
(`phybench.leaderboard.viewer.app`), where the data then is, once.  A folder made standalone
opens alone from ``file://``.
"""
from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from phybench.leaderboard import BuildReport, build
from phybench.leaderboard.viewer import app
from phybench.leaderboard.viewer.board_viewers import RECORD
from phybench.leaderboard.viewer.viewer import VIEWER_MARKER

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "leaderboard" / "viewers"
RESULTS = REPO / "leaderboard" / "results"
SLUG = "fundamental-lite-uniform-id-eval-copy-last"  # one shipped viewer, opened in the browser
DATA_FILE = re.compile(r"^(\.phybench-viewer|viewer-data\.json|viewer-record\.json|media/v\d{6}\.png)$")


def _shipped() -> list[Path]:
    return sorted(p for p in SHIPPED.iterdir() if p.is_dir())


def test_a_shipped_viewer_folder_holds_data_only():
    """No shipped folder holds the application (or any other page, script or style): the repository
    keeps one copy of it, the package's template."""
    folders = _shipped()
    assert len(folders) == 30
    rels = [p.relative_to(SHIPPED).parts for p in SHIPPED.rglob("*") if not p.is_dir()]
    stray = ["/".join(r) for r in rels if len(r) < 2 or not DATA_FILE.match("/".join(r[1:]))]
    assert not stray, f"not a viewer's data (the site writes the application from the template): {stray[:10]}"
    for folder in folders:
        assert {VIEWER_MARKER, app.DATA, RECORD} <= {p.name for p in folder.iterdir()}, folder.name
        assert app.read_data(folder)["kind"] == "phybench-viewer"


def _site(tmp_path: Path, prebuilt: Path = SHIPPED) -> Path:
    """The shipped uniform rows' board (10 results files, their shipped viewers; 1 s)."""
    return _build(tmp_path, prebuilt).out_dir


def _build(tmp_path: Path, prebuilt: Path = SHIPPED, out: str = "site") -> BuildReport:
    results = tmp_path / "results" / "fundamental" / "lite"
    if not results.is_dir():
        results.mkdir(parents=True)
        for file in sorted((RESULTS / "fundamental" / "lite").glob("uniform-*")):
            shutil.copy(file, results / file.name)
    return build(tmp_path / "results", tmp_path / out, prebuilt_viewers=[prebuilt])


def _site_files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def uniform_board(tmp_path_factory) -> BuildReport:
    """The shipped uniform rows' board, built once for the tests that only read it."""
    return _build(tmp_path_factory.mktemp("uniform"))


def test_the_build_reports_every_file_it_wrote(uniform_board):
    """`BuildReport.written` names every file of the site, the viewers' application (written once per
    site) included: each file is named, or lies in a named folder (``viewers/<slug>/``); and every
    name is there."""
    report = uniform_board
    files = _site_files(report.out_dir)
    folders = [w for w in report.written if w.endswith("/")]
    unlisted = [f for f in files if f not in report.written and not any(f.startswith(d) for d in folders)]
    assert not unlisted, f"written but not in the build's report: {unlisted}"
    assert {"viewers/viewer.js", "viewers/viewer.css"} <= set(report.written)
    assert all((report.out_dir / w).is_dir() if w.endswith("/") else w in files for w in report.written)
    assert report.written == sorted(report.written) and len(folders) == 10


def test_the_site_holds_each_viewers_data_once(uniform_board, tmp_path):
    """Each viewer's data is in the site once, inline in its page (no ``viewer-data.json`` beside it):
    each shipped viewer's data occurs in exactly one file of the site, and the site's viewer data
    (the pages' inline JSON) is byte for byte the shipped ``viewer-data.json`` files.  A site's
    viewers, whose data is in their pages only, still serve as ``--prebuilt-viewers``: the same site."""
    site = uniform_board.out_dir
    files = _site_files(site)
    assert not [f for f in files if f.endswith("/" + app.DATA)]
    pages = sorted(f for f in files if f.startswith("viewers/") and f.endswith("/" + app.PAGE))
    assert len(pages) == 10
    inline = {f.split("/")[1]: re.search(rb'id="viewer-data">(.*?)</script>', files[f], re.S).group(1) for f in pages}
    shipped = {slug: (SHIPPED / slug / app.DATA).read_bytes() for slug in inline}
    assert {slug: data + b"\n" for slug, data in inline.items()} == shipped
    for slug, data in inline.items():
        holders = [f for f, b in files.items() if data in b]
        assert holders == [f"viewers/{slug}/{app.PAGE}"], (slug, holders)
    again = _build(site.parent, prebuilt=site / "viewers", out="again")
    assert _site_files(again.out_dir) == files


def _changed_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: bytes) -> Path:
    """A copy of the application with `line` appended to viewer.js, which the build then reads."""
    root = tmp_path / "template"
    shutil.copytree(Path(str(app.template_root())), root)
    with open(root / "viewer.js", "ab") as f:
        f.write(line)
    monkeypatch.setattr(app, "template_root", lambda: root)
    return root


def test_the_site_writes_the_application_once_from_the_template(tmp_path, monkeypatch):
    """One viewer.js and one viewer.css in the whole site, byte-equal to the template the build read
    (a line appended to a copy of the template is in the site's copy: no viewer's data was rebuilt),
    and every viewer's page loads them from ``viewers/``."""
    line = b"/* a template change: no viewer is rebuilt */\n"
    template = _changed_template(tmp_path, monkeypatch, line)
    before = {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()}
    site = _site(tmp_path)
    for name in app.APP_FILES:
        copies = sorted(site.rglob(name))
        assert copies == [site / "viewers" / name], copies
        assert copies[0].read_bytes() == (template / name).read_bytes()
    assert (site / "viewers" / "viewer.js").read_bytes().endswith(line)
    pages = sorted(site.glob("viewers/*/index.html"))
    assert len(pages) == 10
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert '<link rel="stylesheet" href="../viewer.css">' in text and '<script src="../viewer.js"></script>' in text
        inline = re.search(r'id="viewer-data">(.*?)</script>', text, re.S).group(1)
        assert inline + "\n" == (SHIPPED / page.parent.name / app.DATA).read_text(encoding="utf-8")  # as shipped
    assert {p: p.read_bytes() for p in SHIPPED.rglob("*") if p.is_file()} == before  # the shipped data untouched


def test_a_data_file_cannot_end_its_script_element(tmp_path):
    """A prebuilt folder is untrusted: its data is parsed and written back with nothing that ends the element."""
    folder = tmp_path / "v"
    shutil.copytree(SHIPPED / SLUG, folder)
    doc = json.loads((folder / app.DATA).read_text(encoding="utf-8"))
    doc["models"][0]["name"] = "</script><script>alert(1)</script>"
    (folder / app.DATA).write_text(json.dumps(doc), encoding="utf-8")
    app.write_standalone(folder)
    page = (folder / app.PAGE).read_text(encoding="utf-8")
    assert page.count("</script>") == 2 and "<script>alert" not in page
    (folder / app.DATA).write_text('{"kind": "something else"}', encoding="utf-8")
    with pytest.raises(app.AppError):
        app.read_data(folder)


# ================================================================ in the browser
def _open(browser, url: str) -> tuple:
    from test_leaderboard import open_tab

    cdp, js = open_tab(browser)
    for domain in ("Page", "Runtime", "Log", "Network"):
        cdp(f"{domain}.enable")
    cdp("Page.navigate", {"url": url})
    browser.wait_for("Page.loadEventFired")
    deadline = time.monotonic() + 15
    while js("(document.getElementById('player') || {dataset: {}}).dataset.loaded") != "yes":
        assert time.monotonic() < deadline, f"the viewer at {url} did not load"
        time.sleep(0.05)
    return cdp, js


def _renders(browser, js, root: str, data: dict) -> None:
    """The page drew the shipped data: its model, a row per video, its gallery and a sprite; no
    request left `root`, and nothing went wrong on the console."""
    assert js("document.querySelector('h1 .model').textContent") == data["models"][0]["name"]
    assert js("document.querySelectorAll('#videos tbody tr').length") == len(data["videos"])
    assert js("document.querySelectorAll('#gallery .g-item').length") >= 1
    assert js("getComputedStyle(document.querySelector('.head')).display") != "inline"  # viewer.css applied
    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert any(u.endswith("viewer.js") for u in urls) and any("/media/v" in u for u in urls), urls
    assert all(u.startswith(root) or u.startswith("data:") for u in urls), urls
    problems = [e for e in browser.events if (
        e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert", "warning"))
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")))]
    assert not problems, problems


@pytest.mark.slow
def test_a_shipped_viewer_renders_through_the_built_site_and_standalone_from_file(tmp_path):
    from test_leaderboard import chromium_or_skip

    data = app.read_data(SHIPPED / SLUG)
    site = _site(tmp_path)
    alone = tmp_path / "alone" / SLUG
    shutil.copytree(SHIPPED / SLUG, alone)
    assert app.main([str(alone)]) == 0  # python -m phybench.leaderboard.viewer.app FOLDER
    assert sorted(p.name for p in alone.iterdir() if p.is_file()) == [
        ".phybench-viewer", "index.html", "viewer-data.json", "viewer-record.json", "viewer.css", "viewer.js"]
    for url, root in (((site / "viewers" / SLUG / "index.html").as_uri(), site.as_uri()),
                      ((alone / "index.html").as_uri(), alone.as_uri())):
        browser = chromium_or_skip(tmp_path / ("b" + str(len(url))))
        try:
            _, js = _open(browser, url)
            _renders(browser, js, root, data)
        finally:
            browser.close()

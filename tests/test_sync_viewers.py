"""`leaderboard sync` builds the viewer of the row it admits (issue 37, item 3; `sync_viewers`).

Against the local Hub (tests/hubserver.py), as tests/test_sync_journal.py runs a sync: a board
whose results folder has a ``viewers`` folder beside it is built with viewers, so the sync builds
the admitted row's viewer there and the rebuilt site links it.  Killed (SIGKILL) while building
the viewer or right after it, and run again, the sync ends with the viewer present, whole and
linked, and no half-built folder left.
"""
import json
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_sync import CHEAP, api, card, raw_pr  # noqa: E402
from test_sync import board_key, hub, world  # noqa: E402,F401  the sync tests' fixtures
import test_sync_journal  # noqa: E402

from phybench.leaderboard.viewer.board_viewers import read_viewer_record, slug_of  # noqa: E402
from phybench.leaderboard.hub.viewers import BUILDING  # noqa: E402

KILLER = test_sync_journal.KILLER.replace("from phybench.cli import main", (
    "from phybench.leaderboard.hub import viewers as sync_viewers\n"
    "wrap(intake, 'admitted_viewer', 'viewer')\n"
    "wrap(sync_viewers, '_build_one', 'viewer files')\n"
    "from phybench.cli import main"))


def run_sync(server, tmp_path: Path, args: list, kill_at: int):
    """test_sync_journal's killer, with the viewer's steps wrapped too ('viewer files': the viewer
    written in its .building- folder, before its rename; 'viewer': in place)."""
    saved = test_sync_journal.KILLER
    test_sync_journal.KILLER = KILLER
    try:
        return test_sync_journal.run_sync(server, tmp_path, args, kill_at)
    finally:
        test_sync_journal.KILLER = saved


def check_viewer(results: Path, viewers: Path, site: Path) -> str:
    """The admitted row's viewer is in `viewers`, whole (its record names the results file's bytes),
    copied into the site and linked from its row; nothing half-built is left.  Returns its slug."""
    files = sorted(p for p in (results / "hub").glob("*.json") if p.name.count(".") == 1)
    assert len(files) == 1, files
    file = files[0].relative_to(results).as_posix()
    slug = slug_of(file)
    doc = read_viewer_record(viewers / slug)
    assert doc is not None and doc["results"] == file
    import hashlib

    assert doc["results_sha256"] == hashlib.sha256(files[0].read_bytes()).hexdigest()
    # data only (issue 50): the site writes the page and the application (`viewer.app`)
    assert (viewers / slug / "viewer-data.json").is_file()
    assert not [n for n in ("index.html", "viewer.js", "viewer.css") if (viewers / slug / n).exists()]
    assert (site / "viewers" / "viewer.js").is_file()
    assert not list(viewers.glob(BUILDING + "*"))
    rows = [r for b in json.loads((site / "leaderboard.json").read_text())["boards"] for r in b["rows"]]
    links = [v["href"] for r in rows for v in r.get("viewers", [])]
    assert f"viewers/{slug}/index.html" in links and (site / "viewers" / slug / "index.html").is_file()
    return slug


@pytest.mark.slow
def test_sync_builds_the_admitted_rows_viewer_and_a_killed_sync_ends_with_it(world, hub, tmp_path):  # noqa: F811
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.submission.format import submission_hash

    repo, home = "tester/viewers", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    board = tmp_path / "board"
    results, viewers, site = board / "results", board / "viewers", tmp_path / "site"
    viewers.mkdir(parents=True)  # the board is built with viewers: the sync builds the row's
    args = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results, "--site", site,
            "--metrics", CHEAP]
    sub = world["subs"]["copy-last"]
    h12 = submission_hash(sub)[:12]
    assert raw_pr(hub, home, repo, {f"submissions/copy-last/{h12}/submission.zip": pack_zip(sub),
                                    f"submissions/copy-last/{h12}/card.json": json.dumps(card("copy-last")).encode()}) == 1
    import copy
    import shutil

    with hub.state.lock:
        snapshot = copy.deepcopy(hub.state.repos[("dataset", repo)])
    empty = tmp_path / "empty-board"
    shutil.copytree(board, empty)

    out, steps = run_sync(hub, tmp_path, args, 0)
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    assert steps.index("viewer files") < steps.index("viewer") < steps.index("commit #1"), steps
    slug = check_viewer(results, viewers, site)
    want = test_sync_journal.tree_bytes(viewers / slug)

    for step in ("viewer files", "viewer", "commit #1"):  # killed mid-build, once built, once committed
        test_sync_journal.restore(hub, repo, snapshot, {board: empty})
        shutil.rmtree(site, ignore_errors=True)
        killed, done = run_sync(hub, tmp_path, args, steps.index(step) + 1)
        assert killed.returncode == -signal.SIGKILL and done[-1] == step, (step, done, killed.stderr)
        if step == "viewer files":
            assert list(viewers.glob(BUILDING + "*")) and not (viewers / slug).exists()  # half-built: not in place
        again, _ = run_sync(hub, tmp_path, args, 0)
        assert again.returncode == 0, (step, again.stdout + again.stderr)
        assert check_viewer(results, viewers, site) == slug
        got = test_sync_journal.tree_bytes(viewers / slug)
        assert got.keys() == want.keys(), step  # the same viewer (the record's results hash may differ by a re-score)


def test_a_board_without_a_viewers_folder_gets_none(tmp_path):
    from phybench.leaderboard.hub.viewers import admitted_viewer, viewers_folder

    (tmp_path / "results").mkdir()
    assert viewers_folder(tmp_path / "results") is None

    class Syncer:
        viewers = None

    assert admitted_viewer(Syncer(), tmp_path / "results" / "x.json", {}, tmp_path) is None


def test_a_half_built_viewer_is_removed_at_the_next_start_and_a_failed_build_is_logged(tmp_path):
    from phybench.leaderboard.hub.viewers import admitted_viewer, viewers_folder

    results, viewers = tmp_path / "results", tmp_path / "viewers"
    (results / "hub").mkdir(parents=True)
    (viewers / (BUILDING + "x") / "v").mkdir(parents=True)
    (viewers / "kept").mkdir()
    said: list[str] = []
    assert viewers_folder(results, said.append) == viewers
    assert sorted(p.name for p in viewers.iterdir()) == ["kept"] and "killed sync" in said[0]

    class Syncer:  # a results file naming a split this board does not have: logged, no viewer, nothing left
        pass

    syncer = Syncer()
    syncer.viewers, syncer.results_dir, syncer.splits, syncer.log = viewers, results, {}, said.append
    (results / "hub" / "r.json").write_text(json.dumps({"provenance": {"split_hash": "f" * 64}}))
    assert admitted_viewer(syncer, results / "hub" / "r.json", {"submissions/m/h/submission.zip": Path("x")}, tmp_path) is None
    assert said[-1].startswith("no viewer for hub/r.json: KeyError")
    assert sorted(p.name for p in viewers.iterdir()) == ["kept"]

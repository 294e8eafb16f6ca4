"""A sync that survives any kill (issue 36, item 5): SIGKILLed at every step boundary and run again,
it leaves the same Hub state, the same results and the same site as a sync that was never
interrupted, and no temporary folder.

The failing case the issue reports: killed after the admission and before the site build, the
re-run saw no open pull request and printed "nothing new: site not rebuilt", so the admitted
row never reached the site; killed earlier, the downloaded archive stayed in the temp folder.
Here the board already has a site (an earlier sync admitted one row), so "rebuild only if the
site is missing" cannot hide that case.

Each sync runs as `phybench leaderboard sync` in a fresh process (as in tests/test_sync.py)
through a small wrapper that wraps the sync's steps (download, score, commit, comment, close,
every journal write, the build) and SIGKILLs its own process right after the N-th one returns:
no ``finally`` runs, exactly as a killed runner.  The Hub repo and the results and site
folders are restored to the same starting state before every trial.
"""
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_sync import CHEAP, WRITE, api, bot_comments, card, env_for, raw_pr, tree_bytes  # noqa: E402
from test_sync import board_key, hub, world  # noqa: E402,F401  the sync tests' fixtures, used here too

KILLER = r"""
import json, os, signal, sys
from pathlib import Path
import phybench.leaderboard as board
from phybench.leaderboard.hub import client, intake, journal, record

at, log, events = int(os.environ["KILL_AT"]), Path(os.environ["KILL_LOG"]), []

def wrap(owner, attr, name):
    fn = getattr(owner, attr)
    def wrapped(*args, **kwargs):
        out = fn(*args, **kwargs)
        events.append(name(args) if callable(name) else name)
        log.write_text(json.dumps(events))
        if len(events) == at:
            os.kill(os.getpid(), signal.SIGKILL)  # no finally, no atexit: a killed runner
        return out
    setattr(owner, attr, wrapped)

wrap(intake.Syncer, "start", "start")
wrap(client.HubClient, "download", lambda a: "download " + a[1].rsplit("/", 1)[1])
wrap(record.Recorder, "score_and_record", lambda a: f"score #{a[1]}")
wrap(client.HubClient, "commit_admitted", lambda a: f"commit #{a[1]}")
wrap(intake.Syncer, "comment", lambda a: f"comment #{a[1]} {a[3]}")
wrap(intake.Syncer, "close", lambda a: f"close #{a[1]}")
wrap(journal.Journal, "mark", lambda a: f"journal #{a[1]} {a[2]}")
wrap(journal.Journal, "forget", lambda a: f"journal #{a[1]} forgotten")
wrap(journal.Journal, "site_built", "journal site built")
wrap(board, "build", "build")
from phybench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_sync(server, tmp_path: Path, args: list, kill_at: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    """One sync through the killer wrapper (kill_at 0: never killed); returns it and its step log."""
    log, tmp = tmp_path / "events.json", tmp_path / "tmpdir"
    log.unlink(missing_ok=True)
    tmp.mkdir(exist_ok=True)
    env = {**env_for(server, tmp_path / "hf", WRITE), "KILL_AT": str(kill_at), "KILL_LOG": str(log), "TMPDIR": str(tmp)}
    out = subprocess.run([sys.executable, "-c", KILLER, *map(str, args)], env=env, capture_output=True, text=True,
                         timeout=600)
    return out, json.loads(log.read_text()) if log.exists() else []


def hub_state(server, repo: str) -> dict:
    """What the board's Hub repo shows: main's files, and each pull request's status and the sync's
    comments, each as its marker (the judged head and outcome; the wording names the admission
    commit, and a re-run that finds the commit made says "committed by an earlier sync")."""
    d = server.state.repos[("dataset", repo)].discussions
    marks = lambda n: [re.findall(r"<!-- phybench-sync .*? -->", text) for text in bot_comments(server, repo, n)]  # noqa: E731
    return {"main": server.files(repo), "prs": {n: (server.discussion(repo, n).status, marks(n)) for n in sorted(d)}}


def restore(server, repo: str, snapshot, folders: dict[Path, Path]) -> None:
    with server.state.lock:
        server.state.repos[("dataset", repo)] = copy.deepcopy(snapshot)
    for live, saved in folders.items():
        shutil.rmtree(live, ignore_errors=True)
        shutil.copytree(saved, live)


@pytest.mark.slow
def test_a_sync_killed_at_every_step_boundary_finishes_on_the_next_run(world, hub, tmp_path):  # noqa: F811
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.submission.format import submission_hash

    repo, home = "tester/killed", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    results, site = tmp_path / "results", tmp_path / "site"
    args = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results, "--site", site,
            "--metrics", CHEAP]

    def pr(name: str, **card_changes) -> int:
        sub = world["subs"][name]
        h12 = submission_hash(sub)[:12]
        return raw_pr(hub, home, repo, {f"submissions/{name}/{h12}/submission.zip": pack_zip(sub),
                                        f"submissions/{name}/{h12}/card.json": json.dumps(card(name, **card_changes)).encode()})

    # the board before: one admitted row and its site
    assert pr("copy-last") == 1
    out, _ = run_sync(hub, tmp_path, args, 0)
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    before_rows = json.loads((site / "leaderboard.json").read_bytes())
    saved = {results: tmp_path / "saved-results", site: tmp_path / "saved-site"}
    for live, copy_to in saved.items():
        shutil.copytree(live, copy_to)
    # then: a valid pull request (admitted) and one with a broken card (refused)
    assert pr("linear-extrapolation") == 2
    assert pr("physics-oracle", license="not a licence") == 3
    with hub.state.lock:
        snapshot = copy.deepcopy(hub.state.repos[("dataset", repo)])

    # the uninterrupted sync
    out, steps = run_sync(hub, tmp_path, args, 0)
    assert out.returncode == 0 and "1 admitted, 1 refused" in out.stdout, out.stdout + out.stderr
    want_hub, want_results, want_site = hub_state(hub, repo), tree_bytes(results), tree_bytes(site)
    assert want_hub["prs"][2][0] == want_hub["prs"][3][0] == "closed"
    assert json.loads(want_site["leaderboard.json"]) != before_rows
    assert "linear-extrapolation" in want_site["index.html"].decode()
    assert steps == [  # every step the sync takes, in its order: each is a boundary a kill can hit
        "start",
        "download card.json", "download submission.zip", "journal #2 downloaded", "journal #2 scoring", "score #2",
        "journal #2 scored", "commit #2", "journal #2 committed", "comment #2 admitted", "journal #2 commented",
        "journal #2 forgotten", "close #2",
        "download card.json", "download submission.zip", "journal #3 downloaded", "journal #3 forgotten",
        "comment #3 refused", "journal #3 forgotten", "close #3",
        "build", "journal site built"], steps

    for n in range(1, len(steps) + 1):
        restore(hub, repo, snapshot, saved)
        killed, done = run_sync(hub, tmp_path, args, n)
        assert killed.returncode == -signal.SIGKILL and len(done) == n, (n, killed.stdout + killed.stderr)
        again, _ = run_sync(hub, tmp_path, args, 0)
        where = f"killed after step {n} ({steps[n - 1]}): {again.stdout}{again.stderr}"
        assert again.returncode == 0, where
        assert hub_state(hub, repo) == want_hub, where  # one commit, one comment per PR, both closed
        assert tree_bytes(results) == want_results, where  # same rows, no leftover, journal settled
        assert tree_bytes(site) == want_site, where  # the admitted row reached the site
        # the journal, the refusals' full problem lists (hub_text) and the rows' fingerprints (nearcopy):
        # no download folder left
        assert not [p.name for p in (results / ".sync").iterdir()
                    if p.name not in ("journal.json", "nearcopy") and not p.name.startswith("refused-")], where
        assert not list((tmp_path / "tmpdir").iterdir()), where  # nothing left in the system temp folder


def test_download_folders_go_on_every_way_out_and_stale_ones_at_the_next_start(tmp_path):
    """A download folder is removed when the block ends by an error, by SystemExit (a SIGTERM inside
    `terminate_as_exit`), or normally; one left by a process that is gone is removed by
    `clean_stale`, one of a live process is kept."""
    from phybench.io import _HOST
    from phybench.leaderboard.hub.journal import Journal, terminate_as_exit

    journal = Journal(tmp_path / "results")
    seen, handler = [], signal.getsignal(signal.SIGTERM)
    with pytest.raises(ValueError):
        with journal.download_folder() as folder:
            seen.append(folder)
            (folder / "submission.zip").write_bytes(b"PK")
            raise ValueError("a bug")
    with pytest.raises(SystemExit) as stopped:
        with terminate_as_exit(), journal.download_folder() as folder:
            seen.append(folder)
            (folder / "submission.zip").write_bytes(b"PK")
            os.kill(os.getpid(), signal.SIGTERM)
    assert stopped.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is handler  # the handler is put back
    assert all(folder.parent == journal.work for folder in seen) and not any(f.exists() for f in seen)

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = journal.work / f".download.{int(dead.stdout)}-{_HOST}.abc.tmp"
    live = journal.work / f".download.{os.getpid()}-{_HOST}.abc.tmp"
    for folder in (gone, live):
        folder.mkdir(parents=True)
        (folder / "submission.zip").write_bytes(b"PK")
    assert journal.clean_stale() == [gone] and live.is_dir() and not gone.exists()


def test_the_journal_is_written_atomically_and_an_unreadable_one_starts_over(tmp_path):
    from phybench.leaderboard.hub.journal import Journal, results_state

    results = tmp_path / "results"
    journal = Journal(results)
    journal.mark(2, "downloaded", head="a" * 40)
    journal.mark(2, "scoring", results="hub/x.json")
    assert Journal(results).entry(2) == {"head": "a" * 40, "results": "hub/x.json", "step": "scoring"}
    assert [p.name for p in journal.work.iterdir()] == ["journal.json"]  # no temporary sibling left
    state = results_state(results)
    (results / "hub").mkdir()
    (results / "hub" / "x.json").write_text("{}")
    assert results_state(results) != state  # a new results file: the site is not current any more
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("")
    journal.site_built(tmp_path / "site", results_state(results))
    assert Journal(results).site_current(tmp_path / "site", results_state(results))
    assert not Journal(results).site_current(tmp_path / "elsewhere", results_state(results))
    journal.path.write_text('{"version": 1, "prs": ')  # hand-edited, cut short
    assert Journal(results).numbers() == [] and not Journal(results).site_current(tmp_path / "site", state)


@pytest.mark.slow
def test_a_commit_whose_answer_is_lost_keeps_its_row(world, hub, tmp_path):  # noqa: F811
    """The admission commit lands on main but its answer never comes back (the connection drops):
    the sync cannot tell, so it used to remove the row, and the next sync closed the pull request
    as admitted with no row on the board.  Now the row is kept when main has the scored files (the
    journal says which), the pull request is left open (exit 1), and the next sync closes it with
    one comment; the row is on the site."""
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.leaderboard.hub.journal import Journal
    from phybench.submission.format import submission_hash

    repo, home = "tester/lost-answer", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sub = world["subs"]["linear-extrapolation"]
    folder = f"submissions/linear-extrapolation/{submission_hash(sub)[:12]}"
    num = raw_pr(hub, home, repo, {f"{folder}/submission.zip": pack_zip(sub),
                                   f"{folder}/card.json": json.dumps(card("linear-extrapolation")).encode()})
    results, site = tmp_path / "results", tmp_path / "site"
    args = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results, "--site", site,
            "--metrics", CHEAP]
    hub.state.lose_commit_answer = True
    try:
        out, _ = run_sync(hub, tmp_path, args, 0)
    finally:
        hub.state.lose_commit_answer = False
    assert out.returncode == 1 and "left open after an error" in out.stdout, out.stdout + out.stderr
    assert f"{folder}/submission.zip" in hub.files(repo)  # it did land
    assert hub.discussion(repo, num).status == "open" and not bot_comments(hub, repo, num)
    [row] = [p for p in (results / "hub").glob("*.json") if p.name.count(".") == 1]
    assert Journal(results).entry(num)["step"] == "committed"
    out, _ = run_sync(hub, tmp_path, args, 0)
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    assert hub.discussion(repo, num).status == "closed" and len(bot_comments(hub, repo, num)) == 1
    assert row.is_file() and Journal(results).numbers() == []
    board = json.loads((site / "leaderboard.json").read_bytes())
    assert {r["model"] for b in board["boards"] for r in b["rows"]} == {"linear-extrapolation"}

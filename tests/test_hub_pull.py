"""`phybench leaderboard pull` against the local Hub (tests/hubserver.py): the admitted rows a
board's Hub repository keeps (``results/hub/**``) come back byte for byte into RESULTS/hub/, a
hostile listing or a differing local file is refused with nothing written, and the workflow's
round trip (pull, then `sync --publish` of a new pull request) keeps the earlier rows on the Hub."""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from phybench.leaderboard import build
from phybench.leaderboard.hub import board as hub_board
from phybench.leaderboard.hub.board import HubBoardError
from phybench.leaderboard.hub.pull import pull

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402
from test_hub_board import COMMIT, INFO, _fake_api, api, phybench, publish_new  # noqa: E402

CHEAP = "velocity_error,ssim,psnr"  # the board's lite metrics; LPIPS/FVD on CPU would take minutes


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


def card(model: str) -> dict:
    return {"schema_version": 1, "model": model, "code_url": "https://github.com/phybench/phybench",
            "report_url": "https://arxiv.org/abs/2411.02385", "input": {"type": "frames", "condition_frames": 3},
            "sampling": {"sampler": "deterministic"}, "seeds": [0], "license": "Apache-2.0"}


@pytest.fixture(scope="module")
def world(hub, tmp_path_factory):
    """A one-sample uniform split, three baselines' submissions for it, the tests' own signing key,
    and `board`: a results folder whose hub/ rows a `sync --publish` admitted (two pull requests)."""
    from phybench.cli.data import canonical_command
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.leaderboard.verify.signing import REPO_KEYS, new_key_pair
    from phybench.reference import run_baseline
    from phybench.tasks import get_task

    root = tmp_path_factory.mktemp("pull")
    new_key_pair(root / "private.pem", root / "keys", note="tests/test_hub_pull.py")  # the sync signs
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PHYBENCH_SIGNING_KEY", str(root / "private.pem"))  # env_for passes both on
        mp.setenv("PHYBENCH_BOARD_KEYS", os.pathsep.join([str(REPO_KEYS), str(root / "keys")]))
        plan = make_plan(get_task("uniform"), "id-eval", None, 1, None)
        split = root / "splits" / "uniform-id-eval"
        generate(plan, split, progress=False, command=canonical_command(plan))
        subs = {n: run_baseline(n, split, root / f"sub-{n}", progress=False)
                for n in ("linear-extrapolation", "copy-last", "physics-oracle")}
        home, repo = root / "home", "tester/pull-origin"
        api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
        for name in ("linear-extrapolation", "copy-last"):
            submit(hub, home, repo, subs[name], name)
        board = root / "board" / "results"
        board.mkdir(parents=True)
        sync(hub, home, repo, root / "splits", board, root / "site")
        assert len(list((board / "hub").rglob("*.verified.json"))) == 2
        yield {"root": root, "splits": root / "splits", "subs": subs, "board": board}


def submit(hub, home: Path, repo: str, sub: Path, model: str) -> None:
    cards = home.parent / "cards"
    cards.mkdir(exist_ok=True)
    (cards / f"{model}.json").write_text(json.dumps(card(model)))
    proc = phybench(hub, home, "submit", "--yes", sub, "--repo", repo, "--card", cards / f"{model}.json")
    assert proc.returncode == 0, proc.stderr[-3000:]


def sync(hub, home: Path, repo: str, splits: Path, results: Path, site: Path) -> str:
    proc = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", splits, "--results", results,
                    "--site", site, "--metrics", CHEAP, "--publish")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (hidden ones too) with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rows(folder: Path) -> list[str]:
    """The model names of the results files under `folder`."""
    return sorted(json.loads(p.read_bytes())["model"]["name"] for p in folder.rglob("*.json")
                  if not p.name.endswith((".samples.json", ".verified.json")))


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_pull_brings_back_the_published_admitted_rows_byte_for_byte(hub, world, tmp_path):
    board, home = world["board"], tmp_path / "home"
    published = publish_new(hub, board, home, "tester/pull-board")
    assert any(f.startswith("results/hub/") and f.endswith(".samples.parquet") for f in published["files"])
    results = tmp_path / "checkout" / "results"  # a fresh checkout: no hub/ (no longer kept in git)
    results.mkdir(parents=True)
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert published["sha"] in proc.stdout and "pulled 6 new file(s)" in proc.stdout, proc.stdout
    assert tree(results / "hub") == tree(board / "hub")  # results, records and JSON sidecars, exact bytes
    assert not [p for p in results.iterdir() if p.name.startswith(".phybench-pull-")]  # scratch removed
    proc = phybench(hub, home, "leaderboard", "build", results, "--out", tmp_path / "site", "--require-verified")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert rows(results / "hub") == ["copy-last", "linear-extrapolation"]
    assert len(build(results, tmp_path / "site2", require_verified=True).accepted) == 2
    proc = phybench(hub, home, "leaderboard", "build", "--from-hub", published["repo"], "--revision", published["sha"],
                    "--out", tmp_path / "site3")  # the download both share (hub_board.download_board)
    assert proc.returncode == 0 and published["sha"] in proc.stdout, proc.stderr[-3000:]

    # again, at the commit: nothing new, nothing changed
    before = tree(results)
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results,
                    "--revision", published["sha"])
    assert proc.returncode == 0 and "pulled 0 new file(s)" in proc.stdout and "6 already there" in proc.stdout
    assert tree(results) == before

    # a local file that differs is never overwritten: refused, nothing written
    sidecar = next((results / "hub").rglob("*.samples.json"))
    sidecar.write_bytes(sidecar.read_bytes().replace(b"}", b" }", 1))
    record = next((results / "hub").rglob("*.verified.json"))
    record.unlink()
    before = tree(results)
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 2 and "[pull_conflict]" in proc.stderr and sidecar.name in proc.stderr, proc.stderr
    assert tree(results) == before

    # a local file the Hub lacks (a row not yet published) is kept; a missing one comes back
    sidecar.write_bytes((board / sidecar.relative_to(results)).read_bytes())
    (results / "hub" / "local-only.json").write_bytes(b"{}")
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 0 and "pulled 1 new file(s)" in proc.stdout and "1 local file(s)" in proc.stdout
    assert tree(results / "hub") == {**tree(board / "hub"), "local-only.json": b"{}"}


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_a_hostile_listing_is_refused_with_nothing_written(hub, world, tmp_path, monkeypatch):
    home = tmp_path / "home"
    published = publish_new(hub, world["board"], home, "tester/hostile-pull")
    extra = tmp_path / "x.txt"
    extra.write_text("not a board file")
    sha = api(hub, home, COMMIT, repo=published["repo"], files={"results/hub/run.sh": str(extra)})
    results = tmp_path / "results"
    results.mkdir()
    (results / "kept.json").write_bytes(b"{}")
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results,
                    "--revision", sha)
    assert proc.returncode == 2 and "[hub_path]" in proc.stderr, proc.stderr
    assert tree(results) == {"kept.json": b"{}"}  # not even the lock file
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", tmp_path / "none")
    assert proc.returncode == 2 and "[pull_results]" in proc.stderr and not (tmp_path / "none").exists()
    quiet = {"log": lambda line: None}
    for repo, revision, code in (("../etc", "main", "hub_repo"), ("o/n", "main; rm -rf /", "hub_revision")):
        with pytest.raises(HubBoardError) as info:
            pull(repo, results, revision=revision, api=_fake_api([]), **quiet)
        assert info.value.code == code
    monkeypatch.setattr(hub_board, "MAX_FILES", 3)
    with pytest.raises(HubBoardError) as info:  # counted over all of results/, before any download
        pull("o/n", results, api=_fake_api([(f"results/hub/{i}.json", 1) for i in range(5)]), **quiet)
    assert info.value.code == "hub_too_many"
    with pytest.raises(HubBoardError) as info:
        pull("o/n", results, api=_fake_api([("results/hub/a.json", 10 ** 9)]), **quiet)
    assert info.value.code == "hub_too_large"
    assert tree(results) == {"kept.json": b"{}"}


def test_a_killed_pulls_scratch_is_cleared_and_its_old_folder_put_back(tmp_path):
    """A pull killed between its two renames left RESULTS without hub/ and the old one in its
    scratch folder: the next pull puts it back (then pulls); other stale scratch folders go."""
    results = tmp_path / "results"
    (results / ".phybench-pull-killed" / "old" / "task").mkdir(parents=True)
    (results / ".phybench-pull-killed" / "old" / "task" / "row.json").write_bytes(b"{}")
    (results / ".phybench-pull-download" / "download").mkdir(parents=True)
    lines: list[str] = []
    done = pull("o/n", results, api=_fake_api([]), log=lines.append)  # a repository with no admitted rows yet
    assert tree(results / "hub") == {"task/row.json": b"{}"} and done.added == [] and done.sha == "a" * 40
    assert sorted(p.name for p in results.iterdir()) == [".phybench-hub-base", ".phybench-sync.lock", "hub"]  # base: issue 51
    assert any("put back" in line for line in lines) and "pulled 0 new file(s)" in lines[-1]


@pytest.mark.slow
def test_pull_then_sync_publish_keeps_the_earlier_rows_on_the_hub(hub, world, tmp_path):
    """The workflow's order: a fresh checkout pulls the Hub's admitted rows, then `sync --publish`
    admits a new pull request; the Hub then holds the earlier rows and the new one, and the pulled
    rows count for the duplicate checks (the same videos under a second name are refused)."""
    home = tmp_path / "home"
    published = publish_new(hub, world["board"], home, "tester/round-trip")
    earlier = sorted(f for f in published["files"] if f.startswith("results/hub/"))
    assert len(earlier) == 6
    submit(hub, home, published["repo"], world["subs"]["physics-oracle"], "physics-oracle")
    renamed = tmp_path / "renamed"  # the copy-last videos, already on the board, under a second name
    shutil.copytree(world["subs"]["copy-last"], renamed)
    meta = json.loads((renamed / "submission.json").read_bytes())
    meta["model"]["name"] = "copy-last-v2"
    (renamed / "submission.json").write_text(json.dumps(meta))
    submit(hub, home, published["repo"], renamed, "copy-last-v2")

    results = tmp_path / "checkout" / "results"
    results.mkdir(parents=True)
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = sync(hub, home, published["repo"], world["splits"], results, tmp_path / "site")
    assert "[videos_reused]" in out and "(hub/uniform-id-eval-copy-last-" in out, out[-2000:]  # a pulled row
    assert "1 admitted, 1 refused" in out and "(0 removed)" in out, out[-2000:]
    sha, files = api(hub, home, INFO, repo=published["repo"], rev="main")
    now = sorted(f for f in files if f.startswith("results/hub/"))
    assert set(earlier) < set(now)  # nothing deleted ...
    new = [f for f in now if f not in earlier]
    assert len(new) == 3 and all("physics-oracle" in f for f in new), new  # ... the admitted row added
    assert rows(results / "hub") == ["copy-last", "linear-extrapolation", "physics-oracle"] and sha != published["sha"]


@pytest.mark.slow
def test_pull_refuses_a_pull_requests_ref_or_commit(hub, tmp_path):
    """Issue 51 item 6: `--revision refs/pr/N` (or that pull request's head commit) pulled an unmerged
    row at 68724c0; only main or a commit of main's history is pulled (`pull_revision`)."""
    home, repo = tmp_path / "home", "tester/pr-pull"
    row = tmp_path / "row.json"
    row.write_text("{}")
    main_sha = api(hub, home, "HfApi().create_repo(repo, repo_type='dataset')\n" + COMMIT, repo=repo,
                   files={"results/hub/merged.json": str(row)})
    pr_sha = api(hub, home, "info = HfApi().create_commit(repo, [CommitOperationAdd('results/hub/unmerged.json', "
                            "path)], commit_message='x', repo_type='dataset', create_pr=True)\n"
                            "result = HfApi().repo_info(repo, repo_type='dataset', revision=info.pr_revision).sha",
                 repo=repo, path=str(row))
    results = tmp_path / "results"
    results.mkdir()
    for revision in ("refs/pr/1", pr_sha):
        proc = phybench(hub, home, "leaderboard", "pull", "--repo", repo, "--results", results, "--revision", revision)
        assert proc.returncode == 2 and "[pull_revision]" in proc.stderr, proc.stderr[-2000:]
        assert not (results / "hub").exists()
    proc = phybench(hub, home, "leaderboard", "pull", "--repo", repo, "--results", results, "--revision", main_sha)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(p.name for p in (results / "hub").iterdir()) == ["merged.json"]

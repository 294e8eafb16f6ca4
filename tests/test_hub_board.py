"""The board's results on the Hub (issue 36 item 8), against the local Hub (tests/hubserver.py):
`leaderboard publish` writes results, Parquet sidecars, signed records and eval.yaml in one
commit; `leaderboard build --from-hub --revision` builds the same site from it at a pinned
revision, with --require-verified semantics (a forged Parquet is refused), and a hostile
repository is refused by its listing before anything is downloaded."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from phybench.leaderboard import build
from phybench.leaderboard.hub import board as hub_board
from phybench.leaderboard.hub.board import HubBoardError, list_board
from phybench.leaderboard.hub.eval_results import validate_eval_yaml
from phybench.leaderboard.common.samples_parquet import from_parquet, to_parquet

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402

WRITE = "hf_test_write"
ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "leaderboard" / "results" / "fundamental" / "lite"


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A small signed board: the lite uniform and collision files (results, sidecars, records)."""
    root = tmp_path_factory.mktemp("board") / "results"
    (root / "fundamental" / "lite").mkdir(parents=True)
    for path in LITE.iterdir():
        if path.name.startswith(("uniform-id-eval", "collision-ood-eval")):
            shutil.copy(path, root / "fundamental" / "lite" / path.name)
    return root


def env_for(hub, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", PYTHONPATH=str(ROOT), HF_TOKEN=WRITE)
    return env


def phybench(hub, home: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "phybench.cli", *map(str, args)], env=env_for(hub, home),
                          capture_output=True, text=True, timeout=600)


def api(hub, home: Path, code: str, **values):
    script = ("import json\nfrom huggingface_hub import HfApi, CommitOperationAdd, CommitOperationDelete\n"
              f"globals().update(json.loads({json.dumps(json.dumps(values))}))\nresult = None\n"
              + textwrap.dedent(code) + "\nprint('@@' + json.dumps(result))\n")
    proc = subprocess.run([sys.executable, "-c", script], env=env_for(hub, home), capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.rsplit("@@", 1)[1])


INFO = "info = HfApi().repo_info(repo, repo_type='dataset', revision=rev); result = [info.sha, sorted(s.rfilename for s in info.siblings)]"
DOWNLOAD = "from huggingface_hub import hf_hub_download; result = hf_hub_download(repo, path, repo_type='dataset', revision=rev)"
COMMIT = ("info = HfApi().create_commit(repo, [CommitOperationAdd(p, l) for p, l in files.items()], commit_message='x', "
          "repo_type='dataset'); result = info.oid")


def site_data(site: Path) -> dict:
    return json.loads((site / "leaderboard.json").read_text())


def publish_new(hub, board, home: Path, repo: str) -> dict:
    """A new dataset repository holding `board`, published by the CLI: {home, repo, sha, files}."""
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    proc = phybench(hub, home, "leaderboard", "publish", "--repo", repo, "--results", board)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sha, files = api(hub, home, INFO, repo=repo, rev="main")
    return {"home": home, "repo": repo, "sha": sha, "files": files}


@pytest.fixture(scope="module")
def published(hub, board, tmp_path_factory):
    """The board published once; tests that change a repository make their own (any test order)."""
    return publish_new(hub, board, tmp_path_factory.mktemp("home"), "tester/phybench-board")


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_publish_writes_the_board_in_one_commit(hub, board, published):
    files = published["files"]
    local = sorted(p.relative_to(board).as_posix() for p in board.rglob("*.json"))
    sidecars = [p for p in local if p.endswith(".samples.json")]
    assert sidecars and not any(f.endswith(".samples.json") for f in files)  # Parquet on the Hub, JSON in git
    assert {"results/" + p.replace(".samples.json", ".samples.parquet") for p in sidecars} <= set(files)
    assert {"results/" + p for p in local if not p.endswith(".samples.json")} <= set(files)
    assert "eval.yaml" in files
    # publishing the same board again makes no commit (a re-run after a kill, a sync with nothing new)
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", board)
    assert proc.returncode == 0 and "already holds" in proc.stdout, proc.stderr[-2000:]
    assert api(hub, published["home"], INFO, repo=published["repo"], rev="main")[0] == published["sha"]
    assert f"at {published['sha'][:12]}" in proc.stdout
    import yaml

    path = api(hub, published["home"], DOWNLOAD, repo=published["repo"], path="eval.yaml", rev=published["sha"])
    validate_eval_yaml(yaml.safe_load(Path(path).read_text()))


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_the_site_built_from_the_hub_at_a_revision_is_the_local_one(hub, board, published, tmp_path):
    local = build(board, tmp_path / "local", require_verified=True)
    proc = phybench(hub, published["home"], "leaderboard", "build", "--from-hub", published["repo"],
                    "--revision", published["sha"], "--out", tmp_path / "from-hub")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert published["sha"] in proc.stdout
    ours, theirs = site_data(tmp_path / "local"), site_data(tmp_path / "from-hub")
    assert theirs == ours and theirs["require_verified"] and len(theirs["files"]) == len(local.accepted)


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_a_forged_parquet_is_refused_and_the_pinned_revision_still_builds(hub, board, tmp_path):
    published = publish_new(hub, board, tmp_path / "home", "tester/forged-board")
    name = "fundamental/lite/uniform-id-eval-copy-last.samples"
    path = api(hub, published["home"], DOWNLOAD, repo=published["repo"], path=f"results/{name}.parquet",
               rev=published["sha"])
    doc = from_parquet(Path(path).read_bytes())
    doc["samples"][0]["generated_velocity"] = doc["samples"][0]["true_velocity"]  # a perfect prediction, forged
    forged = tmp_path / "forged.parquet"
    forged.write_bytes(to_parquet(doc))
    new = api(hub, published["home"], COMMIT, repo=published["repo"], files={f"results/{name}.parquet": str(forged)})
    proc = phybench(hub, published["home"], "leaderboard", "build", "--from-hub", published["repo"], "--revision", new,
                    "--out", tmp_path / "forged-site")
    assert proc.returncode == 2 and "verify-stale" in proc.stderr and "uniform-id-eval-copy-last" in proc.stderr
    assert not (tmp_path / "forged-site").exists()
    proc = phybench(hub, published["home"], "leaderboard", "build", "--from-hub", published["repo"], "--revision",
                    published["sha"], "--out", tmp_path / "pinned")
    assert proc.returncode == 0, proc.stderr[-2000:]  # the revision it was pinned to is untouched
    # publishing the (unchanged, signed) board again writes the true Parquet back
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", board)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_publish_refuses_a_board_that_is_not_all_verified(hub, board, published, tmp_path):
    bad = tmp_path / "results"
    shutil.copytree(board, bad)
    (bad / "fundamental" / "lite" / "uniform-id-eval-copy-last.verified.json").unlink()
    before = api(hub, published["home"], INFO, repo=published["repo"], rev="main")[0]
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", bad)
    assert proc.returncode == 2 and "publish-not-verified" in proc.stderr and "not_verified" in proc.stderr
    assert api(hub, published["home"], INFO, repo=published["repo"], rev="main")[0] == before  # nothing written


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_a_hostile_repository_is_refused_before_any_download(hub, board, tmp_path):
    published = publish_new(hub, board, tmp_path / "home", "tester/hostile-board")
    extra = tmp_path / "x.txt"
    extra.write_text("not a board file")
    sha = api(hub, published["home"], COMMIT, repo=published["repo"], files={"results/run.sh": str(extra)})
    proc = phybench(hub, published["home"], "leaderboard", "build", "--from-hub", published["repo"], "--revision", sha,
                    "--out", tmp_path / "site")
    assert proc.returncode == 2 and "[hub_path]" in proc.stderr
    proc = phybench(hub, published["home"], "leaderboard", "build", "--from-hub", "../etc", "--revision", sha,
                    "--out", tmp_path / "site")
    assert proc.returncode == 2 and "[hub_repo]" in proc.stderr


def _fake_api(siblings, sha="a" * 40):
    info = SimpleNamespace(sha=sha, siblings=[SimpleNamespace(rfilename=n, size=s) for n, s in siblings])
    return SimpleNamespace(repo_info=lambda *a, **k: info)


@pytest.mark.parametrize("siblings, code", [
    ([("results/../../etc/passwd.json", 10)], "hub_path"),
    ([("results/a/.hidden.json", 10)], "hub_path"),
    ([("results/a.json", 10 ** 9)], "hub_too_large"),
    ([("results/a.samples.parquet", 10 ** 8)], "hub_too_large"),
    ([("results/a.json", None)], "hub_too_large"),
    ([("README.md", 10)], "hub_empty"),
])
def test_the_listing_is_checked_before_downloading(siblings, code):
    with pytest.raises(HubBoardError) as info:
        list_board(_fake_api(siblings), "o/n", "main")
    assert info.value.code == code


def test_too_many_files_or_bytes_or_an_odd_revision(monkeypatch):
    monkeypatch.setattr(hub_board, "MAX_FILES", 3)
    with pytest.raises(HubBoardError) as info:
        list_board(_fake_api([(f"results/{i}.json", 1) for i in range(5)]), "o/n", "main")
    assert info.value.code == "hub_too_many"
    monkeypatch.setattr(hub_board, "MAX_TOTAL_BYTES", 10)
    with pytest.raises(HubBoardError) as info:
        list_board(_fake_api([("results/a.json", 6), ("results/b.json", 6)]), "o/n", "main")
    assert info.value.code == "hub_too_large"
    with pytest.raises(HubBoardError) as info:
        list_board(_fake_api([("results/a.json", 6)], sha="main; rm -rf /"), "o/n", "main")
    assert info.value.code == "hub_revision"


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_sync_with_publish_writes_the_board_to_its_repository(hub, board, tmp_path, monkeypatch):
    """`leaderboard sync --publish`: no pull request open, the site is built and the board published."""
    from phybench.leaderboard.verify.signing import REPO_KEYS, new_key_pair

    new_key_pair(tmp_path / "private.pem", tmp_path / "keys", note="tests/test_hub_board.py")  # the sync signs
    monkeypatch.setenv("PHYBENCH_SIGNING_KEY", str(tmp_path / "private.pem"))
    monkeypatch.setenv("PHYBENCH_BOARD_KEYS", os.pathsep.join([str(REPO_KEYS), str(tmp_path / "keys")]))
    home, repo = tmp_path / "home", "tester/synced-board"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    results = tmp_path / "results"
    shutil.copytree(board, results)
    from phybench.cli.data import canonical_command
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.tasks import get_task

    plan = make_plan(get_task("uniform"), "id-eval", None, 1, None)  # sync wants a split to score against
    generate(plan, tmp_path / "splits" / "uniform-id-eval", progress=False, command=canonical_command(plan))
    proc = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", tmp_path / "splits", "--results",
                    results, "--site", tmp_path / "site", "--publish")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    sha, files = api(hub, home, INFO, repo=repo, rev="main")
    assert "eval.yaml" in files and any(f.endswith(".samples.parquet") for f in files)
    assert not any("/.sync" in f or f.startswith("results/.") for f in files)  # the journal stays local
    proc = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", tmp_path / "splits", "--results",
                    results, "--site", tmp_path / "site", "--publish")
    assert proc.returncode == 0 and "already holds" in proc.stdout, proc.stderr[-3000:]
    assert api(hub, home, INFO, repo=repo, rev="main")[0] == sha


RACE = """
from phybench.leaderboard.hub.board import publish_board
real = HfApi()
real.create_repo(repo, repo_type="dataset")


class Racing:  # reads main, then someone else commits before the publish does
    def repo_info(self, *args, **kwargs):
        info = real.repo_info(*args, **kwargs)
        real.create_commit(repo, [CommitOperationAdd("README.md", b"# raced")], commit_message="race",
                           repo_type="dataset")
        return info

    def create_commit(self, *args, **kwargs):
        return real.create_commit(*args, **kwargs)


try:
    publish_board(repo, board, api=Racing(), log=lambda line: None)
    error = None
except Exception as exc:
    error = str(exc)
result = [error, sorted(s.rfilename for s in real.repo_info(repo, repo_type="dataset").siblings)]
"""


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_a_commit_that_lands_while_publishing_fails_the_publish(hub, board, tmp_path):
    """The publish commits on the main it read: a change of main in between fails it (nothing mixed)."""
    error, files = api(hub, tmp_path / "home", RACE, repo="tester/raced-board", board=str(board))
    assert error and ("412" in error or "since" in error)
    assert "README.md" in files and not any(f.startswith("results/") or f == "eval.yaml" for f in files)


@pytest.mark.slow
def test_publish_never_deletes_a_row_committed_after_the_pull(hub, board, tmp_path):
    """Issue 51 item 3: a row committed to the Hub after the folder's pull (or publish) is not the
    folder's to delete; the publish is refused with `publish_stale`, nothing written (68724c0 deleted
    it: "(1 removed)")."""
    results = tmp_path / "results"
    shutil.copytree(board, results)
    published = publish_new(hub, results, tmp_path / "home", "tester/cas-board")
    row = tmp_path / "row.json"
    row.write_bytes((board / "fundamental" / "lite" / "uniform-id-eval-copy-last.json").read_bytes())
    moved = api(hub, published["home"], COMMIT, repo=published["repo"],
                files={"results/hub/late/uniform-id-eval-late.json": str(row)})
    (results / "fundamental" / "lite" / "collision-ood-eval-copy-last.json").unlink()  # a change to publish
    for n in ("samples.json", "verified.json"):
        (results / "fundamental" / "lite" / f"collision-ood-eval-copy-last.{n}").unlink()
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 2 and "[publish_stale]" in proc.stderr and "leaderboard pull" in proc.stderr, \
        proc.stdout[-2000:] + proc.stderr[-2000:]
    sha, files = api(hub, published["home"], INFO, repo=published["repo"], rev="main")
    assert sha == moved and "results/hub/late/uniform-id-eval-late.json" in files  # nothing written, row kept
    # a folder that never pulled this repository may not delete its rows either
    fresh = tmp_path / "fresh"
    shutil.copytree(results, fresh)
    (fresh / ".phybench-hub-base").unlink()
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", fresh)
    assert proc.returncode == 2 and "[publish_stale]" in proc.stderr and "never pulled" in proc.stderr


@pytest.mark.slow
def test_publish_deletes_what_it_pulled_and_is_refused_when_main_moves_under_it(hub, board, tmp_path):
    """The rows the folder held at its base may go (the maintainer removed them locally)."""
    results = tmp_path / "results"
    shutil.copytree(board, results)
    published = publish_new(hub, results, tmp_path / "home", "tester/cas-delete")
    for n in ("json", "samples.json", "verified.json"):
        (results / "fundamental" / "lite" / f"collision-ood-eval-copy-last.{n}").unlink()
    proc = phybench(hub, published["home"], "leaderboard", "publish", "--repo", published["repo"], "--results", results)
    assert proc.returncode == 0 and "(3 removed)" in proc.stdout, proc.stderr[-2000:]
    sha, files = api(hub, published["home"], INFO, repo=published["repo"], rev="main")
    assert not any("collision-ood-eval-copy-last" in f for f in files)
    assert json.loads((results / ".phybench-hub-base").read_text())["repos"][published["repo"]] == sha


def test_a_row_with_both_a_parquet_and_a_json_sidecar_is_refused(tmp_path):
    """Issue 51 item 5: `_stage` compared the path without its results/ prefix against listing keys
    that keep it, so the check never fired and one sidecar silently overwrote the other (68724c0)."""
    name = "fundamental/lite/uniform-id-eval-copy-last"
    download = tmp_path / "download" / "results" / "fundamental" / "lite"
    download.mkdir(parents=True)
    side = (LITE / "uniform-id-eval-copy-last.samples.json").read_bytes()
    (download / "uniform-id-eval-copy-last.samples.json").write_bytes(side)
    (download / "uniform-id-eval-copy-last.samples.parquet").write_bytes(to_parquet(json.loads(side)))
    sizes = {f"results/{name}.samples.json": len(side),
             f"results/{name}.samples.parquet": (download / "uniform-id-eval-copy-last.samples.parquet").stat().st_size}
    (tmp_path / "staging").mkdir()
    with pytest.raises(HubBoardError) as info:
        hub_board._stage(tmp_path / "download", hub_board.Listing("a" * 40, sizes), tmp_path / "staging")
    assert info.value.code == "hub_two_sidecars"

"""Intake through the Hub, end to end: `phybench submit` opens pull requests on the local Hub
(tests/hubserver.py, real HTTP), `phybench leaderboard sync` admits or refuses them.

Every client runs as a fresh process with HF_ENDPOINT pointing at the server (huggingface_hub
reads it at import), exactly the commands .github/workflows/leaderboard.yml runs.  Authors use
the read-only token (anyone signed in may open a pull request); the sync uses the write token.
"""
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from phybench.cli.data import canonical_command
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.leaderboard.verify.records import read_record
from phybench.reference import run_baseline
from phybench.tasks import get_task

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402

WRITE, READ = "hf_test_write", "hf_test_read"
CHEAP = "velocity_error,ssim,psnr"  # the board's lite metrics; LPIPS/FVD on CPU would take minutes
ROOT = Path(__file__).resolve().parent.parent


def card(model: str, **changes) -> dict:
    doc = {"schema_version": 1, "model": model, "code_url": "https://github.com/phybench/phybench",
           "report_url": "https://arxiv.org/abs/2411.02385", "input": {"type": "frames", "condition_frames": 3},
           "sampling": {"sampler": "deterministic"}, "seeds": [0], "license": "Apache-2.0"}
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A three-sample uniform id-eval split and three baselines' submissions for it."""
    root = tmp_path_factory.mktemp("sync")
    plan = make_plan(get_task("uniform"), "id-eval", None, 3, None)
    split = root / "splits" / "uniform-id-eval"
    generate(plan, split, progress=False, command=canonical_command(plan))
    subs = {n: run_baseline(n, split, root / f"sub-{n}", progress=False)
            for n in ("linear-extrapolation", "copy-last", "physics-oracle")}
    return {"root": root, "splits": root / "splits", "split": split, "subs": subs}


@pytest.fixture(scope="module", autouse=True)
def board_key(tmp_path_factory):
    """The sync signs every record it writes (issue 36): a key pair of the tests' own, and the
    board's keyring is the repository's keys plus its public key (env_for passes both on)."""
    from phybench.leaderboard.verify.signing import REPO_KEYS, new_key_pair

    root = tmp_path_factory.mktemp("board-key")
    new_key_pair(root / "private.pem", root / "keys", note="tests/test_sync.py")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PHYBENCH_SIGNING_KEY", str(root / "private.pem"))
        mp.setenv("PHYBENCH_BOARD_KEYS", os.pathsep.join([str(REPO_KEYS), str(root / "keys")]))
        yield root


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


def env_for(hub, home: Path, token: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", PYTHONPATH=str(ROOT))
    if token:
        env["HF_TOKEN"] = token
    return env


def phybench(hub, home: Path, *args, token: str = READ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "phybench.cli", *map(str, args)], env=env_for(hub, home, token),
                          capture_output=True, text=True, timeout=600)


def api(hub, home: Path, code: str, token: str = WRITE, **values) -> dict:
    """Run huggingface_hub calls in a fresh process; `code` sets `result`."""
    script = ("import json\nfrom huggingface_hub import HfApi, CommitOperationAdd, CommitOperationDelete\n"
              f"globals().update(json.loads({json.dumps(json.dumps(values))}))\nresult = None\n"
              + textwrap.dedent(code) + "\nprint('@@' + json.dumps(result))\n")
    proc = subprocess.run([sys.executable, "-c", script], env=env_for(hub, home, token), capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.rsplit("@@", 1)[1])


RAW_PR = """
ops = [CommitOperationAdd(path, local) for path, local in files.items()]
info = HfApi().create_commit(repo, ops, commit_message="raw", repo_type="dataset", create_pr=True)
result = info.pr_num
"""


def raw_pr(hub, home, repo, files: dict[str, bytes]) -> int:
    """A pull request made without `phybench submit` (as a careless or hostile author would)."""
    staged = {}
    for i, (path, data) in enumerate(files.items()):
        local = home.parent / "staged" / f"{len(list(home.parent.glob('staged/*')))}-{i}"
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
        staged[path] = str(local)
    return api(hub, home, RAW_PR, token=READ, repo=repo, files=staged)


def zip_of(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def bot_comments(hub, repo, num) -> list[str]:
    """The sync's comments as readers see their text (the author's words in them are escaped, issue 36)."""
    import html

    return [html.unescape(e["data"]["latest"]["raw"]) for e in hub.discussion(repo, num).events
            if e["type"] == "comment" and e["author"]["name"] == "tester"]


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_sync_admits_the_valid_pr_refuses_the_others_and_a_second_sync_is_a_no_op(world, hub, tmp_path, board_key):
    repo, home = "tester/board", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    subs, split = world["subs"], world["split"]
    meta = json.loads((subs["copy-last"] / "submission.json").read_bytes())

    # 1-2. hostile: an archive with a path-traversal entry; a decompression bomb (100 MB of zeros)
    good_card = json.dumps(card("copy-last")).encode()
    traversal = zip_of({"submission.json": json.dumps(meta).encode(), "../../escape.txt": b"x"})
    hostile = raw_pr(hub, home, repo, {"submissions/copy-last/0123456789ab/submission.zip": traversal,
                                       "submissions/copy-last/0123456789ab/card.json": good_card})
    bomb = zip_of({"submission.json": json.dumps(meta).encode(), "videos/uniform/id-eval/bomb.npy": bytes(100 << 20)})
    bombed = raw_pr(hub, home, repo, {"submissions/copy-last/ba0ba0ba0ba0/submission.zip": bomb,
                                      "submissions/copy-last/ba0ba0ba0ba0/card.json": good_card})

    # 2. valid, through `phybench submit` with the read-only token
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "lin.json").write_text(json.dumps(card("linear-extrapolation")))
    out = phybench(hub, home, "submit", "--yes", subs["linear-extrapolation"], "--repo", repo, "--card", cards / "lin.json",
                   "--data", split)
    assert out.returncode == 0, out.stderr
    assert f"{hub.url}/datasets/{repo}/discussions/3" in out.stdout
    valid = 3

    # 3. invalid card: `phybench submit` refuses it in one line and uploads nothing ...
    (cards / "bad.json").write_text(json.dumps(card("copy-last", code_url="ftp://example.org/m", seeds=None)))
    before = len(hub.state.requests)
    out = phybench(hub, home, "submit", "--yes", subs["copy-last"], "--repo", repo, "--card", cards / "bad.json")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "[card-url]" in out.stderr and "'seeds' is a required property" in out.stderr
    assert not [r for r in hub.state.requests[before:] if r[0] != "GET"]  # nothing posted
    # ... so a careless author pushes it by hand; the sync refuses it the same way
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.submission.format import submission_hash

    h12 = submission_hash(subs["copy-last"])[:12]
    invalid = raw_pr(hub, home, repo, {f"submissions/copy-last/{h12}/submission.zip": pack_zip(subs["copy-last"]),
                                       f"submissions/copy-last/{h12}/card.json": (cards / "bad.json").read_bytes()})

    # 4. valid submission, forged claim: its own honest results with a better velocity error
    honest = tmp_path / "oracle.json"
    scored = phybench(hub, home, "score", subs["physics-oracle"], "--data", split, "--metrics", CHEAP, "--quiet",
                      "--out", honest)
    assert scored.returncode == 0, scored.stderr
    claim = json.loads(honest.read_bytes())
    true_mean = claim["summary"]["overall"]["velocity_error"]["mean"]
    claim["summary"]["overall"]["velocity_error"]["mean"] = true_mean / 10
    (tmp_path / "forged.json").write_text(json.dumps(claim))
    (cards / "oracle.json").write_text(json.dumps(card("physics-oracle")))
    out = phybench(hub, home, "submit", "--yes", subs["physics-oracle"], "--repo", repo, "--card", cards / "oracle.json",
                   "--results", tmp_path / "forged.json")
    assert out.returncode == 0, out.stderr
    forged = 5

    # 5. a valid folder that also rewrites a file outside it
    h12 = submission_hash(subs["copy-last"])[:12]
    outside = raw_pr(hub, home, repo, {f"submissions/copy-last/{h12}/submission.zip": pack_zip(subs["copy-last"]),
                                       f"submissions/copy-last/{h12}/card.json": json.dumps(card("copy-last")).encode(),
                                       ".gitattributes": b"* -text\n"})
    assert (hostile, bombed, invalid, outside) == (1, 2, 4, 6)

    results, site = tmp_path / "results", tmp_path / "site"
    sync_args = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results,
                 "--site", site, "--metrics", CHEAP]
    out = phybench(hub, home, *sync_args, token=WRITE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "6 open pull request(s): 1 admitted, 5 refused, 0 left open" in out.stdout

    # the valid one: its scored files committed onto main, the PR closed, results and a verification
    # record written, its row on the site
    assert hub.discussion(repo, valid).status == "closed"
    files = sorted((results / "hub").glob("*.json"))
    [path] = [p for p in files if not p.name.endswith((".samples.json", ".verified.json"))]
    assert path.name.startswith("uniform-id-eval-linear-extrapolation-")
    record = read_record(path)  # checks the record against the results bytes and submission hash
    assert record is not None and record.extra["pull_request"] == valid and "velocity_error" in record.recomputed
    from phybench.leaderboard.verify.signing import load_keyring, load_signer

    signed = read_record(path, load_keyring())  # signed by the sync's key (issue 36)
    assert signed is not None and signed.signed_by == load_signer(board_key / "private.pem").key_id
    doc = json.loads(path.read_bytes())
    assert doc["model"]["name"] == "linear-extrapolation"
    board = json.loads((site / "leaderboard.json").read_bytes())
    assert "linear-extrapolation" in {r["model"] for b in board["boards"] for r in b["rows"]}
    assert "linear-extrapolation" in (site / "index.html").read_text()
    main = hub.files(repo)
    assert any(p.startswith("submissions/linear-extrapolation/") and p.endswith("card.json") for p in main)
    assert not any(p.startswith(("submissions/copy-last/", "submissions/physics-oracle/")) for p in main)
    assert main[".gitattributes"] != b"* -text\n"
    [admitted] = bot_comments(hub, repo, valid)
    assert "admitted" in admitted and record.submission_hash in admitted

    # the others: closed, one comment each, listing the problems
    for num in (hostile, bombed, invalid, forged, outside):
        assert hub.discussion(repo, num).status == "closed", num
        assert len(bot_comments(hub, repo, num)) == 1, num
    [text] = bot_comments(hub, repo, hostile)
    assert "refused" in text and "[unsafe_path]" in text and "'../../escape.txt'" in text, text
    [text] = bot_comments(hub, repo, bombed)
    assert "[too_large]" in text and "decompression bomb" in text, text
    [text] = bot_comments(hub, repo, invalid)
    assert "[card-url]" in text and "seeds" in text, text
    [text] = bot_comments(hub, repo, forged)
    assert f"[claim-differs] summary.overall.velocity_error.mean: claimed {true_mean / 10}" in text, text
    assert text.count("[claim-differs]") == 1, text  # the one forged field, nothing else
    [text] = bot_comments(hub, repo, outside)
    assert "[intake-paths] '.gitattributes' is outside submissions/" in text, text

    # a second sync: nothing open, so no comment, no scoring, no byte changed
    events = {n: len(hub.discussion(repo, n).events) for n in range(1, 7)}
    before = tree_bytes(results)
    site_before = {p: (site / p).stat().st_mtime_ns for p in ("index.html", "leaderboard.json")}
    out = phybench(hub, home, *sync_args, token=WRITE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 open pull request(s)" in out.stdout and "nothing new" in out.stdout
    assert {n: len(hub.discussion(repo, n).events) for n in range(1, 7)} == events
    assert tree_bytes(results) == before
    assert {p: (site / p).stat().st_mtime_ns for p in site_before} == site_before


@pytest.mark.slow
def test_only_the_syncs_own_marker_counts(world, hub, tmp_path):
    """An author's comment forging the sync's marker is ignored; the sync's own marker on an open PR
    (a sync that stopped before closing or merging) is finished without a second comment."""
    repo, home = "tester/markers", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sub = world["subs"]["copy-last"]
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.submission.format import submission_hash

    h12 = submission_hash(sub)[:12]
    files = {f"submissions/copy-last/{h12}/submission.zip": pack_zip(sub),
             f"submissions/copy-last/{h12}/card.json": json.dumps(card("copy-last", license="not a licence")).encode()}
    forged, stopped = raw_pr(hub, home, repo, files), raw_pr(hub, home, repo, files)
    lin = world["subs"]["linear-extrapolation"]
    h12 = submission_hash(lin)[:12]
    admitted = raw_pr(hub, home, repo, {
        f"submissions/linear-extrapolation/{h12}/submission.zip": pack_zip(lin),
        f"submissions/linear-extrapolation/{h12}/card.json": json.dumps(card("linear-extrapolation")).encode()})
    mark = "<!-- phybench-sync head={head} outcome={outcome} -->"
    for num, token, outcome in ((forged, READ, "admitted"), (stopped, WRITE, "refused"), (admitted, WRITE, "admitted")):
        head = hub.discussion(repo, num).head
        api(hub, home, "HfApi().comment_discussion(repo, num, text, repo_type='dataset')", token=token, repo=repo,
            num=num, text=mark.format(head=head, outcome=outcome))
    events = len(hub.discussion(repo, stopped).events)
    out = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results",
                   tmp_path / "results", "--site", tmp_path / "site", "--metrics", CHEAP, token=WRITE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert hub.discussion(repo, forged).status == "closed"  # refused, not merged
    assert "[card-license]" in bot_comments(hub, repo, forged)[-1]
    assert hub.discussion(repo, stopped).status == "closed"
    assert len(hub.discussion(repo, stopped).events) == events + 1  # the status change only
    # marked "admitted" but not on main: re-scored (same bytes), committed, closed, not commented again
    assert hub.discussion(repo, admitted).status == "closed" and len(bot_comments(hub, repo, admitted)) == 1
    assert sum(p.startswith("submissions/linear-extrapolation/") for p in hub.files(repo)) == 2
    [path] = [p for p in (tmp_path / "results" / "hub").glob("*.json") if p.name.count(".") == 1]
    assert read_record(path).extra["pull_request"] == admitted


@pytest.mark.slow
def test_a_pr_that_breaks_the_sync_is_left_open_and_the_others_go_on(world, hub, tmp_path):
    """A failure that is not the author's (here: a file corrupted in transit, caught by its listed
    hash) leaves that PR open and uncommented for the next sync (exit 1); the next PR is still handled."""
    repo, home = "tester/errors", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    (tmp_path / "card.json").write_text(json.dumps(card("linear-extrapolation")))
    first = raw_pr(hub, home, repo, {"submissions/copy-last/0123456789ab/submission.zip": b"PK",
                                     "submissions/copy-last/0123456789ab/card.json": b"{}"})
    out = phybench(hub, home, "submit", "--yes", world["subs"]["linear-extrapolation"], "--repo", repo, "--card",
                   tmp_path / "card.json")
    assert out.returncode == 0, out.stderr
    hub.state.corrupt = ["*/0123456789ab/card.json"]  # served bytes differ from the listed blob: download fails
    try:
        out = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results",
                       tmp_path / "results", "--site", tmp_path / "site", "--metrics", CHEAP, token=WRITE)
    finally:
        hub.state.corrupt = []
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 admitted, 0 refused, 1 left open after an error" in out.stdout
    assert hub.discussion(repo, first).status == "open" and not bot_comments(hub, repo, first)
    assert hub.discussion(repo, 2).status == "closed" and "committed onto the board" in bot_comments(hub, repo, 2)[0]

    # another submission under the same model name on the same split: the board has one row per model
    again = tmp_path / "again"
    shutil.copytree(world["subs"]["copy-last"], again)
    meta = json.loads((again / "submission.json").read_bytes())
    meta["model"]["name"] = "linear-extrapolation"
    (again / "submission.json").write_text(json.dumps(meta))
    out = phybench(hub, home, "submit", "--yes", again, "--repo", repo, "--card", tmp_path / "card.json")
    assert out.returncode == 0, out.stderr
    out = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results",
                   tmp_path / "results", "--site", tmp_path / "site", "--metrics", CHEAP, token=WRITE)
    assert hub.discussion(repo, 3).status == "closed", out.stdout + out.stderr
    [text] = bot_comments(hub, repo, 3)
    assert "[intake-duplicate] model 'linear-extrapolation' already has a run with seeds [0] on uniform/id-eval" in text, text


@pytest.mark.slow
def test_the_same_videos_under_a_second_name_are_refused(world, hub, tmp_path):
    """Hostile (issue 36): the same videos under two model names (only model.name changed) were
    both admitted.  The second is refused with videos_reused (the signed records carry the
    videos-only hash), and the board keeps one row."""
    repo, home = "tester/videos", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sync = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", tmp_path / "results",
            "--site", tmp_path / "site", "--metrics", CHEAP]
    (tmp_path / "card.json").write_text(json.dumps(card("copy-last")))
    out = phybench(hub, home, "submit", "--yes", world["subs"]["copy-last"], "--repo", repo, "--card", tmp_path / "card.json")
    assert out.returncode == 0, out.stderr
    out = phybench(hub, home, *sync, token=WRITE)
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    renamed = tmp_path / "renamed"
    shutil.copytree(world["subs"]["copy-last"], renamed)
    meta = json.loads((renamed / "submission.json").read_bytes())
    meta["model"]["name"] = "copy-last-v2"
    (renamed / "submission.json").write_text(json.dumps(meta))
    (tmp_path / "card2.json").write_text(json.dumps(card("copy-last-v2")))
    out = phybench(hub, home, "submit", "--yes", renamed, "--repo", repo, "--card", tmp_path / "card2.json")
    assert out.returncode == 0, out.stderr
    out = phybench(hub, home, *sync, token=WRITE)
    assert hub.discussion(repo, 2).status == "closed", out.stdout + out.stderr
    [text] = bot_comments(hub, repo, 2)
    assert "[videos_reused] these videos" in text and "one set of videos, one row" in text, text
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    assert {r["model"] for b in board["boards"] for r in b["rows"]} == {"copy-last"}


MAIN_COMMIT = """
ops = [CommitOperationAdd(path, data.encode()) for path, data in files.items()]
result = HfApi().create_commit(repo, ops, commit_message="board files", repo_type="dataset").oid
"""


@pytest.mark.slow
def test_a_push_to_the_pr_while_it_is_scored_never_reaches_main(world, hub, tmp_path):
    """Hostile (issue 36): a second commit pushed to the PR 12 s into the sync replaced the scored
    submission.zip with other videos, rewrote the repo's README and deleted another model's card,
    and the merge took all three.  Now the sync pins the head it scores and commits exactly the
    scored files onto main itself (parent_commit = the main it read): main ends with exactly them.
    A change of main while scoring fails that commit instead: main ends with nothing of the PR."""
    from phybench.leaderboard.hub.intake import pack_zip

    repo, home = "tester/race", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    other_card = "submissions/other-model/0123456789ab/card.json"
    api(hub, home, MAIN_COMMIT, repo=repo, files={"README.md": "# the board\n", other_card: "{}"})
    main_before = hub.files(repo)
    (tmp_path / "card.json").write_text(json.dumps(card("linear-extrapolation")))
    out = phybench(hub, home, "submit", "--yes", world["subs"]["linear-extrapolation"], "--repo", repo, "--card",
                   tmp_path / "card.json")
    assert out.returncode == 0, out.stderr
    scored_head = hub.discussion(repo, 1).head
    pr_files = {p: b for p, b in hub.files(repo, scored_head).items() if p.startswith("submissions/linear")}
    [zip_path] = [p for p in pr_files if p.endswith(".zip")]
    other_videos = pack_zip(world["subs"]["physics-oracle"])
    pushed = []

    def push_once(repo_id, path):
        if repo_id == repo and path.startswith("submissions/") and not pushed:
            pushed.append(hub.state.push("dataset", repo, 1, {zip_path: other_videos, "README.md": b"# pwned\n",
                                                              other_card: None}, title="second commit"))

    hub.state.on_download = push_once
    sync = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", tmp_path / "results",
            "--site", tmp_path / "site", "--metrics", CHEAP]
    try:
        out = phybench(hub, home, *sync, token=WRITE)
    finally:
        hub.state.on_download = None
    assert pushed and hub.discussion(repo, 1).head == pushed[0], "the second commit was pushed mid-sync"
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    main_after = hub.files(repo)
    assert main_after == {**main_before, **pr_files}  # exactly the scored files; README and the other card kept
    assert main_after[zip_path] != other_videos and main_after["README.md"] == b"# the board\n"
    assert hub.discussion(repo, 1).status == "closed"
    [path] = [p for p in (tmp_path / "results" / "hub").glob("*.json") if p.name.count(".") == 1]
    assert read_record(path).extra["revision"] == scored_head

    # main moves while the next PR is scored: the admission commit fails, main holds nothing of it
    (tmp_path / "card2.json").write_text(json.dumps(card("copy-last")))
    out = phybench(hub, home, "submit", "--yes", world["subs"]["copy-last"], "--repo", repo, "--card", tmp_path / "card2.json")
    assert out.returncode == 0, out.stderr
    moved = []

    def move_main(repo_id, path):
        if repo_id == repo and path.startswith("submissions/copy-last") and not moved:
            with hub.state.lock:
                r = hub.state.repos[("dataset", repo)]
                head = r.commits[r.refs["main"]]
                files = {**head.files, "README.md": type(head.files["README.md"])(b"# edited by a maintainer\n", False)}
                sha = "f" * 40
                r.commits[sha] = type(head)(sha, head.sha, "maintainer edit", head.date, files)
                r.refs["main"] = sha
                moved.append(sha)

    hub.state.on_download = move_main
    try:
        out = phybench(hub, home, *sync, token=WRITE)
    finally:
        hub.state.on_download = None
    assert moved and out.returncode == 1 and "left open after an error" in out.stdout, out.stdout + out.stderr
    assert not any(p.startswith("submissions/copy-last") for p in hub.files(repo))
    assert hub.discussion(repo, 2).status == "open" and not bot_comments(hub, repo, 2)
    assert not list((tmp_path / "results" / "hub").glob("uniform-id-eval-copy-last-*"))  # no row without main
    out = phybench(hub, home, *sync, token=WRITE)  # the next sync admits it
    assert out.returncode == 0 and "1 admitted" in out.stdout, out.stdout + out.stderr
    assert sum(p.startswith("submissions/copy-last") for p in hub.files(repo)) == 2


@pytest.mark.slow
def test_the_sync_signs_or_does_not_start(world, hub, tmp_path, board_key):
    """Issue 36, item 1: without the maintainers' signing key (or with a key that is not an active
    key of the board's keyring) the sync stops before touching any pull request."""
    repo, home = "tester/unsigned", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    args = ["-m", "phybench.cli", "leaderboard", "sync", "--repo", repo, "--splits", str(world["splits"]),
            "--results", str(tmp_path / "results"), "--site", str(tmp_path / "site")]
    env = env_for(hub, home, WRITE)
    del env["PHYBENCH_SIGNING_KEY"]
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "no signing key" in out.stderr, out.stdout + out.stderr
    from phybench.leaderboard.verify.signing import new_key_pair

    new_key_pair(tmp_path / "stranger.pem", tmp_path / "elsewhere")
    env["PHYBENCH_SIGNING_KEY"] = str(tmp_path / "stranger.pem")
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "[verify-key]" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_one_sync_at_a_time_per_board(world, hub, tmp_path):
    """Issue 36: a second sync of the same board while one runs exits at once (sync_busy, exit 2)
    and posts nothing; a sync killed with SIGKILL leaves no lock behind (flock dies with it)."""
    import signal

    from phybench.leaderboard.hub.lock import LOCK_NAME, sync_lock

    repo, home, results = "tester/locked", tmp_path / "hf", tmp_path / "results"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    num = raw_pr(hub, home, repo, {"README.md": b"# taken over\n"})  # refused at once: outside submissions/
    args = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results,
            "--site", tmp_path / "site", "--metrics", CHEAP]
    results.mkdir()
    with sync_lock(results):  # a sync of this board is running
        out = phybench(hub, home, *args, token=WRITE)
    assert out.returncode == 2, out.stdout + out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("phybench leaderboard: error [sync_busy]: another `leaderboard sync` of this board is "
                           f"running (it holds {results / LOCK_NAME}); this one did nothing"), line
    assert hub.discussion(repo, num).status == "open" and bot_comments(hub, repo, num) == []
    assert not (tmp_path / "site").exists()

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path\n"
                               "from phybench.leaderboard.hub.lock import sync_lock\n"
                               "with sync_lock(Path(sys.argv[1])):\n print('held', flush=True); time.sleep(600)",
                               str(results)], stdout=subprocess.PIPE, text=True, env=env_for(hub, home, None))
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    holder.stdout.close()
    assert (results / LOCK_NAME).is_file()  # the file stays; the lock does not
    out = phybench(hub, home, *args, token=WRITE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert hub.discussion(repo, num).status == "closed" and len(bot_comments(hub, repo, num)) == 1


HOSTILE_NAME = "<img src=x onerror=alert(1)> [win](https://evil.example) @victim `rm` <!-- phybench-sync head=0 -->"


def raw_bot_comments(hub, repo, num) -> list[str]:
    return [e["data"]["latest"]["raw"] for e in hub.discussion(repo, num).events
            if e["type"] == "comment" and e["author"]["name"] == "tester"]


@pytest.mark.slow
def test_refusal_comments_are_escaped_and_bounded(world, hub, tmp_path):
    """Issue 36: a refusal quoting a hostile model name posts no HTML, Markdown link, @mention, code span
    or marker of the author's; a pull request of 10,000 files gets a comment of a few KB (it was 109 KB)
    listing 20 problems and a count, and the full list is written to the sync's work folder."""
    from phybench.leaderboard.hub.text import MAX_BODY_BYTES, WORK_DIR
    from phybench.leaderboard.hub.intake import pack_zip
    from phybench.submission.format import submission_hash

    repo, home, results = "tester/escaped", tmp_path / "hf", tmp_path / "results"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sub = world["subs"]["copy-last"]
    h12 = submission_hash(sub)[:12]
    named = raw_pr(hub, home, repo, {f"submissions/copy-last/{h12}/submission.zip": pack_zip(sub),
                                     f"submissions/copy-last/{h12}/card.json":
                                         json.dumps(card(HOSTILE_NAME)).encode()})
    junk = tmp_path / "junk"
    junk.mkdir()
    for i in range(10_000):
        (junk / f"{i:05d}.txt").write_bytes(b"x")
    many = api(hub, home, "from pathlib import Path\n"
               "ops = [CommitOperationAdd('junk/' + p.name, str(p)) for p in sorted(Path(folder).iterdir())]\n"
               "result = HfApi().create_commit(repo, ops, commit_message='many', repo_type='dataset', "
               "create_pr=True).pr_num", token=READ, repo=repo, folder=str(junk))
    out = phybench(hub, home, "leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results",
                   results, "--site", tmp_path / "site", "--metrics", CHEAP, token=WRITE)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]

    [text] = raw_bot_comments(hub, repo, named)
    assert "[card-mismatch]" in text, text
    body, marker = text.rsplit("\n", 1)
    assert marker == f"<!-- phybench-sync head={hub.discussion(repo, named).head} outcome=refused -->"
    assert "](" not in body and "<img" not in body and "@victim" not in body and "<!--" not in body, body
    quoted = body.split("Problems (1):", 1)[1].split("Fix them", 1)[0]
    assert not any(c in quoted.replace("[card-mismatch]", "") for c in "<>()@`"), quoted
    assert "&#60;img src=x onerror=alert&#40;1&#41;&#62; &#91;win&#93;&#40;https&#58;//evil.example&#41; " \
           "&#64;victim &#96;rm&#96;" in quoted, quoted
    import html

    assert HOSTILE_NAME[:80] in html.unescape(quoted)  # what readers see: the name as it was sent

    [text] = raw_bot_comments(hub, repo, many)
    assert len(text.encode()) < MAX_BODY_BYTES + 1024, len(text.encode())
    assert "Problems (10,000):" in text and "- ... and 9,980 more (the full list is in the sync's work folder" in text
    assert text.count("[intake-paths]") == 20
    head = hub.discussion(repo, many).head
    full = (results / WORK_DIR / f"refused-pr{many}-{head[:12]}.txt").read_text().splitlines()
    assert len(full) == 10_000 and full[-1].startswith("[intake-paths] 'junk/09999.txt' is outside")


SYNC_FLAGS = ["--repo", "--splits", "--results", "--site", "--metrics"]  # what the tests above pass
# ... and --publish, which tests/test_hub_board.py and tests/test_hub_pull.py pass (after a pull there)
HUB_COMMANDS = {"pull": ["--repo", "--results"], "publish": ["--repo", "--results"]}  # tests/test_hub_pull.py's


def test_the_workflow_runs_the_tested_commands():
    """.github/workflows/leaderboard.yml: scheduled and on demand, the Hub's admitted rows pulled into
    the results folder, then the sync command with the flags and metrics these tests run and
    --publish, a write token from the secrets, then GitHub Pages; nothing committed back to git."""
    import shlex

    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "leaderboard.yml").read_text())
    assert "schedule" in flow[True] and "workflow_dispatch" in flow[True]  # YAML 1.1 reads `on:` as True
    steps = [s for job in flow["jobs"].values() for s in job.get("steps", [])]
    runs = [s for s in steps if "phybench leaderboard sync" in s.get("run", "")]
    assert len(runs) == 1 and runs[0]["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"

    def command(step: dict, action: str) -> list[str]:
        line = next(x for x in step["run"].splitlines() if x.strip().startswith(f"phybench leaderboard {action}"))
        return shlex.split(line.replace('"$METRICS"', flow["env"]["METRICS"]))

    words = command(runs[0], "sync")
    assert words[:3] == ["phybench", "leaderboard", "sync"]
    assert [w for w in words if w.startswith("--")] == SYNC_FLAGS + ["--publish"]
    assert words[words.index("--metrics") + 1] == CHEAP
    for action, flags in HUB_COMMANDS.items():  # the pull before the sync; a publish retried after a failed one
        [step] = [s for s in steps if f"phybench leaderboard {action}" in s.get("run", "")]
        assert steps.index(step) < steps.index(runs[0]) if action == "pull" else steps.index(step) > steps.index(runs[0])
        got = command(step, action)
        assert [w for w in got if w.startswith("--")] == flags and step["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"
        assert all(got[got.index(f) + 1] == words[words.index(f) + 1] for f in flags)  # the same repo and folder
    assert not any("git push" in s.get("run", "") or "git commit" in s.get("run", "") for s in steps)
    assert flow["permissions"]["contents"] == "read"  # the admitted results live on the Hub, not in git
    builds = [x.strip() for s in steps for x in s.get("run", "").splitlines() if "phybench leaderboard build" in x]
    assert builds and all(b.endswith("--require-verified") for b in builds)  # the public board: verified rows only
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    install = next(s["run"] for s in steps if s.get("name", "").startswith("Install phybench"))
    assert "PIP_CONSTRAINT=$PWD/constraints.txt" in install and "pip install -e ." in install


HUB_PRS = """
from huggingface_hub import HfApi, CommitOperationAdd
from huggingface_hub.errors import HfHubHTTPError
w, r = HfApi(token=WRITE), HfApi(token=READ)
w.create_repo(repo, repo_type="dataset")
add = lambda path, data: [CommitOperationAdd(path, data)]
a = r.create_commit(repo, add("x.txt", b"a"), commit_message="A", commit_description="why", repo_type="dataset",
                    create_pr=True)
b = r.create_commit(repo, add("x.txt", b"b"), commit_message="B", repo_type="dataset", create_pr=True)
d = w.create_discussion(repo, "a question", description="?", repo_type="dataset")
result = {"urls": [a.pr_url, b.pr_url], "revisions": [a.pr_revision, b.pr_revision], "discussion": d.num}
listed = lambda **kw: [x.num for x in w.get_repo_discussions(repo, repo_type="dataset", **kw)]
result["open_prs"] = listed(discussion_type="pull_request", discussion_status="open")
result["all"] = listed()
details = w.get_discussion_details(repo, a.pr_num, repo_type="dataset")
result["details"] = [details.target_branch, details.author, [e.type for e in details.events], details.diff]
result["pr_file"] = open(__import__("huggingface_hub").hf_hub_download(
    repo, "x.txt", repo_type="dataset", revision=a.pr_revision)).read()
def status(fn):
    try:
        fn()
        return 200
    except HfHubHTTPError as exc:
        return exc.response.status_code
result["reader_merges"] = status(lambda: r.merge_pull_request(repo, a.pr_num, repo_type="dataset"))
result["reader_comments"] = status(lambda: r.comment_discussion(repo, a.pr_num, "hi", repo_type="dataset"))
result["author_pushes"] = status(lambda: r.create_commit(repo, add("y.txt", b"y"), commit_message="more",
                                                         repo_type="dataset", revision=a.pr_revision))
result["merge_a"] = status(lambda: w.merge_pull_request(repo, a.pr_num, comment="thanks", repo_type="dataset"))
result["merge_b"] = status(lambda: w.merge_pull_request(repo, b.pr_num, repo_type="dataset"))  # x.txt: conflict
result["b_conflicts"] = w.get_discussion_details(repo, b.pr_num, repo_type="dataset").conflicting_files
result["close_b"] = status(lambda: r.change_discussion_status(repo, b.pr_num, "closed", repo_type="dataset"))
result["push_closed"] = status(lambda: r.create_commit(repo, add("z.txt", b"z"), commit_message="late",
                                                        repo_type="dataset", revision=b.pr_revision))
merged = w.get_discussion_details(repo, a.pr_num, repo_type="dataset")
result["merged"] = [merged.status, merged.merge_commit_oid is not None]
result["main"] = sorted(w.list_repo_files(repo, repo_type="dataset"))
result["refs"] = [x.ref for x in w.list_repo_refs(repo, repo_type="dataset", include_pull_requests=True).pull_requests]
result["statuses"] = {n: w.get_discussion_details(repo, n, repo_type="dataset").status for n in (1, 2, 3)}
"""


@pytest.mark.slow
def test_the_local_hub_speaks_pull_requests_as_huggingface_hub_expects(hub, tmp_path):
    got = api(hub, tmp_path / "hf", HUB_PRS, repo="tester/prs", WRITE=WRITE, READ=READ)
    assert got["urls"] == [f"{hub.url}/datasets/tester/prs/discussions/{n}" for n in (1, 2)]
    assert got["revisions"] == ["refs/pr/1", "refs/pr/2"] and got["discussion"] == 3
    assert got["open_prs"] == [2, 1] and got["all"] == [3, 2, 1]  # newest first; discussions share numbers
    assert got["details"] == ["refs/heads/main", "reader", ["comment", "commit"], "diff --git a/x.txt b/x.txt\n"]
    assert got["pr_file"] == "a"
    assert (got["reader_merges"], got["reader_comments"], got["author_pushes"]) == (403, 200, 200)
    assert (got["merge_a"], got["merge_b"], got["b_conflicts"]) == (200, 409, ["x.txt"])
    assert (got["close_b"], got["push_closed"]) == (200, 403)  # an author may close their own PR
    assert got["merged"] == ["merged", True] and got["main"] == [".gitattributes", "x.txt", "y.txt"]
    assert got["refs"] == ["refs/pr/1", "refs/pr/2"]
    assert got["statuses"] == {"1": "merged", "2": "closed", "3": "open"}
    assert hub.files("tester/prs")["x.txt"] == b"a"


@pytest.mark.slow
def test_submit_uploads_an_archive_as_it_is_and_finds_the_card_beside_it(world, hub, tmp_path):
    import tarfile

    repo, home = "tester/archives", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sub = world["subs"]["copy-last"]
    archive = tmp_path / "mine.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(sub, arcname="copy-last")
    (tmp_path / "card.json").write_text(json.dumps(card("copy-last")))  # beside SUB: found without --card
    other = json.loads((ROOT / "leaderboard/results/fundamental/lite/uniform-id-eval-copy-last.json").read_bytes())
    (tmp_path / "other.json").write_text(json.dumps(other))  # another submission's results: not this one's claim
    out = phybench(hub, home, "submit", "--yes", archive, "--repo", repo, "--results", tmp_path / "other.json")
    assert out.returncode == 2 and "[claim]" in out.stderr and "was scored from submission" in out.stderr
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])  # truncated in half
    out = phybench(hub, home, "submit", "--yes", broken, "--repo", repo)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not" in out.stderr, out.stderr
    assert not hub.state.repos[("dataset", repo)].discussions  # nothing opened
    out = phybench(hub, home, "submit", "--yes", archive, "--repo", repo)
    assert out.returncode == 0, out.stderr
    from phybench.submission.format import submission_hash

    folder = f"submissions/copy-last/{submission_hash(sub)[:12]}"
    files = {p: d for p, d in hub.files(repo, "refs/pr/1").items() if p.startswith("submissions/")}
    assert sorted(files) == [f"{folder}/card.json", f"{folder}/submission.tar.gz"]
    assert files[f"{folder}/submission.tar.gz"] == archive.read_bytes()
    assert json.loads(files[f"{folder}/card.json"]) == card("copy-last")
    assert hub.discussion(repo, 1).author == "reader" and hub.discussion(repo, 1).status == "open"
    out = phybench(hub, home, "submit", "--yes", archive, "--repo", "tester/absent")
    assert out.returncode == 2 and "no dataset repo tester/absent" in out.stderr, out.stderr


@pytest.mark.slow  # a whole loop over real HTTP (the local Hub): the slow tier, docs/testing.md
def test_card_init_then_submit_without_a_token_says_log_in_and_with_one_opens_the_pr(world, hub, tmp_path):
    """Issue 37 item 6: `card init` prefills a card from submission.json (never overwriting; an unfinished
    template is refused by the card check); `submit` with no token says how to log in, nothing uploaded."""
    repo, home = "tester/first-author", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    sub = tmp_path / "runs" / "m" / "uniform-id-eval" / "submission"
    shutil.copytree(world["subs"]["linear-extrapolation"], sub)
    out = phybench(hub, home, "card", "init", sub)
    assert out.returncode == 0, out.stderr
    path = sub.parent / "card.json"
    template = json.loads(path.read_text())
    meta = json.loads((sub / "submission.json").read_text())
    assert template["model"] == meta["model"]["name"] and template["seeds"] == meta["seeds"]
    assert template["input"] == {"type": "frames", "condition_frames": meta["condition_frames"]}
    assert template["sampling"] == meta["sampler"] and template["license"] == "EDIT-ME"
    assert "[card-license]" in out.stdout and "[card-url]" in out.stdout  # what is left to fill in
    out = phybench(hub, home, "submit", "--yes", sub, "--repo", repo)  # the unfinished template is refused
    assert out.returncode == 2 and "placeholder" in out.stderr, out.stderr
    before = path.read_bytes()
    out = phybench(hub, home, "card", "init", sub, "--license", "MIT")
    assert out.returncode == 2 and "[out_exists]" in out.stderr and path.read_bytes() == before
    path.unlink()
    out = phybench(hub, home, "card", "init", sub, "--code-url", "https://github.com/me/m", "--license", "MIT")
    assert out.returncode == 0 and "passes the card check" in out.stdout, out.stdout
    out = phybench(hub, home, "submit", "--yes", sub, "--repo", repo, token=None)
    assert out.returncode == 2 and "[hub_auth]" in out.stderr and "hf auth login" in out.stderr, out.stderr
    assert "HF_TOKEN" in out.stderr and "401" not in out.stderr and out.stderr.count("\n") == 1
    out = phybench(hub, home, "submit", "--yes", sub, "--repo", repo, token="hf_not_a_token")
    assert out.returncode == 2 and "did not accept your token" in out.stderr and "hf auth login" in out.stderr
    assert not hub.state.repos[("dataset", repo)].discussions  # nothing opened
    out = phybench(hub, home, "submit", "--yes", sub, "--repo", repo)
    assert out.returncode == 0 and "opened" in out.stdout, out.stderr
    files = hub.files(repo, "refs/pr/1")
    card_file = next(d for p, d in files.items() if p.endswith("/card.json"))
    assert json.loads(card_file)["code_url"] == "https://github.com/me/m"


def test_submit_help_example_path_is_where_run_writes_the_submission():
    from phybench.cli.submit import EXAMPLES

    assert "runs/m/uniform-id-eval/submission" in EXAMPLES["submit"] and "runs/m/submissions/" not in EXAMPLES["submit"]

"""`phybench submit --eval-results DIR` (issue 36 item 8): the author's pull request and, beside it,
the Hub's `.eval_results/` file for their model repository, made from the same claim.

Against the local Hub (tests/hubserver.py, real HTTP), each command a fresh process as in
tests/test_sync.py.  What is checked: the file is written, read back and passes the packaged
schema, its values are the claim's whole-split numbers under the board's task ids, its source is
the pull request; and every bad input (no claim, a claim the format cannot carry, a path in the
way, a Hub that says no) leaves no pull request and nothing new or changed under DIR."""
import json
import sys
from pathlib import Path

import pytest

from phybench.cli.data import canonical_command
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.leaderboard.hub.eval_results import load_yaml, validate_eval_results
from phybench.reference import run_baseline
from phybench.tasks import get_task

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402
from test_sync import CHEAP, api, card, phybench  # noqa: E402

pytestmark = pytest.mark.slow
REPO = "tester/board"
NAME = "phybench-uniform-id-eval.yaml"


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture(scope="module")
def scored(tmp_path_factory, hub):
    """A two-sample uniform id-eval split, copy-last's submission for it, its card and its own
    results (the claim), and the board's dataset repo on the local Hub."""
    root = tmp_path_factory.mktemp("submit-eval")
    plan = make_plan(get_task("uniform"), "id-eval", None, 2, None)
    split = root / "uniform-id-eval"
    generate(plan, split, progress=False, command=canonical_command(plan))
    sub = run_baseline("copy-last", split, root / "sub", progress=False)
    (root / "card.json").write_text(json.dumps(card("copy-last")))
    claim = root / "results.json"
    out = phybench(hub, root / "hf", "score", sub, "--data", split, "--metrics", CHEAP, "--quiet", "--out", claim)
    assert out.returncode == 0, out.stderr
    api(hub, root / "hf", "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=REPO)
    return {"root": root, "sub": sub, "card": root / "card.json", "claim": claim}


def submit(hub, scored, *extra, repo=REPO):
    return phybench(hub, scored["root"] / "hf", "submit", "--yes", scored["sub"], "--repo", repo, "--card", scored["card"],
                    *extra)


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` (folders as None), to show that a refusal changed nothing."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))} if folder.exists() else {}


def open_prs(hub) -> int:
    return len(hub.state.repos[("dataset", REPO)].discussions)


def test_submit_writes_the_eval_results_file_of_the_claim(hub, scored, tmp_path):
    model_repo = tmp_path / "my-model"
    out = submit(hub, scored, "--results", scored["claim"], "--eval-results", model_repo)
    assert out.returncode == 0, out.stderr
    pr_url = next(w for w in out.stdout.split() if "/discussions/" in w)
    path = model_repo / ".eval_results" / NAME
    assert sorted(p.name for p in (model_repo / ".eval_results").iterdir()) == [NAME]
    assert f"wrote {path}" in out.stdout
    entries = load_yaml(path)
    validate_eval_results(entries)  # what the test read back, not what the writer meant
    claim = json.loads(scored["claim"].read_bytes())
    overall = claim["summary"]["overall"]
    expected = {f"uniform/id-eval/{m}": overall[m]["mean"] for m in claim["metrics"]
                if isinstance(overall.get(m, {}).get("mean"), float)}
    assert {"uniform/id-eval/velocity_error", "uniform/id-eval/ssim"} <= set(expected)
    assert {e["dataset"]["task_id"]: e["value"] for e in entries} == expected
    for e in entries:
        assert e["dataset"]["id"] == REPO  # the benchmark is the board's dataset repo
        assert e["source"]["url"] == pr_url  # where the board answers about these numbers
        assert "copy-last" in e["notes"] and claim["provenance"]["submission_hash"][:12] in e["notes"]
    assert "date" not in entries[0]  # no verification record yet: the board has not checked them
    # the pull request holds the claim the file was made from
    files = hub.files(REPO, f"refs/pr/{open_prs(hub)}")
    assert next(d for p, d in files.items() if p.endswith("/results.json")) == scored["claim"].read_bytes()


def test_bad_inputs_leave_no_pull_request_and_nothing_written(hub, scored, tmp_path):
    model_repo = tmp_path / "my-model"
    (model_repo / ".eval_results").mkdir(parents=True)
    (model_repo / ".eval_results" / "other-benchmark.yaml").write_text("- keep: me\n")
    (model_repo / "README.md").write_text("a model card\n")
    before, prs = tree(model_repo), open_prs(hub)
    claim = json.loads(scored["claim"].read_bytes())
    no_values = json.loads(json.dumps(claim))
    for entry in no_values["summary"]["overall"].values():  # every whole-split number gone
        if isinstance(entry, dict):
            entry.pop("mean", None), entry.pop("value", None)
    (tmp_path / "no-values.json").write_text(json.dumps(no_values))
    odd = json.loads(json.dumps(claim))
    odd["task"] = "../uniform"  # it would be part of a file name
    (tmp_path / "odd.json").write_text(json.dumps(odd))
    cases = [
        ((), "eval_results_needs_results"),
        (("--results", tmp_path / "no-values.json"), "eval_results_empty"),
        (("--results", tmp_path / "odd.json"), "results_names"),
    ]
    for extra, code in cases:
        out = submit(hub, scored, *extra, "--eval-results", model_repo)
        assert out.returncode == 2 and f"[{code}]" in out.stderr and "nothing uploaded" in out.stderr, out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
        assert tree(model_repo) == before and open_prs(hub) == prs
    # a path in the way is found before the upload, not after the pull request is open
    (model_repo / ".eval_results" / NAME).mkdir()
    out = submit(hub, scored, "--results", scored["claim"], "--eval-results", model_repo)
    assert out.returncode == 2 and "[eval_results_out]" in out.stderr, out.stderr
    (model_repo / ".eval_results" / NAME).rmdir()
    (tmp_path / "a-file").write_text("x")
    out = submit(hub, scored, "--results", scored["claim"], "--eval-results", tmp_path / "a-file")
    assert out.returncode == 2 and "[eval_results_out]" in out.stderr, out.stderr
    assert tree(model_repo) == before and open_prs(hub) == prs
    # the Hub says no (no such repo): nothing is written either
    fresh = tmp_path / "fresh"
    out = submit(hub, scored, "--results", scored["claim"], "--eval-results", fresh, repo="tester/absent")
    assert out.returncode == 2 and "no dataset repo tester/absent" in out.stderr, out.stderr
    assert not fresh.exists()


def test_write_files_is_all_or_nothing(tmp_path):
    """`phybench export --eval-results` of several files: one that cannot be written leaves none."""
    from phybench.leaderboard.hub.eval_results import write_files

    (tmp_path / ".eval_results" / "b.yaml").mkdir(parents=True)  # a folder where the second file goes
    with pytest.raises(OSError):
        write_files({".eval_results/a.yaml": b"- a\n", ".eval_results/b.yaml": b"- b\n"}, tmp_path)
    assert sorted(p.name for p in (tmp_path / ".eval_results").iterdir()) == ["b.yaml"]
    written = write_files({".eval_results/a.yaml": b"- a\n"}, tmp_path / "new")
    assert written == [tmp_path / "new" / ".eval_results" / "a.yaml"] and written[0].read_bytes() == b"- a\n"

"""`phybench submit` protects its author (issue 49): a split that is no official protocol's needs --yes,
and a submission already open or admitted on the board (same submission hash) is refused, naming the
pull request.  Against the local Hub (tests/hubserver.py, real HTTP), each command a fresh process."""
import json
import sys
from pathlib import Path

import pytest

from phybench.cli.data import canonical_command
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.reference import run_baseline
from phybench.tasks import get_task

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402
from test_sync import WRITE, api, card, phybench  # noqa: E402

pytestmark = pytest.mark.slow
REPO = "tester/protect"
ADMIT = """
ops = [CommitOperationAdd(path, data.encode("latin-1")) for path, data in files.items()]
HfApi().create_commit(repo, ops, commit_message="Admit pull request #1", repo_type="dataset")
HfApi().change_discussion_status(repo, 1, "closed", repo_type="dataset")
result = 1
"""


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture(scope="module")
def sub(tmp_path_factory):
    """copy-last's submission for a 3-video uniform id-eval split (a debugging subset), and its card."""
    root = tmp_path_factory.mktemp("protect")
    plan = make_plan(get_task("uniform"), "id-eval", None, 3, None)
    generate(plan, root / "split", progress=False, command=canonical_command(plan))
    out = run_baseline("copy-last", root / "split", root / "sub", progress=False)
    (root / "card.json").write_text(json.dumps(card("copy-last")))
    return root, out


def prs(hub) -> int:
    return len(hub.state.repos[("dataset", REPO)].discussions)


def test_a_debugging_split_needs_yes_and_a_duplicate_is_refused(hub, sub):
    root, path = sub
    home = root / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=REPO)
    submit = ["submit", path, "--repo", REPO, "--card", root / "card.json"]

    out = phybench(hub, home, *submit)
    assert out.returncode == 2 and "[split_not_official]" in out.stderr and "--yes" in out.stderr, out.stderr
    assert "3 video(s)" in out.stderr and "limit 3" in out.stderr and prs(hub) == 0

    out = phybench(hub, home, *submit, "--yes")
    assert out.returncode == 0, out.stderr
    assert "warning:" in out.stderr and "not an official protocol" in out.stderr and prs(hub) == 1

    out = phybench(hub, home, *submit, "--yes")  # sent twice: the first pull request is still open
    assert out.returncode == 2 and "[duplicate_submission]" in out.stderr, out.stderr
    assert "already open as pull request #1" in out.stderr and "/discussions/1" in out.stderr and prs(hub) == 1

    # admitted: its folder on main, its pull request closed (as the sync leaves it)
    pr_files = {p: b.decode("latin-1") for p, b in hub.files(REPO, hub.discussion(REPO, 1).head).items()
                if p.startswith("submissions/")}
    api(hub, home, ADMIT, token=WRITE, repo=REPO, files=pr_files)
    out = phybench(hub, home, *submit, "--yes")
    assert out.returncode == 2 and "is already on the board" in out.stderr, out.stderr
    assert "pull request #1" in out.stderr and prs(hub) == 1

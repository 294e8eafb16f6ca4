"""The command line: happy paths and every error path gives one clear line, exit 2."""
import json
import re

import pytest

from phybench.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tasks_table(capsys):
    code, out, _ = run(capsys, "tasks")
    assert code == 0
    for name in ("uniform", "collision", "parabola"):
        assert name in out
    assert "r1+r2" in out


def test_tasks_show(capsys):
    code, out, _ = run(capsys, "tasks", "show", "collision")
    assert code == 0 and "radius_1" in out and "train-3m" in out and "spec hash" in out
    code, out, _ = run(capsys, "tasks", "show", "uniform", "--json")
    assert json.loads(out)["name"] == "uniform"


def test_generate_then_verify(tmp_path, capsys):
    out_dir = tmp_path / "u"
    code, out, err = run(capsys, "generate", "uniform", "--split", "ood-eval", "--out", str(out_dir), "--limit", "6", "--quiet")
    assert code == 0, err
    assert "split hash" in out
    code, out, _ = run(capsys, "verify", str(out_dir), "--quiet")
    assert code == 0 and "OK" in out
    # second run reuses everything
    code, out, _ = run(capsys, "generate", "uniform", "--split", "ood-eval", "--out", str(out_dir), "--limit", "6", "--quiet")
    assert code == 0 and "wrote 0 shard(s)" in out


def test_verify_json_and_failure_exit_code(tmp_path, capsys):
    out_dir = tmp_path / "u"
    run(capsys, "generate", "parabola", "--split", "id-eval", "--out", str(out_dir), "--limit", "3", "--quiet")
    manifest = json.loads((out_dir / "manifest.json").read_text())
    manifest["split_hash"] = "0" * 64
    (out_dir / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = run(capsys, "verify", str(out_dir), "--json")
    assert code == 1
    got = json.loads(out)
    assert got["ok"] is False
    # "problems" stays a list of messages; "problem_details" gives each one's code (docs/submission.md)
    assert got["problems"] == [d["message"] for d in got["problem_details"]]
    assert [d["code"] for d in got["problem_details"]] == ["split_hash"]
    assert got["problems"][0].startswith("split hash: manifest 0000")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["generate", "unifrom", "--split", "id-eval", "--out", "{tmp}/x"], "did you mean 'uniform'"),
        (["generate", "uniform", "--split", "test", "--out", "{tmp}/x"], "no split 'test'"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/x", "--resolution", "64"], "resolution 64"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/x", "--limit", "-3"], "--limit"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/x", "--workers", "0"], "--workers"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/x", "--shard", "3/2"], "--shard"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/x", "--shard-size", "0"], "shard size"),
        (["generate", "uniform", "--split", "id-eval", "--out", "{tmp}/file.txt"], "not a folder"),
        (["verify", "{tmp}/nothing"], "is not a folder"),
        (["verify", "{tmp}"], "not a phybench split"),
        (["tasks", "show"], "needs a task name"),
        (["tasks", "show", "parabol"], "did you mean 'parabola'"),
        (["tasks", "uniform"], "invalid choice"),
    ],
)
def test_error_paths(tmp_path, capsys, argv, message):
    (tmp_path / "file.txt").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    _, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_mixing_is_refused(tmp_path, capsys):
    out_dir = str(tmp_path / "m")
    run(capsys, "generate", "uniform", "--split", "id-eval", "--out", out_dir, "--limit", "2", "--quiet")
    code, _, err = run(capsys, "generate", "collision", "--split", "id-eval", "--out", out_dir, "--limit", "2", "--quiet")
    assert code == 2 and "refusing to mix" in err


def test_help_ends_with_examples(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    out, _ = capsys.readouterr()
    assert "examples:" in out and "phybench generate uniform" in out


@pytest.mark.slow
def test_quickstart_runs_the_whole_loop_and_reuses_it(tmp_path, capsys):
    out = tmp_path / "qs"
    code, text, err = run(capsys, "quickstart", "--out", str(out), "--limit", "4", "--train-limit", "200")
    assert code == 0, err
    assert (out / "site" / "index.html").is_file() and (out / "site" / "leaderboard.md").is_file()
    results = sorted(p.name for p in (out / "results").glob("*.json") if not p.name.endswith(".samples.json"))
    for task in ("uniform", "parabola", "collision"):  # per family: one with a quickstart of its own adds files
        assert len([n for n in results if n.startswith(f"{task}-")]) == 2 * 5, task  # splits x baselines
    md = (out / "site" / "leaderboard.md").read_text()
    assert "physics-oracle" in md and "nearest-neighbour" in md and "## collision" in md
    assert "leaderboard.md" in text
    # the ranked column, rounded as the board shows it (issue 49: not a plain mean to 8 figures)
    scored = re.findall(r"^  \w+/[\w-]+ [\w-]+: ranked velocity error (\S+) ", text, re.M)
    from phybench.leaderboard.common.format import fmt  # rounded as the board shows it (>= 100: one decimal)
    assert len(scored) == 30 and all(x == fmt(float(x)) for x in scored)
    # every row links its viewer (issue 49): the board built one per results file
    board = json.loads((out / "site" / "leaderboard.json").read_text())
    for b in board["boards"]:
        for row in b["rows"]:
            assert len(row.get("viewers", [])) == 2, row["model"]
            assert all((out / "site" / v["href"]).is_file() for v in row["viewers"])
    code, text, _ = run(capsys, "quickstart", "--out", str(out), "--limit", "4", "--train-limit", "200")
    assert code == 0 and text.count("reused") >= 30
    # a site folder that is not a phybench site (an older one, or the user's): refused up front, one line
    (out / "site" / ".phybench-site").unlink()
    before = sorted(p.name for p in (out / "site").iterdir())
    code, text, err = run(capsys, "quickstart", "--out", str(out), "--limit", "4", "--train-limit", "200")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "error [leaderboard]" in err and "move that folder away" in err and "[1/4]" not in text
    assert sorted(p.name for p in (out / "site").iterdir()) == before

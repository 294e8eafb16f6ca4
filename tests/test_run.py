"""`phybench run`: a model class answers splits, resumes, and its results build a leaderboard."""
from __future__ import annotations

import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.tasks import get_task


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    out = []
    for split in ("id-eval", "ood-eval"):
        generate(make_plan(get_task("uniform"), split, limit=3), root / split, progress=False)
        out.append(str(root / split))
    return out


def test_example_model_runs_resumes_and_builds_a_board(splits, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "--model", "phybench.examples.shift:Model", "--model-args", "damping=1.0", "--data", *splits,
            "--out", str(out), "--metrics", "velocity_error,ssim,psnr", "--quiet", "--no-reference"]
    assert main(args) == 0
    results = sorted(p for p in (out / "results").glob("*.json") if not p.name.endswith(".samples.json"))
    assert [p.name for p in results] == ["uniform-id-eval-shift.json", "uniform-ood-eval-shift.json"]
    first = results[0].read_bytes()
    doc = json.loads(first)
    assert doc["model"]["name"] == "shift" and doc["summary"]["overall"]["videos"] == 3
    # uniform motion is a pure shift: the example model tracks the ball to within a few pixels
    assert doc["summary"]["overall"]["velocity_error_penalised"]["mean"] < 1.0
    # a re-run resumes: nothing is generated again, the results are the same bytes
    assert len(list((out / "uniform-id-eval" / "generated").rglob("*.npy"))) == 3  # one file per video
    assert main(args) == 0
    assert results[0].read_bytes() == first
    assert main(["leaderboard", "build", str(out / "results"), "--out", str(tmp_path / "site")]) == 0


def test_bad_model_spec_is_explained(splits, tmp_path, capsys):
    assert main(["run", "--model", "nope", "--data", splits[0], "--out", str(tmp_path / "x")]) != 0
    assert "MODULE:CLASS" in capsys.readouterr().err


class Broken:
    def generate(self, condition, num_frames):
        return np.zeros((len(condition), num_frames, 8, 8, 3), np.float32)


def test_wrong_output_is_refused(splits, tmp_path, capsys):
    assert main(["run", "--model", "test_run:Broken", "--data", splits[0], "--out", str(tmp_path / "x")]) != 0
    assert "expected uint8" in capsys.readouterr().err


def test_tasks_on_a_protocol_from_nothing_to_a_site(tmp_path, monkeypatch):
    """--tasks/--protocol generates the protocol's splits, then runs, scores and builds the site."""
    from phybench.tasks import family_of

    monkeypatch.setattr(type(family_of(get_task("uniform"))), "lite_size", 3)  # a 3-sample lite protocol
    out = tmp_path / "run"
    args = ["run", "--model", "phybench.examples.shift:Model", "--tasks", "uniform", "--protocol", "lite",
            "--out", str(out), "--metrics", "velocity_error", "--site", str(tmp_path / "site"), "--quiet",
            "--no-reference"]  # the reference rows beside it: tests/test_run_loop.py
    assert main(args) == 0
    manifests = [json.loads((out / "data" / f"uniform-{s}" / "manifest.json").read_text()) for s in ("id-eval", "ood-eval")]
    assert [m["num_samples"] for m in manifests] == [3, 3]
    results = json.loads((out / "results" / "uniform-id-eval-shift.json").read_text())
    assert results["provenance"]["protocol"] == "lite"  # recorded, not only derivable
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["boards"][0]
    assert board["protocols"] == ["lite"] and board["rows"][0]["model"] == "shift"


@pytest.mark.slow
def test_sharded_run_gives_the_same_bytes(splits, tmp_path):
    """Two processes (RANK 0 and 1 of WORLD_SIZE 2, as accelerate launch sets them) = one process."""
    import os
    import subprocess
    import sys

    base = ["-m", "phybench.cli", "run", "--model", "phybench.examples.shift:Model", "--data", splits[0],
            "--metrics", "velocity_error,ssim,psnr", "--batch-size", "1", "--quiet"]
    assert main(base[2:] + ["--out", str(tmp_path / "one")]) == 0
    procs = [subprocess.Popen([sys.executable, *base, "--out", str(tmp_path / "two")],
                              env={**os.environ, "RANK": str(r), "WORLD_SIZE": "2"}) for r in (1, 0)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    name = "uniform-id-eval-shift.json"
    assert (tmp_path / "two" / "results" / name).read_bytes() == (tmp_path / "one" / "results" / name).read_bytes()


def test_a_reference_baseline_runs_through_the_runner(splits, tmp_path):
    """--model baseline:copy-last scores the same as `phybench baseline copy-last` then `score`."""
    assert main(["run", "--model", "baseline:copy-last", "--data", splits[0], "--out", str(tmp_path / "r"),
                 "--metrics", "velocity_error,ssim,psnr", "--quiet"]) == 0
    assert main(["baseline", "copy-last", "--data", splits[0], "--out", str(tmp_path / "sub"), "--quiet"]) == 0
    assert main(["score", str(tmp_path / "sub"), "--data", splits[0], "--metrics", "velocity_error,ssim,psnr",
                 "--out", str(tmp_path / "direct.json")]) == 0
    via_run = json.loads((tmp_path / "r" / "results" / "uniform-id-eval-copy-last.json").read_text())
    direct = json.loads((tmp_path / "direct.json").read_text())
    assert via_run["summary"] == direct["summary"] and via_run["model"]["name"] == "copy-last"
    assert (tmp_path / "r" / "results" / "uniform-id-eval-copy-last.samples.json").is_file()


def test_bad_rank_is_explained(splits, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["run", "--model", "phybench.examples.shift:Model", "--data", splits[0], "--out", str(tmp_path / "x")]) == 2
    assert "RANK=2 is not in [0, WORLD_SIZE=2)" in capsys.readouterr().err


def test_limit_is_a_smoke_test_on_the_first_n_samples_labelled_as_such(tmp_path, capsys):
    """`run --tasks T --limit N` (issue 37 item 6): N-sample splits of their own, results that say
    'limit N' (not an official protocol), and --limit refused where it cannot mean that."""
    out = tmp_path / "smoke"
    args = ["run", "--model", "phybench.examples.shift:Model", "--tasks", "uniform", "--limit", "2",
            "--out", str(out), "--metrics", "velocity_error", "--no-reference", "--quiet"]
    assert main(args) == 0
    assert "--limit 2 is a smoke test" in capsys.readouterr().err
    for split in ("id-eval", "ood-eval"):
        manifest = json.loads((out / "data" / f"uniform-{split}-limit2" / "manifest.json").read_text())
        full = make_plan(get_task("uniform"), split)
        assert manifest["num_samples"] == 2 and manifest["command"].endswith("--limit 2")
        results = json.loads((out / "results" / f"uniform-{split}-shift.json").read_text())
        assert results["summary"]["overall"]["videos"] == 2
        assert results["provenance"]["protocol"] == "limit 2" and full.num_samples > 2
    assert main(["leaderboard", "build", str(out / "results"), "--out", str(tmp_path / "site")]) == 0
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["boards"][0]
    assert board["protocols"] == ["limit 2"]  # the board keeps it apart from lite and full
    capsys.readouterr()
    for extra, words in ((["--protocol", "lite"], "not both"), (["--limit", "0"], "positive")):
        assert main([*args[:-1], *extra]) == 2 and words in capsys.readouterr().err
    assert main(["run", "--model", "phybench.examples.shift:Model", "--data", str(out / "data" / "uniform-id-eval-limit2"),
                 "--limit", "2", "--out", str(tmp_path / "x")]) == 2
    assert "goes with --tasks" in capsys.readouterr().err


class ConstVel:
    def generate(self, condition, num_frames):
        return np.repeat(condition[:, -1:], num_frames, axis=1)


class ConstAcc(ConstVel):
    pass


class Carded(ConstVel):
    def __init__(self, card=None):
        self.card = card if card is not None else {"model": {"name": "my-model", "family": "x"}, "sampler": {"steps": 4},
                                                   "seeds": [3]}

    def submission_card(self):
        return self.card


def test_default_name_is_the_class_or_the_models_card():
    """Two classes in one file get two names (the module's name made both "test_run"); the template's
    generic `Model` keeps its module's name; a model's own card names it first."""
    from phybench.pipeline import RunError, default_model_name, model_card

    assert default_model_name("test_run:ConstVel", ConstVel()) == "ConstVel"
    assert default_model_name("test_run:ConstAcc", ConstAcc()) == "ConstAcc"
    assert default_model_name("phybench.examples.shift:Model", ConstVel()) == "shift"
    assert default_model_name("path/to/mine.py:Model", ConstVel()) == "mine"
    assert default_model_name("test_run:Carded", Carded()) == "my-model"
    assert model_card(ConstVel()) == {}
    for bad in ({"model": "x"}, {"other": {}}, {"seeds": ["1"]}, []):
        with pytest.raises(RunError, match="submission_card"):
            model_card(Carded(bad))


def test_run_writes_the_models_card(splits, tmp_path):
    from phybench.pipeline import run

    run(Carded(), "my-model", [splits[0]], tmp_path / "r", metrics=["velocity_error"], progress=False)
    meta = json.loads(next((tmp_path / "r").glob("*/submission/submission.json")).read_text())
    assert meta["model"] == {"name": "my-model", "family": "x"} and meta["sampler"] == {"steps": 4} and meta["seeds"] == [3]

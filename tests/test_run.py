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


def test_example_model_runs_resumes_and_builds_a_board(splits, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parent.parent)  # examples/ from the repo root
    out = tmp_path / "run"
    args = ["run", "--model", "examples.shift:Model", "--model-args", "damping=1.0", "--data", *splits,
            "--out", str(out), "--metrics", "velocity_error,ssim,psnr", "--quiet"]
    assert main(args) == 0
    results = sorted((out / "results").glob("*.json"))
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

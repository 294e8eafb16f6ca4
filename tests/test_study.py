"""`phybench study scaling`: a tiny grid end to end, resumable, and drawn by the leaderboard."""
from __future__ import annotations

import json

import pytest

from phybench.cli import main

ARGS = ["study", "scaling", "--task", "uniform", "--sizes", "XS", "--train-sets", "8,16", "--steps", "2",
        "--eval-samples", "3", "--sample-steps", "2", "--batch-size", "4", "--quiet"]


@pytest.mark.slow
def test_a_tiny_scaling_study_runs_resumes_and_is_plotted(tmp_path, capsys):
    out = tmp_path / "study"
    assert main(ARGS + ["--out", str(out)]) == 0
    files = sorted(p for p in (out / "results").glob("*.json") if not p.name.endswith(".samples.json"))
    assert [p.name for p in files] == ["uniform-id-eval-dit-XS-16.json", "uniform-id-eval-dit-XS-8.json",
                                       "uniform-ood-eval-dit-XS-16.json", "uniform-ood-eval-dit-XS-8.json"]
    for p in files:
        model = json.loads(p.read_text())["model"]
        assert model["family"] == "dit" and model["size"] == "XS" and model["params"] > 0
        assert model["train_size"] == int(p.stem.rsplit("-", 1)[1])
    config = json.loads((out / "runs" / "dit-XS-8" / "config.json").read_text())
    assert config["depth"] == 2 and config["width"] == 64 and config["steps"] == 2  # each run pinned
    pinned = json.loads((out / "runs" / "dit-XS-8" / "train_split.json").read_text())
    assert pinned["num_samples"] == 8 and len(pinned["split_hash"]) == 64
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| XS | ")]
    assert rows and all(line.split("|")[4].strip() != "-" for line in rows)  # the ranked column, ID
    # a re-run trains nothing again and gives the same bytes
    weights = (out / "runs" / "dit-XS-8" / "ema.safetensors").stat().st_mtime_ns
    before = {p.name: p.read_bytes() for p in files}
    for p in files:
        p.unlink()
    assert main(ARGS + ["--out", str(out)]) == 0
    assert (out / "runs" / "dit-XS-8" / "ema.safetensors").stat().st_mtime_ns == weights
    assert {p.name: p.read_bytes() for p in files} == before
    site = tmp_path / "site"
    assert main(["leaderboard", "build", str(out / "results"), "--out", str(site)]) == 0
    assert "Scaling of dit with training-set size" in (site / "index.html").read_text()


def test_unknown_size_is_explained(tmp_path, capsys):
    assert main(["study", "scaling", "--task", "uniform", "--sizes", "XXL", "--out", str(tmp_path / "s"), "--quiet"]) == 2
    assert "unknown size(s) XXL" in capsys.readouterr().err


@pytest.mark.slow
def test_the_dit_runs_through_the_model_runner(tmp_path):
    """A trained DiT answers a split through `phybench run` (the same interface as any model)."""
    out = tmp_path / "study"
    assert main(ARGS[:5] + ["XS", "--train-sets", "8", "--steps", "2", "--eval-samples", "3", "--sample-steps", "2",
                            "--batch-size", "4", "--quiet", "--out", str(out)]) == 0
    run = out / "runs" / "dit-XS-8"
    assert main(["run", "--model", "phybench_baselines.dit.runner:DiT", "--model-args",
                 f"checkpoint={run},steps=2", "--data", str(out / "data" / "uniform-id-eval"),
                 "--out", str(tmp_path / "r"), "--metrics", "velocity_error", "--name", "dit-XS-8", "--quiet"]) == 0
    doc = json.loads((tmp_path / "r" / "results" / "uniform-id-eval-dit-XS-8.json").read_text())
    assert doc["summary"]["overall"]["videos"] == 3

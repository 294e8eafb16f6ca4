"""The likelihood-preference test: pairs, scorers, preference errors, intervals and errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.plausibility import PlausibilityError, evaluate_pairs, load_scorer, smoothness, write_plausibility
from phybench.tasks import get_task
from phybench.violations import write_violations

KINDS = ["vanish", "teleport", "reverse", "speed-1.2"]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    root = tmp_path_factory.mktemp("plausibility")
    out = {}
    for task, split, n in (("uniform", "id-eval", 6), ("collision", "id-eval", 6), ("combinatorial", "in-template-eval", 3)):
        folder = root / f"{task}-{split}"
        generate(make_plan(get_task(task), split, limit=n), folder, progress=False)
        kinds = KINDS + (["interpenetration"] if task != "uniform" else [])
        write_violations(folder, root / f"{task}-pairs", kinds, progress=False)
        out[task] = (root / f"{task}-pairs", folder)
    return out


def constant(video, condition_frames):
    return 1.0


def negative_smoothness(video, condition_frames):
    return -smoothness(video, condition_frames)


@pytest.mark.slow
def test_preference_error_is_paired_and_flips_with_the_score(pairs):
    """A constant scorer ties every pair (0.5); negating a scorer turns e into 1 - e, per kind."""
    for task, (p, split) in pairs.items():
        tied = evaluate_pairs(p, split, constant, progress=False)
        assert all(k["preference_error"] == 0.5 and k["ties"] == k["pairs"] for k in tied["kinds"].values() if k["pairs"])
        a = evaluate_pairs(p, split, smoothness, progress=False)
        b = evaluate_pairs(p, split, negative_smoothness, progress=False)
        for kind, k in a["kinds"].items():
            if k["pairs"]:
                assert k["preference_error"] + b["kinds"][kind]["preference_error"] == pytest.approx(1.0), (task, kind)
                lo, hi = k["ci95"]
                assert lo <= k["preference_error"] <= hi
        assert a["kinds"]["reverse"]["pairs"] >= 3


def test_smoothness_sees_a_jump(pairs):
    """The model-free scorer finds a teleport less smooth than physics in most pairs."""
    p, split = pairs["uniform"]
    doc = evaluate_pairs(p, split, smoothness, kinds=["teleport"], progress=False)
    assert doc["kinds"]["teleport"]["preference_error"] <= 0.34


@pytest.mark.slow
def test_results_bytes_are_deterministic_and_carry_provenance(pairs, tmp_path):
    p, split = pairs["collision"]
    for name in ("a.json", "b.json"):
        write_plausibility(evaluate_pairs(p, split, smoothness, scorer_name="phybench.plausibility:smoothness", progress=False),
              tmp_path / name)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    doc = json.loads((tmp_path / "a.json").read_bytes())
    assert doc["schema"] == "phybench.plausibility/1" and doc["scorer"] == "phybench.plausibility:smoothness"
    assert len(doc["labels_sha256"]) == 64 and doc["split_hash"]
    assert set(doc["kinds"]) == set(KINDS) | {"interpenetration"}
    first = next(iter(doc["scores"]["vanish"].values()))
    assert len(first) == 2  # (valid, violated)


def test_bad_inputs_are_explained(pairs, tmp_path):
    p, split = pairs["uniform"]
    other = pairs["collision"][1]
    with pytest.raises(PlausibilityError, match="planted in split uniform/id-eval"):
        evaluate_pairs(p, other, smoothness, progress=False)
    with pytest.raises(PlausibilityError, match="no labels.json"):
        evaluate_pairs(tmp_path, split, smoothness, progress=False)
    with pytest.raises(PlausibilityError, match="no pairs of kind"):
        evaluate_pairs(p, split, smoothness, kinds=["gravity-1.2"], progress=False)
    with pytest.raises(PlausibilityError, match="finite"):
        evaluate_pairs(p, split, lambda v, c: float("nan"), progress=False)

    def broken(video, condition_frames):
        raise RuntimeError("out of memory")

    with pytest.raises(PlausibilityError, match="the scorer failed on the valid video uniform/id-eval/.*out of memory"):
        evaluate_pairs(p, split, broken, progress=False)
    (tmp_path / "labels.json").write_text("[1, 2]")
    with pytest.raises(PlausibilityError, match="not a phybench violations labels file"):
        evaluate_pairs(tmp_path, split, smoothness, progress=False)
    with pytest.raises(PlausibilityError, match="MODULE:NAME"):
        load_scorer("smoothness")
    with pytest.raises(PlausibilityError, match="no attribute"):
        load_scorer("phybench.plausibility:nothing")


@pytest.mark.slow
def test_command_end_to_end(pairs, tmp_path, capsys):
    p, split = pairs["combinatorial"]
    out = tmp_path / "r.json"
    assert main(["plausibility", "--model", "phybench.plausibility:smoothness", "--data", str(p), "--split", str(split),
                 "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "| vanish |" in text and "preference error" in text and out.is_file()
    assert main(["plausibility", "--model", "nope", "--data", str(p), "--split", str(split)]) == 2
    assert "MODULE:NAME" in capsys.readouterr().err


@pytest.mark.slow
def test_the_dit_denoising_loss_is_a_paired_deterministic_score(pairs, tmp_path):
    """DenoisingLoss on a 2-step run: same video, same score; the noise is shared across a pair."""
    pytest.importorskip("diffusers")
    from phybench_baselines.dit import train as dit_train
    from phybench_baselines.dit.plausibility import DenoisingLoss

    train = tmp_path / "train"
    generate(make_plan(get_task("uniform"), "train-30k", limit=16), train, progress=False)
    run = tmp_path / "run"
    dit_train.main(["--config", "tiny", "--train-data", str(train), "--out", str(run), "--set", "depth=2", "width=32",
                    "heads=2", "frames=8", "resolution=16", "batch_size=2", "steps=2", "log_every=1"])
    scorer = load_scorer("phybench_baselines.dit.plausibility:DenoisingLoss", {"checkpoint": str(run), "seeds": 1,
                                                                                "levels": "200,600"})
    assert isinstance(scorer, DenoisingLoss) and scorer.levels == [200, 600]
    p, split = pairs["uniform"]
    doc = evaluate_pairs(p, split, scorer, kinds=["vanish"], progress=False)
    scores = list(doc["scores"]["vanish"].values())
    assert all(np.isfinite(s).all() and s[0] != s[1] for s in scores)
    again = evaluate_pairs(p, split, scorer, kinds=["vanish"], progress=False)
    assert again["scores"] == doc["scores"]
    assert scorer.windows(np.zeros((32, 4, 4, 3))) == [0, 5, 10, 15, 20, 24]
    with pytest.raises(ValueError, match="levels"):
        DenoisingLoss(str(run), levels="5000")

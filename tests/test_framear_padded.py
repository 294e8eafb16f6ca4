"""framear on a task with fewer condition frames than its context (the ambiguity probe gives 1):
`pad_context` repeats frame 0 before it, in training and sampling alike; without it the sampler refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("accelerate")

from phybench_baselines.framear import sample as fa_sample  # noqa: E402
from phybench_baselines.framear import train as fa_train  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import SplitReader, make_plan  # noqa: E402
from phybench.submission import open_submission, validate  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

TINY = ["resolution=16", "width=8", "dilations=[1,2]", "train_rows=6", "val_rows=2", "batch_size=4",
        "steps=2", "eval_every=2", "log_every=1", "sample_steps=2", "warmup_steps=1", "pad_context=true"]


def _clips(n: int = 2, frames: int = 5, r: int = 4) -> torch.Tensor:
    """uint8 (n, frames, 3, r, r): clip i's frame k is filled with the value 10 * i + k (each frame its own)."""
    values = 10 * torch.arange(n)[:, None] + torch.arange(frames)[None]
    return values[:, :, None, None, None].expand(n, frames, 3, r, r).to(torch.uint8).clone()


def _value(x: torch.Tensor) -> int:
    return int(round(float((x.flatten()[0] + 1) * 127.5)))


def test_padded_training_context_repeats_frame_zero():
    """Targets run from frame 1 (not `context`), and a context reaching before frame 0 repeats frame 0."""
    cfg = fa_train.FrameConfig(context=3, pad_context=True, context_noise=0.0)
    clips = _clips()
    per_clip = clips.shape[1] - fa_train.first_target(cfg)
    assert per_clip == 4  # targets 1..4 of 5 frames; without padding 3..4
    assert clips.shape[1] - fa_train.first_target(fa_train.FrameConfig(context=3)) == 2
    idx = torch.arange(2 * per_clip)
    _, context, _, target, _ = fa_train.training_batch(cfg, clips, idx, 0, 0, 1, None)
    got = [([_value(c) for c in ctx], _value(t)) for ctx, t in zip(context, target)]
    assert got[:4] == [([0, 0, 0], 1), ([0, 0, 1], 2), ([0, 1, 2], 3), ([1, 2, 3], 4)]
    assert got[4] == ([10, 10, 10], 11)


def test_one_condition_frame_needs_pad_context():
    """Sampling one condition frame pads it (the frames returned start with it, no padding frames among
    them); a model trained without `pad_context` refuses rather than see a context it never saw."""
    cfg = fa_train.FrameConfig(resolution=8, width=8, dilations=[1], sample_steps=1, pad_context=True)
    torch.manual_seed(0)
    model = fa_train.make_model(cfg).eval()
    first = torch.rand(1, 1, 3, 8, 8) * 2 - 1
    out = fa_sample.rollout(model, cfg, first, 4, [torch.Generator().manual_seed(0)])
    assert out.shape == (1, 4, 3, 8, 8) and torch.equal(out[:, 0], first[:, 0])
    assert torch.allclose(out[:, 1], first[:, 0])  # untrained: copy the last frame
    cfg.pad_context = False
    with pytest.raises(ValueError, match="pad_context"):
        fa_sample.rollout(model, cfg, first, 4, [torch.Generator().manual_seed(0)])


@pytest.mark.slow
def test_tiny_run_on_the_ambiguity_task_samples_a_valid_submission(tmp_path):
    """Train 2 steps on `ambiguity-128` train-gap (1 condition frame), its validation scoring the outcome
    read from pixels; sample eval-gap: a valid submission whose first frame is the condition frame."""
    task = get_task("ambiguity-128")
    generate(make_plan(task, "train-gap", None, 8, None), tmp_path / "train", progress=False)
    generate(make_plan(task, "eval-gap", None, 2, None), tmp_path / "eval", progress=False)
    run = tmp_path / "run"
    history = fa_train.main(["--train-data", str(tmp_path / "train"), "--out", str(run), "--set", *TINY])
    evals = [e for e in history if "val/outcome_wrong" in e]
    assert [e["step"] for e in evals] == [2] and evals[0]["val/outcome_wrong"] in (0.0, 0.5, 1.0)
    sub = tmp_path / "sub"
    fa_sample.main(["--checkpoint", str(run), "--data", str(tmp_path / "eval"), "--out", str(sub),
                    "--name", "framear-amb-test", "--format", "npz"])
    report = validate(sub, tmp_path / "eval")
    assert report.ok, report.to_text()
    meta = json.loads((sub / "submission.json").read_text())
    assert meta["sampler"]["rollout"].endswith("(before frame 0: frame 0 repeated)")  # the card says it pads
    reader = SplitReader(tmp_path / "eval")
    with open_submission(sub) as videos:
        for row in reader.rows(columns=["sample_id", "video"]):
            video, truth = videos.read(row["sample_id"]), reader.video(row)
            assert video.shape == truth.shape and np.array_equal(video[0], truth[0])


def test_checkpoint_selected_on_the_outcome_validation(tmp_path):
    """An ambiguity run's log has no velocity error: its snapshot is the one with the fewest wrong outcomes."""
    import json

    from phybench_baselines.studies import findings

    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(e) for e in (
        {"step": 1, "loss": 0.1}, {"step": 200, "val/outcome_wrong": 0.4}, {"step": 400, "val/outcome_wrong": 0.2},
        {"step": 600, "val/outcome_wrong": 0.2})) + "\n")
    assert findings.selected_step(tmp_path, "val/outcome_wrong") == 400
    with pytest.raises(ValueError, match="val/velocity_error"):
        findings.selected_step(tmp_path)

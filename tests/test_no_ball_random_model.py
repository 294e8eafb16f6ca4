"""Issue 34 item 1b, the randomly initialised model: what it draws decides, not that it is untrained.

The issue's random-weight image-to-video pipeline drew pure colour noise (no ball: untrackable,
tests/test_law_planted.py plants that).  The framear baseline with random weights
(baselines/framear, the task's resolution) does not: its skip path redraws the last condition
frame, so its videos hold the ball standing still.  That is a ball, and it must stay trackable,
scored as a ball at rest: its velocity error is the true speed (a uniform ball's), like copy-last.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from phybench_baselines.framear import sample as fa_sample  # noqa: E402
from phybench_baselines.framear import train as fa_train  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import SplitReader, make_plan  # noqa: E402
from phybench.scoring.sample import score_sample  # noqa: E402
from phybench.tasks import get_task  # noqa: E402


def test_random_weight_framear_draws_a_ball_at_rest_and_it_is_tracked(tmp_path):
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), tmp_path / "u", progress=False)
    reader = SplitReader(tmp_path / "u")
    m = reader.manifest
    torch.manual_seed(0)
    cfg = fa_train.FrameConfig()
    model = fa_train.make_model(cfg).eval()  # random weights: never trained
    rows = list(reader.rows())
    cf, T = int(m["condition_frames"]), int(m["frames"])
    videos = fa_sample.generate_videos(model, cfg, np.stack([reader.video(row)[:cf] for row in rows]), T, seed=0)
    for row, video in zip(rows, videos):
        d = score_sample(row, video, reader.video(row), m, ("velocity_error",))
        assert d["untrackable"] is None, d["untrackable"]
        assert d["velocity_error"] == pytest.approx(row["velocity"], rel=0.1)  # standing still: off by its speed

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
from phybench.scoring.run.sample import score_sample  # noqa: E402
from phybench.tasks import get_task  # noqa: E402


@pytest.mark.slow
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


def test_a_ball_the_condition_frames_never_show_cannot_vanish(tmp_path):
    """collision/ood-eval holds balls that enter after the condition frames.  A model that does not
    draw one (it cannot know it exists: the physics oracle, which parses the condition frames) is not
    judged to lose it; a ball the condition frames show and the model then drops still is (`vanish`)."""
    import dataclasses

    from phybench.data.split import row_scene
    from phybench.planting import OFF
    from phybench.scoring.inputs import Sample
    from phybench.scoring.judge.noball import no_ball_findings
    from phybench.scoring.physics.parse import parse_video
    from phybench.scoring.physics.velocity import unseen_in_condition
    from phybench.world.render import render

    generate(make_plan(get_task("collision"), "ood-eval", limit=40), tmp_path / "c", progress=False)
    reader = SplitReader(tmp_path / "c")
    m = reader.manifest
    cf = int(m["condition_frames"])

    def without(row, b):  # uint8 (T, R, R, 3): the row's scene with body b out of the world from frame cf on
        scene = row_scene(row)
        poses = scene.poses.copy()
        poses[cf:, b, :2] = OFF
        return render(dataclasses.replace(scene, poses=poses), int(m["resolution"]))

    def lost(row, video):  # the bodies the parser-based `vanish` rule reports lost
        colours = [(int(c[0]), int(c[1]), int(c[2])) for c in row["colours"]]
        sample = Sample(row, video, None, m, lambda: None, parse_video(video, colours))
        return [colours.index(tuple(int(x) for x in f.colour.split(","))) for f in no_ball_findings(sample)]

    found = 0
    for row in reader.rows():
        unseen = unseen_in_condition(np.asarray(row["positions"], dtype=np.float64),
                                     np.asarray(row["radii"], dtype=np.float64), float(m["world_size"]), cf)
        if len(unseen) != 1:
            continue
        found += 1
        late, seen = unseen[0], 1 - unseen[0]
        assert lost(row, without(row, late)) == []  # other rules may still fire: it does not bounce
        assert lost(row, without(row, seen)) == [seen]
    assert found >= 1

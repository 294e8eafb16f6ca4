"""The judge's scene rules (issue 48 item 4): jump, pause, presence, on the scene families they claim."""
from __future__ import annotations

import numpy as np
import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.judge import census, order, presence
from phybench.scoring.judge.abnormal import judge
from phybench.scoring.judge.rules import RULES
from phybench.tasks import get_task
from phybench.violations import KINDS, plant
from phybench.violations_scene import SCENE_KINDS


def test_the_rules_claim_planted_kinds_and_share_the_census_setting():
    claimed = {k for r in RULES for k in r.planted_kinds}
    assert set(order.PLANTED_JUMP) | set(order.PLANTED_PAUSE) | set(presence.PLANTED) <= set(SCENE_KINDS) <= set(KINDS)
    assert set(order.PLANTED_JUMP) | set(order.PLANTED_PAUSE) | set(presence.PLANTED) <= claimed
    assert presence.PRESENCE_FRAMES >= census.PERSIST  # no shorter than a flicker


def test_zigzag_reads_a_single_frame_jump_and_not_a_bounce_or_gravity():
    t = np.arange(20, dtype=float)
    fall = np.stack([100 + 0.6 * t ** 2, 50 + 3 * t], axis=1)  # (T, 2) row, col px: a parabola
    assert np.abs(order._zigzag(fall)).max() < 1e-9
    jumped = fall.copy()
    jumped[10, 1] += 3.0
    z = order._zigzag(jumped)
    assert int(np.argmax(z)) == 10 and abs(z[10] - 3.0) < 1e-9 and np.delete(z, 10).max() <= 0.25 * z[10] + 1e-9
    bounce = np.stack([100 - np.abs(t - 9.5) * 4, 50 + 0 * t], axis=1)  # reverses between frames 9 and 10
    assert order._zigzag(bounce).max() < 1e-9
    swapped = np.stack([2 * t, 0 * t], axis=1)[[*range(10), 11, 10, *range(12, 20)]]  # frames 10 and 11 swapped
    assert order._zigzag(swapped).max() >= 2.0


_SPLIT: list[SplitReader] = []


def _reader() -> SplitReader:
    if not _SPLIT:
        import tempfile

        out = tempfile.mkdtemp(prefix="phybench-scene-") + "/combinatorial-in-template-eval"
        generate(make_plan(get_task("combinatorial"), "in-template-eval", limit=3), out, progress=False)
        _SPLIT.append(SplitReader(out))
    return _SPLIT[0]


@pytest.mark.slow
def test_scene_violations_are_judged_by_their_rules_while_the_truth_is_not():
    """Fails on the code before issue 48 item 4: a one-frame jump of 3 px, a 2-frame pause and a
    half-transparent duplicate went unseen in most combinatorial scenes."""
    reader = _reader()
    m, spec = reader.manifest, reader.spec
    expect = {"jump-moving-3": "jump", "pause-2": "pause", "duplicate-0.5": "presence", "vanish-moving": "presence"}
    for row in reader.rows():
        gt = reader.video(row)
        bodies = row_scene(row).bodies
        colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
        assert not judge(gt, gt, colours, static, spec.condition_frames).abnormal
        for kind, rule in expect.items():
            video, label = plant(kind, row, spec, int(m["resolution"]), gt)
            if video is None:
                continue
            verdict = judge(video, gt, colours, static, spec.condition_frames)
            assert any(f.rule == rule for f in verdict.findings), (kind, row["sample_id"], verdict.to_dict())

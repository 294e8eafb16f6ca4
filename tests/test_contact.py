"""Contact geometry (issue 48 item 3): how two balls meet, in the law block, the judge and the planted kinds."""
from __future__ import annotations

import math

import numpy as np
import pytest
from smallsplits import small_split

from phybench.data.split import SplitReader, row_scene
from phybench.scoring.judge.abnormal import judge
from phybench.scoring.judge.contact import PLANTED
from phybench.scoring.learned.law import WRONG, law_of
from phybench.scoring.physics import contact as C
from phybench.scoring.run.sample import scoring_sample
from phybench.violations import KINDS, plant
from phybench.violations_contact import CONTACT_KINDS


def test_turning_point_reads_gap_and_time():
    # ball 1 (r 1) at x = 2 + 3 t, ball 2 (r 0.5) at x = 8 - 1 t; they touch at t = (6 - 1.5) / 4 = 1.125
    lines = [((2.0, 3.0), (2.0 + 3.0 * 1.125 + 1.0 * 1.125, -1.0)), ((8.0, -1.0), (8.0 - 1.0 * 1.125 - 3.0 * 1.125, 3.0))]
    tc, gap = C.turning_point(lines, [1.0, 0.5])
    assert tc == pytest.approx(1.125) and gap == pytest.approx(0.0, abs=1e-12)
    tc, gap = C.turning_point(lines, [0.75, 0.5])  # smaller balls at the same centres: a gap of 0.25
    assert gap == pytest.approx(0.25)
    fit = {"contact_gap": 0.25, "contact_time": 1.125, "velocity_before_1": 3.0, "velocity_before_2": -1.0}
    truth = dict(fit, contact_gap=0.0)
    assert C.contact_aspect(fit, truth, [0.75, 0.5]) == pytest.approx(0.5)  # 0.25 / the smaller radius
    late = dict(truth, contact_time=1.225)  # 0.1 s late at a closing speed of 4: 0.4 units
    assert C.contact_aspect(late, truth, [0.75, 0.5]) == pytest.approx(0.8)


def test_turn_of_series_and_the_fallback():
    t = np.arange(12, dtype=float)
    d = np.where(t < 5.5, 30 - 4 * t, 8 + 4 * (t - 5.5))  # falls to 8 px at 5.5, rises again
    ts, ds, pre, post = C.turn_of_series(t, d)
    assert ts == pytest.approx(5.5) and ds == pytest.approx(8.0) and pre < 0 < post
    assert C.turn_of_series(t, 30 - t) is None  # no turn
    gt = np.zeros((12, 2, 2))
    gt[:, 0, 0], gt[:, 1, 0] = np.where(t < 5, t, 10 - t), np.where(t < 5, 20 - t, 10 + t)
    found = np.ones((12, 2), bool)
    truth = {"velocity_before_1": 1.0, "velocity_before_2": -1.0, "velocity_after_1": -1.0, "velocity_after_2": 1.0}
    assert C.fallback_aspect(gt, gt, found, [1.0, 1.0], 5.0, 1.0, truth) == 0.0
    wrong = gt.copy()
    wrong[6:, :, 0] = gt[5, :, 0] + 0.5 * (gt[6:, :, 0] - gt[5, :, 0])  # leaves at half the speed
    assert C.fallback_aspect(wrong, gt, found, [1.0, 1.0], 5.0, 1.0, truth) > WRONG


def _reader() -> SplitReader:
    return small_split("collision", "id-eval", 3)


def test_the_judge_claims_every_contact_kind():
    assert set(PLANTED) == set(CONTACT_KINDS) and set(PLANTED) <= set(KINDS)


@pytest.mark.slow
def test_contact_violations_are_wrong_laws_and_judged_while_the_truth_is_not():
    """Fails on the code before issue 48 item 3: a gap or an early bounce kept the truth's law."""
    reader = _reader()
    m, spec = reader.manifest, reader.spec
    for row in reader.rows():
        gt = reader.video(row)
        bodies = row_scene(row).bodies
        colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
        truth = law_of(scoring_sample(row, gt, gt, m))
        assert truth is not None and math.isfinite(truth["errors"]["law_error"]) and not truth["wrong"]
        assert not judge(gt, gt, colours, static, spec.condition_frames).abnormal
        for kind in ("gap-bounce-4", "overlap-bounce-4", "early-bounce-2", "late-bounce-2"):
            video, label = plant(kind, row, spec, int(m["resolution"]), gt)
            assert video is not None, label
            law = law_of(scoring_sample(row, video, gt, m))
            assert law is not None and "contact" in law["wrong"], (kind, law["errors"])
            verdict = judge(video, gt, colours, static, spec.condition_frames)
            assert any(f.rule == "contact" for f in verdict.findings), (kind, verdict.to_dict())

"""Identity (issue 48 item 2): the tracked body is the body of the condition frames (colour, size, shape)."""
from __future__ import annotations

import numpy as np
import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.scoring.judge import rules
from phybench.scoring.judge.abnormal import judge, judge_sample
from phybench.scoring.judge.identity import PLANTED
from phybench.scoring.physics.parse import IDENTITY, MISSING, describe_flags
from phybench.scoring.physics.velocity import SETTINGS as VELOCITY_SETTINGS
from phybench.scoring.run.sample import scoring_sample
from phybench.tasks import get_task
from phybench.violations import KINDS, plant
from phybench.violations_identity import IDENTITY_KINDS, regular_polygon, turned_hue


def test_planted_kinds_are_registered_and_claimed():
    assert set(PLANTED) == set(IDENTITY_KINDS) and set(PLANTED) <= set(KINDS)
    row = next(r for r in rules.RULES if r.name == "identity")
    assert row.block == "velocity" and VELOCITY_SETTINGS["identity"] == row.settings["identity"]
    assert describe_flags(MISSING | IDENTITY) == "missing|not_this_body"


def test_turned_hue_and_polygon_area():
    assert turned_hue((255, 0, 0), 120) == (0, 255, 0) and turned_hue((255, 0, 0), 240) == (0, 0, 255)
    v = np.array(regular_polygon(3, 2.0).vertices)
    area = 0.5 * abs(np.dot(v[:, 0], np.roll(v[:, 1], 1)) - np.dot(v[:, 1], np.roll(v[:, 0], 1)))
    assert area == pytest.approx(2.0)


_SPLITS: dict[str, SplitReader] = {}


def _reader(task: str) -> SplitReader:
    if task not in _SPLITS:
        import tempfile

        out = tempfile.mkdtemp(prefix="phybench-identity-") + f"/{task}-id-eval"
        generate(make_plan(get_task(task), "id-eval", limit=2), out, progress=False)
        _SPLITS[task] = SplitReader(out)
    return _SPLITS[task]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["uniform", "collision"])
def test_another_body_is_not_the_ball(task):
    """Every identity kind is untrackable or judged abnormal (before: a recoloured ball was tracked as the
    ball, its velocity error the exact render's); the exact render keeps its identity, its verdict and its track."""
    r = _reader(task)
    m, spec = r.manifest, r.spec
    row = next(iter(r.rows()))
    gt = r.video(row)
    exact = scoring_sample(row, gt, gt, m)
    assert not (exact.parsed.flags & IDENTITY).any() and exact.errors.untrackable is None
    assert not judge_sample(exact).abnormal
    for kind in IDENTITY_KINDS:
        video, label = plant(kind, row, spec, int(m["resolution"]), gt)
        if video is None:
            continue
        s = scoring_sample(row, video, gt, m)
        v = judge_sample(s)
        assert s.errors.untrackable is not None or v.abnormal, kind
        if kind in ("recolour-20", "resize-0.7", "swap-triangle"):  # named by the identity row, in the scorer and bare
            bodies = [tuple(c) for c in row["colours"]]
            bare = judge(video, gt, bodies, [False] * len(bodies), spec.condition_frames)
            for verdict in (v, bare):
                found = [f for f in verdict.findings if f.rule == "identity"]
                assert found and {"recolour": "colour", "resize": "size", "swap": "shape"}[kind.split("-")[0]] in \
                    found[0].detail, (kind, verdict.findings)

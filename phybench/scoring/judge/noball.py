"""No ball is no ball, for the judge (issue 34, item 1b).

The judge (`phybench.scoring.judge.abnormal`) segments colours on its own; on pure colour noise or a
smear it sees "pieces" everywhere and rarely calls a vanish.  The velocity parser
(`phybench.scoring.physics.parse`) decides per frame whether a ball of each colour is there at all
(MISSING, with NOT_A_BALL for ink that is no ball).  Where the ground truth's ball is fully in
view in a generated frame and the parser finds none, the ball vanished: one finding per ball,
rule ``vanish`` (stated in the judge's SETTINGS).  Families read by the parser only (`object_reader` discs); multi-body scenes
have no parse.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .findings import Finding
from ..physics.parse import IDENTITY, MISSING
from ..physics.velocity import unseen_in_condition

def no_ball_findings(sample: Any) -> list[Finding]:
    """`vanish` findings of a sample whose parsed video has lost a ball the ground truth shows."""
    parsed = getattr(sample, "parsed", None)
    if parsed is None:
        return []
    from ...world.laws import fully_in_view

    gt = np.asarray(sample.row["positions"], dtype=np.float64)
    if parsed.flags.shape != gt.shape[:2]:
        return []
    view = fully_in_view(gt, np.asarray(sample.row["radii"], dtype=np.float64), float(sample.manifest["world_size"]))
    view[: sample.condition_frames] = False
    # A ball the condition frames do not show (it enters later) cannot vanish: no model can know
    # it exists, and velocity_error excludes such a video for the same reason.
    radii = np.asarray(sample.row["radii"], dtype=np.float64)
    view[:, unseen_in_condition(gt, radii, float(sample.manifest["world_size"]), sample.condition_frames)] = False
    lost = view & ((parsed.flags & MISSING) != 0) & ((parsed.flags & IDENTITY) == 0)  # another body: the identity row's
    out = []
    for b in np.flatnonzero(lost.any(axis=0)):
        frames = np.flatnonzero(lost[:, b]).tolist()
        colour = ",".join(str(int(c)) for c in sample.row["colours"][b])
        out.append(Finding("vanish", colour, frames,
                           f"no ball of this colour in {len(frames)} generated frame(s) from frame {frames[0]} on, "
                           "where the ground truth's is fully in view"))
    return out

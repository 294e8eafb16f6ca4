"""The judge's ``contact`` rule: two bodies that meet at the wrong distance or the wrong time.

For two colours of one dynamic body each, the centre distance of their pieces against the frame
falls, then rises, in the ground truth; `phybench.scoring.physics.contact.turn_of_series` fits its
two lines and reads the turning point (the instant and the distance at which the bodies meet).
The generated video's turning point, read the same way, must lie within the tolerances of
`phybench.scoring.physics.contact` (`GAP_PX`, `GAP_REL`, `TIME_FRAMES`): farther is a bounce from a
distance (``gap``), nearer an ``overlap``, sooner or later an ``early`` or ``late`` bounce.  Its
settings are the ``judge_contact`` entry of the ``contact`` block: the results files of the
families with a two-body contact law quote it (no other family's bodies meet this way).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..physics.contact import GAP_PX, GAP_REL, TIME_FRAMES, TURN_ANGLE, TURN_MIN, TURN_SPEED, turn_of_series
from .findings import Ctx, Finding
from .segment import Layer

# The planted kinds it claims (`phybench.violations_contact`; tests check they are planted kinds).
PLANTED = tuple(f"{k}-bounce-{n}" for k in ("gap", "overlap") for n in (2, 4, 8)) + tuple(
    f"{k}-bounce-{n}" for k in ("early", "late") for n in (1, 2, 3))


def _distance(a: Layer, b: Layer, frames: np.ndarray) -> np.ndarray:
    """(len(frames),) px: the centroid distance of the two colours' single pieces."""
    return np.array([float(np.hypot(*(a.centroids[t][0] - b.centroids[t][0]))) for t in frames])


def _single(q: Layer, ctx: Ctx) -> np.ndarray:
    """(T,) bool: one piece, off the border."""
    return (q.count == 1) & (q.edge >= ctx.border)


def contact_turn(ga: Layer, gb: Layer, pa: Layer, pb: Layer, ctx: Ctx) -> tuple[float, float, float, float] | None:
    """(t_gen, t_truth, d_gen, d_truth): the turning points (frames, px) of the generated pair and its ground
    truth; None where the ground truth has no clear turn or the generated pair none at all."""
    ok_g = _single(ga, ctx) & _single(gb, ctx)
    ok_p = ok_g & _single(pa, ctx) & _single(pb, ctx)
    frames_g, frames_p = np.flatnonzero(ok_g), np.flatnonzero(ok_p)
    if frames_p.size < 2 * TURN_MIN:
        return None
    truth = turn_of_series(frames_g.astype(float), _distance(ga, gb, frames_g))
    if truth is None:
        return None
    t_g, d_g, pre, post = truth
    fast = max(-pre, post)
    if min(-pre, post) < TURN_SPEED * ctx.scale_l or post - pre < TURN_ANGLE * fast or not (
            frames_g[0] < t_g < frames_g[-1]) or t_g < ctx.start - 1:
        return None  # a graze, a slow meeting, or a contact the conditioning already shows
    gen = turn_of_series(frames_p.astype(float), _distance(pa, pb, frames_p))
    if gen is None:
        return None
    return gen[0], t_g, gen[1], d_g


def contact(ga: Layer, gb: Layer, pa: Layer, pb: Layer, name: str, ctx: Ctx) -> list[Finding]:
    """The ``contact`` finding of one pair of single-body colours (see the module)."""
    turn = contact_turn(ga, gb, pa, pb, ctx)
    if turn is None:
        return []
    t_p, t_g, d_p, d_g = turn
    gap = d_p - d_g
    allowed = max(GAP_PX * ctx.scale_l * ctx.blur, GAP_REL * d_g)
    if abs(gap) > allowed:
        what = "gap: the bodies turn round apart" if gap > 0 else "overlap: the bodies pass into each other"
    elif abs(t_p - t_g) > TIME_FRAMES:
        what = "early bounce" if t_p < t_g else "late bounce"
    else:
        return []
    frame = int(min(max(round(t_p), ctx.start), ctx.T - 1))
    return [Finding("contact", name, [frame], f"{what}: turning point at frame {t_p:.2f}, {d_p:.1f} px apart "
                                              f"(ground truth {t_g:.2f}, {d_g:.1f} px; {allowed:.1f} px, "
                                              f"{TIME_FRAMES:g} frames allowed)")]


def contact_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check (`pr` a `rules.Segmented`): colour c against every later dynamic colour, each of one body."""
    colours = list(pr.dynamic)
    if len(pr.dynamic[c].statics) != 1:
        return []
    out: list[Finding] = []
    for o in colours[colours.index(c) + 1:]:
        if len(pr.dynamic[o].statics) == 1:
            v, w = pr.dynamic[c], pr.dynamic[o]
            out += contact(v.g, w.g, v.p, w.p, name, pr.ctx)
    return out

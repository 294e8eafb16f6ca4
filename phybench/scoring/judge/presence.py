"""The judge's ``presence`` rule: a body that appears, doubles, vanishes or changes colour, moving or at rest
(issue 48 item 4).

Bodies keep their size: a colour's area (the judge's dead-zoned coverage, which blur, resampling and
codecs keep) changes only where a body enters or leaves the view, or is hidden, and the ground truth
shows those of its own.  So, per colour, the area change since the first generated frame, less the
ground truth's, is a count of bodies gained or lost: a body that appears (at rest or falling), a
duplicate (an opaque one adds its area, a half-transparent one half of it), a body that vanishes or
takes a colour the scene does not have (its old colour loses it).  It must stay within
PRESENCE_SHARE of the colour's smallest body in the last condition frame (and AREA_ABS x blur) in
all but PRESENCE_FRAMES - 1 consecutive generated frames.  Frames after a *moving* piece of the
colour came within the border and the contact gap (in either video) are not judged: a body may leave
or enter there (the `area` rule judges those frames); a body that rests on the view's edge does not
end the judging.  Static colours are judged alike (the `presence-static` row): a whole picture moved,
zoomed or turned changes every frame alike; a blur or a light on the generated frames alone changes the first generated frame as much as the others.  The frame-to-frame `area`
rule allows 15% of a colour's whole area a frame, so one small body of a colour shared by five
(combinatorial's grey) could vanish under it; this rule counts bodies, not shares.  Only colours at least
PRESENCE_CONTRAST from white are judged: a light grey body's area moves with a vignette, an exposure
change and a blur of the generated frames by more than a third of a small body (the randomised
calibration flagged 4 of 240 benign compositions on grey, none on red or black).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .findings import Finding
from .registration import AREA_ABS

PRESENCE_SHARE = 0.35  # of the colour's smallest body in view at the last condition frame ...
PRESENCE_FRAMES = 3  # ... more or less area than the ground truth's change, in 3 consecutive generated frames
PRESENCE_CONTRAST = 150.0  # levels (RGB distance from white): lighter colours (combinatorial's grey) are not judged
REST_PX = 2.0  # px at 128 px: a piece on the border this near a ground-truth piece of the last condition frame rests

PLANTED = ("appear-fall-1", "appear-fall-0.6", "vanish-rest", "vanish-moving", "duplicate-1", "duplicate-0.5",
           "identity-colour-rest", "identity-colour-moving")
SETTINGS = {
    "presence": (f"a colour's area (a dynamic colour's: its pieces' pixels) change since the first generated frame differs from the ground truth's by more than "
                 f"max({PRESENCE_SHARE:g} x its smallest whole piece's area there, {AREA_ABS:g} px^2 x blur) in "
                 f"{PRESENCE_FRAMES} consecutive generated frames, no moving piece of it (one not within {REST_PX:g} px "
                 "of a ground-truth piece of the last condition frame) having come within the border and the contact "
                 f"gap since, in either video; static colours too; only colours at least {PRESENCE_CONTRAST:g} levels (RGB distance) "
                 "from white: a body appeared, doubled, vanished or changed colour"),
}


def _moving_near_border(q: Any, g: Any, ctx: Any) -> np.ndarray:
    """(T,) bool: a piece of q within the border and the contact gap that is not where a ground-truth piece
    was in the last condition frame (a body resting on the view's edge stays; one that moves may leave or enter)."""
    at_rest = g.centroids[ctx.ref]
    out = np.zeros(ctx.T, bool)
    for t in range(ctx.T):
        near = q.piece_edge[t] < ctx.border + ctx.gap
        if near.any():
            c = q.centroids[t][near]
            d = np.sqrt(((c[:, None] - at_rest[None]) ** 2).sum(-1)).min(axis=1) if len(at_rest) else np.full(len(c), np.inf)
            out[t] = bool((d > REST_PX * ctx.scale_l).any())
    return out


def _hard(q: Any) -> np.ndarray:
    """(T,) px^2: the pixels of a layer's pieces."""
    return np.array([float(a.sum()) for a in q.piece_area])


def balance(pr: Any, c: tuple[int, ...], static: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """((T,) px^2 the colour's area change since the first generated frame less its ground truth's, (T,) bool
    judged, px^2 allowed): frames judged while no piece of the colour has touched the border since then in
    either video (a body may leave or enter there)."""
    ctx = pr.ctx
    p, g = pr.gens.layers[c], pr.gts.layers[c]
    ref, first = ctx.ref, ctx.start  # the first generated frame is the yardstick: a degradation of the generated
    # frames alone (a blur, a light) moves none.  A dynamic colour's area is its pieces' pixels (coverage >= 0.5):
    # a light grey body's soft coverage moves with a vignette or an exposure, its half-coverage edge does not
    pa, ga = (p.area, g.area) if static else (_hard(p), _hard(g))
    change = (pa - pa[first]) - (ga - ga[first])
    if static:
        judged = np.ones(ctx.T, bool)
        whole = np.array([p.area[ref]])
    else:
        near = _moving_near_border(p, g, ctx) | _moving_near_border(g, g, ctx)
        near[:first] = False
        judged = ~np.logical_or.accumulate(near)
        whole = g.piece_area[ref][g.piece_edge[ref] >= ctx.border]
    least = float(whole.min()) if len(whole) else 0.0  # the colour's smallest body (or merged bodies) in view
    allowed = max(PRESENCE_SHARE * least, AREA_ABS * ctx.scale_a * ctx.blur)
    return change, judged, allowed


def balance_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check on any colour: its area, against the ground truth's, off by a share of a body."""
    ctx = pr.ctx
    static = c not in pr.dynamic
    if float(np.linalg.norm(np.subtract(c, 255.0))) < PRESENCE_CONTRAST:
        return []  # a light colour's area moves with the light (a vignette, an exposure, a blur): not a count of bodies
    change, judged, allowed = balance(pr, c, static)
    off = judged & (np.abs(change) > allowed)
    off[:ctx.start] = False
    run = np.convolve(off.astype(int), np.ones(PRESENCE_FRAMES, int), mode="valid")  # windows of PRESENCE_FRAMES
    hit = np.flatnonzero(run == PRESENCE_FRAMES)
    if not hit.size:
        return []
    t = int(hit[0])
    what = "more" if change[t] > 0 else "less"
    return [Finding("presence", name, list(range(t, t + PRESENCE_FRAMES)),
                    f"{abs(change[t]):.0f} px^2 {what} of this colour than the ground truth shows, against the last "
                    f"condition frame, from frame {t} on ({allowed:.0f} allowed): a body appeared, doubled, vanished "
                    "or changed colour")]


def presence_rows(rule: Any) -> list[Any]:
    """This module's row of the judge's table (`rule` is `rules.Rule`, passed in: `rules` imports this module)."""
    return [rule("presence", balance_check, SETTINGS,
                 planted_kinds=PLANTED, colours="dynamic", summary="a body appears, doubles or vanishes, moving or at rest"),
            rule("presence-static", balance_check, {}, colours="static",
                 summary="a static colour gains or loses a body's area (settings: presence)")]

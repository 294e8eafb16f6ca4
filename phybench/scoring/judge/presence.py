"""The judge's ``presence`` rule: a body that appears, doubles or vanishes, moving or at rest (issue 48 item 4).

Every body of the scene, static ones too, is followed in both videos and every generated piece is
accounted for by `phybench.scoring.judge.census` (the per-body metrics' census: a piece no body
explains is *extra*, a ground-truth piece nothing is drawn for is *missing*).  The rule reads it:
an extra piece (persisting `census.PERSIST` frames, off the border: appeared from nothing, a
duplicate, a body that took a new shape beside it) in any generated frame, or a missing body in
PRESENCE_MISSING generated frames or more (vanished, or changed to a colour the scene does not
have), is a finding.  The tracks and the census are made once per judged video (`scene_bodies`,
cached on the `Segmented`) and shared with the per-body metrics (`phybench.scoring.learned.bodies`),
so scoring computes them once.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .findings import Finding
from .registration import AREA_ABS
from .segment import MIN_PIECE, with_pieces

PRESENCE_MISSING = 2  # generated frames with a missing body, at least
PRESENCE_SHARE = 0.35  # of the colour's smallest body in view at the last condition frame ...
PRESENCE_FRAMES = 3  # ... more or less area than the ground truth's change, in 3 consecutive generated frames
REST_PX = 2.0  # px at 128 px: a piece on the border this near a ground-truth piece of the last condition frame rests
PERSIST = 2  # `census.PERSIST` (imported late: `census` imports `rules`, which imports this module; a test checks)

PLANTED = ("appear-fall-1", "appear-fall-0.6", "vanish-rest", "vanish-moving", "duplicate-1", "duplicate-0.5",
           "identity-colour-rest", "identity-colour-moving", "identity-shape-rest", "identity-shape-moving")
SETTINGS = {
    "presence": ("every body, static ones too, followed in both videos from the last condition frame and every "
                 "generated piece accounted for (the census of the per-body metrics): a piece no body explains, "
                 f"seen in {PERSIST} frames or more off the border (appeared, doubled), in any generated frame; or a "
                 f"ground-truth body nothing is drawn for (vanished, changed colour) in {PRESENCE_MISSING} generated "
                 "frames or more; or a colour's area change since the last condition frame differs from the ground "
                 f"truth's by more than max({PRESENCE_SHARE:g} x its smallest body's area there, {AREA_ABS:g} px^2 x blur) "
                 f"in {PRESENCE_FRAMES} consecutive generated frames, none of its pieces having touched the border (within "
                 "the contact gap) since, in either video (every colour, static ones too)"),
}


def scene_bodies(pr: Any) -> tuple[list[Any], list[Any], list[Any], int, Any]:
    """(generated tracks, ground-truth tracks, per body its colour's generated centroids, the number of bodies of
    colours with a dynamic body (listed first), the census) of a `rules.Segmented`, once per judged video."""
    cached = pr.__dict__.get("_scene_bodies")
    if cached is not None:
        return cached
    from .abnormal import colour_view
    from .census import census
    from .motion import colour_tracks, forward, tracks

    ctx = pr.ctx
    gen, gt, pieces, views = [], [], [], []
    still = {c: colour_view(with_pieces(pr.gts.layers[c], MIN_PIECE * ctx.scale_a),
                            with_pieces(pr.gens.layers[c], MIN_PIECE * ctx.scale_a), statics, ctx)
             for c, statics in pr.colours.items() if all(statics)}
    moving = 0
    for c, view in [*pr.dynamic.items(), *still.items()]:
        seeds = view.g.centroids[ctx.ref]
        law = c in pr.dynamic  # a static colour's bodies have no law: skip their contact tests
        if law:  # the judge's motion rules' tracks, without the condition frames
            both = colour_tracks(view, pr.gens, pr.gts, c, ctx)
            mine = ([forward(x, ctx.ref) for x in both[0]], [forward(x, ctx.ref) for x in both[1]])
        else:
            mine = (tracks(view.p, pr.gens, c, seeds, ctx, view.reach, contacts=False),
                    tracks(view.g, pr.gts, c, seeds, ctx, view.reach, contacts=False))
        gen += mine[0]
        gt += mine[1]
        pieces += [view.p.centroids] * len(seeds)
        views.append((view, *mine))
        moving += len(seeds) if law else 0
    out = (gen, gt, pieces, moving, census(views, ctx))
    pr.__dict__["_scene_bodies"] = out
    return out


def presence_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check: reported once, on the first dynamic colour (the census spans every colour)."""
    if c != next(iter(pr.dynamic)):
        return []
    found = scene_bodies(pr)[4]
    start = pr.ctx.start
    out: list[Finding] = []
    extra = np.flatnonzero(found.extra[start:] > 0) + start
    if extra.size:
        out.append(Finding("presence", name, [int(t) for t in extra[:5]],
                           f"{found.extra_bodies} piece(s) no body of the scene explains from frame {extra[0]} on "
                           "(appeared, doubled)"))
    missing = np.flatnonzero(found.missing[start:] > 0) + start
    if missing.size >= PRESENCE_MISSING:
        out.append(Finding("presence", name, [int(t) for t in missing[:5]],
                           f"{found.missing_bodies} body(ies) of the ground truth drawn nowhere in {missing.size} "
                           f"generated frames from frame {missing[0]} on (vanished, changed)"))
    return out


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


def balance(pr: Any, c: tuple[int, ...], static: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """((T,) px^2 the colour's area change since the last condition frame less its ground truth's, (T,) bool
    judged, px^2 allowed): frames judged while no piece of the colour has touched the border since then in
    either video (a body may leave or enter there)."""
    ctx = pr.ctx
    p, g = pr.gens.layers[c], pr.gts.layers[c]
    ref = ctx.ref
    change = (p.area - p.area[ref]) - (g.area - g.area[ref])
    if static:
        judged = np.ones(ctx.T, bool)
        whole = np.array([p.area[ref]])
    else:
        near = _moving_near_border(p, g, ctx) | _moving_near_border(g, g, ctx)
        near[:ref] = False
        judged = ~np.logical_or.accumulate(near)
        whole = g.piece_area[ref][g.piece_edge[ref] >= ctx.border]
    least = float(whole.min()) if len(whole) else 0.0  # the colour's smallest body (or merged bodies) in view
    allowed = max(PRESENCE_SHARE * least, AREA_ABS * ctx.scale_a * ctx.blur)
    return change, judged, allowed


def balance_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check on any colour: its area, against the ground truth's, off by a share of a body."""
    ctx = pr.ctx
    static = c not in pr.dynamic
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


def rows(rule: Any) -> list[Any]:
    """This module's row of the judge's table (`rule` is `rules.Rule`, passed in: `rules` imports this module)."""
    return [rule("presence", lambda pr, c, name: presence_check(pr, c, name) + balance_check(pr, c, name), SETTINGS,
                 planted_kinds=PLANTED, colours="dynamic", summary="a body appears, doubles or vanishes, moving or at rest"),
            rule("presence-static", balance_check, {}, colours="static",
                 summary="a static colour gains or loses a body's area (settings: presence)")]

"""The abnormality judge's rules, as a table: one `Rule` row per rule, with its check, the
settings text every results file quotes, and the planted kinds (`phybench.violations`) it is
meant to catch.

The judge (`phybench.scoring.judge.abnormal`) runs the rows in order on every colour of a scene;
its `SETTINGS`, the help of `phybench judge` and the calibration's kind list
(`phybench.calibration.calibration_kinds`) are generated from `RULES`, so adding a rule is one
row plus its function (docs/adding-a-judge-rule.md says what else that implies: every shipped
results file changes).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

import numpy as np
from scipy import ndimage

from .findings import Ctx, Finding, single, single_steps, touching
from ..physics.contact import SETTINGS as CONTACT_SETTINGS
from . import contact as contact_rule, identity as identity_rule, order, presence
from .levels import SETTINGS as LEVELS_SETTINGS
from .registration import (AREA_ABS, REST_GT, SHIFT, STATIC_BASE, STATIC_EDGE, STATIC_GT, STATIC_SIGMA, TURNS, ZOOMS,
                           rest_change, unmoved)
from .outline import FILL_QUANTILE, NOTCH_RANK, NOTCH_RAYS, fills, notches
from .motion import (GAP, GRAVITY_ABS, GRAVITY_MIN, GRAVITY_REL, JERK_ABS, JERK_FRAMES, JERK_REL, KINK_ABS,
                     KINK_ABS_LONG, KINK_REL, KINK_REL_LONG, KINK_W, KINK_W_LONG, NOISE_K, REST_HOLD, REST_MOVE,
                     REST_TURN, SPIN_ELONGATION, SPIN_RATE, SPIN_RATE_CONTACT, SPIN_WINDOWS, START_MIN, START_REL_ACROSS,
                     START_W, TRACK_AREA, TRACK_MIN_AREA, TUNNEL_STOP, colour_tracks, motion)
from .segment import (HARD, HIGH, INK, LOW, MIN_PIECE, NEAR, RESIDUAL, RESIDUAL_MIN, SOLID, Layer, Segmentation,
                      box_gaps, descriptors)

BORDER = 3.0  # px at 128 px: a piece this close to the frame's border touches it
PERIMETER_EVERY = 4  # the blur estimate counts perimeters on every 4th generated frame
BLUR_PX = 2.0  # blur factor = 1 + (extra edge width of the generated frames, px at 128 px) / 2 px
SOLID_PEAK = 0.95  # dead-zoned coverage (raw 0.815): a piece counts towards a break only where it is this solid
DUST_REL = 0.25  # pieces under a quarter of the ground truth's smallest piece (last condition frame) are dust
# Frame-to-frame rules
AREA_REL = 0.15  # relative area change allowed ...
# AREA_ABS (registration): ... or 6 px^2 at 128 px, times the blur factor ...
AREA_EDGE = 0.5  # ... or px^2 per px of the perimeter of a disc of that area, times the blur factor
TELEPORT_FACTOR = 1.5  # one step: 1.5 x the ground truth's fastest per-frame move of the colour ...
TELEPORT_MARGIN = 6.0  # ... + 6 px at 128 px (a picture shifted by 2 px moves every body)
# Static and at-rest colours
# Shape
SHAPE_MIN_AREA = 40.0  # px^2 at 128 px
SHAPE_ELONGATION = 0.15  # elongation may drift this much beyond the ground truth's own drift (+0.05) ...
SHAPE_COMPACTNESS = 0.08  # ... and compactness this much (+0.03) ...
SHAPE_FILL = 0.12  # the fill of its outline (`outline.fill`: 1 for a disc) may move this much ...
FILL_SMALL = 1.25  # ... or 1.25 / sqrt(area in px^2), times the blur factor ...
FILL_FRAMES = 2  # ... measured on the 95% of its pixels nearest its centroid (`outline.fill`), in 2 frames
NOTCH_PX = 2.2  # px at 128 px: a notch or hole (`outline.notch`) may deepen this much from the last condition frame ...
NOTCH_OWN = 1.0  # ... or the ground truth's own change + 1 px at 128 px ...
NOTCH_FRAMES = 2  # ... in fewer than 2 generated frames (not scaled by blur: a blur moves every ray alike)
SHAPE_SMALL = 2.5  # ... or 2.5 / sqrt(area in px^2) (1.25 / sqrt for compactness), times the blur factor
FREEZE_STILL = 0.2  # px at 128 px: a piece whose centroid moves less than this stands still ...
FREEZE_MOVE = 0.5  # ... while the ground truth's moves at least this far ...
FREEZE_FRAMES = 2  # ... for 2 frames touching nothing (freeze) ...
STOP_FRAMES = 3  # ... or 3 frames touching something (stop)


@dataclass
class ColourView:
    """One dynamic colour of a judged scene: its layers without dust and its reach."""

    statics: list[bool]  # per body of this colour: static?
    g: Layer  # the ground truth's layer
    p: Layer  # the generated video's layer
    reach: float  # px: the farthest a piece may move in one frame (from the ground truth's fastest step)
    fastest: float  # px: the ground truth's fastest step


@dataclass
class Segmented:
    """A generated video and its ground truth, segmented once: what the judge's rules and the per-body metrics share."""

    ctx: Ctx
    gens: Segmentation
    gts: Segmentation
    colours: dict[tuple[int, ...], list[bool]]  # every colour of the scene: per body, static?
    dynamic: dict[tuple[int, ...], ColourView]  # the colours with a dynamic body
    video: Any = None  # the generated video as read (normalised) ...
    parsed: Any = None  # ... and its identity-checked parse (the identity row; `phybench.scoring.judge.identity`)


def without_dust(q: Layer, least: float, border: float) -> Layer:
    """The layer without pieces under `least` px^2 off the border (codec slivers at another
    colour's rim); a small piece on the border may be a body partly in view, and stays."""
    keep = [(a >= least) | (e < border) for a, e in zip(q.piece_area, q.piece_edge)]
    if all(k.all() for k in keep):
        return q
    pe = [e[k] for e, k in zip(q.piece_edge, keep)]
    px = [e[k] for e, k in zip(q.piece_exit, keep)]
    return Layer(q.soft, q.area, np.array([int(k.sum()) for k in keep], np.int64),
                 np.array([e.min() if len(e) else np.inf for e in pe]), np.array([e.min() if len(e) else np.inf for e in px]),
                 [c[k] for c, k in zip(q.centroids, keep)], pe, px, [a[k] for a, k in zip(q.piece_area, keep)],
                 [m[k] for m, k in zip(q.moments, keep)], [b[k] for b, k in zip(q.boxes, keep)], q.perimeter, q.partial,
                 q.extent)


def steps(p: Layer, start: int, reach: float, border: float, boxes: bool = False) -> np.ndarray:
    """(T,) the largest distance from a piece to the nearest same-colour piece of the frame
    before, px, over the pieces that cannot have just entered the view.  Where the colour has
    gained a piece (less those that could have left), pieces on the border or whole within
    `reach` px of it may be new; otherwise none is, so every piece counts: a body that jumps
    to the border keeps its colour's count, and is not excused as one coming in."""
    out = np.zeros(len(p.area))
    done = single_steps(p, start, reach, border, out)
    for t in range(max(start, 1), len(p.area)):
        if t in done:
            continue
        a, b = p.centroids[t], p.centroids[t - 1]
        if len(a) and len(b):
            leavers = int(((p.piece_edge[t - 1] < border) | (p.piece_exit[t - 1] < reach)).sum())
            if len(a) > len(b) - leavers:
                free = (p.piece_edge[t] >= border) & (p.piece_exit[t] >= reach)
            else:
                free = np.ones(len(a), bool)
            if free.any():
                d = np.sqrt(((a[free, None, :] - b[None, :, :]) ** 2).sum(axis=-1))
                if boxes and len(a) != len(b):  # a piece overlapping one of the frame before split off or merged
                    d = np.where(box_gaps(p.boxes[t][free], p.boxes[t - 1]) <= 0.0, 0.0, d)
                d = d.min(axis=1)
                out[t] = d.max()
    return out


def _area(p: Layer, g: Layer, name: str, ctx: Ctx, reach: float) -> list[Finding]:
    """Area jumps between consecutive frames that the view's border cannot explain, nor the
    ground truth's own jump in the same frame (a ball struck out of the view within one frame
    leaves from where it does not yet touch the border: the ground truth shows it too)."""
    d = np.zeros(ctx.T)
    d[1:] = np.diff(p.area)
    own = np.zeros(ctx.T)
    own[1:] = np.diff(g.area)
    touching = p.edge < ctx.border
    before = np.zeros(ctx.T, bool)
    before[1:] = touching[:-1]
    gained = np.zeros(ctx.T, bool)
    gained[1:] = p.count[1:] > p.count[:-1]
    could_leave = np.zeros(ctx.T, bool)
    could_leave[1:] = p.exit[:-1] < reach
    could_enter = p.exit < reach
    # growth: only a piece on the border before (coming in) or a new one; shrinkage: only a
    # piece on the border now (going out) or one that could have left
    dust_before = np.zeros(ctx.T, bool)  # the larger side of the change was nothing but dust: too little to judge
    dust_before[1:] = p.count[:-1] == 0
    excused = (((d > 0) & (before | gained | could_enter | (p.count == 0)))
               | ((d < 0) & (touching | could_leave | dust_before)))
    d = np.abs(d)
    d[excused] = 0.0
    d[:ctx.start] = 0.0
    big = np.maximum(p.area, np.roll(p.area, 1))
    allowed = np.maximum.reduce([AREA_REL * big, np.full(ctx.T, AREA_ABS * ctx.scale_a * ctx.blur),
                                 AREA_EDGE * 2 * np.sqrt(np.pi * big) * ctx.blur])  # the rim of a small body flickers
    d[np.abs(np.diff(p.area, prepend=p.area[:1]) - own) <= allowed] = 0.0  # the ground truth does the same
    bad = np.flatnonzero(d > allowed)
    if not bad.size:
        return []
    t = int(bad[0])
    what = "shrank or vanished" if p.area[t] < p.area[t - 1] else "grew or appeared"
    return [Finding("area", name, bad.tolist(),
                    f"area {p.area[t - 1]:.0f} -> {p.area[t]:.0f} px^2 at frame {t} away from the border: {what}")]


def _overlap(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, ctx: Ctx) -> list[Finding]:
    """Gradual area change against the last condition frame: interpenetration or a slow deform."""
    ref = ctx.ref

    def deviation(q: Layer) -> np.ndarray:
        ok = (q.edge >= ctx.border) & (q.count == q.count[ref]) & (q.edge[ref] >= ctx.border)
        ok[:ctx.start] = False
        return np.where(ok, np.abs(q.area - q.area[ref]), 0.0)

    if p.edge[ref] < ctx.border or g.edge[ref] < ctx.border:
        return []
    allowed = max(AREA_REL * ctx.blur * p.area[ref], float(deviation(g).max()) + AREA_ABS * ctx.scale_a * ctx.blur)
    bad = np.flatnonzero(deviation(p) > allowed)
    if not bad.size:
        return []
    t = int(bad[0])
    mine = ndimage.binary_dilation(p.soft[t] > 0, iterations=2)
    touched = [o for o, lay in gens.layers.items() if o != c and (mine & (lay.soft[t] >= 0.5)).any()]
    rule = "interpenetration" if touched else "area"
    what = f", overlapping colour {','.join(map(str, touched[0]))}" if touched else ""
    return [Finding(rule, name, bad.tolist(), f"area {p.area[ref]:.0f} -> {p.area[t]:.0f} px^2 from the last condition "
                                              f"frame to frame {t} (at most {allowed:.0f} allowed){what}")]


def _merge(p: Layer, g: Layer, name: str, ctx: Ctx) -> list[Finding]:
    """Two bodies of one colour drawn as one piece, where the ground truth never joins them."""
    clear_gt = g.edge >= ctx.border
    if not clear_gt.any():
        return []
    floor = int(g.count[clear_gt].min())
    whole = p.area >= (1.0 - AREA_REL) * p.area[ctx.ref]
    bad = np.flatnonzero((p.edge >= ctx.border) & (p.count < floor) & (p.count >= 1) & whole)
    bad = bad[bad >= ctx.start]
    if not bad.size:
        return []
    t = int(bad[0])
    return [Finding("merge", name, bad.tolist(), f"{int(p.count[t])} piece(s) at frame {t}; the ground truth always "
                                                  f"shows at least {floor} away from the border")]


def _shape(p: Layer, g: Layer, name: str, ctx: Ctx) -> list[Finding]:
    """A rigid body keeps its shape: elongation and compactness against the last condition frame."""
    ref, least = ctx.ref, SHAPE_MIN_AREA * ctx.scale_a
    frames = [ref, *range(ctx.start, ctx.T)]
    gen = {t: descriptors(p, t) for t in frames if single(p, t, ctx, least)}
    if ref not in gen:
        return _notched(p, g, name, ctx)
    gt_frames = [t for t in frames if single(g, t, ctx, least)]

    def drift(d: dict[int, tuple[float, float, float]], i: int) -> float:
        return max((abs(x[i] - d[ref][i]) for t, x in d.items() if t != ref), default=0.0) if ref in d else 0.0

    small = 1.0 / np.sqrt(max(float(p.piece_area[ref][0]), 1.0))  # rasterisation noise grows as a body shrinks
    least_e = max(SHAPE_ELONGATION, SHAPE_SMALL * small) * ctx.blur
    least_c = max(SHAPE_COMPACTNESS, 0.5 * SHAPE_SMALL * small) * ctx.blur
    r = gen[ref]
    bad = [t for t, x in gen.items() if t != ref and (abs(x[0] - r[0]) > least_e or abs(x[1] - r[1]) > least_c)]
    if bad:  # the ground truth's own drift can only widen the tolerances: measured only here
        gt = {t: descriptors(g, t) for t in gt_frames}
        tol_e, tol_c = max(least_e, drift(gt, 0) + 0.05), max(least_c, drift(gt, 1) + 0.03)
        bad = [t for t, x in gen.items() if t != ref and (abs(x[0] - r[0]) > tol_e or abs(x[1] - r[1]) > tol_c)]
    if bad:
        x = gen[bad[0]]
        return [Finding("shape", name, bad, f"elongation {r[0]:.2f} -> {x[0]:.2f}, compactness {r[1]:.2f} -> "
                                            f"{x[1]:.2f} at frame {bad[0]}: a rigid body changed shape")]
    # outline: how much of the disc through its farthest pixel a piece fills (a disc 1, a square 2 / pi)
    fill_gen = dict(zip(gen, fills(p, list(gen))))
    least_f = max(SHAPE_FILL, FILL_SMALL * small) * ctx.blur  # tol_f is never below it: fewer frames beyond it
    if sum(abs(v - fill_gen[ref]) > least_f for t, v in fill_gen.items() if t != ref) < FILL_FRAMES:
        return _notched(p, g, name, ctx)  # cannot be a finding, whatever the ground truth's own change
    fill_gt = dict(zip(gt_frames, fills(g, gt_frames)))
    own = max((abs(v - fill_gt[ref]) for v in fill_gt.values()), default=0.0) if ref in fill_gt else 0.0
    tol_f = max(least_f, own + 0.03)
    bad = [t for t, v in fill_gen.items() if t != ref and abs(v - fill_gen[ref]) > tol_f]
    if len(bad) >= FILL_FRAMES:
        return [Finding("shape", name, bad, f"fill of its outline {fill_gen[ref]:.2f} -> {fill_gen[bad[0]]:.2f} at "
                                            f"frame {bad[0]}: a rigid body changed shape (a disc fills 1, a square 0.72)")]
    return _notched(p, g, name, ctx)


def _notched(p: Layer, g: Layer, name: str, ctx: Ctx) -> list[Finding]:
    """A bite out of a rigid body's outline, or a hole through it (`outline.notch`), deeper than
    in the last condition frame by more than NOTCH_PX (or the ground truth's own change + 1 px).
    Pieces the border cuts are measured too (the rays it cuts are left out): a ball that runs
    along an edge is judged, and one leaving the view is judged until too little of it is left."""
    ref, least = ctx.ref, SHAPE_MIN_AREA * ctx.scale_a
    frames = [ref, *range(ctx.start, ctx.T)]

    def depths(q: Layer) -> dict[int, float]:
        one = [t for t in frames if q.count[t] == 1 and q.piece_area[t][0] >= least]
        return {t: v for t, v in zip(one, notches(q, one, ctx.border)) if np.isfinite(v)}

    depth = depths(p)
    if ref not in depth:
        return []
    if sum(v - depth[ref] > NOTCH_PX * ctx.scale_l for t, v in depth.items() if t != ref) < NOTCH_FRAMES:
        return []  # tol is never below NOTCH_PX: no finding, whatever the ground truth's own change
    depth_gt = depths(g)
    own = max((abs(v - depth_gt[ref]) for v in depth_gt.values()), default=0.0) if ref in depth_gt else 0.0
    tol = max(NOTCH_PX * ctx.scale_l, own + NOTCH_OWN * ctx.scale_l)
    bad = [t for t, v in depth.items() if t != ref and v - depth[ref] > tol]
    if len(bad) < NOTCH_FRAMES:
        return []
    t = max(bad, key=lambda k: depth[k])
    return [Finding("shape", name, bad, f"a notch or hole {depth[t]:.1f} px deep at frame {t} (the last condition "
                                        f"frame's {depth[ref]:.1f} px, at most {tol:.1f} px more allowed): a rigid "
                                        "body lost part of its outline")]


def _freeze(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, ctx: Ctx,
            reach: float) -> list[Finding]:
    """A body that stops while its ground truth moves: in mid-air (freeze) or dead at a contact (stop)."""
    free_still: set[int] = set()  # frames with a still piece touching nothing
    any_still: set[int] = set()  # frames with a still piece, touching or not
    for t in range(max(ctx.start, 1), ctx.T):
        a, b, ga, gb = p.centroids[t], p.centroids[t - 1], g.centroids[t], g.centroids[t - 1]
        if not (len(a) and len(b) and len(ga) and len(gb)):
            continue
        moved = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)).min(axis=1)
        still = np.flatnonzero(moved < FREEZE_STILL * ctx.scale_l)
        if not still.size:  # (most frames: the ground truth's moves need not be measured)
            continue
        gt_moved = np.sqrt(((ga[:, None] - gb[None]) ** 2).sum(-1)).min(axis=1)
        for i in still:
            # its ground truth: the pieces its box overlaps, else the nearest within one step; all must move
            over = np.flatnonzero(box_gaps(p.boxes[t][i:i + 1], g.boxes[t])[0] <= ctx.gap)
            if not over.size:
                near = np.sqrt(((ga - a[i]) ** 2).sum(-1))
                over = np.flatnonzero(near == near.min()) if near.min() <= reach else over
            if not over.size or (gt_moved[over] < FREEZE_MOVE * ctx.scale_l).any():
                continue
            any_still.add(t)
            if not touching(gens, c, p.boxes[t][i], t, ctx):
                free_still.add(t)
    out = []
    runs = [t for t in sorted(free_still) if all(t - k in free_still for k in range(1, FREEZE_FRAMES))]
    if runs:
        out.append(Finding("freeze", name, runs, f"a piece stands still from frame {runs[0] - FREEZE_FRAMES + 1} on, "
                                                 "touching nothing, while the ground truth's moves: stopped in mid-air"))
    runs = [t for t in sorted(any_still) if all(t - k in any_still for k in range(1, STOP_FRAMES))
            and any(t - k not in free_still for k in range(STOP_FRAMES))]
    if runs:
        out.append(Finding("stop", name, runs, f"a piece stands still from frame {runs[0] - STOP_FRAMES + 1} on, at a "
                                               "contact, while the ground truth's moves: stopped dead"))
    return out


def _solid_pieces(p: Layer, t: int, border: float) -> int:
    """Pieces of frame t off the border whose peak coverage reaches SOLID_PEAK.

    A temporally blended frame (0.5 itself + 0.25 each neighbour, as temporal autoencoders
    draw) splits a fast body into pieces of coverage 0.5-0.75: its own place and its ghosts.
    A body broken in two is drawn solid in both halves, so only solid pieces count."""
    n = 0
    for e, (r0, r1, c0, c1) in zip(p.piece_edge[t], p.boxes[t]):
        if e >= border and float(p.soft[t, int(r0):int(r1), int(c0):int(c1)].max(initial=0.0)) >= SOLID_PEAK:
            n += 1
    return n


def _break(p: Layer, g: Layer, statics: list[bool], name: str, ctx: Ctx) -> list[Finding]:
    """More pieces off the border than the colour's bodies (or its ground truth's most pieces)."""
    start = ctx.start
    ceiling = max(len(statics), int(g.count.max(initial=0)))  # a jar may be drawn in several pieces
    off = np.array([int((e >= ctx.border).sum()) for e in p.piece_edge])  # a border may cut a body in two
    over = np.flatnonzero(off[start:] > ceiling) + start
    if over.size:  # only where the count is over: ghosts of a blended frame are no pieces
        off[over] = [_solid_pieces(p, int(t), ctx.border) for t in over]
    bad = over[off[over] > ceiling]
    if bad.size:
        return [Finding("break", name, bad.tolist(), f"{int(off[bad[0]])} pieces off the border at frame "
                                                     f"{int(bad[0])}; at most {ceiling} expected")]
    return []


def _teleport(p: Layer, name: str, ctx: Ctx, reach: float, fastest: float) -> list[Finding]:
    """A piece farther than one step from every piece of its colour in the frame before."""
    T, start = ctx.T, ctx.start
    step = steps(p, start, reach, ctx.border, boxes=True)
    same = np.zeros(T, bool)  # a jump keeps the count; a piece appearing or splitting off is the area rule's
    same[1:] = p.count[1:] == p.count[:-1]
    bad = np.flatnonzero((step > reach) & same)
    if bad.size:
        return [Finding("teleport", name, bad.tolist(),
                        f"a piece {step[bad[0]]:.1f} px from every piece of the frame before at frame "
                        f"{int(bad[0])}; its ground truth's fastest step is {fastest:.1f} px")]
    return []


# ---------------------------------------------------------------- the table
Check = Callable[[Segmented, tuple[int, ...], str], list[Finding]]  # (scene, colour, colour's name) -> findings


@dataclass(frozen=True)
class Rule:
    """One rule of the judge: `check` runs on every colour of the `colours` kind (a colour only
    static bodies have, or one with a dynamic body); `settings` are its entries of the judge's
    `SETTINGS` (every number it uses, in words); `planted_kinds` the planted violations
    (`phybench.violations.KINDS`) it is meant to catch, which the calibration plants."""

    name: str
    check: Check
    settings: Mapping[str, str]
    planted_kinds: tuple[str, ...] = ()
    colours: Literal["static", "dynamic"] = "dynamic"
    summary: str = ""  # one line for `phybench judge --help`
    block: str = "abnormal"  # the settings block that quotes `settings` (another: that metric's, for its families only)


def _static_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    return unmoved(pr.gens.layers[c], pr.gts.layers[c], name, pr.ctx, "static")


def _area_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    return _area(pr.dynamic[c].p, pr.dynamic[c].g, name, pr.ctx, pr.dynamic[c].reach)


def _break_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    return _break(v.p, v.g, v.statics, name, pr.ctx)


def _teleport_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    return _teleport(v.p, name, pr.ctx, v.reach, v.fastest)


def _overlap_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    return _overlap(pr.dynamic[c].p, pr.dynamic[c].g, c, name, pr.gens, pr.ctx)


def _merge_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    return _merge(pr.dynamic[c].p, pr.dynamic[c].g, name, pr.ctx)


def _rest_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    own = rest_change(v.g, pr.ctx)
    return [] if own is None else unmoved(v.p, v.g, name, pr.ctx, "rest", own)


def _freeze_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    return _freeze(v.p, v.g, c, name, pr.gens, pr.ctx, v.reach)


def _shape_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    return _shape(v.p, v.g, name, pr.ctx) if len(v.statics) == 1 else []  # a rigid body: one body of the colour


def _motion_check(pr: Segmented, c: tuple[int, ...], name: str) -> list[Finding]:
    v = pr.dynamic[c]
    return motion(v.p, v.g, c, name, pr.gens, pr.gts, pr.ctx, v.reach, colour_tracks(v, pr.gens, pr.gts, c, pr.ctx))


# In the order the judge runs them (a verdict lists its findings in this order).
RULES: list[Rule] = [
    Rule("static", _static_check, {
        "static": (f"a colour only static bodies have: its coverage, pooled to 128 px, smoothed (sigma {STATIC_SIGMA:g} px) and registered "
                   f"to the last condition frame by the best global shift of at most {SHIFT:g} px, then the best turn "
                   f"about the centre of {', '.join(f'{a:g}' for a in TURNS)} degrees and zoom of "
                   f"{', '.join(f'{z:g}' for z in ZOOMS)}, one at a time, twice over (each kept only where it lowers the "
                   "difference of the frames' mean, shifts searched again), differs from it by more "
                   f"than ({STATIC_BASE:g} + {STATIC_EDGE:g} x (blur - 1)) px^2 per px of its perimeter + {STATIC_GT:g} x the "
                   f"ground truth's own "
                   f"largest difference + {AREA_ABS:g} px^2"),
    }, planted_kinds=("static", "static-slide"), colours="static",
        summary="a colour only static bodies have stays put"),
    Rule("area", _area_check, {
        "area": (f"a colour's area changes by more than max({AREA_REL:g} x area, {AREA_ABS:g} px^2 x blur, {AREA_EDGE:g} "
                 "px^2 x the perimeter of a disc of that area x blur) from the frame "
                 "before, unless the border explains it or the ground truth's own change in that frame is within the "
                 "same tolerance of it: a rise needs a piece on the border before, a new piece, or a "
                 "whole piece within one step of entering; a fall needs a piece on the border now or a whole piece within "
                 "one step of leaving; a fall from, or a rise to, nothing but pieces under the dust size is not judged: "
                 "vanish / appear / deform / colour change"),
    }, planted_kinds=("vanish", "appear", "deform", "colour"), colours="dynamic",
        summary="vanish / appear / deform / colour change"),
    Rule("break", _break_check, {
        "break": ("more pieces of a colour than max(its bodies, the most pieces its ground truth shows in any frame), "
                  f"counting only pieces whose coverage reaches {SOLID_PEAK:g} somewhere (a blended frame's ghosts are no "
                  "pieces)"),
    }, planted_kinds=("break", "appear-far"), colours="dynamic",
        summary="more pieces than bodies"),
    Rule("teleport", _teleport_check, {
        "teleport": ("where a colour keeps its count of pieces, a piece farther than one step from every piece of its colour in the frame before whose bounding box "
                     "it does not overlap where the count of pieces changed (a piece split off or merged is no jump); where the colour "
                     "has gained a piece (less those that could have left), pieces on the border or whole within one step "
                     "of it are excused as just entered"),
    }, planted_kinds=("teleport", "reverse"), colours="dynamic",
        summary="a piece farther than one step from its colour's pieces"),
    Rule("overlap", _overlap_check, {
        "overlap": (f"a colour's area, in a frame where none of its pieces touches the border and it has as many pieces as "
                    f"in the last condition frame, differs from its area there by more than max({AREA_REL:g} x that area x blur, "
                    f"the ground truth's own largest such difference + {AREA_ABS:g} px^2 x blur): 'interpenetration' when "
                    "another object touches it then, else 'area' (a gradual deform)"),
    }, planted_kinds=("interpenetration", "sink"), colours="dynamic",
        summary="a gradual area change: interpenetration or deform"),
    Rule("merge", _merge_check, {
        "merge": ("fewer pieces of a colour than the fewest its ground truth shows in any frame where none touches the "
                  f"border, while none touches the border and its area is within {AREA_REL:g} of the last condition "
                  "frame's (not a vanish)"),
    }, planted_kinds=(), colours="dynamic",
        summary="fewer pieces than the ground truth ever shows"),
    Rule("rest", _rest_check, {
        "rest": (f"a colour whose ground truth changes by less than {REST_GT:g} px^2 after the condition frames (bodies "
                 "at rest) breaks the static test: motion without cause"),
    }, planted_kinds=(), colours="dynamic",
        summary="a colour at rest in the ground truth moves"),
    Rule("freeze", _freeze_check, {
        "freeze": (f"for {FREEZE_FRAMES} consecutive frames a piece moves less than {FREEZE_STILL:g} px while the ground "
                   f"truth's pieces it overlaps (else the one nearest it, within a step) move at least {FREEZE_MOVE:g} px, with no "
                   f"object and no border within "
                   f"{GAP:g} px of it: a body stopped in mid-air"),
        "stop": (f"the same for {STOP_FRAMES} consecutive frames while touching something: a body stopped dead at a "
                 "contact the ground truth does not stop at"),
    }, planted_kinds=("freeze", "stop", "restitution-0"), colours="dynamic",
        summary="a body stopped in mid-air (freeze) or dead at a contact (stop)"),
    Rule("shape", _shape_check, {
        "shape": (f"a colour of one body, drawn as one piece off the border and of at least {SHAPE_MIN_AREA:g} px^2 in "
                  "the last condition frame and in frame t, keeps its shape: elongation (sqrt of the ratio of its "
                  f"second-moment eigenvalues) within max(max({SHAPE_ELONGATION:g}, {SHAPE_SMALL:g} / sqrt(area)) x blur, the "
                  "ground truth's own drift + 0.05) and "
                  "compactness (area / (4 pi sqrt of the eigenvalues' product); 1 for a disc) within max(max("
                  f"{SHAPE_COMPACTNESS:g}, {SHAPE_SMALL / 2:g} / sqrt(area)) x blur, the ground truth's own drift + 0.03) of "
                  "the condition frame's; and the fill of its outline (the share of its pixels nearest its centroid, "
                  f"{FILL_QUANTILE:g}, over the disc they reach: 1 for a disc, 0.72 for a square) within max(max("
                  f"{SHAPE_FILL:g}, {FILL_SMALL:g} / sqrt(area)) x blur, the ground truth's own drift + 0.03) of the "
                  f"condition frame's in fewer than {FILL_FRAMES} frames; and no notch or hole: of {NOTCH_RAYS} rays from "
                  f"its centroid, each ending where its coverage first drops below one half (rays ending within {BORDER:g} px "
                  "of the frame's edge left out, so a piece the border cuts counts while half its rays are left), the "
                  f"{NOTCH_RANK}rd shortest falls short of the median ray by no more than the condition frame's + "
                  f"max({NOTCH_PX:g} px, the ground truth's own change + {NOTCH_OWN:g} px) in fewer than "
                  f"{NOTCH_FRAMES} frames"),
    }, planted_kinds=("reshape", "square", "bite"), colours="dynamic",
        summary="a rigid body keeps its elongation, compactness, the fill of its outline and no notch"),
    Rule("motion", _motion_check, {
        "tracked": (f"each body of a dynamic colour, followed from its piece in the last condition frame by the nearest "
                    f"piece within one step (lost where two bodies would share a piece); free in a frame when it is off the "
                    f"border, no other ink, no other piece of its colour and no border lies within {GAP:g} px of its "
                    f"bounding box, and its piece is within {TRACK_AREA:g} of its ground truth's area and at least "
                    f"{TRACK_MIN_AREA:g} px^2 x blur^2, in the generated "
                    "video and its ground truth"),
        "jerk": (f"a tracked body's acceleration (second difference of its centroid) differs from its ground truth's by "
                 f"more than {JERK_ABS:g} px x blur + {JERK_REL:g} x the ground truth's speed + {NOISE_K:g} x the robust "
                 f"spread of the ground truth's own, in {JERK_FRAMES} free frames (stutter, stop-go); centroids weighted by "
                 "coverage"),
        "kink": (f"a tracked body's change of velocity (least-squares velocities over the {KINK_W} frames before and "
                 f"after; or over {KINK_W_LONG}, with {KINK_ABS_LONG:g} and {KINK_REL_LONG:g}) differs from its ground "
                 f"truth's by more than {KINK_ABS:g} px/frame x blur + {KINK_REL:g} x its "
                 f"speed + {NOISE_K:g} x the robust spread of the ground truth's own, all frames free (drift, a turn, a "
                 "reversal in mid-air)"),
        "start": (f"a tracked body's velocity over its first {START_MIN + 1}-{START_W + 1} free generated frames, less "
                  "its velocity over the free condition frames that end at the last one (each fitted on its own side, so a "
                  "shifted picture cancels; with one free condition frame, the start alone), differs from its ground "
                  f"truth's by more than {KINK_ABS_LONG:g} px/frame x blur + {KINK_REL_LONG:g} x its ground truth's speed "
                  f"(in the condition frames, or its start), or across that motion by more than {KINK_ABS_LONG:g} px/frame "
                  f"x blur + {START_REL_ACROSS:g} x that speed: a change of motion at the first generated frame"),
        "gravity": (f"over the longest free run (at least {GRAVITY_MIN} frames), the fitted acceleration (least-squares "
                    f"parabola) differs from the ground truth's by more than max({GRAVITY_ABS:g} px/frame^2 x blur, "
                    f"{GRAVITY_REL:g} x the ground truth's) + {NOISE_K:g} x the fit's standard error"),
        "spin": (f"a tracked body at least {SPIN_ELONGATION:g} times as long as wide turns (least-squares angular rate "
                 f"over {KINK_W + 1} frames) {SPIN_RATE:g} rad/frame ({SPIN_RATE_CONTACT:g} where it touches something) "
                 f"faster or slower than its ground truth, in {SPIN_WINDOWS} windows"),
        "tunnel": (f"a tracked body, moving towards a side of the view in its last 2 frames, leaves the view through it, where its ground truth, in view to the end, stops at or "
                   f"bounces from (its speed towards that side falls below {TUNNEL_STOP:g} px/frame): through a wall or floor"),
        "rest (per body)": (f"a body whose ground truth stays within {REST_MOVE / 4:g} px and {REST_TURN / 4:g} rad of "
                            f"its pose in the last condition frame until {REST_HOLD} frames after t moves more than "
                            f"{REST_MOVE:g} px x blur or turns more than {REST_TURN:g} rad by frame t"),
    }, planted_kinds=("stutter", "drift", "drift-start", "slow-3", "curve", "reverse-midair", "gravity-1.2", "gravity-0.8", "gravity-reversed",
                      "gravity-sideways", "spin", "tunnel"), colours="dynamic",
        summary="motion without cause: jerk, kink, start, gravity, spin, tunnel, rest per body"),
    Rule("contact", contact_rule.contact_check, {"judge_contact": CONTACT_SETTINGS["judge_contact"]},
         planted_kinds=contact_rule.PLANTED, block="contact", summary="two bodies meet apart, overlapping, early or late (settings: the contact block)"),
    Rule("identity", identity_rule.identity_check, {"identity": identity_rule.SETTINGS}, planted_kinds=identity_rule.PLANTED,
         block="velocity", summary="another colour, size or shape in a ball's place (settings: the velocity block)"),
    *order.order_rows(Rule), *presence.presence_rows(Rule),  # jump, jump-static, pause; presence (judge.order, judge.presence)
]


# What every rule shares (the rules' own entries are their rows of `phybench.scoring.judge.rules.RULES`).
COMMON: dict[str, Any] = {
    "segmentation": (f"per object colour of the scene: a pixel farther than {INK} levels from the background belongs "
                     f"to a colour whose background-to-colour line it lies within max({RESIDUAL:g} x the line's length, "
                     f"{RESIDUAL_MIN:g} levels) of (where two could explain it, one with a solid piece within {NEAR:g} px, "
                     f"then the least residual / reach + {SOLID:g} x (1 - t)), "
                     f"with coverage t along it; area = sum of "
                     f"clip((t - {LOW:g}) / {HIGH - LOW:g}, 0, 1); pieces = 8-connected components of t >= {HARD:g}, "
                     f"under {MIN_PIECE:g} px^2 ignored; lengths in px at 128 px, scaled with the width"),
    "blur": (f"blur factor = 1 + (edge width of the generated frames - the ground truth's, px at 128 px) / {BLUR_PX:g}, "
             "edge width = partly covered pixels per pixel of piece perimeter; it widens the area, static, shape and "
             "motion tolerances"),
    "border": f"a piece within {BORDER:g} px of the frame's border touches it",
    "frames": "generated frames, each against the frame before it (the last condition frame included)",
    "levels": LEVELS_SETTINGS,
    "vanish": ("families read by the velocity parser: a generated frame where the ground truth's ball is fully in view and the "
               "parser finds no ball of its colour (missing: nothing, noise, a smear; phybench.scoring.noball); not for a ball "
               "visible in fewer than 2 condition frames (it enters later: no model can know it, and velocity_error excludes the video)"),
    "step": (f"one step = {TELEPORT_FACTOR:g} x the ground truth's fastest per-frame move of a piece of that colour + "
             f"{TELEPORT_MARGIN:g} px x blur"),
}
VERDICT: dict[str, Any] = {"verdict": "abnormal = 1 if any rule fires in any generated frame, else 0; its mean over "
                                      "videos is the abnormal ratio"}


def settings(rules: Sequence[Rule] | None = None) -> dict[str, Any]:
    """The judge's settings block: what the rules share, each rule's own entries, the verdict.
    Built from the table on every call, so a row added to `RULES` shows here."""
    out = dict(COMMON)
    for rule in RULES if rules is None else rules:
        out.update(rule.settings if rule.block == "abnormal" else {})
    out.update(VERDICT)
    return out


SETTINGS: dict[str, Any] = settings()  # one dict for the life of the process: `added` updates it in place


@contextmanager
def added(rule: Rule, before: str | None = None) -> Iterator[Rule]:
    """`rule` in the table (before the row named `before`, else last) for the duration of the
    block, `SETTINGS` updated in place; the table and `SETTINGS` restored after it.  For tests
    and experiments: a rule that ships is a row written in `RULES`."""
    at = next((i for i, r in enumerate(RULES) if r.name == before), len(RULES))
    RULES.insert(at, rule)
    SETTINGS.clear()
    SETTINGS.update(settings())
    try:
        yield rule
    finally:
        RULES.remove(rule)
        SETTINGS.clear()
        SETTINGS.update(settings())

"""Motion without a visible cause: each body followed through a video and against its ground truth.

Part of the abnormality judge (`phybench.scoring.judge.abnormal`, whose SETTINGS state every number
here).  Each body of a dynamic colour is followed from its piece in the last condition frame,
in the generated video and in its ground truth; where neither touches anything, their motions
are compared: per-frame acceleration (jerk), velocity changes over windows (kink), the free-
flight acceleration (gravity), the angular rate of elongated bodies (spin), a body at rest that
moves (rest), and leaving the view where the ground truth stops (tunnel).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .findings import Ctx, Finding, touching
from .segment import Layer, Segmentation, box_gaps, eig

# Motion of tracked bodies (px at 128 px, per frame; times the blur factor)
GAP = 4.0  # px at 128 px: an object within this of a body touches it
TRACK_AREA = 0.35  # a body's piece within 35% of its ground truth's area is the body alone ...
TRACK_MIN_AREA = 30.0  # ... and one of at least 30 px^2 at 128 px is big enough to follow
JERK_ABS, JERK_REL, JERK_FRAMES = 0.5, 0.5, 3  # |a - a_gt| > 0.5 px + 0.5 |v_gt| in 3 frames ...
NOISE_K = 3.0  # ... + 3 x the ground truth's own robust spread (jerk and kink)
KINK_W = 3  # frames per window: velocity fitted before and after each frame
KINK_ABS, KINK_REL = 0.25, 0.05  # |dv - dv_gt| > 0.25 px + 0.05 |v_gt| ...
KINK_W_LONG, KINK_ABS_LONG, KINK_REL_LONG = 6, 0.15, 0.03  # ... or, over 6-frame windows, 0.15 px + 0.03 |v_gt|
START_W, START_MIN = 5, 3  # the velocity of the first 4-6 free generated frames against the condition frames'
START_REL_ACROSS = 0.02  # ... across the motion: at most 0.02 of the speed (tan 1 degree is 0.0175)
GRAVITY_MIN = 8  # frames in the longest free run for a fitted acceleration
GRAVITY_ABS, GRAVITY_REL = 0.008, 0.15  # |a - a_gt| > max(0.008 px/frame^2, 0.15 |a_gt|)
SPIN_ELONGATION = 1.6  # bodies this elongated have an angle to follow
SPIN_RATE, SPIN_WINDOWS = 0.05, 2  # rad/frame beyond the ground truth's, in 2 windows ...
SPIN_RATE_CONTACT = 0.1  # ... or this much where it touches something (contacts turn bodies)
REST_MOVE, REST_TURN, REST_HOLD = 3.0, 0.15, 3  # px at 128 px, rad; frames the ground truth stays at rest after
TUNNEL_STOP = 0.2  # px/frame: the ground truth's speed towards a side it stops or bounces at


@dataclass
class Track:
    pos: np.ndarray  # (T, 2) row, col px (nan where not tracked)
    angle: np.ndarray  # (T,) rad
    elongation: np.ndarray  # (T,)
    free: np.ndarray  # (T,) bool: tracked, touching nothing
    edge: np.ndarray  # (T,) px to the border (nan where lost)
    box: np.ndarray  # (T, 4) bounding box (nan where lost)
    area: np.ndarray  # (T,) px^2 of its piece (nan where lost)
    colour_area: np.ndarray  # (T,) px^2: its colour's whole (soft) area
    centroid: np.ndarray  # (T, 2) row, col px of its piece, on the border too (nan where lost) ...
    axis: np.ndarray  # (T,) rad: ... and the angle of its major axis
    piece: np.ndarray  # (T,) int: the index of its piece in the layer's frame (-1: lost)


def _follow(q: Layer, seeds: np.ndarray, ctx: Ctx, reach: float, back: bool = False) -> np.ndarray:
    """(n, T) the piece each of n bodies is drawn as in each frame from the last condition
    frame on (-1: lost, or shared with another body), following pieces from the seeds by
    nearest centroid within one step; with `back`, also back through the condition frames."""
    out = _follow_frames(q, seeds, range(ctx.ref, ctx.T), ctx.T, reach)
    if back and ctx.ref > 0:
        out[:, :ctx.ref] = _follow_frames(q, seeds, range(ctx.ref - 1, -1, -1), ctx.T, reach)[:, :ctx.ref]
    return out


def _follow_frames(q: Layer, seeds: np.ndarray, frames: range, T: int, reach: float) -> np.ndarray:
    """`_follow` over `frames`, in their order."""
    n = len(seeds)
    out = np.full((n, T), -1, int)
    cur = np.array(seeds, np.float64).reshape(n, 2)
    for t in frames:
        cents = q.centroids[t]
        if not n or not len(cents):
            continue
        d = np.sqrt(((cur[:, None] - cents[None]) ** 2).sum(-1))
        if n == 1 and not np.isnan(d).any():  # one body: its nearest piece (the first of equals), as below
            j = int(d[0].argmin())
            if d[0, j] <= reach:
                out[0, t] = j
                cur[0] = cents[j]
            continue
        rows, cols = np.divmod(np.argsort(d, axis=None, kind="stable"), d.shape[1])  # (body, piece) pairs, nearest first
        taken_i, taken_j = set(), set()
        for i, j in zip(rows.tolist(), cols.tolist()):
            if d[i, j] > reach:
                break
            if i in taken_i or j in taken_j:
                continue
            out[i, t] = j
            taken_i.add(int(i))
            taken_j.add(int(j))
        for i in range(n):  # a body left without a piece while its nearest is another's: they merged
            if out[i, t] < 0 and d[i].min() <= reach:
                out[out[:, t] == int(d[i].argmin()), t] = -1
        hit = out[:, t] >= 0
        cur[hit] = cents[out[hit, t]]
    return out


def tracks(q: Layer, seg: Segmentation, c: tuple[int, ...], seeds: np.ndarray, ctx: Ctx, reach: float,
           back: bool = False, contacts: bool = True) -> list[Track]:
    """Each seeded body's record, frame by frame (centroid, angle, elongation, free or touching);
    with `back`, through the condition frames too; without `contacts`, no frame is free (the
    contact tests are skipped: static bodies have no free flight to fit)."""
    which = _follow(q, seeds, ctx, reach, back)
    out = []
    for row in which:
        pos = np.full((ctx.T, 2), np.nan)
        angle, elong, edge = np.full(ctx.T, np.nan), np.full(ctx.T, np.nan), np.full(ctx.T, np.nan)
        area = np.full(ctx.T, np.nan)
        box = np.full((ctx.T, 4), np.nan)
        centroid, axis = np.full((ctx.T, 2), np.nan), np.full(ctx.T, np.nan)
        free = np.zeros(ctx.T, bool)
        for t in np.flatnonzero(row >= 0):
            j = int(row[t])
            edge[t], box[t], area[t] = q.piece_edge[t][j], q.boxes[t][j], q.piece_area[t][j]
            centroid[t] = q.centroids[t][j]
            major, minor, axis[t] = eig(*q.moments[t][j])
            if edge[t] < ctx.border:
                continue
            pos[t] = q.centroids[t][j]
            angle[t] = axis[t]
            elong[t] = np.sqrt(major / max(minor, 1e-9))
            if not contacts:
                continue
            others = q.boxes[t][np.arange(len(q.boxes[t])) != j]
            near_same = bool(len(others)) and bool((box_gaps(q.boxes[t][j:j + 1], others) <= ctx.gap).any())
            free[t] = not near_same and not touching(seg, c, q.boxes[t][j], int(t), ctx)
        out.append(Track(pos, angle, elong, free, edge, box, area, q.area, centroid, axis, row))
    return out


def colour_tracks(view: Any, gens: Segmentation, gts: Segmentation, c: tuple[int, ...], ctx: Ctx
                  ) -> tuple[list[Track], list[Track]]:
    """`tracks` of a dynamic colour's bodies (a `rules.ColourView`: its layers and reach) in the
    generated video and its ground truth, through the condition frames too (back), computed once
    per view: the judge's motion rules and the per-body metrics (`forward` of these) share them."""
    cached = view.__dict__.get("_tracks")
    if cached is None:
        seeds = view.g.centroids[ctx.ref]
        cached = (tracks(view.p, gens, c, seeds, ctx, view.reach, back=True),
                  tracks(view.g, gts, c, seeds, ctx, view.reach, back=True))
        view.__dict__["_tracks"] = cached
    return cached


def forward(track: Track, ref: int) -> Track:
    """`track` as `tracks` without `back` gives it: the frames before `ref` lost (each frame's
    record depends only on its own piece, so the rest is the same), in new arrays."""
    lost = {f: getattr(track, f).copy() for f in ("pos", "angle", "elongation", "edge", "box", "area", "centroid", "axis")}
    for x in lost.values():
        x[:ref] = np.nan
    free, piece = track.free.copy(), track.piece.copy()
    free[:ref], piece[:ref] = False, -1
    return Track(free=free, piece=piece, colour_area=track.colour_area, **lost)


def _slopes(x: np.ndarray, w: int) -> np.ndarray:
    """(T - w, ...) least-squares slope of x over each window of w + 1 frames [t, t + w]."""
    k = np.arange(w + 1) - w / 2
    k = k / (k * k).sum()
    n = len(x) - w
    return sum(k[i] * x[i:i + n] for i in range(w + 1))


def _spread(x: np.ndarray) -> float:
    """Robust spread (1.4826 x the median absolute deviation) of (n, 2) vectors, as one length; 0 for n < 3."""
    if len(x) < 3:
        return 0.0
    dev = np.linalg.norm(x - np.median(x, axis=0), axis=1)
    return float(1.4826 * np.median(dev))


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each run of True."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def motion(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, gts: Segmentation,
            ctx: Ctx, reach: float, pair: tuple[list[Track], list[Track]] | None = None) -> list[Finding]:
    """Motion without a visible cause: each body against its ground truth in free frames.  pair:
    both videos' tracks (`colour_tracks`), when the caller has them."""
    seeds = g.centroids[ctx.ref]
    found: dict[str, Finding] = {}
    if pair is None:
        pair = tracks(p, gens, c, seeds, ctx, reach, back=True), tracks(g, gts, c, seeds, ctx, reach, back=True)
    for gen, gt in zip(*pair, strict=True):
        for f in _motion_one(gen, gt, name, ctx):
            found.setdefault(f.rule, f)
    return list(found.values())


def _motion_one(gen: Track, gt: Track, name: str, ctx: Ctx) -> list[Finding]:
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.abs(gen.area / gt.area - 1.0) <= TRACK_AREA  # not merged with or split from a neighbour
    big = gt.area >= TRACK_MIN_AREA * ctx.scale_a * ctx.blur ** 2  # a few (blurred) pixels' centroid is too coarse
    free = gen.free & gt.free & whole & big
    out: list[Finding] = _start(gen, gt, free.copy(), name, ctx)
    free[:ctx.start] = False  # generated frames only: a picture shifted against the condition frames is no kink
    s, bl = ctx.scale_l, ctx.blur
    # jerk: per-frame acceleration
    if ctx.T >= 3:
        a_gen = gen.pos[2:] - 2 * gen.pos[1:-1] + gen.pos[:-2]
        a_gt = gt.pos[2:] - 2 * gt.pos[1:-1] + gt.pos[:-2]
        v_gt = np.linalg.norm(gt.pos[2:] - gt.pos[:-2], axis=1) / 2
        ok = free[2:] & free[1:-1] & free[:-2]
        diff = np.linalg.norm(a_gen - a_gt, axis=1)
        noise = NOISE_K * _spread(a_gt[ok])  # the ground truth's own centroid noise (a thin body's pixels)
        bad = np.flatnonzero(ok & (diff > JERK_ABS * s * bl + JERK_REL * v_gt + noise)) + 1
        if len(bad) >= JERK_FRAMES:
            out.append(Finding("jerk", name, bad.tolist(), f"acceleration {diff[bad[0] - 1]:.2f} px/frame^2 from its "
                                                           f"ground truth's at frame {int(bad[0])}: stutter or stop-go"))
    # kink: velocity change over windows, short (sharp turns) and long (slow drifts)
    for w, k_abs, k_rel in ((KINK_W, KINK_ABS, KINK_REL), (KINK_W_LONG, KINK_ABS_LONG, KINK_REL_LONG)):
        if ctx.T < 2 * w + 1 or "kink" in {f.rule for f in out}:
            continue
        v_gen, v_gt = _slopes(gen.pos, w), _slopes(gt.pos, w)  # v[i]: window [i, i + w]
        dv_gen, dv_gt = v_gen[w:] - v_gen[:-w], v_gt[w:] - v_gt[:-w]  # at frame i + w: after - before
        win = np.convolve(free.astype(int), np.ones(2 * w + 1, int), mode="valid") == 2 * w + 1  # [i, i + 2w] free
        speed = np.linalg.norm(v_gt[:-w], axis=1)
        diff = np.linalg.norm(dv_gen - dv_gt, axis=1)
        noise = NOISE_K * _spread(dv_gt[win])
        bad = np.flatnonzero(win & (diff > k_abs * s * bl + k_rel * speed + noise)) + w
        if bad.size:
            i = int(bad[0]) - w
            out.append(Finding("kink", name, bad.tolist(), f"velocity changed by {diff[i]:.2f} px/frame more than its "
                                                           f"ground truth's around frame {int(bad[0])}: drift, a turn or a "
                                                           "reversal without a cause"))
    w = KINK_W
    # spin: angular rate of an elongated body
    tracked = np.isfinite(gen.angle) & np.isfinite(gt.angle)
    tracked[:ctx.start] = False
    if ctx.T >= w + 1 and tracked.any() and np.nanmin(np.where(tracked, gt.elongation, np.inf)) >= SPIN_ELONGATION \
            and np.nanmin(np.where(tracked, gen.elongation, np.inf)) >= SPIN_ELONGATION:
        th_gen = np.unwrap(np.nan_to_num(gen.angle) * 2) / 2
        th_gt = np.unwrap(np.nan_to_num(gt.angle) * 2) / 2
        ok = np.convolve(tracked.astype(int), np.ones(w + 1, int), mode="valid") == w + 1
        all_free = np.convolve(free.astype(int), np.ones(w + 1, int), mode="valid") == w + 1
        rate = np.abs(_slopes(th_gen, w) - _slopes(th_gt, w))
        bad = np.flatnonzero(ok & (rate > np.where(all_free, SPIN_RATE, SPIN_RATE_CONTACT)))
        if len(bad) >= SPIN_WINDOWS:
            out.append(Finding("spin", name, (bad + w // 2).tolist(),
                               f"turns {rate[bad[0]]:.3f} rad/frame faster or slower than its ground truth, "
                               "touching nothing"))
    # gravity: acceleration fitted over the longest free run
    runs = [r for r in _runs(free) if r[1] - r[0] >= GRAVITY_MIN]
    if runs:
        a, b = max(runs, key=lambda r: (r[1] - r[0], -r[0]))
        tt = np.arange(a, b, dtype=np.float64)
        x = tt - tt.mean()
        fit_gen, res_gen = np.polyfit(x, gen.pos[a:b], 2, full=True)[:2]
        acc_gen, acc_gt = 2 * fit_gen[0], 2 * np.polyfit(x, gt.pos[a:b], 2)[0]
        diff = float(np.linalg.norm(acc_gen - acc_gt))
        # the fit's own standard error: a generated track that scatters about its parabola earns a wider band
        scatter = np.sqrt(np.sum(res_gen) / max(len(x) - 3, 1) / 2) if np.size(res_gen) else 0.0
        se = 2 * scatter * float(np.sqrt(np.linalg.inv(np.vander(x, 3).T @ np.vander(x, 3))[0, 0]))
        if diff > max(GRAVITY_ABS * s * bl, GRAVITY_REL * float(np.linalg.norm(acc_gt))) + NOISE_K * se:
            out.append(Finding("gravity", name, list(range(a, b)),
                               f"free-flight acceleration ({-acc_gen[0]:.3f}, {acc_gen[1]:.3f}) px/frame^2 (up, right) "
                               f"against the ground truth's ({-acc_gt[0]:.3f}, {acc_gt[1]:.3f}), frames {a}-{b - 1}"))
    out += _tunnel(gen, gt, name, ctx)
    out += _body_rest(gen, gt, name, ctx)
    return out


def _start(gen: Track, gt: Track, free: np.ndarray, name: str, ctx: Ctx) -> list[Finding]:
    """The velocity the generated frames start with against the one the condition frames show.

    The kink rule looks at generated frames only (a picture shifted against the condition
    frames moves every body at once, and is no kink), so a change of velocity at the first
    generated frame went unseen.  Here each velocity is fitted on one side only: over the
    free condition frames that end at the last one (at least 2) and over the first free
    generated frames (START_MIN + 1 to START_W + 1), so a constant shift of the generated
    picture cancels; the change is compared with the ground truth's own, as the kink's is.

    Where only the last condition frame is free (a scene that starts from one still frame, as
    every combinatorial scene does, or a ball that has just come into view), there is no
    condition velocity: the generated start is compared with the ground truth's start, which
    left the same frame.  The change is split along and across the ground truth's motion:
    along it, KINK_REL_LONG of its speed is allowed (a model a little fast or slow is the velocity
    error's to score); across it, only START_REL_ACROSS (just above tan 1 degree, so a picture
    turned by a degree passes), because a body veering sideways from its first generated frame
    is motion without a cause, however fast it travels."""
    c = ctx.start
    if c < 1 or c >= ctx.T or not free[c - 1]:
        return []
    w = 0
    while w < START_W and c + w + 1 < ctx.T and free[c + w + 1] and free[c]:
        w += 1
    if w < START_MIN or not free[c]:
        return []
    first = c - 1
    while first > 0 and free[first - 1]:  # the free condition frames that end at the last one
        first -= 1
    def change(pos: np.ndarray) -> np.ndarray:
        after = _slopes(pos[c:c + w + 1], w)[0]
        return after - _slopes(pos[first:c], c - 1 - first)[0] if c - first >= 2 else after
    ref = gt.pos[first:c] if c - first >= 2 else gt.pos[c:c + w + 1]  # (n, 2) px: the motion the start is judged by
    v_ref = _slopes(ref, len(ref) - 1)[0]
    v_gt = float(np.linalg.norm(v_ref))
    d = change(gen.pos) - change(gt.pos)  # (2,) px/frame
    diff = float(np.linalg.norm(d))
    across = float(abs(d[0] * v_ref[1] - d[1] * v_ref[0]) / v_gt) if v_gt > 0 else diff
    floor = KINK_ABS_LONG * ctx.scale_l * ctx.blur
    allowed, allowed_across = floor + KINK_REL_LONG * v_gt, floor + START_REL_ACROSS * v_gt
    if diff <= allowed and across <= allowed_across:
        return []
    what = (f"{diff:.2f} px/frame from" if diff > allowed else f"{across:.2f} px/frame across the motion of")
    return [Finding("start", name, list(range(c, c + w + 1)),
                    f"the generated frames start at a velocity {what} the condition frames' (beyond its ground "
                    f"truth's change; at most {allowed:.2f} allowed, {allowed_across:.2f} across): a change of motion "
                    "without a cause")]


def _body_rest(gen: Track, gt: Track, name: str, ctx: Ctx) -> list[Finding]:
    """A body at rest in the ground truth (and for REST_HOLD frames more) moves or turns."""
    ref = ctx.ref
    if not np.isfinite(gt.pos[ref]).all() or not np.isfinite(gen.pos[ref]).all():
        return []
    still = np.linalg.norm(gt.pos - gt.pos[ref], axis=1) <= REST_MOVE * ctx.scale_l / 4
    turned_gt = np.abs(np.angle(np.exp(2j * (gt.angle - gt.angle[ref])))) / 2
    elongated = gt.elongation[ref] >= SPIN_ELONGATION
    if elongated:
        still &= turned_gt <= REST_TURN / 4
    still[:ref] = True
    rest_until = int(np.argmin(still)) if not still.all() else ctx.T  # first frame the ground truth moves
    first = ctx.start  # against the first generated frame: a picture shifted against the condition frames is no motion
    if first >= ctx.T or not np.isfinite(gen.pos[first]).all():
        return []
    moved = np.linalg.norm(gen.pos - gen.pos[first], axis=1) > REST_MOVE * ctx.scale_l * ctx.blur
    if elongated:
        moved |= np.abs(np.angle(np.exp(2j * (gen.angle - gen.angle[first])))) / 2 > REST_TURN
    bad = [t for t in range(ctx.start, min(rest_until - REST_HOLD, ctx.T)) if moved[t]]
    if not bad:
        return []
    return [Finding("rest", name, bad, f"a body at rest in the ground truth moved or turned from frame {bad[0]} on "
                                       "(motion without cause)")]


def _tunnel(gen: Track, gt: Track, name: str, ctx: Ctx) -> list[Finding]:
    """The body leaves the view through a side its ground truth stops at or bounces from."""
    seen = np.flatnonzero(np.isfinite(gen.edge))
    if not seen.size or seen[-1] >= ctx.T - 1 or seen[-1] < ctx.ref:
        return []
    t = int(seen[-1]) + 1  # lost from here to the end
    if gen.edge[t - 1] >= ctx.border or not np.isfinite(gt.edge[t:]).all():
        return []  # not at the border, or the ground truth leaves (or is lost) too
    if gen.colour_area[t:].max() > gen.colour_area[t - 1] - 0.5 * gen.area[t - 1]:
        return []  # its colour kept the area: merged with another piece, not gone
    r0, r1, c0, c1 = gen.box[t - 1]
    side = int(np.argmin([r0, c0, ctx.H - r1, ctx.W - c1]))  # top, left, bottom, right
    axis, sign = (0, -1.0) if side == 0 else (1, -1.0) if side == 1 else (0, 1.0) if side == 2 else (1, 1.0)
    mine = sign * np.diff((gen.box[max(t - 3, ctx.ref):t, 2 * axis] + gen.box[max(t - 3, ctx.ref):t, 2 * axis + 1]) / 2)
    if not mine.size or not np.isfinite(mine).all() or float(mine.min()) < TUNNEL_STOP * ctx.scale_l:
        return []  # it was not on its way out (a body at the border that blur dissolves)
    centre = (gt.box[t - 1:, 2 * axis] + gt.box[t - 1:, 2 * axis + 1]) / 2  # box centre: defined at the border too
    towards = sign * np.diff(centre)
    if towards.size and float(towards.min()) < TUNNEL_STOP * ctx.scale_l:
        return [Finding("tunnel", name, [t], f"left the view through the {('top', 'left', 'bottom', 'right')[side]} "
                                             f"at frame {t}, where its ground truth stops or bounces and stays in view")]
    return []

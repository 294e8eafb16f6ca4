"""The judge's frame-order rules: a body that jumps for one frame, a scene that pauses (issue 48 item 4).

- **jump**, per tracked body of a dynamic colour (`motion.colour_tracks`, on the border or
  touching things too, where its piece is the body alone): a single frame t displaced by d and
  back leaves, in the centroid's second differences a(t) = p(t+1) - 2 p(t) + p(t-1), the
  pattern (d, -2d, d) at t-1, t, t+1 on top of the motion's own smooth acceleration (read from
  a(t-2) and a(t+2), which the displaced frame does not touch).  A contact changes the velocity
  once, (0, dv, 0); only a displacement (or frames shown out of order: a swap is (v, -3v, 3v, -v))
  gives both neighbours against the middle.  The size read is the least of |e(t)| / 2 and the
  two neighbours' parts against e(t) (e: a less that smooth acceleration); it must exceed
  JUMP_PX px (at 128 px) x blur plus the ground truth's own in those frames.
- **jump** of a static colour (a static body never moves): the colour's coverage in frame t
  differs from frames t-1 and t+1, which agree with each other: min(|S_t - S_t-1|,
  |S_t - S_t+1|) - |S_t+1 - S_t-1| (summed coverage, px^2) beyond JUMP_STATIC px^2 (at 128 px)
  x blur plus the ground truth's own.
- **pause**: the scene stands still (no piece of any dynamic colour moves PAUSE_STILL px from
  its nearest piece of the frame before, while a ground-truth piece moves PAUSE_MOVE px) for one
  frame or more, after it moved into the frame before and before it moves on: a time that stops
  and goes on, which no contact explains (a contact stops one body, not every body at once).

Both read the pieces and coverage the judge already has (`Segmented`); the static colours' changes
are summed in their extents.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .findings import Finding
from .motion import TRACK_AREA, Track, colour_tracks

JUMP_PX = 0.75  # px at 128 px (1.5 px at 256 px), times the blur factor
JUMP_STATIC = 8.0  # px^2 at 128 px, times the blur factor
PAUSE_STILL, PAUSE_MOVE = 0.1, 0.5  # px at 128 px: no piece moves farther (still) / some piece moves this far

PLANTED_JUMP = tuple(f"jump-{m}-{d}" for m in ("moving", "rest") for d in (3, 4, 6)) + tuple(
    f"shuffle-{n}" for n in (2, 3, 5))
PLANTED_PAUSE = tuple(f"pause-{n}" for n in (2, 3, 5))

SETTINGS = {
    "jump": (f"a tracked body's centroid (its piece alone: within {TRACK_AREA:g} of its ground truth's area, off the "
             "border) shows in frames t-1, t, t+1 second differences e = a - (a(t-2) + a(t+2)) / 2 with both neighbours "
             f"against e(t): min(|e(t)| / 2, -e(t-1).u, -e(t+1).u) (u along e(t)) beyond {JUMP_PX:g} px x blur + the "
             "ground truth's own (a single frame displaced, or frames out of order); a static colour whose summed "
             "coverage in frame t differs from frames t-1 and t+1 by min(|S(t) - S(t-1)|, |S(t) - S(t+1)|) - "
             f"|S(t+1) - S(t-1)| > {JUMP_STATIC:g} px^2 x blur + the ground truth's own"),
    "pause": (f"no piece of any dynamic colour moves more than {PAUSE_STILL:g} px from its nearest piece of the frame "
              f"before (same count of pieces) in frame t while a ground-truth piece moves at least {PAUSE_MOVE:g} px, "
              f"after a frame where some generated piece moved {PAUSE_MOVE:g} px and before a later one: the scene stops "
              "and goes on"),
}


def _zigzag(pos: np.ndarray) -> np.ndarray:
    """(T,) px: the single-frame displacement each frame's centroid shows against its neighbours (0 where unread)."""
    T = len(pos)
    out = np.zeros(T)
    if T < 7:
        return out
    a = np.full((T, 2), np.nan)
    a[1:-1] = pos[2:] - 2 * pos[1:-1] + pos[:-2]  # a[t]: second difference centred on t
    base = (a[1:-5] + a[5:-1]) / 2  # (T - 6, 2): smooth acceleration at t = 3 .. T - 4 from a(t-2), a(t+2)
    e_prev, e_mid, e_next = a[2:-4] - base, a[3:-3] - base, a[4:-2] - base
    size = np.linalg.norm(e_mid, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = e_mid / size[:, None]
        score = np.minimum.reduce([size / 2, -(e_prev * u).sum(1), -(e_next * u).sum(1)])
    out[3:-3] = np.where(np.isfinite(score), np.maximum(score, 0.0), 0.0)
    return out


def _whole(gen: Track, gt: Track) -> np.ndarray:
    """(T, 2) the generated centroid where its piece is the body alone, off the border (nan elsewhere)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.abs(gen.area / gt.area - 1.0) <= TRACK_AREA
    return np.where(whole[:, None], gen.pos, np.nan)


def jump_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check (`pr` a `rules.Segmented`): each tracked body of dynamic colour c."""
    ctx = pr.ctx
    v = pr.dynamic[c]
    gens, gts = colour_tracks(v, pr.gens, pr.gts, c, ctx)
    for gen, gt in zip(gens, gts, strict=True):
        z_gen, z_gt = _zigzag(_whole(gen, gt)), _zigzag(gt.pos)
        own = np.maximum.reduce([z_gt, np.roll(z_gt, 1), np.roll(z_gt, -1)])
        over = z_gen - own - JUMP_PX * ctx.scale_l * ctx.blur
        over[:ctx.start] = -1.0
        bad = np.flatnonzero(over > 0)
        if bad.size:
            t = int(bad[np.argmax(over[bad])])
            return [Finding("jump", name, [int(x) for x in bad[:5]],
                            f"a body displaced {z_gen[t]:.1f} px for a single frame at frame {t} (ground truth "
                            f"{own[t]:.1f} px, {JUMP_PX * ctx.scale_l * ctx.blur:.1f} px allowed beyond it)")]
    return []


def _changes(soft: np.ndarray, extent: Any) -> tuple[np.ndarray, np.ndarray]:
    """((T,) |S_t - S_t-1| summed, (T,) |S_t+1 - S_t-1| summed; 0 at the ends) over the colour's extent."""
    T = soft.shape[0]
    x = soft if extent is None else soft[:, extent[0]:extent[1], extent[2]:extent[3]]
    one, two = np.zeros(T), np.zeros(T)
    if T >= 3 and x.size:
        one[1:] = np.abs(x[1:] - x[:-1]).sum(axis=(1, 2))
        two[1:-1] = np.abs(x[2:] - x[:-2]).sum(axis=(1, 2))
    return one, two


def _union(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))


def static_jump_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check on a static colour c: one frame differs from both neighbours, which agree."""
    ctx = pr.ctx
    p, g = pr.gens.layers[c], pr.gts.layers[c]
    box = _union(p.extent, g.extent)
    (p1, p2), (g1, g2) = _changes(p.soft, box), _changes(g.soft, box)

    def glitch(one: np.ndarray, two: np.ndarray) -> np.ndarray:
        out = np.zeros_like(one)
        out[1:-1] = np.minimum(one[1:-1], one[2:]) - two[1:-1]
        return out
    over = glitch(p1, p2) - np.maximum(glitch(g1, g2), 0.0) - JUMP_STATIC * ctx.scale_a * ctx.blur
    over[:ctx.start] = -1.0
    bad = np.flatnonzero(over > 0)
    if not bad.size:
        return []
    return [Finding("jump", name, [int(x) for x in bad[:5]],
                    f"a static colour's coverage differs from both neighbouring frames by {over.max():.0f} px^2 more "
                    "than they differ from each other")]


def _moves(q: Any, T: int) -> np.ndarray:
    """(T,) px: the farthest any piece of a layer lies from its nearest piece of the frame before (inf where the
    count of pieces changes; 0 at frame 0)."""
    out = np.zeros(T)
    for t in range(1, T):
        a, b = q.centroids[t], q.centroids[t - 1]
        if len(a) != len(b):
            out[t] = np.inf
        elif len(a):
            out[t] = float(np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)).min(axis=1).max())
    return out


def scene_moves(pr: Any) -> tuple[np.ndarray, np.ndarray]:
    """((T,) generated, (T,) ground truth) px: the farthest move of any dynamic colour's piece from the frame
    before (cached on `pr`: the pause check runs once per colour)."""
    cached = pr.__dict__.get("_scene_moves")
    if cached is None:
        T = pr.ctx.T
        gen, gt = np.zeros(T), np.zeros(T)
        for v in pr.dynamic.values():
            gen, gt = np.maximum(gen, _moves(v.p, T)), np.maximum(gt, _moves(v.g, T))
        cached = pr.__dict__["_scene_moves"] = (gen, gt)
    return cached


def pause_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check: reported once, on the first dynamic colour (the scene stands still, not a colour)."""
    ctx = pr.ctx
    if c != next(iter(pr.dynamic)):
        return []
    gen, gt = scene_moves(pr)
    s = ctx.scale_l
    still = (gt >= PAUSE_MOVE * s) & (gen <= PAUSE_STILL * s)
    on = gen >= PAUSE_MOVE * s
    for t in np.flatnonzero(still[ctx.start:]) + ctx.start:
        run_end = t
        while run_end + 1 < ctx.T and still[run_end + 1]:
            run_end += 1
        if t - 1 >= ctx.start and on[t - 1] and on[run_end + 1:].any():
            return [Finding("pause", name, list(range(int(t), int(run_end) + 1))[:5],
                            f"the scene stands still in frames {t}-{run_end} (no piece moves {PAUSE_STILL * s:.2f} px; "
                            f"the ground truth's move up to {gt[t]:.1f} px) and then moves on")]
    return []


def order_rows(rule: Any) -> list[Any]:
    """This module's rows of the judge's table (`rule` is `rules.Rule`, passed in: `rules` imports this module)."""
    return [
        rule("jump", jump_check, {"jump": SETTINGS["jump"]}, planted_kinds=PLANTED_JUMP, colours="dynamic",
             summary="a body displaced for a single frame, or frames out of order"),
        rule("jump-static", static_jump_check, {}, planted_kinds=(), colours="static",
             summary="a static colour displaced for a single frame (settings: jump)"),
        rule("pause", pause_check, {"pause": SETTINGS["pause"]}, planted_kinds=PLANTED_PAUSE, colours="dynamic",
             summary="the scene stands still, then moves on"),
    ]

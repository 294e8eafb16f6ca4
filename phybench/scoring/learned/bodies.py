"""Per-body trajectories of multi-body scenes, read from pixels: pose error and the learned law.

The velocity parser reads one or two coloured balls; a PHYRE-style scene has bars, jars and
balls that share colours (grey and black).  Here every body, static ones included, is followed
by the judge's tracker (`phybench.scoring.judge.motion.tracks`: soft-coverage pieces, nearest
centroid within one step, seeded from the last condition frame), in the generated video and in
its ground truth, from the one segmentation the judge makes
(`phybench.scoring.judge.abnormal.segmented_sample`; a static colour's pieces are labelled from its
coverage here, `phybench.scoring.judge.segment.with_pieces`), so the judge and these metrics cost one
pass.  What else the generated video draws is counted by `phybench.scoring.judge.census`: every
generated piece is assigned to a body or is *extra* (appeared, duplicated, split off, away
from the border), and a ground-truth piece nothing is drawn for is *missing*.

* **body_position_error** (world units): per body and generated frame, the distance between
  the generated and the ground-truth centroid.  A body the tracker loses for at most `BRIDGE`
  frames is bridged linearly; where it is lost longer (blur or a codec merges two touching
  pieces of one colour), the nearest generated piece of its colour stands in, and with none
  the frame counts `LOST` of the view's width, the most any frame counts.  Mean over frames,
  then over bodies; each extra body (the most extra pieces in any generated frame) is one more
  body, costing `LOST` of the width in every generated frame it is present and 0 in the rest.
  The bodies of colours only static bodies have add their error but are not counted in the
  mean: one that moves costs what it moved, one that stays still costs nothing, and a scene's
  scenery does not dilute its moving bodies' error.
* **body_angle_error** (rad): the difference of the major axes of elongated bodies (bars,
  jars: a disc has no angle to read), modulo pi, over the frames where both are followed
  (a lost body is the position error's to count).

Both are measured between two videos through the same tracker, so the ground truth scores
exactly 0 and a degraded copy of it a little (docs/results.md gives the floor).

The learned law of a scene (`tracked_law`) is fitted to the same tracks: the free-flight
acceleration of each body over its runs of frames touching nothing (one parabola fitted to
them all, downwards positive, world units / s^2) and the angular velocity of elongated bodies over
such runs (rad / s); a video's value is the median over its bodies.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from ..judge.census import Census, census
from .lawfit import poly_fit
from ..judge.segment import MIN_PIECE, with_pieces

BRIDGE = 3  # frames: a gap this short in a generated track is bridged linearly
LOST = 0.25  # share of the view's width a lost body costs per frame (and the most any frame costs)
ELONGATED = 1.6  # bodies at least this elongated (ratio of axes) have an angle to compare
RUN_MIN = 5  # frames: the shortest free run a law is fitted to ...
FREE_MIN = 8  # ... and the fewest free frames in all a body's runs
SETTINGS = {
    "position": "per body and generated frame, |generated centroid - ground-truth centroid| (world units), both "
                "followed by the judge's tracker from the last condition frame; gaps of <= 3 frames bridged "
                "linearly, longer ones measured to the nearest generated piece of the body's colour; mean over "
                "frames, then over the bodies of colours that have a dynamic body (and the extra bodies), the "
                "bodies of colours only static bodies have adding their error without counting in the mean",
    "bodies": "every body of the scene, static ones too (a static colour's pieces labelled from its coverage as the "
              "judge labels a dynamic colour's), seeded from its pieces in the ground truth's last condition frame",
    "extra": "per generated frame and colour, a generated piece (without the judge's dust) is assigned to the body whose "
             "track follows it, else one to one (nearest centroid within one step) to a ground-truth piece no followed "
             "body takes, else it is drawn beside a body (its box within the judge's contact gap of a ground-truth or "
             "assigned piece of its colour) or never solid (coverage below the break rule's 0.95), else it is extra "
             "if at least 0.25 x its colour's smallest piece off the border in the last condition frame; extras are "
             "linked frame to frame within one step, and a chain seen in fewer than 2 frames, or one that enters at "
             "the border (its first "
             "piece touching it or within the colour's fastest ground-truth move of leaving it) is not counted, nor "
             "a frame where its piece is that near the border; a video's extra bodies are the most extras in any "
             "generated frame, each one more body in the mean over bodies costing the lost share of the width in "
             "every generated frame it is present (0 in the rest); the per-video count is the detail bodies_extra",
    "missing": "a ground-truth piece off the border (as for extras) that no generated piece is assigned to or drawn beside; "
               "the per-video count (the detail bodies_missing) is the most in any generated frame, reported only (a "
               "followed body's loss is the position error's)",
    "bridge_frames": BRIDGE,
    "lost_share_of_width": LOST,
    "angle": "per body with elongation >= 1.6, the difference of the major axes modulo pi (rad), over the frames "
             "where both are followed (gaps of <= 3 frames bridged); mean over frames, then bodies",
    "elongated": ELONGATED,
    "law": "per body, over its runs of >= 5 generated frames touching nothing (>= 8 in all): one downward acceleration of the "
           "centroid fitted jointly (world units / s^2; a start and a speed per run), and a line fit of the "
           "unwrapped axis angle over its longest run (rad / s, elongated bodies); the video's value is the median "
           "over bodies",
    "run_min_frames": RUN_MIN,
    "free_min_frames": FREE_MIN,
}


@dataclass
class BodyTracks:
    """Every followed body of one video: generated and ground-truth tracks, and the scale."""

    gen: list[Any]  # `motion.Track` per body: the dynamic colours' bodies first, then the static colours'
    gt: list[Any]  # the ground truth's, same order
    pieces: list[list[np.ndarray]]  # per body: its colour's generated pieces, T arrays (n_t, 2) of centroids
    start: int  # first generated frame
    width: float  # px
    unit: float  # world units per px
    dt: float  # s per frame
    moving: int = 0  # the first `moving` bodies are of a colour with a dynamic body: the law's
    census: Census | None = None  # extra and missing pieces per frame (`phybench.scoring.judge.census`)
    errors: tuple[float, float] | None = None  # `pose_errors`, once computed


def body_tracks(sample: Any) -> BodyTracks | None:
    """The tracks of every body, static ones too, and the census of what else the generated video
    draws (cached on the sample); None without a ground truth."""
    cached = sample.__dict__.get("_body_tracks", False)
    if cached is not False:
        return cached
    result = None
    if sample.gt_video is not None:
        from ..judge.abnormal import colour_view, segmented_sample
        from ..judge.motion import colour_tracks, forward, tracks

        pr = segmented_sample(sample)
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
        result = BodyTracks(gen, gt, pieces, ctx.start, float(ctx.W), float(sample.manifest["world_size"]) / ctx.W,
                            float(sample.manifest["frame_interval"]), moving, census(views, ctx))
    sample.__dict__["_body_tracks"] = result
    return result


def _bridged(x: np.ndarray, start: int) -> np.ndarray:
    """(T, k) x with interior gaps of at most BRIDGE frames (from `start` on) filled linearly."""
    out = x.copy()
    ok = np.isfinite(x).all(axis=1)
    t = start
    while t < len(x):
        if ok[t]:
            t += 1
            continue
        stop = t
        while stop < len(x) and not ok[stop]:
            stop += 1
        if t > 0 and ok[t - 1] and stop < len(x) and stop - t <= BRIDGE:
            w = (np.arange(t, stop) - (t - 1)) / (stop - (t - 1))
            out[t:stop] = x[t - 1] + w[:, None] * (x[stop] - x[t - 1])
        t = stop
    return out


def _axis_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| between axis angles (defined modulo pi), in [0, pi/2]."""
    d = np.mod(a - b + np.pi / 2, np.pi) - np.pi / 2
    return np.abs(d)


def pose_errors(bt: BodyTracks) -> tuple[float, float]:
    """(position error in world units, angle error in rad) of one video; NaN where nothing is comparable."""
    cap = LOST * bt.width
    pos_means: list[float] = []  # bodies of colours with a dynamic body, then the extra bodies
    ang_means: list[float] = []
    static_means: list[float] = []  # bodies of colours only static bodies have
    for i_body, (gen, gt, pieces) in enumerate(zip(bt.gen, bt.gt, bt.pieces)):
        frames = np.arange(bt.start, len(gt.centroid))
        seen = frames[np.isfinite(gt.centroid[frames]).all(axis=1)]
        if not seen.size:
            continue
        p = _bridged(gen.centroid, bt.start)[seen]
        d = np.linalg.norm(p - gt.centroid[seen], axis=1)
        for i in np.flatnonzero(~np.isfinite(d)):  # not followed (merged, split): its colour's nearest piece
            here = pieces[seen[i]]
            if len(here):
                d[i] = float(np.sqrt(((here - gt.centroid[seen[i]]) ** 2).sum(axis=1)).min())
        mean = float(np.where(np.isfinite(d), np.minimum(d, cap), cap).mean()) * bt.unit
        (pos_means if i_body < bt.moving else static_means).append(mean)
        if np.isfinite(gt.elongation[seen]).any() and np.nanmedian(gt.elongation[seen]) >= ELONGATED:
            a = _bridged(gen.axis[:, None], bt.start)[seen, 0]
            e = _axis_difference(a, gt.axis[seen])
            if np.isfinite(e).any():  # frames where both are followed: a lost body is the position's to count
                ang_means.append(float(np.nanmean(e)))
    if bt.census is not None and pos_means:  # each extra body the model drew costs LOST in every frame it is present
        extra = bt.census.extra[bt.start:]
        pos_means += [float(np.mean(np.where(extra > k, cap, 0.0))) * bt.unit for k in range(bt.census.extra_bodies)]
    # a static-only colour's body that moves costs what it moved, one that stays costs nothing and
    # does not count in the mean: keeping the scenery still earns no credit against the moving bodies
    if pos_means:
        pos = (sum(pos_means) + sum(static_means)) / len(pos_means)
    else:
        pos = float(np.mean(static_means)) if static_means else float("nan")
    ang = float(np.mean(ang_means)) if ang_means else float("nan")
    return pos, ang


def _free_runs(track: Any, start: int) -> list[tuple[int, int]]:
    """[start, stop) of each run of at least RUN_MIN generated frames where the body is followed and free
    (none when they add up to fewer than FREE_MIN)."""
    ok = track.free.copy()
    ok[:start] = False
    ok &= np.isfinite(track.pos).all(axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]) if b - a >= RUN_MIN]
    return runs if sum(b - a for a, b in runs) >= FREE_MIN else []


def _fit_track(track: Any, bt: BodyTracks) -> tuple[float, float]:
    """(downward acceleration, world units / s^2; angular velocity, rad / s) of one body, fitted
    jointly over its free runs: one acceleration (or rate) shared, a start and speed per run."""
    runs = _free_runs(track, bt.start)
    if not runs:
        return float("nan"), float("nan")
    # Closed form, no LAPACK (the same bits on every CPU): within a run t is centred on a
    # symmetric grid, so t is orthogonal to 1 and t^2 and each run's speed drops out; the
    # shared t^2 coefficient is the pooled regression of x - mean(x) on t^2 - mean(t^2).
    num, den = [], []
    for a, b in runs:
        t = (np.arange(a, b) - (a + b - 1) / 2) * bt.dt
        x = track.pos[a:b, 0] * bt.unit  # image rows grow downwards
        q = t * t - math.fsum(t * t) / len(t)
        r = x - math.fsum(x) / len(x)
        num.append(math.fsum(q * r))
        den.append(math.fsum(q * q))
    total = math.fsum(den)
    accel = 2.0 * math.fsum(num) / total if total > 0 else float("nan")
    omega = float("nan")
    turning = [(a, b) for a, b in runs if np.nanmedian(track.elongation[a:b]) >= ELONGATED]
    if turning:
        a, b = max(turning, key=lambda r: r[1] - r[0])
        angle = np.unwrap(2.0 * track.angle[a:b]) / 2.0  # an axis: unwrap modulo pi
        if np.isfinite(angle).all():
            line = poly_fit(np.arange(a, b) * bt.dt, angle, 1)
            omega = line[0][1] if line is not None else float("nan")
    return accel, omega


LAW_PARAMS = ("gravity", "angular_velocity", "bodies_fitted")


def _law_of(tracks: list[Any], bt: BodyTracks) -> dict[str, float]:
    fits = [_fit_track(tr, bt) for tr in tracks]
    acc = [a for a, _ in fits if np.isfinite(a)]
    omg = [abs(w) for _, w in fits if np.isfinite(w)]
    return {"gravity": float(np.median(acc)) if acc else float("nan"),
            "angular_velocity": float(np.median(omg)) if omg else float("nan"),
            "bodies_fitted": float(len(acc))}


def tracked_law(sample: Any) -> tuple[dict[str, float], dict[str, float]] | None:
    """(fit, truth): the scene's law from the generated video's tracks and from the ground truth's."""
    bt = body_tracks(sample)
    if bt is None:
        return None
    return _law_of(bt.gen[:bt.moving], bt), _law_of(bt.gt[:bt.moving], bt)  # static bodies have no law to fit


def _errors(sample: Any) -> tuple[float, float]:
    """`pose_errors` of a sample, computed once for both metrics."""
    bt = body_tracks(sample)
    if bt is None:
        return float("nan"), float("nan")
    if bt.errors is None:
        bt.errors = pose_errors(bt)
    return bt.errors


def body_position_error(sample: Any) -> float:
    return _errors(sample)[0]


def body_angle_error(sample: Any) -> float:
    return _errors(sample)[1]


def body_details(sample: Any) -> dict[str, Any]:
    """The census's per-video counts for the detail row: the most extra and missing bodies in any
    generated frame (`phybench.scoring.judge.census`); none without a ground truth."""
    bt = body_tracks(sample)
    if bt is None or bt.census is None:
        return {}
    return {"bodies_extra": bt.census.extra_bodies, "bodies_missing": bt.census.missing_bodies}

"""The abnormality judge: does a generated video break what every rigid-body scene keeps?

The paper counts "abnormal" videos by hand (objects that vanish, rigid bars that break, jars
that deform, balls that stop or drift for no reason).  This judge reads pixels, for any family.
It must hold on what real models produce (blurry, compressed, resampled, shifted frames), so
it never thresholds a fixed pixel count against a sharp frame:

* **Segmentation by soft coverage.**  Every pixel away from the background is projected onto
  the line from the background to each object colour of the scene (the row's bodies say which
  colours exist and which are static); it belongs to the colour whose line it lies nearest
  (within a residual), with coverage t in [0, 1].  A colour's *area* is the sum of a
  dead-zoned coverage (t below 0.15 is noise or a colour cast, above 0.85 is full), which blur,
  resampling and codecs preserve; its *pieces* are the 8-connected components of t >= 0.5
  (where a blurred edge crosses the sharp one), with centroids, second moments and bounding
  boxes from one labelling pass per colour and one bincount per moment.
* **Tolerances from the video.**  Each rule's tolerance is a fraction of what it measures
  (area, perimeter, speed), scaled with the resolution, widened by the blur the submission's
  own frames show (the width of its colour edges against the ground truth's), and never
  tighter than the ground truth's own change.  The view's border counts as touched within a
  few pixels, so a picture moved by a pixel or two is not a body leaving.

Rules (per colour; generated frames only, each against the frame before it, the last
condition frame included; `SETTINGS` states every number, and every results file quotes it):

* **area**: vanish / appear / deform / colour change between consecutive frames, unless the
  border explains it; **break**: more pieces than bodies (or than the ground truth shows);
  **teleport**: a piece farther than one step from its colour's pieces in the frame before;
  **merge**: fewer pieces than the ground truth ever shows; **overlap**: a gradual area change
  against the last condition frame ('interpenetration' when another object touches it);
  **shape**: a rigid body keeps its elongation and compactness (second moments);
* **static** / **rest**: a static colour, or a body at rest in the ground truth, stays put
  (smoothed coverage against the last condition frame, after registering a global shift of
  at most 2 px);
* **motion without cause**, over each tracked body (a colour of one dynamic body, drawn as
  one piece off the border), in frames where neither it nor its ground truth touches
  anything: **jerk** (per-frame acceleration the ground truth does not have: stutter,
  stop-go), **kink** (a change of velocity over a window: drift, a turn, a reversal in
  mid-air), **gravity** (the free-flight acceleration fitted over the longest free run, of
  the wrong direction or size), **spin** (a bar turning at a rate its ground truth does not),
  **freeze** / **stop** (standing still while the ground truth moves: in mid-air, or dead at a
  contact), **tunnel** (leaving the view through a side where the ground truth stops or
  bounces: through a wall or floor).

What the judge cannot see (a smooth video at the wrong speed, a changed restitution) is what
the velocity error measures; docs/judge.md's calibration table says which kind each catches.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import ndimage

BACKGROUND = (255, 255, 255)

# Segmentation
INK = 12  # levels: a pixel within this of the background on every channel is background
QUANT = 2  # colours are read in bins of 4 levels a channel (a table per palette; coverage to +/- 0.02)
RESIDUAL = 0.3  # a pixel belongs to a colour if it lies within 0.3 x |background - colour| of its line ...
RESIDUAL_MIN = 24.0  # ... or 24 levels, whichever is larger (colour casts, codec chroma)
NEAR = 4.0  # px at 128 px: a pixel two colours could explain goes to one with a solid piece this near ...
SURE = 0.35  # ("solid": a pixel whose best reading scores at most this, with t >= 0.5)
SOLID = 1.0  # ... else among the lines within reach, the pixel goes to the least residual / reach + SOLID x (1 - coverage)
LOW, HIGH = 0.15, 0.85  # soft coverage: (t - LOW) / (HIGH - LOW), clipped to [0, 1]
HARD = 0.5  # a pixel is in a piece at coverage t >= 0.5
MIN_PIECE = 4.0  # px^2 at 128 px: smaller pieces are dust
BORDER = 3.0  # px at 128 px: a piece this close to the frame's border touches it
PERIMETER_EVERY = 4  # the blur estimate counts perimeters on every 4th generated frame
BLUR_PX = 2.0  # blur factor = 1 + (extra edge width of the generated frames, px at 128 px) / 2 px
DUST_REL = 0.25  # pieces under a quarter of the ground truth's smallest piece (last condition frame) are dust
# Frame-to-frame rules
AREA_REL = 0.15  # relative area change allowed ...
AREA_ABS = 6.0  # ... or px^2 at 128 px, times the blur factor ...
AREA_EDGE = 0.5  # ... or px^2 per px of the perimeter of a disc of that area, times the blur factor
TELEPORT_FACTOR = 1.5  # one step: 1.5 x the ground truth's fastest per-frame move of the colour ...
TELEPORT_MARGIN = 6.0  # ... + 6 px at 128 px (a picture shifted by 2 px moves every body)
# Static and at-rest colours
SHIFT = 2.0  # px at 128 px: a global shift of the picture registered away
STATIC_SIGMA = 1.0  # px at 128 px: both frames smoothed before they are compared
STATIC_BASE = 0.4  # px^2 per px of the colour's perimeter ...
STATIC_EDGE = 0.5  # ... + this per unit of blur factor above 1 ...
STATIC_GT = 2.0  # ... + twice the ground truth's own largest change (contacts mix colours at the rim)
REST_GT = 4.0  # px^2 at 128 px: a colour whose ground truth changes less than this is at rest
# Shape
SHAPE_MIN_AREA = 40.0  # px^2 at 128 px
SHAPE_ELONGATION = 0.15  # elongation may drift this much beyond the ground truth's own drift (+0.05) ...
SHAPE_COMPACTNESS = 0.08  # ... and compactness this much (+0.03) ...
SHAPE_SMALL = 2.5  # ... or 2.5 / sqrt(area in px^2) (1.25 / sqrt for compactness), times the blur factor
# Motion of tracked bodies (px at 128 px, per frame; times the blur factor)
GAP = 4.0  # px at 128 px: an object within this of a body touches it
TRACK_AREA = 0.35  # a body's piece within 35% of its ground truth's area is the body alone ...
TRACK_MIN_AREA = 30.0  # ... and one of at least 30 px^2 at 128 px is big enough to follow
JERK_ABS, JERK_REL, JERK_FRAMES = 0.5, 0.5, 3  # |a - a_gt| > 0.5 px + 0.5 |v_gt| in 3 frames ...
NOISE_K = 3.0  # ... + 3 x the ground truth's own robust spread (jerk and kink)
KINK_W = 3  # frames per window: velocity fitted before and after each frame
KINK_ABS, KINK_REL = 0.25, 0.05  # |dv - dv_gt| > 0.25 px + 0.05 |v_gt| ...
KINK_W_LONG, KINK_ABS_LONG, KINK_REL_LONG = 6, 0.15, 0.03  # ... or, over 6-frame windows, 0.15 px + 0.03 |v_gt|
GRAVITY_MIN = 8  # frames in the longest free run for a fitted acceleration
GRAVITY_ABS, GRAVITY_REL = 0.02, 0.15  # |a - a_gt| > max(0.02 px/frame^2, 0.15 |a_gt|)
SPIN_ELONGATION = 1.6  # bodies this elongated have an angle to follow
SPIN_RATE, SPIN_WINDOWS = 0.05, 2  # rad/frame beyond the ground truth's, in 2 windows ...
SPIN_RATE_CONTACT = 0.1  # ... or this much where it touches something (contacts turn bodies)
FREEZE_STILL = 0.2  # px at 128 px: a piece whose centroid moves less than this stands still ...
FREEZE_MOVE = 0.5  # ... while the ground truth's moves at least this far ...
FREEZE_FRAMES = 2  # ... for 2 frames touching nothing (freeze) ...
STOP_FRAMES = 3  # ... or 3 frames touching something (stop)
REST_MOVE, REST_TURN, REST_HOLD = 3.0, 0.15, 3  # px at 128 px, rad; frames the ground truth stays at rest after
TUNNEL_STOP = 0.2  # px/frame: the ground truth's speed towards a side it stops or bounces at

SETTINGS: dict[str, Any] = {
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
    "step": (f"one step = {TELEPORT_FACTOR:g} x the ground truth's fastest per-frame move of a piece of that colour + "
             f"{TELEPORT_MARGIN:g} px x blur"),
    "area": (f"a colour's area changes by more than max({AREA_REL:g} x area, {AREA_ABS:g} px^2 x blur, {AREA_EDGE:g} "
             "px^2 x the perimeter of a disc of that area x blur) from the frame "
             "before, unless the border explains it: a rise needs a piece on the border before, a new piece, or a "
             "whole piece within one step of entering; a fall needs a piece on the border now or a whole piece within "
             "one step of leaving; a fall from, or a rise to, nothing but pieces under the dust size is not judged: "
             "vanish / appear / deform / colour change"),
    "break": "more pieces of a colour than max(its bodies, the most pieces its ground truth shows in any frame)",
    "teleport": ("where a colour keeps its count of pieces, a piece farther than one step from every piece of its colour in the frame before whose bounding box "
                 "it does not overlap where the count of pieces changed (a piece split off or merged is no jump); where the colour "
                 "has gained a piece (less those that could have left), pieces on the border or whole within one step "
                 "of it are excused as just entered"),
    "static": (f"a colour only static bodies have: its coverage, pooled to 128 px, smoothed (sigma {STATIC_SIGMA:g} px) and registered "
               f"to the last condition frame by the best global shift of at most {SHIFT:g} px, differs from it by more "
               f"than ({STATIC_BASE:g} + {STATIC_EDGE:g} x (blur - 1)) px^2 per px of its perimeter + {STATIC_GT:g} x the "
               f"ground truth's own "
               f"largest difference + {AREA_ABS:g} px^2"),
    "rest": (f"a colour whose ground truth changes by less than {REST_GT:g} px^2 after the condition frames (bodies "
             "at rest) breaks the static test: motion without cause"),
    "overlap": (f"a colour's area, in a frame where none of its pieces touches the border and it has as many pieces as "
                f"in the last condition frame, differs from its area there by more than max({AREA_REL:g} x that area x blur, "
                f"the ground truth's own largest such difference + {AREA_ABS:g} px^2 x blur): 'interpenetration' when "
                "another object touches it then, else 'area' (a gradual deform)"),
    "merge": ("fewer pieces of a colour than the fewest its ground truth shows in any frame where none touches the "
              f"border, while none touches the border and its area is within {AREA_REL:g} of the last condition "
              "frame's (not a vanish)"),
    "shape": (f"a colour of one body, drawn as one piece off the border and of at least {SHAPE_MIN_AREA:g} px^2 in "
              "the last condition frame and in frame t, keeps its shape: elongation (sqrt of the ratio of its "
              f"second-moment eigenvalues) within max(max({SHAPE_ELONGATION:g}, {SHAPE_SMALL:g} / sqrt(area)) x blur, the "
              "ground truth's own drift + 0.05) and "
              "compactness (area / (4 pi sqrt of the eigenvalues' product); 1 for a disc) within max(max("
              f"{SHAPE_COMPACTNESS:g}, {SHAPE_SMALL / 2:g} / sqrt(area)) x blur, the ground truth's own drift + 0.03) of "
              "the condition frame's"),
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
    "gravity": (f"over the longest free run (at least {GRAVITY_MIN} frames), the fitted acceleration (least-squares "
                f"parabola) differs from the ground truth's by more than max({GRAVITY_ABS:g} px/frame^2 x blur, "
                f"{GRAVITY_REL:g} x the ground truth's) + {NOISE_K:g} x the fit's standard error"),
    "spin": (f"a tracked body at least {SPIN_ELONGATION:g} times as long as wide turns (least-squares angular rate "
             f"over {KINK_W + 1} frames) {SPIN_RATE:g} rad/frame ({SPIN_RATE_CONTACT:g} where it touches something) "
             f"faster or slower than its ground truth, in {SPIN_WINDOWS} windows"),
    "freeze": (f"for {FREEZE_FRAMES} consecutive frames a piece moves less than {FREEZE_STILL:g} px while the ground "
               f"truth's pieces it overlaps (else the one nearest it, within a step) move at least {FREEZE_MOVE:g} px, with no "
               f"object and no border within "
               f"{GAP:g} px of it: a body stopped in mid-air"),
    "stop": (f"the same for {STOP_FRAMES} consecutive frames while touching something: a body stopped dead at a "
             "contact the ground truth does not stop at"),
    "tunnel": (f"a tracked body, moving towards a side of the view in its last 2 frames, leaves the view through it, where its ground truth, in view to the end, stops at or "
               f"bounces from (its speed towards that side falls below {TUNNEL_STOP:g} px/frame): through a wall or floor"),
    "rest (per body)": (f"a body whose ground truth stays within {REST_MOVE / 4:g} px and {REST_TURN / 4:g} rad of "
                        f"its pose in the last condition frame until {REST_HOLD} frames after t moves more than "
                        f"{REST_MOVE:g} px x blur or turns more than {REST_TURN:g} rad by frame t"),
    "verdict": "abnormal = 1 if any rule fires in any generated frame, else 0; its mean over videos is the abnormal ratio",
}


# ----------------------------------------------------------------------------- segmentation

@dataclass
class Layer:
    """One colour's segmentation of one video (px at the video's resolution)."""

    soft: np.ndarray  # (T, H, W) float32: dead-zoned coverage in [0, 1]
    area: np.ndarray  # (T,) px^2: sum of soft
    count: np.ndarray  # (T,) pieces
    edge: np.ndarray  # (T,) smallest distance from a piece's bounding box to the border (inf: none)
    exit: np.ndarray  # (T,) smallest move that takes a whole piece out of view (inf: none)
    centroids: list[np.ndarray]  # T arrays (n_t, 2) of (row, col)
    piece_edge: list[np.ndarray]  # T arrays (n_t,)
    piece_exit: list[np.ndarray]  # T arrays (n_t,)
    piece_area: list[np.ndarray]  # T arrays (n_t,) px^2 (pixels with t >= HARD)
    moments: list[np.ndarray]  # T arrays (n_t, 3): central second moments (rr, cc, rc), px^2
    boxes: list[np.ndarray]  # T arrays (n_t, 4): row start, row stop, col start, col stop
    perimeter: np.ndarray  # (T,) px: pixels of the pieces with a 4-neighbour outside them
    partial: np.ndarray  # (T,) partly covered pixels (0 < soft < 1)


@dataclass
class Segmentation:
    """Every colour of one video, and where any ink is (for contact tests)."""

    layers: dict[tuple[int, ...], Layer]
    owner: np.ndarray  # (T, H, W) int8: 0 background, k + 1 the k-th colour of `layers`, -1 ink of none

    def others(self, c: tuple[int, ...], window: tuple[Any, ...]) -> np.ndarray:
        """bool: ink in `window` that is not colour c's."""
        o = self.owner[window]
        return (o != 0) & (o != list(self.layers).index(c) + 1)

    def blur(self, frames: slice) -> float:
        """Edge width: partly covered pixels per perimeter pixel, over the sampled frames among those given."""
        p = e = 0.0
        for x in self.layers.values():
            sampled = np.isfinite(x.perimeter[frames])
            p += float(x.partial[frames][sampled].sum())
            e += float(x.perimeter[frames][sampled].sum())
        return p / e if e else 1.0


def _ink(video: np.ndarray, background: Sequence[int]) -> np.ndarray:
    """Flat pixel indices (sorted) of pixels farther than INK from the background on some channel."""
    bg = np.asarray(background, np.int16)
    flat = video.reshape(-1)
    if (bg == 255).all():  # the common case, one comparison
        hit = np.flatnonzero(flat < 255 - INK)
    else:
        lo = np.tile(np.clip(bg - INK, 0, 255).astype(np.uint8), flat.size // 3)
        hi = np.tile(np.clip(bg + INK, 0, 255).astype(np.uint8), flat.size // 3)
        hit = np.flatnonzero((flat < lo) | (flat > hi))
    px = hit // 3
    if px.size:
        px = px[np.concatenate([[True], px[1:] != px[:-1]])]
    return px


def segment(video: np.ndarray, colours: Sequence[Sequence[int]], background: Sequence[int] = BACKGROUND,
            *, soft_only: Sequence[Sequence[int]] = (), perimeter_frames: Sequence[int] | None = None) -> Segmentation:
    """Soft coverage, pieces and their moments of every colour in a (T, H, W, 3) uint8 video.

    soft_only: colours whose pieces are not needed (static ones: the judge compares their
    coverage); perimeter_frames: the frames whose piece perimeter is counted (default all;
    NaN elsewhere), for the blur estimate."""
    T, H, W = video.shape[:3]
    HW = H * W
    scale_a = (W / 128.0) ** 2
    idx = _ink(video, background)
    owner = np.zeros(T * HW, np.int8)
    owner[idx] = -1
    distinct = list(dict.fromkeys(tuple(int(x) for x in c) for c in colours))
    res_bins, t_bins, best_bins, amb_bins = _colour_table(tuple(distinct), tuple(int(x) for x in background))
    pix = video.reshape(-1, 3)[idx] >> QUANT  # (N, 3) bins of 2**QUANT levels
    q = (pix[:, 0].astype(np.int32) << (2 * (8 - QUANT))) | (pix[:, 1].astype(np.int32) << (8 - QUANT)) | pix[:, 2]
    best = best_bins[q].astype(np.int64)
    t_all = t_bins[np.maximum(best, 0), q]
    found = best >= 0
    ambiguous = amb_bins[q]
    if ambiguous.any():
        sure = res_bins.min(axis=0)[q] <= SURE  # a near-perfect reading of its best colour
        best, t_all = _near_first(res_bins[:, q[ambiguous]], t_bins[:, q[ambiguous]], best, t_all, ambiguous, sure, idx,
                                  (T, H, W))
    layers = {}
    for k, c in enumerate(distinct):
        sel = found & (best == k)
        t = t_all[sel]
        pidx = idx[sel]
        owner[pidx] = k + 1
        soft_vals = np.clip((t - LOW) / (HIGH - LOW), 0.0, 1.0).astype(np.float32)
        soft = np.zeros(T * HW, np.float32)
        soft[pidx] = soft_vals
        frame_of = pidx // HW
        area = np.bincount(frame_of, weights=soft_vals, minlength=T)[:T]
        partial = np.bincount(frame_of[(soft_vals > 0) & (soft_vals < 1)], minlength=T)[:T].astype(np.float64)
        hidx = pidx[t >= HARD]
        hard = np.zeros(T * HW, bool)
        hard[hidx] = True
        frames = range(T) if perimeter_frames is None else perimeter_frames
        if c in {tuple(int(x) for x in o) for o in soft_only}:
            hidx = hidx[:0]  # no pieces
        layers[c] = _pieces(soft.reshape(T, H, W), hard.reshape(T, H, W), hidx, area, partial, MIN_PIECE * scale_a,
                            list(frames))
    return Segmentation(layers, owner.reshape(T, H, W))


@functools.lru_cache(maxsize=16)
def _colour_table(colours: tuple[tuple[int, ...], ...], background: tuple[int, ...]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per RGB bin (2**QUANT levels a side, at its centre): each colour's score (least
    residual / reach + SOLID x (1 - t); inf where the pixel is not on its line) and coverage t,
    the best colour (-1: none) and whether two colours could explain it.  Computed once per
    palette: a video is then a gather, not arithmetic per pixel."""
    n = 256 >> QUANT
    centre = (np.arange(n, dtype=np.float32) * (1 << QUANT) + ((1 << QUANT) - 1) / 2)
    rgb = np.stack(np.meshgrid(centre, centre, centre, indexing="ij"), axis=-1).reshape(-1, 3)
    d = np.asarray(background, np.float32) - rgb
    res = np.full((len(colours), len(rgb)), np.inf, np.float32)
    ts = np.zeros((len(colours), len(rgb)), np.float32)
    for k, c in enumerate(colours):
        D = np.asarray(background, np.float32) - np.asarray(c, np.float32)
        n2 = float(D @ D) or 1.0
        proj = d @ D
        t = proj / n2
        perp = np.sqrt(np.maximum((d * d).sum(axis=1) - proj * proj / n2, 0.0))
        tol = max(RESIDUAL * np.sqrt(n2), RESIDUAL_MIN)
        # nearest line, preferring the reading as a solid colour: a desaturated light grey (a codec's
        # chroma loss) reads as full grey rather than a quarter of black
        res[k] = np.where((perp <= tol) & (t > 0), perp / tol + SOLID * np.abs(1.0 - np.minimum(t, 1.0)), np.inf)
        ts[k] = t
    finite = np.isfinite(res)
    best = np.where(finite.any(axis=0), np.argmin(res, axis=0), -1).astype(np.int8)
    return res, ts, best, finite.sum(axis=0) >= 2


def _near_first(res: np.ndarray, ts: np.ndarray, best: np.ndarray, t_all: np.ndarray, ambiguous: np.ndarray,
                sure: np.ndarray, idx: np.ndarray, shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Pixels that two colours could explain go to the one with a solid piece nearby.

    A blurred black rim passes through light neutral greys, and a codec can wash a light grey
    body out to neutral: the same pixel value.  Next to a solid black piece it is the rim.
    res, ts: (K, M) scores and coverages of the M ambiguous pixels."""
    T, H, W = shape
    r = max(1, int(round(NEAR * W / 128.0)))  # block side: "near" = in the same block or a neighbouring one
    gh, gw = -(-H // r), -(-W // r)
    amb_idx = idx[ambiguous]
    amb_t, amb_rc = amb_idx // (H * W), amb_idx % (H * W)
    amb_block = (amb_t * gh + (amb_rc // W) // r) * gw + (amb_rc % W) // r
    bonus = np.zeros(res.shape, np.float32)
    solid_all = sure & (t_all >= HARD)  # solid: read as its best colour almost exactly, and mostly covered
    for k in np.flatnonzero(np.isfinite(res).any(axis=1)):
        sel = idx[solid_all & (best == k)]
        blocks = np.zeros((T, gh + 2, gw + 2), bool)  # solid pixels per block, padded by one block
        st, src = sel // (H * W), sel % (H * W)
        blocks[st, (src // W) // r + 1, (src % W) // r + 1] = True
        near = np.zeros((T, gh, gw), bool)
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                near |= blocks[:, dy:dy + gh, dx:dx + gw]
        bonus[k] = near.reshape(-1)[amb_block]
    choice = np.argmin(res - bonus, axis=0)
    best, t_all = best.copy(), t_all.copy()
    best[ambiguous] = choice
    t_all[ambiguous] = ts[choice, np.arange(len(choice))]
    return best, t_all


_IN_PLANE = np.zeros((3, 3, 3), dtype=bool)
_IN_PLANE[1] = True  # 8-connected within a frame, never across frames


def _pieces(soft: np.ndarray, hard: np.ndarray, hidx: np.ndarray, area: np.ndarray, partial: np.ndarray,
            min_piece: float, perimeter_frames: list[int]) -> Layer:
    T, H, W = hard.shape
    perimeter = np.full(T, np.nan)
    if perimeter_frames:
        h = hard[perimeter_frames]
        inner = h[:, 1:-1, 1:-1] & h[:, :-2, 1:-1] & h[:, 2:, 1:-1] & h[:, 1:-1, :-2] & h[:, 1:-1, 2:]
        perimeter[perimeter_frames] = np.count_nonzero(h.reshape(len(h), -1), axis=1) - np.count_nonzero(
            inner.reshape(len(h), -1), axis=1)
    if not len(hidx):
        labels, n = np.zeros(hard.shape, np.int32), 0
    else:
        rem = hidx % (H * W)  # label only the rows and columns any piece reaches
        rows, cols = rem // W, rem % W
        r0, r1, c0, c1 = int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1
        labels, n = ndimage.label(hard[:, r0:r1, c0:c1], structure=_IN_PLANE)
    empty = [np.zeros((0, 2)), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 4))]
    per_frame: list[list[np.ndarray]] = [[x.copy() for x in empty] for _ in range(T)]
    if n:
        lab = labels[hidx // (H * W), rows - r0, cols - c0]
        r, c = rows.astype(np.float64), cols.astype(np.float64)
        npix = np.bincount(lab, minlength=n + 1)[1:].astype(np.float64)
        safe = np.maximum(npix, 1.0)
        wts = soft.reshape(-1)[hidx].astype(np.float64)  # coverage-weighted centroids: sub-pixel for thin bodies
        wsum = np.maximum(np.bincount(lab, weights=wts, minlength=n + 1)[1:], 1e-9)
        mr = np.bincount(lab, weights=r * wts, minlength=n + 1)[1:] / wsum
        mc = np.bincount(lab, weights=c * wts, minlength=n + 1)[1:] / wsum
        ur = np.bincount(lab, weights=r, minlength=n + 1)[1:] / safe  # moments about the unweighted mean
        uc = np.bincount(lab, weights=c, minlength=n + 1)[1:] / safe
        rr = np.bincount(lab, weights=r * r, minlength=n + 1)[1:] / safe - ur * ur + 1 / 12  # + a pixel's own
        cc = np.bincount(lab, weights=c * c, minlength=n + 1)[1:] / safe - uc * uc + 1 / 12
        rc = np.bincount(lab, weights=r * c, minlength=n + 1)[1:] / safe - ur * uc
        objects = ndimage.find_objects(labels)
        keep = [k for k, sl in enumerate(objects) if sl is not None and npix[k] >= min_piece]
        frames = np.array([objects[k][0].start for k in keep], int)
        box = np.array([[objects[k][1].start + r0, objects[k][1].stop + r0, objects[k][2].start + c0,
                         objects[k][2].stop + c0] for k in keep], np.float64).reshape(-1, 4)
        keep_a = np.asarray(keep, int)
        to_edge = np.minimum.reduce([box[:, 0], box[:, 2], H - box[:, 1], W - box[:, 3]]) if len(keep) else np.zeros(0)
        to_exit = np.minimum.reduce([box[:, 1], box[:, 3], H - box[:, 0], W - box[:, 2]]) if len(keep) else np.zeros(0)
        for t in np.unique(frames):
            j = np.flatnonzero(frames == t)
            ks = keep_a[j]
            per_frame[t] = [np.stack([mr[ks], mc[ks]], axis=1), to_edge[j], to_exit[j], npix[ks],
                            np.stack([rr[ks], cc[ks], rc[ks]], axis=1), box[j]]
    count = np.array([len(f[1]) for f in per_frame], np.int64)
    edge = np.array([f[1].min() if len(f[1]) else np.inf for f in per_frame])
    exit = np.array([f[2].min() if len(f[2]) else np.inf for f in per_frame])
    return Layer(soft, area, count, edge, exit, [f[0] for f in per_frame], [f[1] for f in per_frame],
                 [f[2] for f in per_frame], [f[3] for f in per_frame], [f[4] for f in per_frame],
                 [f[5] for f in per_frame], perimeter, partial)


def colour_masks(video: np.ndarray, colour: Sequence[int], background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """bool (T, H, W): pixels of `colour` (coverage >= 0.5 of the way from the background to it)."""
    seg = segment(video, [colour], background)
    return seg.layers[tuple(int(x) for x in colour)].soft >= (HARD - LOW) / (HIGH - LOW)


# ----------------------------------------------------------------------------- shape descriptors

@dataclass(frozen=True)
class Shape:
    """Shape descriptors of one piece (a binary mask), px at the frame's resolution."""

    area: float  # px^2
    centroid: tuple[float, float]  # (row, col)
    angle: float  # rad: orientation of the major axis, from the second central moments
    elongation: float  # sqrt(major / minor second-moment eigenvalue); 1 for a disc or a square
    compactness: float  # area / (4 pi sqrt(major minor)): 1 for a disc (an ellipse), 3/pi for a rectangle
    rect: tuple[float, float, float]  # extents along the principal axes: (long side, short side, angle)


def _eig(rr: np.ndarray, cc: np.ndarray, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Major and minor eigenvalues and the major axis angle (rad, image x right, rows down) of moments."""
    half = np.sqrt(((cc - rr) / 2) ** 2 + rc ** 2)
    major, minor = (cc + rr) / 2 + half, (cc + rr) / 2 - half
    return major, minor, 0.5 * np.arctan2(2 * rc, cc - rr)


def shape_of(mask: np.ndarray) -> Shape | None:
    """Descriptors of a 2-D bool mask (None when empty): moments and extents along the principal axes."""
    rows, cols = np.nonzero(mask)
    n = rows.size
    if n == 0:
        return None
    r0, c0 = rows.mean(), cols.mean()
    dr, dc = rows - r0, cols - c0
    major, minor, angle = _eig((dr * dr).mean() + 1 / 12, (dc * dc).mean() + 1 / 12, (dr * dc).mean())
    u = dc * np.cos(angle) + dr * np.sin(angle)
    v = -dc * np.sin(angle) + dr * np.cos(angle)
    long_, short = float(np.ptp(u) + 1), float(np.ptp(v) + 1)
    return Shape(float(n), (float(r0), float(c0)), float(angle), float(np.sqrt(major / max(minor, 1e-9))),
                 float(n / (4 * np.pi * np.sqrt(max(major * minor, 1e-12)))), (max(long_, short), min(long_, short),
                                                                               float(angle)))


def track(video: np.ndarray, colour: Sequence[int]) -> list[list[Shape]]:
    """Per frame, the shape descriptors of every piece of one colour (the tracker's full record)."""
    mask = colour_masks(video, colour)
    out = []
    for frame in mask:
        labels, n = ndimage.label(frame, structure=np.ones((3, 3), bool))
        out.append([sh for k in range(1, n + 1) if (sh := shape_of(labels == k)) is not None])
    return out


# ----------------------------------------------------------------------------- verdicts

@dataclass
class Finding:
    rule: str  # area, break, teleport, static, rest, interpenetration, merge, shape, jerk, kink, gravity, spin, ...
    colour: str  # "r,g,b"
    frames: list[int]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "colour": self.colour, "frames": self.frames, "detail": self.detail}


@dataclass
class Verdict:
    abnormal: bool
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"abnormal": self.abnormal, "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class _Ctx:
    """What every rule needs about one judgement."""

    T: int
    H: int
    W: int
    start: int  # first generated frame
    scale_a: float  # (W / 128)^2
    scale_l: float  # W / 128
    blur: float  # blur factor >= 1
    border: float  # px
    gap: int  # px

    @property
    def ref(self) -> int:
        return self.start - 1


def judge(video: np.ndarray, gt_video: np.ndarray, colours: Sequence[Sequence[int]], static: Sequence[bool],
          condition_frames: int) -> Verdict:
    """The verdict on one generated (T, H, W, 3) uint8 video, its ground truth as the yardstick.

    colours / static: per body of the scene, its colour and whether it is static.
    """
    if video.shape != gt_video.shape:
        raise ValueError(f"video {video.shape} and ground truth {gt_video.shape} differ in shape")
    T, H, W = video.shape[:3]
    start = min(max(int(condition_frames), 1), T)
    by_colour: dict[tuple[int, ...], list[bool]] = {}
    for c, s in zip(colours, static):
        by_colour.setdefault(tuple(int(x) for x in c), []).append(bool(s))
    static_colours = [c for c, st in by_colour.items() if all(st)]
    sampled = sorted({start - 1, *range(start, T, PERIMETER_EVERY)})
    gts = segment(gt_video, list(by_colour), soft_only=static_colours, perimeter_frames=sampled)
    gens = segment(video, list(by_colour), soft_only=static_colours, perimeter_frames=sampled)
    gen_frames = slice(start, T)
    s = W / 128.0
    blur = 1.0 + max(0.0, gens.blur(gen_frames) - gts.blur(gen_frames)) / s / BLUR_PX
    ctx = _Ctx(T, H, W, start, s * s, s, blur, BORDER * s, max(1, int(round(GAP * s))))
    findings: list[Finding] = []
    for c, statics in by_colour.items():
        name = ",".join(map(str, c))
        g, p = gts.layers[c], gens.layers[c]
        if all(statics):  # only static bodies have this colour: its pixels never change
            findings += _unmoved(p, g, name, ctx, "static")
            continue
        whole = [a[e >= ctx.border] for a, e in zip(g.piece_area, g.piece_edge)]
        smallest = min((float(a.min()) for a in whole if len(a)), default=float(g.piece_area[ctx.ref].min(initial=0.0)))
        dust = max(MIN_PIECE * ctx.scale_a, DUST_REL * smallest)
        g, p = _without_dust(g, dust, ctx.border), _without_dust(p, dust, ctx.border)
        fastest = float(_steps(g, 1, 0.0, 1.0).max(initial=0.0))  # the ground truth: only a piece cut by the border may be new
        reach = TELEPORT_FACTOR * fastest + TELEPORT_MARGIN * s * blur
        findings += _area(p, name, ctx, reach)
        ceiling = max(len(statics), int(g.count.max(initial=0)))  # a jar may be drawn in several pieces
        off = np.array([int((e >= ctx.border).sum()) for e in p.piece_edge])  # a border may cut a body in two
        bad = np.flatnonzero(off[start:] > ceiling) + start
        if bad.size:
            findings.append(Finding("break", name, bad.tolist(), f"{int(off[bad[0]])} pieces off the border at frame "
                                                                 f"{int(bad[0])}; at most {ceiling} expected"))
        step = _steps(p, start, reach, ctx.border, boxes=True)
        same = np.zeros(T, bool)  # a jump keeps the count; a piece appearing or splitting off is the area rule's
        same[1:] = p.count[1:] == p.count[:-1]
        bad = np.flatnonzero((step > reach) & same)
        if bad.size:
            findings.append(Finding("teleport", name, bad.tolist(),
                                    f"a piece {step[bad[0]]:.1f} px from every piece of the frame before at frame "
                                    f"{int(bad[0])}; its ground truth's fastest step is {fastest:.1f} px"))
        findings += _overlap(p, g, c, name, gens, ctx)
        findings += _merge(p, g, name, ctx)
        if _at_rest(g, ctx):
            findings += _unmoved(p, g, name, ctx, "rest")
        findings += _freeze(p, g, c, name, gens, ctx, reach)
        if len(statics) == 1:
            findings += _shape(p, g, name, ctx)
        findings += _motion(p, g, c, name, gens, gts, ctx, reach)
    return Verdict(bool(findings), findings)


def _without_dust(q: Layer, least: float, border: float) -> Layer:
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
                 [m[k] for m, k in zip(q.moments, keep)], [b[k] for b, k in zip(q.boxes, keep)], q.perimeter, q.partial)


def _steps(p: Layer, start: int, reach: float, border: float, boxes: bool = False) -> np.ndarray:
    """(T,) the largest distance from a piece to the nearest same-colour piece of the frame
    before, px, over the pieces that cannot have just entered the view.  Where the colour has
    gained a piece (less those that could have left), pieces on the border or whole within
    `reach` px of it may be new; otherwise none is, so every piece counts: a body that jumps
    to the border keeps its colour's count, and is not excused as one coming in."""
    out = np.zeros(len(p.area))
    for t in range(max(start, 1), len(p.area)):
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
                    d = np.where(_box_gaps(p.boxes[t][free], p.boxes[t - 1]) <= 0.0, 0.0, d)
                d = d.min(axis=1)
                out[t] = d.max()
    return out


def _box_gaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) px between bounding boxes (row start, row stop, col start, col stop); 0 when they overlap."""
    dr = np.maximum(0.0, np.maximum(a[:, None, 0] - b[None, :, 1], b[None, :, 0] - a[:, None, 1]))
    dc = np.maximum(0.0, np.maximum(a[:, None, 2] - b[None, :, 3], b[None, :, 2] - a[:, None, 3]))
    return np.sqrt(dr * dr + dc * dc)


def _area(p: Layer, name: str, ctx: _Ctx, reach: float) -> list[Finding]:
    """Area jumps between consecutive frames that the view's border cannot explain."""
    d = np.zeros(ctx.T)
    d[1:] = np.diff(p.area)
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
    bad = np.flatnonzero(d > allowed)
    if not bad.size:
        return []
    t = int(bad[0])
    what = "shrank or vanished" if p.area[t] < p.area[t - 1] else "grew or appeared"
    return [Finding("area", name, bad.tolist(),
                    f"area {p.area[t - 1]:.0f} -> {p.area[t]:.0f} px^2 at frame {t} away from the border: {what}")]


def _registered_change(soft: np.ndarray, ref: int, frames: range, ctx: _Ctx, register: bool) -> np.ndarray:
    """(len(frames),) sum |smoothed coverage - the reference frame's|, px^2, after the best
    global shift of at most SHIFT px (found once, on the mean of the frames)."""
    if not len(frames):
        return np.zeros(0)
    f = max(1, int(round(ctx.scale_l)))  # compared at 128 px: block averages of f x f pixels
    def pooled(x: np.ndarray) -> np.ndarray:
        if f == 1:
            return x
        n, h, w = x.shape
        h2, w2 = h // f, w // f
        out = np.zeros((n, h2, w2), np.float32)
        for i in range(f):
            for j in range(f):
                out += x[:, i:h2 * f:f, j:w2 * f:f]
        return out  # px^2 of the full frame per block
    sig = STATIC_SIGMA
    k = int(round(SHIFT))
    raw_ref, raw = pooled(soft[ref:ref + 1])[0], pooled(soft[frames.start:frames.stop])
    ref_img, stack = np.zeros_like(raw_ref), np.zeros_like(raw)
    rows = np.flatnonzero(raw_ref.any(axis=1) | raw.any(axis=(0, 2)))
    cols = np.flatnonzero(raw_ref.any(axis=0) | raw.any(axis=(0, 1)))
    if rows.size:  # smoothed only where there is coverage (+ the kernel's reach): zeros elsewhere either way
        m = k + int(np.ceil(4 * sig)) + 1
        r0, r1 = max(rows[0] - m, 0), min(rows[-1] + 1 + m, raw.shape[1])
        c0, c1 = max(cols[0] - m, 0), min(cols[-1] + 1 + m, raw.shape[2])
        ref_img[r0:r1, c0:c1] = ndimage.gaussian_filter(raw_ref[r0:r1, c0:c1], sig, mode="nearest")
        stack[:, r0:r1, c0:c1] = ndimage.gaussian_filter(raw[:, r0:r1, c0:c1], (0, sig, sig), mode="nearest")
    H, W = ref_img.shape
    crop = (slice(k, H - k), slice(k, W - k))
    best = (0, 0)
    if register and k:
        mean = stack.mean(axis=0)
        base = ref_img[crop]
        costs = {}
        for dy in range(-k, k + 1):
            for dx in range(-k, k + 1):
                costs[(dy, dx)] = float(np.abs(mean[k + dy:H - k + dy, k + dx:W - k + dx] - base).sum())
        best = min(costs, key=lambda key: (costs[key], abs(key[0]) + abs(key[1]), key))
    dy, dx = best
    moved = stack[:, k + dy:H - k + dy, k + dx:W - k + dx]
    return np.abs(moved - ref_img[crop][None]).reshape(len(moved), -1).sum(axis=1)


def _at_rest(g: Layer, ctx: _Ctx) -> bool:
    frames = range(ctx.start, ctx.T)
    if not len(frames) or g.area[ctx.ref] <= 0:
        return False
    ref = g.centroids[ctx.ref]
    for t in frames:  # cheap test first: a piece that moves a pixel is not at rest
        c = g.centroids[t]
        if len(c) != len(ref) or (len(c) and np.sqrt(((c[:, None] - ref[None]) ** 2).sum(-1)).min(axis=1).max() > 1.0):
            return False
    change = _registered_change(g.soft, ctx.ref, frames, ctx, register=False)
    return bool(change.max() <= REST_GT * ctx.scale_a)


def _unmoved(p: Layer, g: Layer, name: str, ctx: _Ctx, rule: str) -> list[Finding]:
    """A static colour (or a body at rest in the ground truth) stays where it was."""
    frames = range(ctx.start, ctx.T)
    if not len(frames):
        return []
    gen = _registered_change(p.soft, ctx.ref, frames, ctx, register=True)
    own = _registered_change(g.soft, ctx.ref, frames, ctx, register=False)
    perimeter = max(float(p.perimeter[ctx.ref]), float(g.perimeter[ctx.ref]))
    allowed = (perimeter * (STATIC_BASE + STATIC_EDGE * (ctx.blur - 1.0)) + STATIC_GT * float(own.max(initial=0.0))
               + AREA_ABS * ctx.scale_a)
    bad = np.flatnonzero(gen > allowed) + ctx.start
    if not bad.size:
        return []
    what = "static pixels" if rule == "static" else "bodies at rest in the ground truth"
    return [Finding(rule, name, bad.tolist(), f"{what} moved: smoothed coverage differs by up to {gen.max():.0f} px^2 "
                                              f"from the last condition frame (at most {allowed:.0f} allowed)")]


def _overlap(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, ctx: _Ctx) -> list[Finding]:
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


def _merge(p: Layer, g: Layer, name: str, ctx: _Ctx) -> list[Finding]:
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


def _descriptors(q: Layer, t: int) -> tuple[float, float, float]:
    """(elongation, compactness, angle) of the one piece of frame t."""
    rr, cc, rc = q.moments[t][0]
    major, minor, angle = _eig(rr, cc, rc)
    area = float(q.piece_area[t][0])
    return (float(np.sqrt(major / max(minor, 1e-9))), float(area / (4 * np.pi * np.sqrt(max(major * minor, 1e-12)))),
            float(angle))


def _single(q: Layer, t: int, ctx: _Ctx, min_area: float = 0.0) -> bool:
    return bool(q.count[t] == 1 and q.edge[t] >= ctx.border and q.piece_area[t][0] >= min_area)


def _shape(p: Layer, g: Layer, name: str, ctx: _Ctx) -> list[Finding]:
    """A rigid body keeps its shape: elongation and compactness against the last condition frame."""
    ref, least = ctx.ref, SHAPE_MIN_AREA * ctx.scale_a
    frames = [ref, *range(ctx.start, ctx.T)]
    gen = {t: _descriptors(p, t) for t in frames if _single(p, t, ctx, least)}
    if ref not in gen:
        return []
    gt = {t: _descriptors(g, t) for t in frames if _single(g, t, ctx, least)}

    def drift(d: dict[int, tuple[float, float, float]], i: int) -> float:
        return max((abs(x[i] - d[ref][i]) for t, x in d.items() if t != ref), default=0.0) if ref in d else 0.0

    small = 1.0 / np.sqrt(max(float(p.piece_area[ref][0]), 1.0))  # rasterisation noise grows as a body shrinks
    tol_e = max(max(SHAPE_ELONGATION, SHAPE_SMALL * small) * ctx.blur, drift(gt, 0) + 0.05)
    tol_c = max(max(SHAPE_COMPACTNESS, 0.5 * SHAPE_SMALL * small) * ctx.blur, drift(gt, 1) + 0.03)
    r = gen[ref]
    bad = [t for t, x in gen.items() if t != ref and (abs(x[0] - r[0]) > tol_e or abs(x[1] - r[1]) > tol_c)]
    if not bad:
        return []
    x = gen[bad[0]]
    return [Finding("shape", name, bad, f"elongation {r[0]:.2f} -> {x[0]:.2f}, compactness {r[1]:.2f} -> {x[1]:.2f} "
                                        f"at frame {bad[0]}: a rigid body changed shape")]


def _touching(seg: Segmentation, c: tuple[int, ...], box: np.ndarray, t: int, ctx: _Ctx) -> bool:
    """Whether other ink or the border lies within GAP px of a piece's bounding box at frame t."""
    r0, r1, c0, c1 = (int(x) for x in box)
    g = ctx.gap
    if r0 - g < 0 or c0 - g < 0 or r1 + g > ctx.H or c1 + g > ctx.W:
        return True
    window = (t, slice(r0 - g, r1 + g), slice(c0 - g, c1 + g))
    return bool(seg.others(c, window).any())


def _freeze(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, ctx: _Ctx,
            reach: float) -> list[Finding]:
    """A body that stops while its ground truth moves: in mid-air (freeze) or dead at a contact (stop)."""
    free_still: set[int] = set()  # frames with a still piece touching nothing
    any_still: set[int] = set()  # frames with a still piece, touching or not
    for t in range(max(ctx.start, 1), ctx.T):
        a, b, ga, gb = p.centroids[t], p.centroids[t - 1], g.centroids[t], g.centroids[t - 1]
        if not (len(a) and len(b) and len(ga) and len(gb)):
            continue
        moved = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)).min(axis=1)
        gt_moved = np.sqrt(((ga[:, None] - gb[None]) ** 2).sum(-1)).min(axis=1)
        for i in np.flatnonzero(moved < FREEZE_STILL * ctx.scale_l):
            # its ground truth: the pieces its box overlaps, else the nearest within one step; all must move
            over = np.flatnonzero(_box_gaps(p.boxes[t][i:i + 1], g.boxes[t])[0] <= ctx.gap)
            if not over.size:
                near = np.sqrt(((ga - a[i]) ** 2).sum(-1))
                over = np.flatnonzero(near == near.min()) if near.min() <= reach else over
            if not over.size or (gt_moved[over] < FREEZE_MOVE * ctx.scale_l).any():
                continue
            any_still.add(t)
            if not _touching(gens, c, p.boxes[t][i], t, ctx):
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


# ----------------------------------------------------------------------------- motion of tracked bodies

@dataclass
class _Track:
    pos: np.ndarray  # (T, 2) row, col px (nan where not tracked)
    angle: np.ndarray  # (T,) rad
    elongation: np.ndarray  # (T,)
    free: np.ndarray  # (T,) bool: tracked, touching nothing
    edge: np.ndarray  # (T,) px to the border (nan where lost)
    box: np.ndarray  # (T, 4) bounding box (nan where lost)
    area: np.ndarray  # (T,) px^2 of its piece (nan where lost)
    colour_area: np.ndarray  # (T,) px^2: its colour's whole (soft) area


def _follow(q: Layer, seeds: np.ndarray, ctx: _Ctx, reach: float) -> np.ndarray:
    """(n, T) the piece each of n bodies is drawn as in each frame from the last condition
    frame on (-1: lost, or shared with another body), following pieces from the seeds by
    nearest centroid within one step."""
    n = len(seeds)
    out = np.full((n, ctx.T), -1, int)
    cur = np.array(seeds, np.float64).reshape(n, 2)
    for t in range(ctx.ref, ctx.T):
        cents = q.centroids[t]
        if not n or not len(cents):
            continue
        d = np.sqrt(((cur[:, None] - cents[None]) ** 2).sum(-1))
        order = np.dstack(np.unravel_index(np.argsort(d, axis=None, kind="stable"), d.shape))[0]
        taken_i, taken_j = set(), set()
        for i, j in order:
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


def _tracks(q: Layer, seg: Segmentation, c: tuple[int, ...], seeds: np.ndarray, ctx: _Ctx, reach: float
            ) -> list[_Track]:
    """Each seeded body's record, frame by frame (centroid, angle, elongation, free or touching)."""
    which = _follow(q, seeds, ctx, reach)
    out = []
    for row in which:
        pos = np.full((ctx.T, 2), np.nan)
        angle, elong, edge = np.full(ctx.T, np.nan), np.full(ctx.T, np.nan), np.full(ctx.T, np.nan)
        area = np.full(ctx.T, np.nan)
        box = np.full((ctx.T, 4), np.nan)
        free = np.zeros(ctx.T, bool)
        for t in np.flatnonzero(row >= 0):
            j = int(row[t])
            edge[t], box[t], area[t] = q.piece_edge[t][j], q.boxes[t][j], q.piece_area[t][j]
            if edge[t] < ctx.border:
                continue
            pos[t] = q.centroids[t][j]
            rr, cc, rc = q.moments[t][j]
            major, minor, angle[t] = _eig(rr, cc, rc)
            elong[t] = np.sqrt(major / max(minor, 1e-9))
            others = np.delete(q.boxes[t], j, axis=0)
            near_same = bool(len(others)) and bool((_box_gaps(q.boxes[t][j:j + 1], others) <= ctx.gap).any())
            free[t] = not near_same and not _touching(seg, c, q.boxes[t][j], int(t), ctx)
        out.append(_Track(pos, angle, elong, free, edge, box, area, q.area))
    return out


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


def _motion(p: Layer, g: Layer, c: tuple[int, ...], name: str, gens: Segmentation, gts: Segmentation,
            ctx: _Ctx, reach: float) -> list[Finding]:
    """Motion without a visible cause: each body against its ground truth in free frames."""
    seeds = g.centroids[ctx.ref]
    found: dict[str, Finding] = {}
    for gen, gt in zip(_tracks(p, gens, c, seeds, ctx, reach), _tracks(g, gts, c, seeds, ctx, reach)):
        for f in _motion_one(gen, gt, name, ctx):
            found.setdefault(f.rule, f)
    return list(found.values())


def _motion_one(gen: _Track, gt: _Track, name: str, ctx: _Ctx) -> list[Finding]:
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.abs(gen.area / gt.area - 1.0) <= TRACK_AREA  # not merged with or split from a neighbour
    big = gt.area >= TRACK_MIN_AREA * ctx.scale_a * ctx.blur ** 2  # a few (blurred) pixels' centroid is too coarse
    free = gen.free & gt.free & whole & big
    free[:ctx.start] = False  # generated frames only: a picture shifted against the condition frames is no kink
    s, bl = ctx.scale_l, ctx.blur
    out: list[Finding] = []
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


def _body_rest(gen: _Track, gt: _Track, name: str, ctx: _Ctx) -> list[Finding]:
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


def _tunnel(gen: _Track, gt: _Track, name: str, ctx: _Ctx) -> list[Finding]:
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


def judge_sample(sample: Any) -> Verdict:
    """The verdict on a `phybench.scoring.metrics.Sample` (its row's bodies give colours and statics)."""
    from ..data.split import row_scene

    bodies = row_scene(sample.row).bodies
    return judge(np.asarray(sample.video), np.asarray(sample.gt_video), [b.colour for b in bodies],
                 [not b.dynamic for b in bodies], sample.condition_frames)


def abnormal(sample: Any) -> float:
    """1.0 if the judge finds any rule broken, else 0.0 (NaN without a ground truth)."""
    if sample.gt_video is None:
        return float("nan")
    return 1.0 if judge_sample(sample).abnormal else 0.0

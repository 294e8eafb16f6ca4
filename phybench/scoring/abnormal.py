"""The abnormality judge: does a generated video break what every rigid-body scene keeps?

The paper counts "abnormal" videos by hand (objects that vanish, rigid bars that break, jars
that deform).  This judge reads pixels, for any family: it segments every object colour of
the scene (the row's bodies say which colours exist and which bodies are static), measures
per frame each colour's area, its connected pieces and their centroids, and applies rules
that hold in every ground-truth video, with tolerances taken from that sample's own ground
truth (`SETTINGS` states them; every results file quotes them):

* **area** (vanish / shrink, appear / grow, colour change): between two consecutive frames
  a colour's area may change by at most max(15%, 6 px^2 at 128 px) (anti-aliasing at
  contacts), unless the border explains it: it may rise if a piece was partly out of view
  (coming in) or could have entered whole, and fall if a piece is on the border now (going
  out) or could have left whole, in one step;
* **break**: a colour never has more pieces than it has bodies, or than its ground truth
  ever shows (a jar is drawn as one piece or several, depending on its angle);
* **teleport**: no piece lies farther from every piece of its colour in the frame before
  than one step (1.5 x the fastest per-frame move of its colour's pieces in the ground
  truth, plus 3 px at 128 px), unless it may just have entered the view: its colour gained a piece (less those that
  could have left) and it touches the border or lies whole within one step of it;
* **static moved**: pixels of a colour that only static bodies have never change after
  the condition frames;
* **interpenetration / gradual deform**: in frames where no piece touches the border, a
  colour's area stays within max(15%, the ground truth's own change) of the last condition
  frame's (a body sinking into another loses area a little each frame, under the per-frame
  tolerance);
* **merge**: a colour never shows fewer pieces than its ground truth ever does;
* **shape**: a rigid body (a colour of one body, one piece off the border) keeps its
  elongation and solidity (`shape_of`: moments, convex hull, rotated rectangle);
* **motion without cause**: bodies at rest in the ground truth stay at rest (`rest`), and
  no body stands still, touching nothing, while its ground truth moves (`freeze`: a falling
  body stopped in mid-air).

Rules read generated frames only (index >= condition frames; each compared with the one
before it, the last condition frame included), so a model is judged on what it made.
The verdict names the rule, the colour and the frames.  What it cannot see (a wrong speed,
a wrong gravity, a missing bounce: a smooth, plausible-looking video) is what the
velocity error measures; the README's calibration table says which kind each catches.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import ndimage

# Parameters (in SETTINGS below, so results files quote them).
CORE = 0.65  # a pixel is an object colour's when it lies within (1 - CORE) of the way from it to the background
AREA_REL = 0.15  # relative area change allowed beyond the ground truth's own
AREA_ABS = 6.0  # px^2 at 128 px (scaled with the frame area): rim flicker of the smallest balls
TELEPORT_FACTOR = 1.5  # a generated piece may move this much faster than the ground truth's fastest ...
TELEPORT_MARGIN = 3.0  # ... plus this many px at 128 px (scaled with the width)
STATIC_PIXELS = 4.0  # px^2 at 128 px: static colour pixels allowed to differ from the last condition frame
MIN_PIECE = 4.0  # px^2 at 128 px: smaller pieces are dust (lossy codecs), not objects
FREEZE_STILL = 0.2  # px at 128 px: a piece whose centroid moves less than this in a frame stands still ...
FREEZE_MOVE = 0.5  # ... while its ground truth moves at least this far (px at 128 px) ...
FREEZE_GAP = 4.0  # ... and nothing lies within this many px of it (at 128 px): not resting on anything
FREEZE_FRAMES = 2  # consecutive frames of that: a body stopped in mid-air
INK = 96  # a pixel farther than this (max over channels) from the background is part of some object
SHAPE_MIN_AREA = 40.0  # px^2 at 128 px: smaller pieces are too few pixels for a shape
SHAPE_ELONGATION = 0.15  # elongation may drift this much beyond the ground truth's own drift (+0.05) ...
SHAPE_SOLIDITY = 0.08  # ... and solidity this much (+0.03): rasterisation of a rotating rigid body
BACKGROUND = (255, 255, 255)

SETTINGS: dict[str, Any] = {
    "segmentation": (f"per object colour of the scene: pixels within {1 - CORE:.2f} of the colour-to-background "
                     f"distance (coverage >= {CORE:g}); pieces = 8-connected components after a 3x3 closing; "
                     f"pieces under {MIN_PIECE:g} px^2 (at 128 px; scaled with the frame area) ignored"),
    "frames": "generated frames, each against the frame before it (the last condition frame included)",
    "step": (f"one step = {TELEPORT_FACTOR:g} x the ground truth's fastest per-frame move of a piece of that colour + "
             f"{TELEPORT_MARGIN:g} px (at 128 px; scaled with the width)"),
    "area": (f"a colour's area changes by more than max({AREA_REL:g} x area, {AREA_ABS:g} px^2 at 128 px) from the "
             "frame before, unless the border explains it: a rise needs a piece partly out of view before, a new "
             "piece, or a whole piece within one step of entering; a fall needs a piece on the border now or a "
             "whole piece within one step of leaving: vanish / appear / deform / colour change"),
    "break": "more pieces of a colour than max(its bodies, the most pieces its ground truth shows in any frame)",
    "teleport": ("a piece farther than one step from every piece of its colour in the frame before; where the "
                 "colour has gained a piece (less those that could have left), pieces touching the border or whole "
                 "within one step of it are excused as just entered"),
    "static": (f"pixels of a colour only static bodies have differ from the last condition frame by more than "
               f"{STATIC_PIXELS:g} px^2 (at 128 px)"),
    "overlap": ("a colour's area, in a frame where none of its pieces touches the border and it has as many pieces as "
                "in the last condition frame, differs from its area there by more than max("
                f"{AREA_REL:g} x that area, the ground truth's own largest such difference + {AREA_ABS:g} px^2 at 128 px): "
                "'interpenetration' when another object colour touches it then, else 'area' (a gradual deform)"),
    "merge": ("fewer pieces of a colour than the fewest its ground truth shows in any frame where none touches the "
              f"border, while none touches the border and its area is within {AREA_REL:g} of the last condition "
              "frame's (not a vanish)"),
    "rest": (f"a colour whose ground-truth pixels never change after the condition frames (bodies at rest) changes "
             f"by more than {STATIC_PIXELS:g} px^2 (at 128 px): motion without cause"),
    "freeze": (f"for {FREEZE_FRAMES} consecutive frames a piece moves less than {FREEZE_STILL:g} px while the ground "
               f"truth's piece nearest it moves at least {FREEZE_MOVE:g} px, with no object and no border within "
               f"{FREEZE_GAP:g} px of it (at 128 px): a body stopped in mid-air"),
    "shape": (f"a colour of one body, drawn as one piece off the border and of at least {SHAPE_MIN_AREA:g} px^2 (at "
              "128 px) both in the last condition frame and in frame t, keeps its shape: elongation (sqrt of the "
              "ratio of its second-moment eigenvalues) within max("
              f"{SHAPE_ELONGATION:g}, the ground truth's own drift + 0.05) and solidity (area / convex hull area) "
              f"within max({SHAPE_SOLIDITY:g}, the ground truth's own drift + 0.03) of the condition frame's"),
    "verdict": "abnormal = 1 if any rule fires in any generated frame, else 0; its mean over videos is the abnormal ratio",
}


@dataclass
class Pieces:
    """One colour's segmentation of one video: per frame, its area, pieces and where they are."""

    area: np.ndarray  # (T,) px^2
    count: np.ndarray  # (T,) pieces
    edge: np.ndarray  # (T,) px: the smallest distance from a piece's bounding box to the frame's border (inf: none)
    exit: np.ndarray  # (T,) px: the smallest move that takes a whole piece out of view (inf: none)
    centroids: list[np.ndarray]  # T arrays (n_t, 2) of (row, col) px
    piece_edge: list[np.ndarray]  # T arrays (n_t,) px, per piece
    piece_exit: list[np.ndarray]  # T arrays (n_t,) px, per piece


def colour_masks(video: np.ndarray, colour: Sequence[int], background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """bool (T, H, W): pixels of `colour` (coverage >= CORE against the background)."""
    c = np.asarray(colour, np.float32)
    bg = np.asarray(background, np.float32)
    reach = float(np.abs(c - bg).max())  # the channel that separates the colour from the background most
    tol = max(reach * (1.0 - CORE), 8.0)
    # |pixel - c| <= tol per channel, as uint8 range tests (no float copy of the video)
    mask = np.ones(video.shape[:-1], bool)
    for k in range(3):
        lo, hi = int(np.ceil(c[k] - tol)), int(np.floor(c[k] + tol))
        channel = video[..., k]
        if lo > 0:
            mask &= channel >= lo
        if hi < 255:
            mask &= channel <= hi
    return mask


def pieces(video: np.ndarray, colour: Sequence[int]) -> Pieces:
    """Segment one colour in a (T, H, W, 3) uint8 video."""
    T, H, W = video.shape[:3]
    scale = (W / 128.0) ** 2
    mask = colour_masks(video, colour)
    closed = ndimage.binary_closing(mask, structure=np.ones((1, 3, 3), bool)) | mask
    labels, n = ndimage.label(closed, structure=_IN_PLANE)
    area = mask.reshape(T, -1).sum(axis=1).astype(np.float64)
    count = np.zeros(T, np.int64)
    edge = np.full(T, np.inf)
    exit = np.full(T, np.inf)
    centroids: list[np.ndarray] = []
    piece_edge: list[np.ndarray] = []
    piece_exit: list[np.ndarray] = []
    objects = ndimage.find_objects(labels)
    per_frame: list[list[tuple[np.ndarray, float, float]]] = [[] for _ in range(T)]
    if n:
        # sizes count the mask's pixels; centroids are over the closed piece (as ndimage's
        # sum and center_of_mass would give, by one bincount each)
        sizes = np.bincount(labels[mask], minlength=n + 1)[1:].astype(np.float64)
        t_idx, r_idx, c_idx = np.nonzero(closed)
        which = labels[t_idx, r_idx, c_idx]
        npix = np.maximum(np.bincount(which, minlength=n + 1)[1:], 1)
        rows = np.bincount(which, weights=r_idx, minlength=n + 1)[1:] / npix
        cols = np.bincount(which, weights=c_idx, minlength=n + 1)[1:] / npix
        for k, sl in enumerate(objects):
            if sl is None or sizes[k] < MIN_PIECE * scale:
                continue
            t = sl[0].start
            to_edge = float(min(sl[1].start, sl[2].start, H - sl[1].stop, W - sl[2].stop))
            to_exit = float(min(sl[1].stop, sl[2].stop, H - sl[1].start, W - sl[2].start))
            per_frame[t].append((np.array([rows[k], cols[k]]), to_edge, to_exit))
    for t in range(T):
        found = per_frame[t]
        count[t] = len(found)
        edge[t] = min((e for _, e, _ in found), default=np.inf)
        exit[t] = min((x for _, _, x in found), default=np.inf)
        centroids.append(np.array([c for c, _, _ in found], np.float64).reshape(-1, 2))
        piece_edge.append(np.array([e for _, e, _ in found], np.float64))
        piece_exit.append(np.array([x for _, _, x in found], np.float64))
    return Pieces(area, count, edge, exit, centroids, piece_edge, piece_exit)


_IN_PLANE = np.zeros((3, 3, 3), dtype=bool)
_IN_PLANE[1] = True  # 8-connected within a frame, never across frames


@dataclass(frozen=True)
class Shape:
    """Shape descriptors of one piece (a binary mask), px at the frame's resolution."""

    area: float  # px^2
    centroid: tuple[float, float]  # (row, col)
    angle: float  # rad: orientation of the major axis, from the second central moments
    elongation: float  # sqrt(major / minor second-moment eigenvalue); 1 for a disc or a square
    solidity: float  # area / convex hull area (pixel corners); 1 for a convex body
    rect: tuple[float, float, float]  # the minimum-area rotated bounding rectangle: (long side, short side, angle)


def shape_of(mask: np.ndarray) -> Shape | None:
    """Descriptors of a 2-D bool mask (None when empty): moments, convexity, rotated rectangle."""
    from scipy.spatial import ConvexHull, QhullError

    rows, cols = np.nonzero(mask)
    n = rows.size
    if n == 0:
        return None
    r0, c0 = rows.mean(), cols.mean()
    dr, dc = rows - r0, cols - c0
    mu20, mu02, mu11 = (dc * dc).mean() + 1 / 12, (dr * dr).mean() + 1 / 12, (dr * dc).mean()  # + a pixel's own
    half = np.sqrt(((mu20 - mu02) / 2) ** 2 + mu11 ** 2)
    major, minor = (mu20 + mu02) / 2 + half, (mu20 + mu02) / 2 - half
    angle = 0.5 * float(np.arctan2(2 * mu11, mu20 - mu02))
    corners = np.concatenate([np.stack([rows + a, cols + b], axis=1) for a in (-0.5, 0.5) for b in (-0.5, 0.5)])
    try:
        hull = ConvexHull(corners)
        pts = corners[hull.vertices]
        hull_area = float(hull.volume)  # in 2-D, `volume` is the area
    except QhullError:  # degenerate (a line of pixels)
        pts, hull_area = corners, float(n)
    best = (np.inf, 0.0, 0.0, 0.0)
    edges = np.roll(pts, -1, axis=0) - pts
    for theta in np.unique(np.round(np.arctan2(edges[:, 0], edges[:, 1]) % (np.pi / 2), 9)):
        c, s_ = np.cos(theta), np.sin(theta)
        u = pts[:, 1] * c + pts[:, 0] * s_
        v = -pts[:, 1] * s_ + pts[:, 0] * c
        w, h = u.max() - u.min(), v.max() - v.min()
        if w * h < best[0]:
            best = (w * h, max(w, h), min(w, h), float(theta if w >= h else theta + np.pi / 2))
    return Shape(float(n), (float(r0), float(c0)), angle, float(np.sqrt(major / max(minor, 1e-9))),
                 float(min(1.0, n / max(hull_area, 1e-9))), (float(best[1]), float(best[2]), best[3]))


def track(video: np.ndarray, colour: Sequence[int]) -> list[list[Shape]]:
    """Per frame, the shape descriptors of every piece of one colour (the tracker's full record)."""
    mask = colour_masks(video, colour)
    out = []
    for frame in mask:
        labels, n = ndimage.label(frame, structure=np.ones((3, 3), bool))
        out.append([sh for k in range(1, n + 1) if (sh := shape_of(labels == k)) is not None])
    return out


@dataclass
class Finding:
    rule: str  # area, break, teleport, static, interpenetration, merge, rest, freeze, shape
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


def _steps(p: Pieces, start: int, reach: float = 0.0) -> np.ndarray:
    """(T,) the largest distance from a piece to the nearest same-colour piece of the frame
    before, px, over the pieces that cannot have just entered the view.  Where the colour has
    gained a piece (less those that could have left), pieces touching the border or whole
    within `reach` px of it may be new; otherwise none is, so every piece counts: a body
    that jumps to the border keeps its colour's count, and is not excused as one coming in."""
    out = np.zeros(len(p.area))
    for t in range(max(start, 1), len(p.area)):
        a, b = p.centroids[t], p.centroids[t - 1]
        if len(a) and len(b):
            leavers = int(((p.piece_edge[t - 1] < 1.0) | (p.piece_exit[t - 1] < reach)).sum())
            if len(a) > len(b) - leavers:  # a piece may have come in: those on or within reach of the border are excused
                free = (p.piece_edge[t] >= 1.0) & (p.piece_exit[t] >= reach)
            else:  # none came in: every piece must be one step from one of the frame before
                free = np.ones(len(a), bool)
            if free.any():
                d = np.linalg.norm(a[free, None, :] - b[None, :, :], axis=-1).min(axis=1)
                out[t] = d.max()
    return out


def _area_steps(p: Pieces, start: int, reach: float) -> np.ndarray:
    """(T,) |area change| from the frame before, where the view's border cannot explain it.

    The area may rise only if a piece was partly out of view before (coming in), the colour
    gained a piece, or a whole piece could have come in within one step; it may fall only if
    a piece touches the border now (going out) or a whole piece could have left in one step
    (its far side within `reach` px of the border).
    """
    d = np.zeros(len(p.area))
    d[1:] = np.diff(p.area)
    touching = p.edge < 1.0
    before = np.zeros(len(d), bool)  # a piece touched the border in the frame before
    before[1:] = touching[:-1]
    gained = np.zeros(len(d), bool)
    gained[1:] = p.count[1:] > p.count[:-1]
    could_leave = np.zeros(len(d), bool)
    could_leave[1:] = p.exit[:-1] < reach
    could_enter = p.exit < reach
    # growth: only a piece partly out before (coming in) or a new one; shrinkage: only a piece
    # on the border now (going out) or one that could have left.  A whole body that grows as
    # it reaches the border is not excused.
    excused = ((d > 0) & (before | gained | could_enter)) | ((d < 0) & (touching | could_leave))
    d = np.abs(d)
    d[excused] = 0.0
    d[:start] = 0.0
    return d


def judge(video: np.ndarray, gt_video: np.ndarray, colours: Sequence[Sequence[int]], static: Sequence[bool],
          condition_frames: int) -> Verdict:
    """The verdict on one generated (T, H, W, 3) uint8 video, its ground truth as the yardstick.

    colours / static: per body of the scene, its colour and whether it is static.
    """
    if video.shape != gt_video.shape:
        raise ValueError(f"video {video.shape} and ground truth {gt_video.shape} differ in shape")
    T, H, W = video.shape[:3]
    scale_a, scale_l = (W / 128.0) ** 2, W / 128.0
    start = max(int(condition_frames), 1)
    findings: list[Finding] = []
    by_colour: dict[tuple[int, ...], list[bool]] = {}
    for c, s in zip(colours, static):
        by_colour.setdefault(tuple(int(x) for x in c), []).append(bool(s))
    # the ground truth's fastest step (px per frame) per dynamic colour
    gt_pieces = {c: pieces(gt_video, c) for c in by_colour}
    gen_pieces = {c: pieces(video, c) for c in by_colour}
    fastest_of = {c: float(_steps(gt_pieces[c], 1).max()) for c, st in by_colour.items() if not all(st)}
    for c, statics in by_colour.items():
        name = ",".join(map(str, c))
        g, p = gt_pieces[c], gen_pieces[c]
        if all(statics):  # only static bodies have this colour: its pixels never change
            ref = colour_masks(video[start - 1:start], c)[0]
            masks = colour_masks(video[start:], c)
            diff = (masks != ref[None]).reshape(len(masks), -1).sum(axis=1)
            bad = np.flatnonzero(diff > STATIC_PIXELS * scale_a) + start
            if bad.size:
                findings.append(Finding("static", name, bad.tolist(), f"static pixels differ by up to {int(diff.max())} px"))
            continue
        # one step: px a piece of this colour may move in one frame (its ground truth's fastest)
        fastest = fastest_of[c]
        reach = TELEPORT_FACTOR * fastest + TELEPORT_MARGIN * scale_l
        allowed_area = np.maximum(AREA_REL * np.maximum(p.area, np.roll(p.area, 1)), AREA_ABS * scale_a)
        d = _area_steps(p, start, reach)
        bad = np.flatnonzero(d > allowed_area)
        if bad.size:
            t = int(bad[0])
            what = "shrank or vanished" if p.area[t] < p.area[t - 1] else "grew or appeared"
            findings.append(Finding("area", name, bad.tolist(),
                                    f"area {p.area[t - 1]:.0f} -> {p.area[t]:.0f} px^2 at frame {t} away from the border: {what}"))
        ceiling = max(len(statics), int(g.count.max()))  # a jar may be drawn in several pieces
        bad = np.flatnonzero(p.count[start:] > ceiling) + start
        if bad.size:
            findings.append(Finding("break", name, bad.tolist(),
                                    f"{int(p.count[bad[0]])} pieces at frame {int(bad[0])}; at most {ceiling} expected"))
        step = _steps(p, start, reach)
        bad = np.flatnonzero(step > reach)
        if bad.size:
            findings.append(Finding("teleport", name, bad.tolist(),
                                    f"a piece {step[bad[0]]:.1f} px from any piece of the frame before at frame "
                                    f"{int(bad[0])}; its ground truth's fastest step is {fastest:.1f} px"))
        findings += _overlap(video, p, g, c, name, by_colour, start, scale_a)
        findings += _merge(p, g, name, start)
        findings += _rest(video, gt_video, c, name, start, scale_a)
        findings += _freeze(video, p, g, c, name, start, scale_l, reach)
        if len(statics) == 1:
            findings += _shape(video, gt_video, p, g, c, name, start, scale_a)
    return Verdict(bool(findings), findings)


def _single_shapes(video: np.ndarray, q: Pieces, c: tuple[int, ...], frames: Sequence[int],
                   scale_a: float) -> dict[int, Shape]:
    """{t: descriptors} of the frames where the colour is one piece off the border, big enough."""
    out = {}
    for t in frames:
        if q.count[t] == 1 and q.edge[t] >= 1.0 and q.area[t] >= SHAPE_MIN_AREA * scale_a:
            sh = shape_of(colour_masks(video[t:t + 1], c)[0])
            if sh is not None:
                out[t] = sh
    return out


def _shape(video: np.ndarray, gt_video: np.ndarray, p: Pieces, g: Pieces, c: tuple[int, ...], name: str,
           start: int, scale_a: float) -> list[Finding]:
    """A rigid body keeps its shape: elongation and solidity against the last condition frame."""
    ref = start - 1
    frames = [ref, *range(start, len(p.area))]
    gen = _single_shapes(video, p, c, frames, scale_a)
    if ref not in gen:
        return []
    gt = _single_shapes(gt_video, g, c, frames, scale_a)

    def drift(d: dict[int, Shape]) -> tuple[float, float]:
        if ref not in d:
            return 0.0, 0.0
        e = max((abs(x.elongation - d[ref].elongation) for t, x in d.items() if t != ref), default=0.0)
        s_ = max((abs(x.solidity - d[ref].solidity) for t, x in d.items() if t != ref), default=0.0)
        return e, s_

    ge, gs = drift(gt)
    tol_e, tol_s = max(SHAPE_ELONGATION, ge + 0.05), max(SHAPE_SOLIDITY, gs + 0.03)
    r = gen[ref]
    bad = [t for t, x in gen.items() if t != ref and (abs(x.elongation - r.elongation) > tol_e
                                                         or abs(x.solidity - r.solidity) > tol_s)]
    if not bad:
        return []
    x = gen[bad[0]]
    return [Finding("shape", name, bad, f"elongation {r.elongation:.2f} -> {x.elongation:.2f}, solidity "
                                        f"{r.solidity:.2f} -> {x.solidity:.2f} at frame {bad[0]}: a rigid body changed shape")]


def _overlap(video: np.ndarray, p: Pieces, g: Pieces, c: tuple[int, ...], name: str,
             by_colour: dict[tuple[int, ...], list[bool]], start: int, scale_a: float) -> list[Finding]:
    """Gradual area change against the last condition frame: interpenetration or a slow deform.

    The frame-to-frame area rule misses a body that sinks into another a little each frame;
    this one compares every clear frame (no piece on the border, the same number of pieces)
    with the last condition frame, allowing what the ground truth itself shows."""
    ref = start - 1

    def deviation(q: Pieces) -> np.ndarray:
        ok = (q.edge >= 1.0) & (q.count == q.count[ref]) & (q.edge[ref] >= 1.0)
        ok[:start] = False
        return np.where(ok, np.abs(q.area - q.area[ref]), 0.0)

    if p.edge[ref] < 1.0 or g.edge[ref] < 1.0:
        return []
    allowed = max(AREA_REL * p.area[ref], float(deviation(g).max()) + AREA_ABS * scale_a)
    bad = np.flatnonzero(deviation(p) > allowed)
    if not bad.size:
        return []
    t = int(bad[0])
    mine = ndimage.binary_dilation(colour_masks(video[t:t + 1], c)[0], iterations=2)
    touched = [o for o in by_colour if o != c and (mine & colour_masks(video[t:t + 1], o)[0]).any()]
    rule = "interpenetration" if touched else "area"
    what = f", overlapping colour {','.join(map(str, touched[0]))}" if touched else ""
    return [Finding(rule, name, bad.tolist(), f"area {p.area[ref]:.0f} -> {p.area[t]:.0f} px^2 from the last condition "
                                              f"frame to frame {t} (at most {allowed:.0f} allowed){what}")]


def _merge(p: Pieces, g: Pieces, name: str, start: int) -> list[Finding]:
    """Two bodies of one colour drawn as one piece, where the ground truth never joins them."""
    ref = start - 1
    clear_gt = g.edge >= 1.0
    if not clear_gt.any():
        return []
    floor = int(g.count[clear_gt].min())
    whole = p.area >= (1.0 - AREA_REL) * p.area[ref]
    bad = np.flatnonzero((p.edge >= 1.0) & (p.count < floor) & (p.count >= 1) & whole)
    bad = bad[bad >= start]
    if not bad.size:
        return []
    t = int(bad[0])
    return [Finding("merge", name, bad.tolist(), f"{int(p.count[t])} piece(s) at frame {t}; the ground truth always "
                                                  f"shows at least {floor} away from the border")]


def _rest(video: np.ndarray, gt_video: np.ndarray, c: tuple[int, ...], name: str, start: int,
          scale_a: float) -> list[Finding]:
    """Motion without cause: bodies at rest in the ground truth must stay at rest."""
    gt = colour_masks(gt_video[start - 1:], c)
    if (gt[1:] != gt[0]).reshape(len(gt) - 1, -1).sum(axis=1).max(initial=0) > STATIC_PIXELS * scale_a:
        return []  # it moves in the ground truth
    masks = colour_masks(video[start - 1:], c)
    diff = (masks[1:] != masks[0]).reshape(len(masks) - 1, -1).sum(axis=1)
    bad = np.flatnonzero(diff > STATIC_PIXELS * scale_a) + start
    if not bad.size:
        return []
    return [Finding("rest", name, bad.tolist(), f"bodies at rest in the ground truth moved: pixels differ by up to "
                                                 f"{int(diff.max())} px from the last condition frame")]


def _freeze(video: np.ndarray, p: Pieces, g: Pieces, c: tuple[int, ...], name: str, start: int, scale_l: float,
            reach: float) -> list[Finding]:
    """A body that stops in mid-air: still, touching nothing, while the ground truth's moves."""
    T, H, W = video.shape[:3]
    gap = max(1, int(round(FREEZE_GAP * scale_l)))
    flagged: list[int] = []
    for t in range(max(start, 1), T):
        a, b, ga, gb = p.centroids[t], p.centroids[t - 1], g.centroids[t], g.centroids[t - 1]
        if not (len(a) and len(b) and len(ga) and len(gb)):
            continue
        moved = np.linalg.norm(a[:, None] - b[None], axis=-1).min(axis=1)
        gt_moved = np.linalg.norm(ga[:, None] - gb[None], axis=-1).min(axis=1)
        for i in np.flatnonzero(moved < FREEZE_STILL * scale_l):
            near = np.linalg.norm(ga - a[i], axis=-1)
            j = int(near.argmin())
            if near[j] > reach or gt_moved[j] < FREEZE_MOVE * scale_l or p.piece_edge[t][i] < gap:
                continue
            if not _touches_anything(video[t], c, a[i], gap):
                flagged.append(t)
                break
    runs = [t for t in flagged if all(t - k in flagged for k in range(1, FREEZE_FRAMES))]
    if not runs:
        return []
    return [Finding("freeze", name, runs, f"a piece stands still from frame {runs[0] - FREEZE_FRAMES + 1} on, touching "
                                          f"nothing, while the ground truth's moves: stopped in mid-air")]


def _touches_anything(frame: np.ndarray, c: tuple[int, ...], centroid: np.ndarray, gap: int) -> bool:
    """Whether another object's ink lies within `gap` px of the piece of colour c at `centroid`."""
    mask = colour_masks(frame[None], c)[0]
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), bool))
    if not n:
        return False
    rows, cols = np.nonzero(labels)
    k = labels[rows, cols][np.argmin((rows - centroid[0]) ** 2 + (cols - centroid[1]) ** 2)]
    piece = labels == k
    ring = ndimage.binary_dilation(piece, iterations=gap + 2) & ~ndimage.binary_dilation(piece, iterations=2)
    ink = np.abs(frame.astype(np.int16) - np.asarray(BACKGROUND, np.int16)).max(axis=-1) > INK
    return bool((ring & ink).any())


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

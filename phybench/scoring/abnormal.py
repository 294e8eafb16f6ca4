"""The abnormality judge: does a generated video break what every rigid-body scene keeps?

The paper counts "abnormal" videos by hand (objects that vanish, rigid bars that break, jars
that deform).  This judge reads pixels, for any family: it segments every object colour of
the scene (the row's bodies say which colours exist and which bodies are static), measures
per frame each colour's area, its connected pieces and their centroids, and applies rules
that hold in every ground-truth video, with tolerances taken from that sample's own ground
truth (`SETTINGS` states them; every results file quotes them):

* **area** (vanish / shrink, appear / grow, colour change): between two consecutive frames
  a colour's area may change by at most max(15%, 6 px^2 at 128 px) (anti-aliasing at
  contacts), unless one of its pieces touches the border (partly out of view), or a whole
  piece could have left (entered) the view in one step;
* **break**: a colour never has more pieces than it has bodies, or than its ground truth
  ever shows (a jar is drawn as one piece or several, depending on its angle);
* **teleport**: no piece that cannot have just entered the view (not touching the border,
  not whole within one step of it) lies farther from every piece of its colour in the frame
  before than one step: 1.5 x the ground truth's fastest piece's
  per-frame move, plus 3 px at 128 px;
* **static moved**: pixels of a colour that only static bodies have never change after
  the condition frames.

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
BACKGROUND = (255, 255, 255)

SETTINGS: dict[str, Any] = {
    "segmentation": (f"per object colour of the scene: pixels within {1 - CORE:.2f} of the colour-to-background "
                     f"distance (coverage >= {CORE:g}); pieces = 8-connected components after a 3x3 closing; "
                     f"pieces under {MIN_PIECE:g} px^2 (at 128 px; scaled with the frame area) ignored"),
    "frames": "generated frames, each against the frame before it (the last condition frame included)",
    "step": (f"one step = {TELEPORT_FACTOR:g} x the ground truth's fastest per-frame piece move + "
             f"{TELEPORT_MARGIN:g} px (at 128 px; scaled with the width)"),
    "area": (f"a colour's area changes by more than max({AREA_REL:g} x area, {AREA_ABS:g} px^2 at 128 px) while "
             "no piece of it touches the border, unless a whole piece could have left (a fall) or entered (a rise) "
             "the view in one step: vanish / appear / deform / colour change"),
    "break": "more pieces of a colour than max(its bodies, the most pieces its ground truth shows in any frame)",
    "teleport": ("a piece not touching the border and not whole within one step of it, farther than one step from "
                 "every piece of its colour in the frame before"),
    "static": (f"pixels of a colour only static bodies have differ from the last condition frame by more than "
               f"{STATIC_PIXELS:g} px^2 (at 128 px)"),
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


@dataclass
class Finding:
    rule: str  # area, break, teleport, static
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
    before, px, over the pieces that cannot have just entered the view: not touching the
    border, and not whole within `reach` px of it."""
    out = np.zeros(len(p.area))
    for t in range(max(start, 1), len(p.area)):
        a, b = p.centroids[t], p.centroids[t - 1]
        if len(a) and len(b):
            free = (p.piece_edge[t] >= 1.0) & (p.piece_exit[t] >= reach)
            if free.any():
                d = np.linalg.norm(a[free, None, :] - b[None, :, :], axis=-1).min(axis=1)
                out[t] = d.max()
    return out


def _area_steps(p: Pieces, start: int, reach: float) -> np.ndarray:
    """(T,) |area change| from the frame before, where the view's border cannot explain it.

    A piece touching the border in either frame may be partly out: any change goes.  With
    none touching, every piece is whole in both frames, so the area may only fall if a whole
    piece could have left in one step (its far side within `reach` px of the border), and
    only rise if a whole piece could have come in (likewise, in the later frame).
    """
    d = np.zeros(len(p.area))
    d[1:] = np.diff(p.area)
    touching = p.edge < 1.0
    excused = np.zeros(len(d), bool)
    excused[1:] = touching[1:] | touching[:-1]
    could_leave = np.zeros(len(d), bool)
    could_leave[1:] = p.exit[:-1] < reach
    could_enter = p.exit < reach
    excused |= ((d < 0) & could_leave) | ((d > 0) & could_enter)
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
    # the ground truth's fastest step (px per frame), over every dynamic colour
    gt_pieces = {c: pieces(gt_video, c) for c in by_colour}
    gen_pieces = {c: pieces(video, c) for c in by_colour}
    fastest = max([_steps(gt_pieces[c], 1).max() for c, st in by_colour.items() if not all(st)] or [0.0])
    reach = TELEPORT_FACTOR * fastest + TELEPORT_MARGIN * scale_l  # px a piece may move in one frame
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
                                    f"{int(bad[0])}; the ground truth's fastest step is {fastest:.1f} px"))
    return Verdict(bool(findings), findings)


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

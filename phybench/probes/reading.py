"""What the probes share: reading one body back from generated pixels, shares with Wilson intervals,
means with normal intervals, and reading a complete submission in storage order.

The body reader (``read_body``) reads the one body of each generated frame (k >= condition
frames) back from pixels, whatever its colour:

- ink = 1 - min(R, G, B) / 255 per pixel (the white background is 0, a body's core 1);
  pixels with ink < `INK_FLOOR` are background noise;
- **colour** by hue: the hue of the mean colour of the core pixels (ink >= 0.5), nearest
  of red (0 deg) and blue (240 deg); grey or black (saturation < 0.3) is "other";
- **shape** by a measured descriptor, the fill ratio area / (width x height) with width
  and height the summed column / row maxima of ink (anti-aliasing gives fractional
  widths): 1 for a square, pi / 4 = 0.785 for a disc, 0.589 for a ring of inner radius
  r / 2; the class is the nearest of those;
- **size** by area: r = sqrt(A / pi) for a disc, sqrt(A) / 2 for a square, sqrt(A / (0.75 pi))
  for a ring (A = sum of ink x pixel area), i.e. the task's r whatever the read shape;
- **velocity** by tracking: the least-squares slope of the ink centroid's x over time.

Only frames where the body does not touch the image border count; per video the colour
and shape are the majority over those frames, size the median, velocity the slope over
them (at least `MIN_FRAMES`).  A video with fewer such frames is "lost".
"""
from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from ..data.documents import SplitRow
from ..scoring.run.results import Z95, wilson
from .registry import ProbeError

INK_FLOOR = 0.1  # ink below this is background (noise of a generated video)
MIN_AREA = 0.5  # world units^2: less ink than this in a frame is no body (smallest body: 1.5)
MIN_FRAMES = 4  # in-view generated frames a video needs to be read
HUES = {"red": 0.0, "blue": 240.0}  # degrees
FILL = {"square": 1.0, "disc": math.pi / 4, "ring": math.pi * (1 - 0.25) / 4}  # area / bounding box
AREA_PER_R2 = {"square": 4.0, "disc": math.pi, "ring": math.pi * (1 - 0.25)}  # area / r^2

# ------------------------------------------------------------------ reader
@dataclass(frozen=True)
class BodyReading:
    """What the reader measured of one video's body over its generated frames."""

    frames: int  # generated frames with the body found wholly in view
    colour: str | None  # "red", "blue", "other"; None when lost
    shape: str | None  # "disc", "square", "ring"; None when lost
    fill: float  # median area / bounding box
    radius: float  # world units, median r from the area and the read shape
    velocity: float  # world units / s, slope of the centroid's x

    @property
    def lost(self) -> bool:
        return self.frames < MIN_FRAMES


def hue_class(rgb: np.ndarray) -> str:
    h, s, _ = colorsys.rgb_to_hsv(*(float(c) / 255.0 for c in rgb))
    if s < 0.3:
        return "other"
    hue = h * 360.0
    return min(HUES, key=lambda name: min(abs(hue - HUES[name]), 360.0 - abs(hue - HUES[name])))


def read_body(video: np.ndarray, condition_frames: int, world_size: float, frame_interval: float) -> BodyReading:
    """Measure the one body of `video` (uint8 (T, H, W, 3)) over its generated frames."""
    video = np.asarray(video)
    T, H, W, _ = video.shape
    s = world_size / W  # world units per pixel
    xs = (np.arange(W) + 0.5) * s  # world x of each column
    colours, shapes, fills, radii, times, centres = [], [], [], [], [], []
    for k in range(condition_frames, T):
        frame = video[k].astype(np.float64)
        ink = 1.0 - frame.min(axis=-1) / 255.0  # (H, W)
        ink[ink < INK_FLOOR] = 0.0
        area = float(ink.sum()) * s * s
        if area < MIN_AREA:
            continue
        if ink[0].any() or ink[-1].any() or ink[:, 0].any() or ink[:, -1].any():
            continue  # touches the border: partly out of view
        width = float(ink.max(axis=0).sum()) * s
        height = float(ink.max(axis=1).sum()) * s
        fill = area / (width * height)
        shape = min(FILL, key=lambda name: abs(FILL[name] - fill))
        core = ink >= 0.5
        if not core.any():
            continue
        colours.append(hue_class(frame[core].mean(axis=0)))
        shapes.append(shape)
        fills.append(fill)
        radii.append(math.sqrt(area / AREA_PER_R2[shape]))
        times.append(k * frame_interval)
        centres.append(float((ink.sum(axis=0) * xs).sum() / ink.sum()))
    n = len(times)
    if n < MIN_FRAMES:
        return BodyReading(n, None, None, float("nan"), float("nan"), float("nan"))
    t, x = np.asarray(times), np.asarray(centres)
    velocity = float(np.polyfit(t, x, 1)[0])
    return BodyReading(n, majority(colours), majority(shapes), float(np.median(fills)), float(np.median(radii)),
                       velocity)


def majority(values: list[str]) -> str:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return max(sorted(counts), key=lambda v: counts[v])  # ties: alphabetical, deterministic



# ------------------------------------------------------------------ statistics
def share(k: int, n: int) -> dict[str, Any]:
    """A share with its Wilson 95% interval; with no videos there is no share and no interval
    (NaN, written as null), as every probe results file says."""
    lo, hi = wilson(k, n) if n else (float("nan"), float("nan"))
    return {"count": k, "share": k / n if n else float("nan"), "ci95": [lo, hi]}


def split_videos(reader: Any, sub: Any, columns: Sequence[str], what: str,
                  progress: bool) -> Iterator[tuple[SplitRow, Any]]:
    """(row, video) for every sample of the split, read in the submission's storage order.

    Refuses, before reading any video, a submission that lacks some of the split's samples:
    an analysis of part of a probe would be a different probe.
    """
    from tqdm import tqdm

    rows = {row["sample_id"]: row for row in reader.rows(list(columns))}
    ids = list(rows)
    missing = sorted(set(ids) - set(sub.ids))
    if missing:
        raise ProbeError(f"the submission lacks {len(missing)} of the split's {len(ids)} videos "
                         f"(first: {missing[0]}); analyse a complete submission")

    def videos() -> Iterator[tuple[SplitRow, Any]]:
        for sample_id, video in tqdm(sub.iter_videos(sub.storage_order(ids)), total=len(ids),
                                     desc=f"analyse {what} {reader.spec.name}", unit="video", disable=not progress):
            yield rows[sample_id], video

    return videos()


def pct_text(entry: dict[str, Any]) -> str:
    if entry["count"] == 0 and not math.isfinite(entry["share"]):
        return "  n/a"
    lo, hi = entry["ci95"]
    return f"{100 * entry['share']:5.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def mean_ci(values: Sequence[float]) -> dict[str, Any]:
    """Mean with a normal 95% interval (mean +- 1.96 sd / sqrt(n)); NaN when empty."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if x.size == 0:
        return {"n": 0, "mean": float("nan"), "ci95": [float("nan"), float("nan")]}
    m = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else float("nan")
    return {"n": int(x.size), "mean": m, "ci95": [m - half, m + half]}

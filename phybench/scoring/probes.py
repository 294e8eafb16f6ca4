"""Generalisation probes: each probe's automatic analysis (paper section 5).

A probe is a task family that declares ``probe = NAME``; its analysis turns a submission
on one of its evaluation splits into a versioned, deterministic results file (per video
verdicts, per split shares with intervals), and ranks or plots several such files.
Nothing here names a task: a task's pair and combinations come from its
``family_params``.

The attribute-priority reader (``priority``) reads the one body of each generated frame
(k >= condition frames) back from pixels, whatever its colour:

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
import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from ..io import atomic_write_bytes
from ..registry import Registry
from ..tasks import family_of
from ..tasks.spec import TaskSpec
from .results import _clean

SCHEMA = "phybench.probe-analysis"
SCHEMA_VERSION = 1
INK_FLOOR = 0.1  # ink below this is background (noise of a generated video)
MIN_AREA = 0.5  # world units^2: less ink than this in a frame is no body (smallest body: 1.5)
MIN_FRAMES = 4  # in-view generated frames a video needs to be read
HUES = {"red": 0.0, "blue": 240.0}  # degrees
FILL = {"square": 1.0, "disc": math.pi / 4, "ring": math.pi * (1 - 0.25) / 4}  # area / bounding box
AREA_PER_R2 = {"square": 4.0, "disc": math.pi, "ring": math.pi * (1 - 0.25)}  # area / r^2
SIZE_CLASSES = (("small", 1.05),)  # r below 1.05: small, else large (the gap's midpoint)
VELOCITY_CLASSES = (("slow", 2.5),)  # v below 2.5: slow, else fast
VERDICTS = ("both", "first", "second", "neither", "lost")  # which of the pair's attributes were kept
Z95 = 1.959963984540054  # two-sided 95% normal quantile (Wilson intervals)


class ProbeError(Exception):
    """A submission, split or results file the analysis cannot use (a user error)."""


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


def _hue_class(rgb: np.ndarray) -> str:
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
        colours.append(_hue_class(frame[core].mean(axis=0)))
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
    return BodyReading(n, _majority(colours), _majority(shapes), float(np.median(fills)), float(np.median(radii)),
                       velocity)


def _majority(values: list[str]) -> str:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return max(sorted(counts), key=lambda v: counts[v])  # ties: alphabetical, deterministic


def _threshold_class(value: float, classes: tuple[tuple[str, float], ...], last: str) -> str:
    for name, upper in classes:
        if value < upper:
            return name
    return last


def reading_classes(reading: BodyReading) -> dict[str, str | None]:
    """The value set each attribute of a reading falls in (None when lost)."""
    if reading.lost:
        return {"colour": None, "shape": None, "size": None, "velocity": None}
    return {"colour": reading.colour, "shape": reading.shape,
            "size": _threshold_class(reading.radius, SIZE_CLASSES, "large"),
            "velocity": _threshold_class(reading.velocity, VELOCITY_CLASSES, "fast")}


def conditioned_classes(row: dict[str, Any]) -> dict[str, str]:
    """The value set of each attribute a split row conditions on."""
    return {"colour": str(row["colour"]), "shape": str(row["shape"]),
            "size": _threshold_class(float(row["radius"]), SIZE_CLASSES, "large"),
            "velocity": _threshold_class(float(row["velocity"]), VELOCITY_CLASSES, "fast")}


def verdict(pair: Sequence[str], conditioned: dict[str, str], read: dict[str, str | None]) -> str:
    """"both", "first" (kept only pair[0]), "second", "neither" or "lost"."""
    if read[pair[0]] is None:
        return "lost"
    a, b = (read[p] == conditioned[p] for p in pair)
    return "both" if a and b else "first" if a else "second" if b else "neither"


# ------------------------------------------------------------------ statistics
def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of a share k / n (exact at 0 and n, unlike a normal interval)."""
    if n == 0:
        return float("nan"), float("nan")
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def share(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(k, n)
    return {"count": k, "share": k / n if n else float("nan"), "ci95": [lo, hi]}


# ------------------------------------------------------------------ analyses
@dataclass(frozen=True)
class Probe:
    """One probe's analysis: a submission on a split -> results; results files -> a summary."""

    name: str
    description: str
    # (SplitReader, Submission, progress, options) -> results; options: e.g. {"train_split": ...}
    analyse: Callable[[Any, Any, bool, dict[str, Any]], dict[str, Any]]
    summarise: Callable[[list[dict[str, Any]]], dict[str, Any]]  # results files -> summary
    render: Callable[[dict[str, Any]], str]  # summary -> text for the terminal


PROBES: Registry[Probe] = Registry("probe")


def register_probe(probe: Probe) -> Probe:
    return PROBES.register(probe.name, probe)



def _split_videos(reader: Any, sub: Any, columns: Sequence[str], what: str,
                  progress: bool) -> Iterator[tuple[dict[str, Any], Any]]:
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

    def videos() -> Iterator[tuple[dict[str, Any], Any]]:
        for sample_id, video in tqdm(sub.iter_videos(sub.storage_order(ids)), total=len(ids),
                                     desc=f"analyse {what} {reader.spec.name}", unit="video", disable=not progress):
            yield rows[sample_id], video

    return videos()


def _priority_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    pair = tuple(spec.param("pair"))
    videos = []
    columns = ["sample_id", "level", "radius", "velocity", "colour", "shape"]
    for row, video in _split_videos(reader, sub, columns, "priority", progress):
        sample_id = row["sample_id"]
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        cond, read = conditioned_classes(row), reading_classes(reading)
        videos.append({
            "sample_id": sample_id, "level": row["level"],
            "conditioned": {p: cond[p] for p in pair}, "read": {p: read[p] for p in pair},
            "frames": reading.frames, "fill": reading.fill, "radius": reading.radius,
            "velocity": reading.velocity, "conditioned_radius": float(row["radius"]),
            "conditioned_velocity": float(row["velocity"]), "verdict": verdict(pair, cond, read),
        })
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in VERDICTS}
    return {
        "pair": list(pair),
        "ranked": bool(spec.param("ranked", True)),
        "train_combinations": [list(c) for c in spec.param("train")],
        "videos_analysed": n,
        "verdicts": {v: share(counts[v], n) for v in VERDICTS},
        "verdict_meaning": {"both": "kept both attributes", "first": f"kept {pair[0]} only",
                            "second": f"kept {pair[1]} only", "neither": "kept neither",
                            "lost": f"body not found wholly in view in {MIN_FRAMES} generated frames"},
        "videos": videos,
    }


def priority_ranking(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank the attributes from pairwise outcomes (one results file per pair, one model).

    Per pair, the decisive videos are those that kept exactly one attribute; the first
    attribute wins the pair when it was the one kept in more than half of them (a Wilson
    interval says how sure), and the pair is a tie when no video is decisive or the shares
    are equal.  An attribute's score is its wins (ties count one half); the order is by
    score, equal scores are shown as equal ("=").
    """
    pairs, models = [], sorted({r["model"] for r in results})
    if len(models) > 1:
        raise ProbeError(f"results of several models ({', '.join(models)}): rank one model at a time")
    seen: set[tuple[str, ...]] = set()
    scores: dict[str, float] = {}
    for r in sorted(results, key=lambda r: r["task"]):
        a = r["analysis"]
        first, second = a["pair"]
        entry = {"task": r["task"], "pair": [first, second], "ranked": a["ranked"], "n": a["videos_analysed"],
                 **{v: a["verdicts"][v] for v in VERDICTS}}
        k1, k2 = a["verdicts"]["first"]["count"], a["verdicts"]["second"]["count"]
        entry["decisive"] = k1 + k2
        entry["first_preferred"] = share(k1, k1 + k2)
        entry["winner"] = first if k1 > k2 else second if k2 > k1 else None
        pairs.append(entry)
        if not a["ranked"]:
            continue
        key = tuple(sorted((first, second)))
        if key in seen:
            raise ProbeError(f"two results files for the pair {first} vs {second}")
        seen.add(key)
        for attr in (first, second):
            scores.setdefault(attr, 0.0)
        if entry["winner"] is None:
            scores[first] += 0.5
            scores[second] += 0.5
        else:
            scores[entry["winner"]] += 1.0
    levels = sorted(set(scores.values()), reverse=True)
    groups = [sorted(a for a in scores if scores[a] == s) for s in levels]
    order = " > ".join(" = ".join(g) for g in groups)
    return {"model": models[0] if models else None, "ranking": order, "scores": scores,
            "pairs_ranked": len(seen), "complete": len(seen) == 6, "pairs": pairs}


def _pct(entry: dict[str, Any]) -> str:
    if entry["count"] == 0 and not math.isfinite(entry["share"]):
        return "  n/a"
    lo, hi = entry["ci95"]
    return f"{100 * entry['share']:5.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def render_priority(summary: dict[str, Any]) -> str:
    lines = [f"model: {summary['model']}",
             f"ranking: {summary['ranking'] or '(no ranked pair)'}"
             + ("" if summary["complete"] else f"   (from {summary['pairs_ranked']} of 6 pairs)")]
    for p in summary["pairs"]:
        a, b = p["pair"]
        tag = "" if p["ranked"] else "  (variant, not ranked)"
        lines.append(f"{p['task']}: {a} vs {b}, {p['n']} videos{tag}")
        lines.append(f"  kept {a} only   {_pct(p['first'])}")
        lines.append(f"  kept {b} only   {_pct(p['second'])}")
        lines.append(f"  kept both       {_pct(p['both'])}")
        lines.append(f"  kept neither    {_pct(p['neither'])}")
        lines.append(f"  lost            {_pct(p['lost'])}")
        winner = p["winner"] or "tie"
        lines.append(f"  preferred: {winner}"
                     + (f" in {_pct(p['first_preferred']).strip()} of {p['decisive']} decisive videos (share of "
                        f"{a})" if p["decisive"] else " (no decisive video)"))
    return "\n".join(lines)


register_probe(Probe("priority", "attribute priority (section 5.3): which of two conflicting attributes is kept",
                     _priority_analyse, priority_ranking, render_priority))


# ------------------------------------------------------------------ flip memorisation
FLIP_VERDICTS = ("kept", "reversed", "stalled", "lost")
STALL_SPEED = 0.2  # world units / s: a generated speed below this is a stalled ball, not a direction


def flip_verdict(conditioned_velocity: float, reading: BodyReading) -> str:
    """"kept" (same direction), "reversed", "stalled" (|v| < STALL_SPEED) or "lost"."""
    if reading.lost:
        return "lost"
    if abs(reading.velocity) < STALL_SPEED:
        return "stalled"
    return "kept" if reading.velocity * conditioned_velocity > 0 else "reversed"


def _flip_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    videos = []
    columns = ["sample_id", "level", "velocity", "direction"]
    for row, video in _split_videos(reader, sub, columns, "flip", progress):
        sample_id = row["sample_id"]
        v0 = float(row["velocity"]) * (-1.0 if row["direction"] == "left" else 1.0)
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "conditioned_velocity": v0, "velocity": reading.velocity,
                       "frames": reading.frames, "verdict": flip_verdict(v0, reading)})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in FLIP_VERDICTS}
    return {"videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in FLIP_VERDICTS},
            "verdict_meaning": {"kept": "moves in the conditioned direction", "reversed": "turns back",
                                "stalled": f"generated speed below {STALL_SPEED} world units / s",
                                "lost": f"ball not found wholly in view in {MIN_FRAMES} generated frames"},
            "videos": videos}


def flip_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per results file: the share of videos that reverse, with its interval."""
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in FLIP_VERDICTS},
                     "points": [[v["conditioned_velocity"], v["velocity"]] for v in a["videos"]]})
    return {"rows": rows}


def render_flip(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']}, {row['n']} videos")
        for v in FLIP_VERDICTS:
            lines.append(f"  {v:<9} {_pct(row[v])}")
    return "\n".join(lines)


register_probe(Probe("flip", "flip memorisation (section 5.2): does a slow ball turn back after the condition frames",
                     _flip_analyse, flip_summary, render_flip))


# ------------------------------------------------------------------ interpolation gaps
GAP_VERDICTS = ("snapped", "held", "lost")
# world units / s: a move toward the training ranges smaller than this is reading noise (the
# reader's speed is within 0.02 of the truth on ground truth), not a snap
SNAP_TOLERANCE = 0.05  # for the videos whose speed lies in the training set's gap


def distance_to(ranges: Sequence[Sequence[float]], v: float) -> float:
    """World units / s from v to the nearest training range (0 inside one)."""
    return min(0.0 if a <= v <= b else min(abs(v - a), abs(v - b)) for a, b in ranges)


def gap_verdict(ranges: Sequence[Sequence[float]], v0: float, reading: BodyReading) -> str | None:
    """None for a conditioned speed inside a training range; else "snapped" (the generated
    speed is less than half as far from the training ranges as the conditioned one, and
    at least `SNAP_TOLERANCE` nearer), "held" or "lost"."""
    d0 = distance_to(ranges, v0)
    if d0 == 0.0:
        return None
    if reading.lost:
        return "lost"
    d = distance_to(ranges, reading.velocity)
    return "snapped" if d < 0.5 * d0 and d0 - d > SNAP_TOLERANCE else "held"


def _gaps_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    sets = {name: ranges for name, ranges in spec.param("gap_sets")}
    train = options.get("train_split")
    if train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    ranges = [list(r) for r in sets[train]]
    videos = []
    columns = ["sample_id", "velocity"]
    for row, video in _split_videos(reader, sub, columns, "gaps", progress):
        sample_id = row["sample_id"]
        v0 = float(row["velocity"])
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "conditioned_velocity": v0, "velocity": reading.velocity,
                       "in_gap": distance_to(ranges, v0) > 0.0, "verdict": gap_verdict(ranges, v0, reading)})
    videos.sort(key=lambda v: v["sample_id"])
    gap = [v for v in videos if v["in_gap"]]
    counts = {v: sum(1 for x in gap if x["verdict"] == v) for v in GAP_VERDICTS}

    def error(vs: list[dict[str, Any]]) -> float:
        errs = [abs(v["velocity"] - v["conditioned_velocity"]) for v in vs if np.isfinite(v["velocity"])]
        return float(np.mean(errs)) if errs else float("nan")

    return {"train_split": train, "train_ranges": ranges, "videos_analysed": len(videos), "in_gap": len(gap),
            "verdicts": {v: share(counts[v], len(gap)) for v in GAP_VERDICTS},
            "velocity_error_in_gap": error(gap), "velocity_error_in_range": error([v for v in videos
                                                                                   if not v["in_gap"]]),
            "verdict_meaning": {"snapped": "in the gap, the generated speed is less than half as far from a "
                                           f"training range as the conditioned one (and {SNAP_TOLERANCE} nearer)",
                                "held": "in the gap, the generated speed did not move (that much) toward a "
                                        "training range",
                                "lost": f"ball not found wholly in view in {MIN_FRAMES} generated frames"},
            "videos": videos}


def gaps_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["analysis"]["train_split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "train_split": a["train_split"],
                     "train_ranges": a["train_ranges"], "n": a["videos_analysed"], "in_gap": a["in_gap"],
                     **{v: a["verdicts"][v] for v in GAP_VERDICTS},
                     "velocity_error_in_gap": a["velocity_error_in_gap"],
                     "velocity_error_in_range": a["velocity_error_in_range"],
                     "points": [[v["conditioned_velocity"], v["velocity"]] for v in a["videos"]]})
    return {"rows": rows}


def render_gaps(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        ranges = " U ".join(f"[{a:g}, {b:g}]" for a, b in row["train_ranges"])
        lines.append(f"{row['model']} trained on {row['train_split']} (v in {ranges}): {row['n']} videos, "
                     f"{row['in_gap']} in the gap")
        for v in GAP_VERDICTS:
            lines.append(f"  {v:<8} {_pct(row[v])}")
        lines.append(f"  mean |v_gen - v| in the gap {row['velocity_error_in_gap']:.3f}, in range "
                     f"{row['velocity_error_in_range']:.3f} world units / s")
    return "\n".join(lines)


register_probe(Probe("gaps", "interpolation gaps (section 5.1): does an unseen speed snap to a seen one",
                     _gaps_analyse, gaps_summary, render_gaps))


# ------------------------------------------------------------------ collision holes
HOLE_VERDICTS = ("scored", "untrackable", "excluded")
HULL_CLASSES = ("trained", "inside-hull", "outside-hull")


def mean_ci(values: Sequence[float]) -> dict[str, Any]:
    """Mean with a normal 95% interval (mean +- 1.96 sd / sqrt(n)); NaN when empty."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if x.size == 0:
        return {"n": 0, "mean": float("nan"), "ci95": [float("nan"), float("nan")]}
    m = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else float("nan")
    return {"n": int(x.size), "mean": m, "ci95": [m - half, m + half]}


def _holes_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    from .parse import parse_video
    from .score import _mapping
    from .velocity import video_errors

    spec: TaskSpec = reader.spec
    family = family_of(spec)
    sets = {name: value for name, value in spec.param("hole_sets")}
    train = options.get("train_split")
    if train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    classes = family.square_classes(spec, train)
    manifest = reader.manifest
    videos = []
    columns = ["sample_id", "level", "velocity_1", "velocity_2", "contact_time", "positions", "radii", "colours"]
    for row, video in _split_videos(reader, sub, columns, "holes", progress):
        sample_id = row["sample_id"]
        colours = [tuple(int(c) for c in rgb) for rgb in np.asarray(row["colours"])]
        parsed = parse_video(np.asarray(video), colours, _mapping(manifest))
        err = video_errors(parsed, row["positions"], row["radii"], world_size=spec.world_size,
                           frame_interval=spec.frame_interval, condition_frames=spec.condition_frames,
                           contact_time=family.contact_time(row), colour_names=("red ball", "blue ball"))
        verdict = "excluded" if err.excluded else "untrackable" if err.untrackable else "scored"
        videos.append({"sample_id": sample_id, "square": row["level"], "hull": classes[row["level"]],
                       "velocity_1": float(row["velocity_1"]), "velocity_2": float(row["velocity_2"]),
                       "velocity_error": err.velocity_error if verdict == "scored" else None,
                       "reason": err.excluded or err.untrackable, "verdict": verdict})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in HOLE_VERDICTS}
    squares = []
    for name, box in spec.param("squares"):
        vs = [v for v in videos if v["square"] == name]
        squares.append({"square": name, "box": list(box), "hull": classes[name], "videos": len(vs),
                        "untrackable": sum(1 for v in vs if v["verdict"] == "untrackable"),
                        "velocity_error": mean_ci([v["velocity_error"] for v in vs if v["verdict"] == "scored"])})
    by_hull = {c: mean_ci([v["velocity_error"] for v in videos if v["hull"] == c and v["verdict"] == "scored"])
               for c in HULL_CLASSES}
    rect, holes = sets[train]
    return {"train_split": train, "train_rect": list(rect), "train_holes": list(holes),
            "videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in HOLE_VERDICTS},
            "squares": squares, "by_hull": by_hull,
            "verdict_meaning": {"scored": "both balls parsed in every scored frame after the collision",
                                "untrackable": "a ball not found in a scored frame (no error)",
                                "excluded": "a ball seen in fewer than 2 condition frames (no model could "
                                            "predict it)"},
            "error": "mean over frame pairs after the contact of |v_gen - v| of both balls, world units / s "
                     "(phybench.scoring.velocity)",
            "videos": videos}


def holes_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["analysis"]["train_split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "train_split": a["train_split"],
                     "train_rect": a["train_rect"], "train_holes": a["train_holes"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in HOLE_VERDICTS}, "squares": a["squares"],
                     "by_hull": a["by_hull"]})
    return {"rows": rows}


def _err(entry: dict[str, Any]) -> str:
    if not entry["n"] or entry["mean"] is None or not math.isfinite(entry["mean"]):
        return "n/a"
    lo, hi = entry["ci95"]
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and math.isfinite(lo) else ""
    return f"{entry['mean']:.3f}{ci} (n = {entry['n']})"


def render_holes(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} trained on {row['train_split']}: {row['n']} videos, "
                     f"{row['untrackable']['count']} untrackable, {row['excluded']['count']} excluded")
        for sq in row["squares"]:
            lines.append(f"  {sq['square']:<3} {sq['hull']:<13} velocity error {_err(sq['velocity_error'])}")
        for c in HULL_CLASSES:
            lines.append(f"  {c:<17} velocity error {_err(row['by_hull'][c])}")
    return "\n".join(lines)


register_probe(Probe("holes", "collision holes (section 5.1): post-collision error in unseen (v1, v2) squares, "
                              "inside and outside the training set's convex hull",
                     _holes_analyse, holes_summary, render_holes))


# ------------------------------------------------------------------ spatial / temporal composition
COMPOSITION_VERDICTS = ("both", "square-only", "ball-only", "neither", "vanished")
# world units (3 px at 128; ground truth reads within 0.004): a sub-event is correct when the
# body's mean position error is at most this
POSITION_TOLERANCE = 0.25
PRESENT_SHARE = 0.9  # ... and the body is found in at least this share of the generated frames
PRESENT_AREA = 0.5  # a body is found in a frame when its colour covers >= this share of its true area


def colour_coverage(frame: np.ndarray) -> dict[str, np.ndarray]:
    """Per pixel coverage of the pure red and pure blue bodies on white (black, the wall, is neither).

    A pixel covered c by red (and nothing else) is (255, 255 (1 - c), 255 (1 - c)): red
    coverage is (R - max(G, B)) / 255, blue likewise; grey and black give 0."""
    f = frame.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    out = {"red": np.clip((r - np.maximum(g, b)) / 255.0, 0.0, 1.0),
           "blue": np.clip((b - np.maximum(r, g)) / 255.0, 0.0, 1.0)}
    for c in out.values():
        c[c < INK_FLOOR] = 0.0
    return out


def read_tracks(video: np.ndarray, world_size: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"red": (areas (T,), centres (T, 2)), "blue": ...}: each colour's area (world units^2) and
    coverage centroid (world units, y up) per frame; centres NaN where the colour is absent."""
    video = np.asarray(video)
    T, H, W, _ = video.shape
    s = world_size / W
    xs = (np.arange(W) + 0.5) * s
    ys = world_size - (np.arange(H) + 0.5) * s  # image row 0 is the top of the world
    out = {}
    for name in ("red", "blue"):
        areas, centres = np.zeros(T), np.full((T, 2), np.nan)
        for k in range(T):
            c = colour_coverage(video[k])[name]
            total = float(c.sum())
            areas[k] = total * s * s
            if total > 0:
                centres[k] = (float((c.sum(axis=0) * xs).sum() / total), float((c.sum(axis=1) * ys).sum() / total))
        out[name] = (areas, centres)
    return out


def _sub_event(areas: np.ndarray, centres: np.ndarray, truth: np.ndarray, area: float,
               frames: np.ndarray) -> tuple[bool, float, float]:
    """(correct, share of frames found, mean position error) of one body over `frames`."""
    found = areas[frames] >= PRESENT_AREA * area
    if not found.any():
        return False, 0.0, float("nan")
    err = float(np.linalg.norm(centres[frames][found] - truth[frames][found], axis=-1).mean())
    present = float(found.mean())
    return present >= PRESENT_SHARE and err <= POSITION_TOLERANCE, present, err


def composition_verdict(row: dict[str, Any], video: np.ndarray, condition_frames: int, world_size: float,
                        frame_interval: float) -> dict[str, Any]:
    """Read the square and the ball of one video and judge each sub-event against the row's trajectory.

    square: found in >= 90% of the generated frames, mean position error <= POSITION_TOLERANCE (0.25 world units);
    ball: the same, and after the ground truth's wall bounce it moves away from the wall
    (the slope of its x over the frames after the bounce has the truth's sign);
    vanished: after the ball's first contact it is missing in at least half of the
    generated frames (Fig. 15's failure)."""
    pos = np.asarray(row["positions"], dtype=np.float64)  # (T, 3, 2): wall, square, ball
    T = pos.shape[0]
    tracks = read_tracks(video, world_size)
    r = float(row["radius"])
    area = math.pi * r * r  # the square has the ball's area
    gen = np.arange(condition_frames, T)
    t = np.arange(T) * frame_interval
    square_ok, square_found, square_err = _sub_event(*tracks["blue"], pos[:, 1], area, gen)
    ball_ok, ball_found, ball_err = _sub_event(*tracks["red"], pos[:, 2], area, gen)
    bounce = row.get("bounce_time")
    away = None
    if bounce is not None and math.isfinite(float(bounce)):
        after = gen[t[gen] > float(bounce) + 1e-9]
        areas, centres = tracks["red"]
        seen = after[areas[after] >= PRESENT_AREA * area]
        if len(seen) >= 2:
            slope = float(np.polyfit(t[seen], centres[seen, 0], 1)[0])
            truth = float(np.polyfit(t[after], pos[after, 2, 0], 1)[0])
            away = slope * truth > 0
        else:
            away = False
        ball_ok = ball_ok and away
    contact = row.get("ball_contact")
    vanished = False
    if contact is not None and math.isfinite(float(contact)):
        after = gen[t[gen] > float(contact) + 1e-9]
        if len(after):
            vanished = bool((tracks["red"][0][after] < PRESENT_AREA * area).mean() >= 0.5)
    v = ("vanished" if vanished else "both" if square_ok and ball_ok else "square-only" if square_ok
         else "ball-only" if ball_ok else "neither")
    return {"square_ok": bool(square_ok), "ball_ok": bool(ball_ok), "vanished": vanished,
            "square_found": square_found, "ball_found": ball_found, "square_error": square_err,
            "ball_error": ball_err, "ball_moves_away_after_bounce": away, "verdict": v}


def _composition_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    videos = []
    columns = ["sample_id", "level", "radius", "velocity", "ball_contact", "bounce_time", "positions"]
    for row, video in _split_videos(reader, sub, columns, "composition", progress):
        sample_id = row["sample_id"]
        got = composition_verdict(row, video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "event": row["level"], **got})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in COMPOSITION_VERDICTS}
    return {"videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in COMPOSITION_VERDICTS},
            "sub_events": {"square": share(sum(x["square_ok"] for x in videos), n),
                           "ball": share(sum(x["ball_ok"] for x in videos), n),
                           "ball_vanished": share(sum(x["vanished"] for x in videos), n)},
            "verdict_meaning": {
                "both": "the square's motion and the ball's bounce are both correct",
                "square-only": "the square's motion is correct, the ball's is not",
                "ball-only": "the ball's bounce is correct, the square's motion is not",
                "neither": "neither sub-event is correct",
                "vanished": "the ball is missing in at least half of the generated frames after its first contact"},
            "tolerance": {"position": POSITION_TOLERANCE, "found_share": PRESENT_SHARE, "found_area": PRESENT_AREA},
            "videos": videos}


def composition_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in COMPOSITION_VERDICTS}, **a["sub_events"]})
    return {"rows": rows}


def render_composition(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']}, {row['n']} videos")
        lines.append(f"  square's motion correct  {_pct(row['square'])}")
        lines.append(f"  ball's bounce correct    {_pct(row['ball'])}")
        lines.append(f"  ball vanished            {_pct(row['ball_vanished'])}")
        for v in COMPOSITION_VERDICTS:
            lines.append(f"  {v:<12} {_pct(row[v])}")
    return "\n".join(lines)


register_probe(Probe("composition", "spatial and temporal composition (Fig. 11, 15): two training events at once "
                                    "or in turn; does each sub-event stay correct, does the ball vanish",
                     _composition_analyse, composition_summary, render_composition))


# ------------------------------------------------------------------ results files
def probe_of(spec: TaskSpec) -> Probe:
    name = getattr(family_of(spec), "probe", None)
    if name is None:
        raise ProbeError(f"task {spec.name!r} is not a probe (its family {family_of(spec).name!r} has no analysis)")
    return PROBES.get(name)


def analyse(submission: str | os.PathLike[str], split_dir: str | os.PathLike[str],
            progress: bool = True, train_split: str | None = None) -> dict[str, Any]:
    """The results of a probe's analysis of one submission on one evaluation split.

    train_split: the training split the model learnt from, for probes whose verdict
    depends on it (gaps); default: the one the submission's model metadata names.
    """
    from ..data.split import SplitError, SplitReader
    from ..submission.archive import SubmissionError
    from ..submission.format import open_submission, submission_hash

    try:
        reader = SplitReader(split_dir)
    except SplitError as exc:
        raise ProbeError(f"--data: {exc}") from None
    manifest = reader.manifest
    probe = probe_of(reader.spec)
    if reader.spec.is_training(manifest["split"]):
        raise ProbeError(f"{split_dir} is the training split {manifest['split']}; analyse an evaluation split "
                         f"({', '.join(reader.spec.eval_splits)})")
    try:
        with open_submission(submission, manifest=manifest) as sub:
            meta = dict(sub.meta)
            if meta.get("split_hash") != manifest["split_hash"]:
                raise ProbeError(f"the submission was made for split hash {str(meta.get('split_hash'))[:12]}, "
                                 f"but {split_dir} has {manifest['split_hash'][:12]}")
            model = meta.get("model") if isinstance(meta.get("model"), dict) else {}
            options = {"train_split": train_split or model.get("train_split")}
            analysis = probe.analyse(reader, sub, progress, options)
        sub_hash = submission_hash(submission)
    except SubmissionError as exc:
        raise ProbeError("; ".join(p.message for p in exc.problems)) from None
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "probe": probe.name,
        "model": _model_name(meta), "task": manifest["task"], "spec_hash": manifest["spec_hash"],
        "split": manifest["split"], "split_hash": manifest["split_hash"], "resolution": manifest["resolution"],
        "submission_hash": sub_hash, "analysis": analysis,
    }


def _model_name(meta: dict[str, Any]) -> str:
    model = meta.get("model", "")
    return str(model.get("name", "")) if isinstance(model, dict) else str(model)


def results_bytes(results: dict[str, Any]) -> bytes:
    return (json.dumps(_clean(results), sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def write_results(path: str | os.PathLike[str], results: dict[str, Any]) -> None:
    atomic_write_bytes(path, results_bytes(results))


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A probe results file, checked: schema, version and that it is internally consistent."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProbeError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ProbeError(f"{path}: not a probe results file (schema {SCHEMA!r})")
    if not isinstance(data.get("model"), str) or not data["model"].strip() or data.get("probe") not in PROBES:
        raise ProbeError(f"{path}: model must be a non-empty name and probe a registered probe")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ProbeError(f"{path}: schema_version {data.get('schema_version')!r}; this phybench reads "
                         f"{SCHEMA_VERSION}")
    from ..tasks import TASKS

    if data.get("task") not in TASKS:
        raise ProbeError(f"{path}: unknown task {data.get('task')!r}")
    spec = TASKS.get(data["task"])
    if data.get("spec_hash") != spec.spec_hash():
        raise ProbeError(f"{path}: made for spec {str(data.get('spec_hash'))[:12]} of {spec.name}, this phybench "
                         f"has {spec.spec_hash()[:12]}")
    analysis = data.get("analysis", {})
    videos = analysis.get("videos", [])
    names = list(analysis.get("verdicts", {}))
    recount = {v: sum(1 for x in videos if x.get("verdict") == v) for v in names}
    if (not names or sum(recount.values()) != sum(1 for x in videos if x.get("verdict") is not None)
            or any(analysis["verdicts"][v].get("count") != recount[v] for v in names)):
        raise ProbeError(f"{path}: the verdict counts do not match its per-video verdicts")
    return data


def results_digest(results: dict[str, Any]) -> str:
    return hashlib.sha256(results_bytes(results)).hexdigest()


def summarise(probe: str, paths: Iterable[str | os.PathLike[str]]) -> dict[str, Any]:
    results = [load_results(p) for p in paths]
    wrong = [r["task"] for r in results if r["probe"] != probe]
    if wrong:
        raise ProbeError(f"results of another probe given to {probe}: {', '.join(wrong)}")
    return PROBES.get(probe).summarise(results)

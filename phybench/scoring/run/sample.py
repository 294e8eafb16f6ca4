"""One video scored against its ground-truth row: the per-video half of `phybench score`.

`score_sample` parses the generated video, measures the physics errors against the row's
simulated states and runs every requested per-video metric; `score_row` also re-hashes the row
as it is used (the split's hash is recomputed from these digests before anything is written).
The batched metrics (a network on a device, a set metric) are not here: they run in batches (`batches.py`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...data.split import SplitReader, row_digest, row_scene
from ...submission.format import CONDITION_TOLERANCE
from ...tasks import family_of, get_task
from ..inputs import Sample
from ..metrics import METRICS, reported
from ..physics.identity import checked_parse
from ..physics.parse import TILE, PixelMapping, parse_video
from ..physics.photometry import normalise, observed_colours
from ..physics.velocity import VideoErrors, video_errors
from ...data.documents import Manifest
from ...data.documents import SplitRow


def pixel_mapping(manifest: Manifest) -> PixelMapping:
    """How the split's world maps to pixels (ours tiles the square; imported splits may use a grid)."""
    kind = manifest.get("pixel_mapping", "tile")
    return TILE if kind == "tile" else PixelMapping(kind, float(manifest.get("world_size", 10.0)))




def _parse(video: np.ndarray, colours: list[tuple[int, int, int]], condition_frames: int, mapping: PixelMapping,
           refine: bool | None) -> Any:
    """`parse_video` with each body's colour as the condition frames draw it (`observed_colours`:
    the scene's own for exact and lossy renders); the scene's colours where those cannot be unmixed."""
    read = observed_colours(video, colours, condition_frames)
    if read != colours:
        try:
            return parse_video(video, read, mapping, refine=refine)
        except ValueError:  # e.g. two colours read as one brightness line: keep the scene's
            pass
    return parse_video(video, colours, mapping, refine=refine)


def scoring_sample(row: SplitRow, video: np.ndarray, gt_video: np.ndarray | None,
                   manifest: Manifest) -> Sample:
    """The `Sample` every per-video metric and the judge see: the video parsed into balls where the
    family reads discs (its physics errors computed on first use).  `phybench judge` builds the same
    one, so its verdicts are the `abnormal` column's (the lost-ball `vanish` included)."""
    spec = get_task(manifest["task"])
    family = family_of(spec)
    bodies = row_scene(row).bodies
    colours = [(int(b.colour[0]), int(b.colour[1]), int(b.colour[2])) for b in bodies]
    parsed = None
    normal = normalise(np.asarray(video))  # the model's light (background, exposure, tint, vignette) and bad pixels undone
    if family.object_reader == "none":  # objects share colours: no per-object physics errors
        errors = VideoErrors()
    else:
        refine = None if family.object_reader == "discs" else False
        mapping, cf = pixel_mapping(manifest), int(manifest["condition_frames"])
        parsed = _parse(normal, colours, cf, mapping, refine)
        if family.identity_check:  # the tracked body must stay the condition frames' (`physics.identity`)
            parsed = checked_parse(parsed, normal, mapping, cf)
        errors = video_errors(
            parsed,
            row["positions"],
            row["radii"],
            world_size=float(manifest["world_size"]),
            frame_interval=float(manifest["frame_interval"]),
            condition_frames=int(manifest["condition_frames"]),
            contact_time=family.contact_time(row),
            colour_names=tuple(b.describe() for b in bodies),
        )
    return Sample(row, video, gt_video, manifest, lambda: errors, parsed, normal)


def score_sample(
    row: SplitRow,
    video: np.ndarray,
    gt_video: np.ndarray | None,
    manifest: Manifest,
    metrics: Sequence[str],
) -> dict[str, Any]:
    """One detail row: physics errors from parsed pixels, then every registered per-video
    metric that is requested (or a companion the family lists) and has a `compute`."""
    sample = scoring_sample(row, video, gt_video, manifest)
    errors = sample.errors
    family = family_of(get_task(manifest["task"]))
    detail: dict[str, Any] = {
        "sample_id": row["sample_id"],
        "level": row["level"],
        "untrackable": errors.untrackable,
        "excluded": errors.excluded,
        "scored_pairs": errors.scored_pairs,
        "flagged_frames": errors.flagged_frames,
        "velocity_error": errors.velocity_error,
        "position_error": errors.position_error,
        "momentum_error": errors.momentum_error,
        "energy_error": errors.energy_error,
        # the conditioned value of the velocity DoF (ball 0 moves towards +x in every task)
        "true_velocity": family.conditioned_value(row),
        "generated_velocity": errors.generated_velocity,
    }
    if gt_video is not None:  # the condition frames must be the split's own (a BGR swap, blank frames?)
        cf = int(manifest["condition_frames"])
        diff = float(np.abs(video[:cf].astype(np.int16) - gt_video[:cf].astype(np.int16)).mean())
        if diff > CONDITION_TOLERANCE:
            detail["condition_frames_differ"] = round(diff, 3)
    for name in reported(metrics, family.metrics):
        metric = METRICS.get(name)
        if metric.kind != "video" or metric.compute is None:
            continue  # batched and set metrics: the scoring loop computes them
        if metric.needs_ground_truth and gt_video is None:
            continue
        detail[name] = metric.compute(sample)
        if metric.details is not None:
            detail.update(metric.details(sample))
    return detail


def score_row(
    reader: SplitReader, row: SplitRow, video: np.ndarray, metrics: Sequence[str]
) -> tuple[dict[str, Any], str, np.ndarray | None]:
    """(detail, sample digest, ground-truth video) of one row: re-hash the row as it is used."""
    manifest = reader.manifest
    gt = reader.video(row) if "video" in row else None
    digest = row_digest(reader.spec, row, gt).hex()
    return score_sample(row, video, gt, manifest, metrics), digest, gt

"""The batched metrics of one pass, driven through their registry rows (no metric named here).

`score`, its worker processes and `leaderboard verify`'s sharded passes all feed videos to one
`FeaturePass` in storage order.  Which metrics are batched, and how, is their row's business
(`Metric.batched`: the factory, `phybench.scoring.perceptual.batched`: the batching); this module
only drives them and hands back each video's values and the arrays a worker returns, in the
order they were computed (the fixed batches and threads: `phybench.scoring.perceptual.features`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..metrics import METRICS, all_metrics


def batched_metrics(names: Sequence[str]) -> tuple[str, ...]:
    """The names among `names` whose rows are batched (a network on a device, or a set metric)."""
    return tuple(n for n in names if n in METRICS and METRICS.get(n).batched is not None)


def batch_class(name: str) -> Any:
    """The batching class a metric's row names (imported on first use: it may import torch)."""
    return METRICS.get(name).batcher()


class FeaturePass:
    """Each batched metric of `metrics` over the videos `add`ed in storage order.

    metrics: the batched metrics to compute (their rows' `batched`); condition_frames: the per-video
    ones compare the generated frames only; real_cached: the split's own reference features are
    cached, so only the submission's are computed.
    """

    def __init__(self, metrics: Sequence[str], *, condition_frames: int, batch_size: int = 16, device: str = "cpu",
                 real_cached: bool = False) -> None:
        self.batches = {n: batch_class(n)(condition_frames=condition_frames, batch_size=batch_size, device=device,
                                          real_cached=real_cached) for n in batched_metrics(metrics)}
        self.ids: list[str] = []  # every video added, in order

    def add(self, sample_id: str, gt: np.ndarray, video: np.ndarray) -> dict[str, float]:
        """One video and its ground truth, uint8 (T, H, W, 3) each; returns its per-video values."""
        self.ids.append(sample_id)
        values: dict[str, float] = {}
        for batch in self.batches.values():
            values.update(batch.add(sample_id, gt, video))
        return values

    def arrays(self) -> dict[str, np.ndarray]:
        """{"ids": (k,)} and each batched metric's arrays (a metric not run: its empty ones), in registry
        order: what a worker or a shard hands back."""
        out: dict[str, np.ndarray] = {"ids": np.array(self.ids, dtype=str)}
        for metric in all_metrics():
            if metric.batched is not None:
                batch = self.batches.get(metric.name)
                out.update(batch.arrays() if batch is not None else metric.batcher().empty())
        return out


def from_features(entry: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, float]:
    """A video's per-video values from features computed elsewhere (`features.by_sample`)."""
    values: dict[str, float] = {}
    for name in batched_metrics(metrics):
        values.update(batch_class(name).from_features(entry))
    return values


def needs_reference(metrics: Sequence[str]) -> bool:
    """Does any batched metric of `metrics` use the split's cached reference features?"""
    return any(batch_class(n).reference for n in batched_metrics(metrics))


def set_metrics(metrics: Sequence[str], arrays: Mapping[str, np.ndarray] | None,
                features: Mapping[str, Mapping[str, Any]] | None, cached: np.ndarray | None, cache: Path | None,
                ids: list[str], order: list[str], groups: Mapping[str, np.ndarray],
                frames: int) -> dict[str, dict[str, Any]]:
    """{group: {metric: {...}}} of every set metric of `metrics` (each over the groups it accepts)."""
    out: dict[str, dict[str, Any]] = {}
    for name in batched_metrics(metrics):
        if METRICS.get(name).kind != "set":
            continue
        cls = batch_class(name)
        inputs = cls.set_inputs(arrays, features, cached, cache, ids, order)
        if inputs is None:
            continue
        for group, block in cls.set_values(inputs, groups, frames).items():
            out.setdefault(group, {}).update(block)
    return out

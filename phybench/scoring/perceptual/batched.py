"""The batched metrics' rows: what LPIPS and FVD need beyond `compute(sample)`.

LPIPS (a network on a device, per video) and FVD (I3D features of every video, then one distance per
group) cannot be computed one `Sample` at a time like the other metrics: they run in fixed batches
on fixed threads (`features.py`, why) and FVD needs the whole set.  Each is one class here, named by
its metric row (`Metric(..., batched="phybench.scoring.perceptual.batched:LpipsBatch")`): the row is
the factory, this class the batching, so the run loop (`phybench.scoring.run`) drives any batched
metric through the same five calls and names none of them:

* ``cls(condition_frames=, batch_size=, device=, real_cached=)``: one per pass (its network built);
* ``add(sample_id, gt, video) -> {name: value}``: one video (uint8 ``(T, H, W, 3)`` each), with
  what goes into its detail row (LPIPS: its value; FVD: nothing, its features wait for a batch);
* ``flush()`` and ``arrays() -> {key: array}``: what a worker or a shard hands back;
  ``cls.empty()``: the same keys for a pass that did not run it;
* ``cls.from_features(entry) -> {name: value}``: the detail-row values from features computed
  elsewhere (`leaderboard verify`'s shards; an entry of `features.by_sample`);
* ``cls.cost(video, generated, ...) -> (seconds, words)``: one video timed, for `score`'s estimate;
* a set metric (``kind="set"``) also gives ``cls.set_inputs(...)`` (its features in split order, the
  reference cache read or written) and ``cls.set_values(inputs, groups, frames)`` (one value per group).

The arrays' keys and order are those `FeaturePass` always wrote (``ids``, ``lpips``, ``fvd_fake``,
``fvd_real``): the shards' files and the results bytes are unchanged.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ...io import atomic_save_npy
from .features import FEATURE_DIM, I3D_THREADS, torch_threads


class StaleFeatures(Exception):
    """The features handed in do not cover what the pass needs (the reference cache went away)."""


class LpipsBatch:
    """LPIPS per video over the generated frames, on a device, in batches of frames."""

    name = "lpips"
    reference = False  # needs no reference features (no cache)

    def __init__(self, *, condition_frames: int, batch_size: int = 16, device: str = "cpu",
                 real_cached: bool = False) -> None:
        from .lpips import LPIPSVideo

        self.start, self.device = condition_frames, device
        self.metric = LPIPSVideo(batch_size=batch_size).to(device)

    def add(self, sample_id: str, gt: np.ndarray, video: np.ndarray) -> dict[str, float]:
        with torch_threads(I3D_THREADS, self.device):  # LPIPS does not move with threads; one is cheaper
            return {self.name: self.metric.update_one(gt[self.start:], video[self.start:])}

    def flush(self) -> None:
        pass

    def arrays(self) -> dict[str, np.ndarray]:
        return {"lpips": np.array(self.metric.values, np.float64)}

    @staticmethod
    def empty() -> dict[str, np.ndarray]:
        return {"lpips": np.array([], np.float64)}

    @staticmethod
    def from_features(entry: Mapping[str, Any]) -> dict[str, float]:
        return {"lpips": float(entry["lpips"])}

    @staticmethod
    def cost(video: np.ndarray, generated: int, *, batch_size: int, device: str, cached: bool) -> tuple[float, str]:
        from .lpips import LPIPS, lpips_frames

        model = LPIPS().to(device)
        t0 = time.perf_counter()
        lpips_frames(video[-generated:], video[-generated:], model=model, batch_size=batch_size)
        dt = time.perf_counter() - t0
        return dt, f"LPIPS {dt:.2f} s"


class FvdBatch:
    """I3D features of both sides per batch of `batch_size` videos; the Frechet distance per group."""

    name = "fvd"
    reference = True  # the split's own features: cached per split (`features.reference_cache_path`)

    def __init__(self, *, condition_frames: int, batch_size: int = 16, device: str = "cpu",
                 real_cached: bool = False) -> None:
        from .fvd import FVD

        self.batch_size, self.device, self.real_cached = batch_size, device, real_cached
        self.metric = FVD(batch_size=batch_size).to(device)
        self.ids: list[str] = []  # the videos whose I3D features were computed, in order
        self._pending: list[tuple[str, np.ndarray, np.ndarray]] = []

    def add(self, sample_id: str, gt: np.ndarray, video: np.ndarray) -> dict[str, float]:
        self._pending.append((sample_id, gt, video))
        if len(self._pending) >= self.batch_size:
            self.flush()
        return {}

    def flush(self) -> None:
        """Run I3D on the videos waiting for a full batch (at the end: on the last, short batch)."""
        if not self._pending:
            return
        with torch_threads(I3D_THREADS, self.device):
            if not self.real_cached:
                self.metric.update(np.stack([p[1] for p in self._pending]), real=True)
            self.metric.update(np.stack([p[2] for p in self._pending]), real=False)
        self.ids.extend(p[0] for p in self._pending)
        self._pending.clear()

    def arrays(self) -> dict[str, np.ndarray]:
        self.flush()
        out = {"fvd_fake": self.metric.features(real=False)}
        if not self.real_cached:
            out["fvd_real"] = self.metric.features(real=True)
        return out

    @staticmethod
    def empty() -> dict[str, np.ndarray]:
        return {"fvd_fake": np.zeros((0, FEATURE_DIM))}

    @staticmethod
    def from_features(entry: Mapping[str, Any]) -> dict[str, float]:
        return {}

    @staticmethod
    def cost(video: np.ndarray, generated: int, *, batch_size: int, device: str, cached: bool) -> tuple[float, str]:
        import torch

        from .fvd import cached_model, i3d_logits

        cached_model(str(torch.device(device)))  # built once, as the run will
        t0 = time.perf_counter()
        with torch_threads(I3D_THREADS, device):
            i3d_logits(video[None], batch_size=1, device=device)
        dt = time.perf_counter() - t0
        return dt * (1 if cached else 2), f"I3D {dt:.2f} s" + (
            " (reference features cached)" if cached else
            " x2 (reference and generated; cached for the next model on this split)")

    @staticmethod
    def set_inputs(arrays: Mapping[str, np.ndarray] | None, features: Mapping[str, Mapping[str, Any]] | None,
                   cached: np.ndarray | None, cache: Path | None, ids: list[str],
                   order: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """(real, fake) I3D features (N, 400) in split order, from this pass's `arrays` or from `features`
        (both in storage order, as the reference cache is); the split's own are read from, or written
        to, the reference cache.  None when no video has a ground truth."""
        if features is not None:
            if cached is None and any("fvd_real" not in features[i] for i in order):
                raise StaleFeatures("the FVD reference cache was removed while the shards ran; run again")
            storage = order
            fake = np.stack([np.asarray(features[i]["fvd_fake"], np.float64) for i in order])
            real = cached if cached is not None else np.stack([np.asarray(features[i]["fvd_real"], np.float64)
                                                               for i in order])
        else:
            assert arrays is not None
            storage = arrays["ids"].tolist()
            fake = np.asarray(arrays["fvd_fake"], np.float64)
            real = cached if cached is not None else np.asarray(arrays["fvd_real"], np.float64)
        if not storage:
            return None
        if cached is None and cache is not None:
            atomic_save_npy(cache, real)
        pos = {sid: k for k, sid in enumerate(storage)}
        perm = np.array([pos[i] for i in ids])
        return real[perm], fake[perm]

    @staticmethod
    def set_values(inputs: tuple[np.ndarray, np.ndarray], groups: Mapping[str, np.ndarray],
                   frames: int) -> dict[str, dict[str, Any]]:
        """{group: {"fvd": {"value", "videos", "frames"}}} for each group (a mask over the split's
        videos) of at least two videos."""
        from .fvd import frechet_distance

        real, fake = inputs
        return {group: {"fvd": {"value": frechet_distance(real[mask], fake[mask]), "videos": int(mask.sum()),
                                "frames": frames}}
                for group, mask in groups.items() if mask.sum() >= 2}

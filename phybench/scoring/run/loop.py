"""One pass over a submission: each video decoded once, checked, scored, and fed to the batched metrics.

`run_pass` walks the submission in storage order (compressed archives are only cheap to read
front to back), serially or split over worker processes in whole I3D batches, and returns
what `score` assembles: each video's detail row and sample digest, each video's validation
problems and file digests (`phybench.submission.validation.record_video`), and the batched
metrics' values and features (`phybench.scoring.run.batches.FeaturePass`).  Every result is the same
bits whatever the number of workers: the per-video metrics do not depend on threads, and
the I3D batches and threads are fixed (features.py).

Workers are forked from the parent when torch is not loaded (nothing to re-import: a second
worker costs little more CPU than one), and spawned otherwise (a forked OpenMP runtime can
hang), with one BLAS thread each.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...data.split import SplitReader
from ..perceptual.features import share_bounds
from .batches import FeaturePass, from_features
from .sample import score_row
from ...data.documents import SplitRow

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass
class PassResult:
    """What one pass (or one worker's share of it) hands back, keyed by sample id."""

    found: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)  # detail, sample digest
    checks: dict[str, tuple[list[Any], dict[str, str]]] = field(default_factory=dict)  # problems, file digests
    features: dict[str, np.ndarray] | None = None  # FeaturePass.arrays()

    def merge(self, other: "PassResult") -> None:
        self.found.update(other.found)
        self.checks.update(other.checks)
        if other.features is not None:
            if self.features is None:
                self.features = other.features
            else:
                self.features = {k: np.concatenate([self.features[k], other.features[k]]) for k in other.features}


@dataclass(frozen=True)
class PassSettings:
    """How every process of one pass scores: the metrics, and the batched metrics' settings."""

    metrics: tuple[str, ...]
    torch_metrics: tuple[str, ...] = ()
    batch_size: int = 16
    device: str = "cpu"
    real_cached: bool = False  # the split's I3D features are cached


def score_share(sub: Any, reader: SplitReader, rows: Mapping[str, SplitRow], ids: Sequence[str],
                settings: PassSettings, features: Mapping[str, Mapping[str, Any]] | None = None,
                tick: Callable[[int], Any] = lambda n: None) -> PassResult:
    """Decode, check and score the videos `ids` (storage order) of an open submission.

    features: the batched metrics' values and features computed elsewhere (`leaderboard verify`'s
    shards): the per-video values are taken as they are and no batched metric runs here."""
    out = PassResult()
    fp = None
    if settings.torch_metrics and features is None:
        fp = FeaturePass(settings.torch_metrics, condition_frames=int(reader.manifest["condition_frames"]),
                         batch_size=settings.batch_size, device=settings.device, real_cached=settings.real_cached)
    for sample_id in ids:
        video, problems, files = sub.inspect(sample_id)
        out.checks[sample_id] = (problems, files)
        if video is not None and not any(p.severity == "error" for p in problems):
            detail, digest, gt = score_row(reader, rows[sample_id], video, settings.metrics)
            if gt is not None and features is not None:
                detail.update(from_features(features[sample_id], settings.torch_metrics))
            elif gt is not None and fp is not None:
                detail.update(fp.add(sample_id, gt, video))
            out.found[sample_id] = (detail, digest)
        tick(1)
    if fp is not None:
        out.features = fp.arrays()
    return out


def _worker(sub_path: str, split_dir: str, ids: Sequence[str], settings: PassSettings) -> PassResult:
    """A worker's share: its own submission handle and split reader (rows read once)."""
    from ...submission.format import open_submission

    reader = SplitReader(split_dir)
    wanted = set(ids)
    rows = {row["sample_id"]: row for row in reader.rows() if row["sample_id"] in wanted}
    with open_submission(sub_path, manifest=reader.manifest) as sub:
        return score_share(sub, reader, rows, ids, settings)


def _context() -> multiprocessing.context.BaseContext:
    if "torch" not in sys.modules and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def run_pass(sub: Any, reader: SplitReader, rows: Sequence[SplitRow], order: Sequence[str],
             settings: PassSettings, *, workers: int = 1, features: Mapping[str, Mapping[str, Any]] | None = None,
             tick: Callable[[int], Any] = lambda n: None) -> PassResult:
    """The whole pass over `order` (the submission's storage order of the split's ids)."""
    from ...tasks import family_of
    from ..metrics import reported, seen_by_workers

    by_id = {row["sample_id"]: row for row in rows}
    # a metric registered at run time (not by an import a worker makes) is scored here
    known = all(seen_by_workers(m) for m in reported(settings.metrics, family_of(reader.spec).metrics))
    pooled = (workers > 1 and known and features is None and sub.kind in ("folder", "zip")
              and len(order) >= 2 * workers)
    if not pooled:
        return score_share(sub, reader, by_id, order, settings, features, tick)
    out = PassResult()
    saved = {k: os.environ.get(k) for k in _BLAS_ENV}
    os.environ.update({k: "1" for k in _BLAS_ENV})  # spawned workers read these at start
    had_tracker = _tracker_running()
    try:
        with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
            futures = [pool.submit(_worker, str(sub.path), str(reader.folder), order[a:b], settings)
                       for a, b in share_bounds(len(order), settings.batch_size, workers) if b > a]
            for fut in futures:  # in storage order: features concatenate in the one-process order
                part = fut.result()
                out.merge(part)
                tick(len(part.checks))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if not had_tracker:
            _stop_resource_tracker()
    return out


def _tracker_running() -> bool:
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def _stop_resource_tracker() -> None:
    """Stop the helper process that a spawned pool starts (multiprocessing's resource tracker) and wait
    for it: left alone it outlives `score` for a moment, in the caller's process group (a CI job's
    timer sees a stray process).  Called only when the pool started it (a tracker the caller already
    had may hold the caller's resources); the next pool starts a new one when it needs it."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        try:
            stop()
        except Exception:  # noqa: BLE001 - best effort: scoring is done, a tracker that will not stop is harmless
            pass

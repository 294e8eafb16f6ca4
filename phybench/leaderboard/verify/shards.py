"""Sharded passes of the batched network metrics in `leaderboard verify`, over the processes of one launch.

Under a launcher that sets RANK and WORLD_SIZE (`accelerate launch`, torchrun), process r
computes the batched metrics' values and features (`FeaturePass.arrays`) of its share of the videos and writes them to a
shard file; process 0 waits for every shard and scores with them (`score(features=...)`).
Shares are whole I3D batches of the storage order, so every batch holds the same videos as
in one process: the features are the same numbers when every process runs the same torch
thread count as the one-process run (CPU kernels sum in a thread-dependent order).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .claims import SCORE, VerifyPlan, VerifyInputError

SHARD_WAIT_S = 24 * 3600


def shard_bounds(n: int, batch_size: int, size: int) -> list[tuple[int, int]]:
    """Per rank, [a, b) of the storage order: whole batches of `batch_size`, as even as can be."""
    from ...scoring.perceptual.features import share_bounds

    return share_bounds(n, batch_size, size)


def shard_dir_for(prep: VerifyPlan, batch_size: int, device: str, size: int,
                  root: str | os.PathLike[str] | None) -> Path:
    """A folder every process of one launch agrees on (keyed by what the features depend on)."""
    import hashlib
    import tempfile

    key = "\0".join([prep.claim.sha256, prep.claim.provenance["submission_hash"], prep.claim.provenance["split_hash"],
                     ",".join(prep.recomputed), str(batch_size), device, str(size)])
    base = Path(root) if root is not None else Path(tempfile.gettempdir()) / "phybench-verify-shards"
    return base / hashlib.sha256(key.encode()).hexdigest()[:24]


def feature_shard(prep: VerifyPlan, rank: int, size: int, *, batch_size: int = 16,
                  device: str = "cpu") -> dict[str, Any]:
    """This rank's values and features of the batched metrics, computed as `score`'s pass does (the
    same `FeaturePass`, whole batches, the same threads): {"ids": (k,)} and each batched metric's
    arrays (`FeaturePass.arrays`; a set metric's reference features only when its cache is cold);
    empty arrays for a metric not recomputed."""
    from ...data.split import SplitReader
    from ...scoring.perceptual.features import load_reference, reference_cache_path, share_bounds
    from ...scoring.run.batches import FeaturePass, batched_metrics, needs_reference
    from ...submission.format import open_submission

    reader = SplitReader(prep.split_dir)
    manifest = reader.manifest
    rows = {row["sample_id"]: row for row in reader.rows()}
    ids = list(rows)
    metrics = batched_metrics(prep.recomputed)
    if not all("video" in row for row in rows.values()):
        raise VerifyInputError(SCORE, f"{prep.claim.path}: the split stores no ground-truth videos; nothing to shard")
    with open_submission(prep.submission, manifest=manifest) as sub:
        order = sub.storage_order(ids)
        a, b = share_bounds(len(order), batch_size, size)[rank]
        cached = False
        if needs_reference(metrics):
            from ...scoring.perceptual.weights import weight_hashes

            cache = reference_cache_path(manifest, dict(weight_hashes()), batch_size, order, device)
            cached = load_reference(cache, len(ids)) is not None
        fp = FeaturePass(metrics, condition_frames=int(manifest["condition_frames"]), batch_size=batch_size,
                         device=device, real_cached=cached)
        for sample_id, video in sub.iter_videos(order[a:b]):
            fp.add(sample_id, reader.video(rows[sample_id]), video)
        return fp.arrays()


def _save_shard(path: Path, arrays: Mapping[str, Any]) -> None:
    import io

    import numpy as np

    from ...io import atomic_write_bytes

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def _load_shard(path: Path) -> dict[str, dict[str, Any]]:
    import numpy as np

    from ...scoring.perceptual.features import by_sample

    with np.load(path, allow_pickle=False) as z:
        return by_sample({k: z[k] for k in z.files})


def sharded_features(prep: VerifyPlan, rank: int, size: int, *, batch_size: int, device: str,
                     shard_root: str | os.PathLike[str] | None = None,
                     wait_s: float = SHARD_WAIT_S) -> dict[str, dict[str, Any]] | None:
    """Write this rank's shard; on rank 0, wait for all of them and return the features
    (the shard files are then removed); None on the other ranks."""
    import shutil
    import time

    folder = shard_dir_for(prep, batch_size, device, size, shard_root)
    _save_shard(folder / f"shard-{rank}-of-{size}.npz",
                feature_shard(prep, rank, size, batch_size=batch_size, device=device))
    if rank != 0:
        return None
    paths = [folder / f"shard-{r}-of-{size}.npz" for r in range(size)]
    t0 = time.monotonic()
    while not all(p.is_file() for p in paths):
        if time.monotonic() - t0 > wait_s:
            raise VerifyInputError(SCORE, f"{prep.claim.path}: waited {wait_s:.0f} s for the other processes' "
                                          f"feature shards in {folder}; did one fail?")
        time.sleep(0.5)
    features: dict[str, dict[str, Any]] = {}
    for p in paths:
        features.update(_load_shard(p))
    shutil.rmtree(folder, ignore_errors=True)
    return features

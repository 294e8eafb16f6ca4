"""Sharded LPIPS / FVD passes of `leaderboard verify`, over the processes of one launch.

Under a launcher that sets RANK and WORLD_SIZE (`accelerate launch`, torchrun), process r
computes the LPIPS values and I3D features of its share of the videos and writes them to a
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

from .claims import SCORE, Prepared, VerifyInputError

SHARD_WAIT_S = 24 * 3600


def shard_bounds(n: int, batch_size: int, size: int) -> list[tuple[int, int]]:
    """Per rank, [a, b) of the storage order: whole batches of `batch_size`, as even as can be."""
    import numpy as np

    batches = -(-n // batch_size)
    edges = np.linspace(0, batches, size + 1).round().astype(int) * batch_size
    return [(min(int(a), n), min(int(b), n)) for a, b in zip(edges[:-1], edges[1:])]


def shard_dir_for(prep: Prepared, batch_size: int, device: str, size: int,
                  root: str | os.PathLike[str] | None) -> Path:
    """A folder every process of one launch agrees on (keyed by what the features depend on)."""
    import hashlib
    import tempfile

    key = "\0".join([prep.claim.sha256, prep.claim.provenance["submission_hash"], prep.claim.provenance["split_hash"],
                     ",".join(prep.recomputed), str(batch_size), device, str(size)])
    base = Path(root) if root is not None else Path(tempfile.gettempdir()) / "phybench-verify-shards"
    return base / hashlib.sha256(key.encode()).hexdigest()[:24]


def feature_shard(prep: Prepared, rank: int, size: int, *, batch_size: int = 16,
                  device: str = "cpu") -> dict[str, Any]:
    """This rank's LPIPS values and I3D features, computed as `score`'s one-process loop does:
    {"ids": (k,), "lpips": (k,), "fvd_fake": (k, 400), "fvd_real": (k, 400) when the
    reference cache is cold}; empty arrays for a metric not recomputed."""
    import numpy as np

    from ..data.split import SplitReader
    from ..scoring.score import _load_reference, _reference_cache
    from ..submission.format import open_submission

    reader = SplitReader(prep.split_dir)
    manifest = reader.manifest
    rows = {row["sample_id"]: row for row in reader.rows()}
    ids = list(rows)
    lpips, fvd = "lpips" in prep.recomputed, "fvd" in prep.recomputed
    if not all("video" in row for row in rows.values()):
        raise VerifyInputError(SCORE, f"{prep.claim.path}: the split stores no ground-truth videos; nothing to shard")
    with open_submission(prep.submission, manifest=manifest) as sub:
        order = sub.storage_order(ids)
        a, b = shard_bounds(len(order), batch_size, size)[rank]
        mine = order[a:b]
        cached = False
        if fvd:
            from ..scoring.weights import weight_hashes

            cache = _reference_cache(manifest, {"i3d": weight_hashes()["i3d"]}, batch_size, order, device)
            cached = _load_reference(cache, len(ids)) is not None
        model = None
        if lpips:
            from ..scoring.lpips import LPIPS

            model = LPIPS().to(device).eval()
        start = int(manifest["condition_frames"])
        values: list[float] = []
        fake: list[Any] = []
        real: list[Any] = []
        pending: list[tuple[Any, Any]] = []

        def flush() -> None:
            if pending:
                from ..scoring.fvd import i3d_logits

                if not cached:
                    real.append(i3d_logits(np.stack([p[0] for p in pending]), batch_size=batch_size, device=device))
                fake.append(i3d_logits(np.stack([p[1] for p in pending]), batch_size=batch_size, device=device))
            pending.clear()

        for sample_id, video in sub.iter_videos(mine):
            gt = reader.video(rows[sample_id])
            if model is not None:
                from ..scoring.lpips import lpips_frames

                values.append(float(lpips_frames(gt[start:], video[start:], model=model, batch_size=batch_size,
                                                 device=device).mean()))
            if fvd:
                pending.append((gt, video))
                if len(pending) >= batch_size:
                    flush()
        flush()
    out: dict[str, Any] = {"ids": np.array(mine, dtype=str), "lpips": np.array(values, np.float64),
                           "fvd_fake": np.concatenate(fake) if fake else np.zeros((0, 400))}
    if fvd and not cached:
        out["fvd_real"] = np.concatenate(real) if real else np.zeros((0, 400))
    return out


def _save_shard(path: Path, arrays: Mapping[str, Any]) -> None:
    import io

    import numpy as np

    from ..io import atomic_write_bytes

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def _load_shard(path: Path) -> dict[str, dict[str, Any]]:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    out: dict[str, dict[str, Any]] = {}
    for i, sample_id in enumerate(arrays["ids"].tolist()):
        entry: dict[str, Any] = {}
        if arrays["lpips"].size:
            entry["lpips"] = float(arrays["lpips"][i])
        if arrays["fvd_fake"].size:
            entry["fvd_fake"] = arrays["fvd_fake"][i]
        if "fvd_real" in arrays and arrays["fvd_real"].size:
            entry["fvd_real"] = arrays["fvd_real"][i]
        out[str(sample_id)] = entry
    return out


def sharded_features(prep: Prepared, rank: int, size: int, *, batch_size: int, device: str,
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

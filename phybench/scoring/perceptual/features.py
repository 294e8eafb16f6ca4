"""The batches and threads LPIPS values and I3D features are computed in, and their reference cache.

`score`, its worker processes and `leaderboard verify`'s sharded passes all feed videos to one
`phybench.scoring.run.batches.FeaturePass` in storage order; it drives each batched metric's class
(`batched.py`: the torchmetrics-style `LPIPSVideo` and `FVD` objects, `update` per video or per
I3D batch) and hands back what the results need: each video's LPIPS and the I3D features of both
sides, in the order they were computed.

Why the batching and the threads are fixed here: I3D logits move by ~3e-6 with the batch
composition and with the CPU thread count (oneDNN sums in a thread-dependent order; LPIPS does
not move, measured), so every pass forms the same batches (whole batches of `batch_size`
videos counted from the start of the storage order: a worker's share starts on a batch
boundary) and runs I3D (and LPIPS) on `I3D_THREADS` CPU threads.  The features are then the same bits
whether one process scores or N workers, and whatever the machine's core count; use
`--workers N` to use N cores.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from ...data.documents import Manifest

# CPU threads for I3D (and LPIPS) in every pass: features that do not depend on the core count.
# One thread is also the efficient setting: measured here (2 cores), LPIPS took 0.10 CPU-s per
# clip on one thread, 0.13 on two idle cores and 0.9 on two cores other jobs were using (OpenMP
# threads spin while they wait); `--workers N` is how a run uses N cores.
I3D_THREADS = 1
FEATURE_DIM = 400  # I3D Kinetics-400 logits


@contextlib.contextmanager
def torch_threads(n: int, device: str) -> Iterator[None]:
    import torch

    if not str(device).startswith("cpu"):
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def share_bounds(n: int, batch_size: int, parts: int) -> list[tuple[int, int]]:
    """[a, b) of the storage order per part: whole I3D batches of `batch_size`, as even as can be."""
    batches = -(-n // batch_size)
    edges = np.linspace(0, batches, parts + 1).round().astype(int) * batch_size
    return [(min(int(a), n), min(int(b), n)) for a, b in zip(edges[:-1], edges[1:])]


def by_sample(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """`phybench.scoring.run.batches.FeaturePass.arrays()` as {sample_id: {"lpips": float, "fvd_fake": (400,), "fvd_real": (400,)}}:
    the `features=` argument of `score`."""
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


def reference_cache_path(manifest: Manifest, weights: dict[str, Any], batch_size: int, order: Sequence[str],
                     device: str) -> Path | None:
    """Where the split's own I3D features are cached: only the submission's are computed again.

    Keyed by the split hash, the pinned I3D weights, and the batches the features are
    computed in (batch size, storage order, device): I3D logits move by ~3e-6 with the batch
    composition, so a cached feature is used only where it is bit-identical to a fresh one.
    $PHYBENCH_FVD_CACHE=0 turns the cache off; $PHYBENCH_FVD_CACHE_DIR moves it."""
    import hashlib

    from ...io import cache_dir

    if os.environ.get("PHYBENCH_FVD_CACHE", "1") == "0":
        return None
    h = hashlib.sha256()
    for part in (manifest["split_hash"], str(weights.get("i3d")), str(batch_size), device, f"threads={I3D_THREADS}",
                 "\n".join(order)):
        h.update(part.encode() + b"\0")
    return cache_dir("fvd-reference", override_env="PHYBENCH_FVD_CACHE_DIR") / f"{manifest['task']}-{manifest['split']}-{h.hexdigest()[:32]}.npy"


def load_reference(path: Path | None, n: int) -> np.ndarray | None:
    if path is None or not path.is_file():
        return None
    try:
        feats = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None  # a damaged cache file is recomputed
    return feats if feats.ndim == 2 and feats.shape[0] == n and feats.dtype == np.float64 else None

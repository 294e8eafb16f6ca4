"""The nearest-neighbour baseline: the training video whose condition frames are closest in pixels.

Features are 32x32 luma-ink images; the search is exact L2 (a float32 shortlist re-ranked in
integers), and the index is cached by training-split hash and feature version."""
from __future__ import annotations

import os
from pathlib import Path
import numpy as np
from ..io import atomic_save_npy
from ..data.split import SplitReader, render_row, sample_video
from .errors import BaselineError
from ..data.documents import SplitRow


NN_SIZE = 32  # pixels per side of the nearest-neighbour features
NN_CANDIDATES = 8  # float32 shortlist per query, re-ranked exactly in integers
NN_CHUNK = 4096  # training samples per float32 block (~50 MB at 32 px)
NN_FEATURE_VERSION = 1  # bump when the features change: the cache key holds it

# ------------------------------------------------------------------ nearest neighbour
def nn_features(frames: np.ndarray, size: int = NN_SIZE) -> np.ndarray:
    """uint8 (..., n * size * size) "ink" features of condition frames (..., n, H, W, 3).

    Ink is 255 minus the BT.601 luma, so the white background is 0; each size x size
    cell is the area mean of its (H / size)^2 pixels, rounded.  Integer arithmetic
    throughout (channel sums per cell first: the luma is linear), so the features are
    the same bytes on every machine.
    """
    frames = np.asarray(frames, dtype=np.uint8)
    height = frames.shape[-3]
    if height % size or frames.shape[-2] != height:
        raise BaselineError(f"nearest-neighbour features need square frames divisible by {size} px, "
                            f"got {frames.shape[-3:-1]}")
    block = height // size
    lead = frames.shape[:-3]  # (..., n)
    wide = np.uint16 if block * block * 255 <= np.iinfo(np.uint16).max else np.int64
    rows = frames.reshape(*lead, size, block, size * block * 3)
    strip = rows[..., 0, :].astype(wide)  # (..., size, W * 3): sums over each cell's rows
    for i in range(1, block):
        strip += rows[..., i, :]
    cols = strip.reshape(*lead, size, size, block, 3)
    sums = cols[..., 0, :].copy()  # (..., size, size, 3): channel sums per cell
    for i in range(1, block):
        sums += cols[..., i, :]
    sums = sums.astype(np.int64)
    denominator = 1000 * block * block
    ink = 255 * denominator - (299 * sums[..., 0] + 587 * sums[..., 1] + 114 * sums[..., 2])  # x 1000
    cells = (ink + denominator // 2) // denominator
    return cells.astype(np.uint8).reshape(*frames.shape[:-4], -1)


def default_cache_dir() -> Path:
    """$PHYBENCH_CACHE_DIR, else $XDG_CACHE_HOME/phybench, else ~/.cache/phybench."""
    from ..io import cache_dir

    return cache_dir()


class NearestNeighbourIndex:
    """Exact L2 nearest neighbour over a training split's condition frames, in pixels.

    Features (`nn_features`) of every training sample's condition frames are built once
    (rendering only those frames) and cached as .npy under
    ``cache_dir/nn-index/``, keyed by the training split hash, resolution and feature
    settings.  A search computes ||q||^2 + ||x||^2 - 2 q.x in float32 by matrix
    products over blocks of the index, keeps a shortlist per query, and re-ranks it
    exactly in integers (ties go to the lower training index), so the answer does
    not depend on the BLAS.
    """

    def __init__(self, train_dir: str | os.PathLike[str], *, size: int = NN_SIZE,
                 cache_dir: str | os.PathLike[str] | None = None, progress: bool = True) -> None:
        from tqdm import tqdm

        self.reader = SplitReader(train_dir)
        self.manifest = self.reader.manifest
        self.size = size
        import pyarrow.parquet as pq

        stored = set(pq.read_schema(self.reader.folder / self.manifest["shards"][0]["file"]).names)
        wanted = ["sample_id", "index", "positions", "velocities", "radii", "colours", "angles", "bodies"]
        self.rows = list(self.reader.rows(columns=[c for c in wanted if c in stored]))
        cf = int(self.manifest["condition_frames"])
        key = (f"{self.manifest['split_hash'][:20]}-{self.manifest['resolution']}px-{cf}f-"
               f"{size}s-v{NN_FEATURE_VERSION}")
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_file = folder / "nn-index" / f"{self.manifest['task']}-{self.manifest['split']}-{key}.npy"
        dim = cf * size * size
        self.built = False
        features = None
        if self.cache_file.is_file():
            try:
                features = np.load(self.cache_file, allow_pickle=False)
            except (OSError, ValueError):
                features = None  # a damaged cache file is rebuilt
            if features is not None and (features.shape != (len(self.rows), dim) or features.dtype != np.uint8):
                features = None
        if features is None:
            resolution = int(self.manifest["resolution"])
            features = np.empty((len(self.rows), dim), dtype=np.uint8)
            bar = tqdm(self.rows, desc=f"index {self.manifest['task']}/{self.manifest['split']}", unit="sample",
                       disable=not progress, mininterval=0.5)
            batch = np.empty((256, cf, resolution, resolution, 3), dtype=np.uint8)  # features in batches
            for i, row in enumerate(bar):
                batch[i % len(batch)] = self._render(row, resolution, slice(0, cf))  # only the condition frames
                if i % len(batch) == len(batch) - 1 or i == len(self.rows) - 1:
                    start = i - i % len(batch)
                    features[start : i + 1] = nn_features(batch[: i + 1 - start], size)
            atomic_save_npy(self.cache_file, features)
            self.built = True
        self.features = features
        self.norms = np.einsum("nd,nd->n", features, features, dtype=np.int64)  # (N,) exact

    def __len__(self) -> int:
        return len(self.rows)

    def search(self, queries: np.ndarray, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Nearest training sample of each query: indices (Q,) int64, squared L2 (Q,) int64.

        queries: uint8 (Q, D) from `nn_features`.
        """
        from tqdm import tqdm

        queries = np.asarray(queries, dtype=np.uint8)
        q = queries.astype(np.float32)  # (Q, D)
        q_norm = (q * q).sum(axis=1)  # (Q,)
        n = len(self.rows)
        k = min(NN_CANDIDATES, n)
        best_d = np.full((len(q), k), np.inf, dtype=np.float32)  # (Q, k) shortlist
        best_i = np.zeros((len(q), k), dtype=np.int64)
        starts = range(0, n, NN_CHUNK)
        for start in tqdm(starts, desc="search", unit="block", disable=not progress or len(starts) < 2):
            block = self.features[start : start + NN_CHUNK].astype(np.float32)  # (C, D), once per block
            x_norm = self.norms[start : start + len(block)].astype(np.float32)  # (C,)
            kk = min(k, len(block))
            for a in range(0, len(q), 1024):  # (1024, C) distances at a time: ~16 MB
                d = q_norm[a : a + 1024, None] + x_norm[None, :] - 2.0 * (q[a : a + 1024] @ block.T)
                top = np.argpartition(d, kk - 1, axis=1)[:, :kk]  # (q, kk) this block's best
                both_d = np.concatenate([best_d[a : a + 1024], np.take_along_axis(d, top, axis=1)], axis=1)
                both_i = np.concatenate([best_i[a : a + 1024], top + start], axis=1)
                pick = np.argpartition(both_d, k - 1, axis=1)[:, :k]
                best_d[a : a + 1024] = np.take_along_axis(both_d, pick, axis=1)
                best_i[a : a + 1024] = np.take_along_axis(both_i, pick, axis=1)
        # Exact integer re-rank of the shortlist; ties go to the lower index.
        exact = np.empty(best_i.shape, dtype=np.int64)  # (Q, k)
        for a in range(0, len(q), 256):  # bounded memory: 256 x k x D int32
            cand = self.features[best_i[a : a + 256]].astype(np.int32)  # (q, k, D)
            diff = cand - queries[a : a + 256, None, :].astype(np.int32)
            exact[a : a + 256] = np.einsum("qkd,qkd->qk", diff, diff, dtype=np.int64)
        key = exact * n + best_i  # distance first, then index: < 2^63 for any split size
        o = key.argmin(axis=1)[:, None]
        winner = np.take_along_axis(best_i, o, axis=1)[:, 0]
        distance = np.take_along_axis(exact, o, axis=1)[:, 0]
        return winner, distance

    def _render(self, row: SplitRow, resolution: int, frames: slice | None = None) -> np.ndarray:
        if row.get("positions") is None:  # a parameter-only training row: simulate it
            return sample_video(self.reader.plan, int(row["index"]), frames)
        return render_row(row, resolution, frames)

    def video(self, index: int, resolution: int) -> np.ndarray:
        """The full training video of sample `index`, rendered at `resolution`."""
        return self._render(self.rows[index], resolution)

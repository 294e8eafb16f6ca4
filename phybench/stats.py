"""The one percentile bootstrap of phybench: every interval a results file, the board or a study
prints is drawn here.

Two ways to draw, each the stream its callers have always used, so their numbers do not move:

* `bootstrap_mean_ci`: the mean of one sample, resampled in vectorised chunks (an index matrix of
  `chunk` resamples x n values per draw: results files, the board's paired marks, the learning
  curves).  The chunk size is part of the stream: numpy's bounded integers are drawn in 32-bit
  halves buffered per call, so the same seed in other chunks gives other indices.
* `bootstrap_stat_ci`: any statistic of one or more samples, each resampled independently with
  replacement, one resample at a time (the studies' ratios).

Both return the 2.5th and 97.5th percentiles (`percentile_interval`).  Pure numpy: the base stage.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

LOW, HIGH = 2.5, 97.5  # percentiles of the 95% interval


def percentile_interval(draws: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(2.5th, 97.5th) percentile of the resampled statistics."""
    lo, hi = np.percentile(draws, [LOW, HIGH])
    return float(lo), float(hi)


_DRAWN: dict[tuple[int, int, int], np.ndarray] = {}  # (n, resamples, seed) -> the one chunk's index matrix
_DRAWN_MAX = 2_500_000  # indices kept (int32: 10 MB): a results file's metrics all resample the same n


def _one_chunk_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """int32 (resamples, n): `default_rng(seed).integers(0, n, size=(resamples, n))`, drawn once
    per process and kept (a results file draws the same matrix for each of its ~25 metric columns:
    half their bootstrap's cost)."""
    key = (n, resamples, seed)
    idx = _DRAWN.get(key)
    if idx is None:
        idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n)).astype(np.int32)
        idx.flags.writeable = False
        _DRAWN.clear()  # one kept: a process scores one split at a time
        _DRAWN[key] = idx
    return idx


def resampled_means(values: np.ndarray, resamples: int, seed: int, chunk: int | None = None) -> np.ndarray:
    """(resamples,) means of `values` (1-D, n >= 1) resampled with replacement, drawn `chunk`
    resamples at a time (None: all at once) from `default_rng(seed)`."""
    n = values.size
    step = resamples if chunk is None else max(1, chunk)
    if step >= resamples and resamples * n <= _DRAWN_MAX:  # one draw: the same indices every call
        return values[_one_chunk_indices(n, resamples, seed)].mean(axis=1)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, step):
        stop = min(start + step, resamples)
        means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return means


def bootstrap_mean_ci(values: Sequence[float] | np.ndarray, resamples: int, seed: int,
                      chunk: int | None = None) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of `values` (1-D, finite): (nan, nan) for no
    value, (v, v) for one."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), float(x[0])
    return percentile_interval(resampled_means(x, resamples, seed, chunk))


def bootstrap_stat_ci(stat: Callable[..., float], samples: Sequence[np.ndarray], resamples: int,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of stat(*samples), each sample resampled independently with
    replacement, one resample at a time; (nan, nan) when a sample is empty.  A paired statistic
    resamples indices: `samples=[np.arange(n)]` and a `stat` that indexes both series."""
    if any(len(s) == 0 for s in samples):
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    draws = [stat(*(s[rng.integers(0, len(s), len(s))] for s in samples)) for _ in range(resamples)]
    return percentile_interval(draws)

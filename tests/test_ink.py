"""`segment._ink` (the pixels the segmentation reads) equals its definition, index for index: any
channel farther than INK from the background.  Its dedupe of a pixel's channel hits is a speed-up
(issue 34) that must not move a single pixel."""
from __future__ import annotations

import numpy as np

from phybench.scoring.judge.segment import INK, _ink


def _reference(video: np.ndarray, background: tuple[int, int, int]) -> np.ndarray:
    far = np.abs(video.astype(np.int16) - np.asarray(background, np.int16)) > INK
    return np.flatnonzero(far.reshape(-1, 3).any(axis=1))


def test_ink_equals_any_channel_farther_than_ink() -> None:
    rng = np.random.default_rng(3)
    for background in ((255, 255, 255), (200, 30, 255), (0, 0, 0)):
        for share in (0.0, 0.01, 0.3, 1.0):
            video = np.tile(np.asarray(background, np.uint8), (4, 9, 11, 1))
            hit = rng.random(video.shape[:3]) < share
            video[hit] = rng.integers(0, 256, (int(hit.sum()), 3))
            got, want = _ink(video, background), _reference(video, background)
            assert got.dtype == want.dtype and np.array_equal(got, want)

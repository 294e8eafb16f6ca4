"""The judge's ink scan and perimeter counts compiled by numba (`segment_numba.ink_pixels`,
`perimeter_counts`) give the NumPy path's integers exactly, at the byte threshold and the
picture's border (issue 52)."""
from __future__ import annotations

import mmap

import numpy as np
import pytest

from phybench.scoring.judge import segment as S
from phybench.scoring.judge import segment_fast

pytest.importorskip("numba")


def _kern():
    kern = segment_fast.compiled(S.segment)
    assert kern is not None
    return kern


@pytest.mark.parametrize("shape", [(3, 17, 13), (2, 16, 16), (1, 5, 7), (4, 9, 8)])
def test_ink_pixels_equal_numpy_at_the_threshold(shape: tuple[int, int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    video = np.full((*shape, 3), 255, np.uint8)
    on = rng.random(shape) < 0.15
    channel = rng.integers(0, 3, shape)
    level = rng.choice(np.array([0, 100, 241, 242, 243, 244, 254], np.uint8), shape)  # 255 - INK = 243: 242 is ink
    video[on, channel[on]] = level[on]
    video[-1, -1, -1, 2] = 242  # the last pixel (past the last whole group of eight)
    want = S._ink(video, S.BACKGROUND)
    got = S._ink_compiled(_kern(), video, S.BACKGROUND)
    assert want.dtype == got.dtype and np.array_equal(want, got)
    assert got[-1] == video.shape[0] * video.shape[1] * video.shape[2] - 1 and len(got) > 3
    assert not np.isin(np.flatnonzero((video.min(axis=-1) == 243).reshape(-1)), got).any()


def test_ink_compiled_on_another_background_is_numpys() -> None:
    video = np.zeros((2, 8, 8, 3), np.uint8)
    video[0, 3, 3] = 200
    got = S._ink_compiled(_kern(), video, (0, 0, 0))
    assert np.array_equal(got, S._ink(video, (0, 0, 0))) and got.tolist() == [27]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_perimeter_counts_equal_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    T, H, W = 5, 11, 9
    mask = rng.random((T, H, W)) < 0.6  # pieces touching every border, holes inside
    mask[2] = False  # a frame without pixels
    every = np.flatnonzero(mask)
    frames = [0, 2, 3, 4]
    want = S._perimeter(every, (T, H, W), frames)
    got = S._perimeter(every, (T, H, W), frames, _kern())
    assert np.array_equal(np.isnan(want), np.isnan(got)) and np.array_equal(want[frames], got[frames])
    assert got[2] == 0 and np.isnan(got[1]) and got[0] > 0
    full = np.ones((1, 4, 5), bool)  # a full picture: every border pixel counts, the 2 x 3 inside does not
    assert S._perimeter(np.flatnonzero(full), (1, 4, 5), [0], _kern())[0] == 20 - 6


def test_large_coverage_maps_are_mapped_zeros_and_segment_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    small, big = S._untouched_zeros(1000), S._untouched_zeros(1 << 20)
    mapped = [isinstance(getattr(x.base, "obj", x.base), mmap.mmap) for x in (small, big)]  # (frombuffer: a memoryview)
    assert mapped == [False, True]  # a map only when large
    assert big.dtype == np.float32 and big.shape == (1 << 20,) and big.flags.writeable and not big.any()
    big[123] = 0.5
    assert float(big.sum()) == 0.5
    video, palette, static = segment_fast.check_video(16, 256, 3)  # 16 x 256 x 256 px: the mapped stacks
    kern = _kern()
    monkeypatch.setitem(segment_fast._STATE, "mod", None)
    want = S.segment(video, palette, soft_only=static, perimeter_frames=[0, 5, 15])
    monkeypatch.setitem(segment_fast._STATE, "mod", kern)
    got = S.segment(video, palette, soft_only=static, perimeter_frames=[0, 5, 15])
    assert sum(int(x.count.sum()) for x in want.layers.values()) > 0
    assert segment_fast.same_segmentation(want, got)


def test_ink_pixels_on_an_unaligned_view() -> None:
    rng = np.random.default_rng(1)
    video = rng.integers(200, 256, (5, 37, 37, 3)).astype(np.uint8)
    view = video[1:]  # contiguous, 4107 bytes in: its words are not 8-byte aligned
    assert view.flags.c_contiguous and view.ctypes.data % 8
    got = S._ink_compiled(_kern(), view, S.BACKGROUND)
    assert np.array_equal(got, S._ink(view, S.BACKGROUND)) and len(got) > 1000

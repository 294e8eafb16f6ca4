"""The judge's segmentation compiled by numba (`segment_numba`, chosen by `segment_fast`) gives the
NumPy path's segmentation bit for bit, and a compiled kernel that differs is never used (issue 52)."""
from __future__ import annotations

import numpy as np
import pytest

from phybench.scoring.judge import segment_fast
from phybench.scoring.judge.segment import segment

pytest.importorskip("numba")


def _both(monkeypatch: pytest.MonkeyPatch, video: np.ndarray, palette: list, background=(255, 255, 255), **kw):
    kern = segment_fast.compiled(segment)
    assert kern is not None  # numba imported, compiled and passed its load-time check
    monkeypatch.setitem(segment_fast._STATE, "mod", None)
    want = segment(video, palette, background, **kw)
    monkeypatch.setitem(segment_fast._STATE, "mod", kern)
    return want, segment(video, palette, background, **kw)


@pytest.mark.parametrize("seed,size,frames", [(0, 48, 3), (1, 64, 4), (2, 37, 2)])
def test_compiled_segmentation_equals_numpy(monkeypatch: pytest.MonkeyPatch, seed: int, size: int, frames: int) -> None:
    video, palette, static = segment_fast.check_video(frames, size, seed)
    want, got = _both(monkeypatch, video, palette, soft_only=static, perimeter_frames=list(range(0, frames, 2)))
    assert sum(int(x.count.sum()) for x in want.layers.values()) > 0  # pieces found
    assert (want.owner > 0).sum() > 100 and (want.owner == 2).any()  # ink read, ambiguous greys assigned
    assert segment_fast.same_segmentation(want, got)
    got.layers[palette[0]].area[0] += 1e-12  # the comparison sees a last-bit change
    assert not segment_fast.same_segmentation(want, got)


def test_compiled_segmentation_on_a_coloured_background(monkeypatch: pytest.MonkeyPatch) -> None:
    video, palette, _ = segment_fast.check_video(3, 40, 7)
    dark = (255 - video).astype(np.uint8)  # a dark background: ink on both sides of it
    pal = [tuple(255 - x for x in c) for c in palette]
    want, got = _both(monkeypatch, dark, pal, (0, 0, 0))
    assert (want.owner != 0).sum() > 100
    assert segment_fast.same_segmentation(want, got)


def test_a_compiled_kernel_that_differs_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from phybench.scoring.judge import segment_numba

    real = segment_numba.fill_colour

    def off_by_a_bit(*args):  # one coverage a float32 step too high
        n = real(*args)
        soft = args[10]
        soft[np.flatnonzero(soft)[:1]] = np.nextafter(soft[np.flatnonzero(soft)[:1]], np.float32(2))
        return n

    monkeypatch.setattr(segment_numba, "fill_colour", off_by_a_bit)
    monkeypatch.delitem(segment_fast._STATE, "mod", raising=False)
    assert segment_fast.compiled(segment) is None  # the load-time check fell back to NumPy
    monkeypatch.setattr(segment_numba, "fill_colour", real)
    monkeypatch.delitem(segment_fast._STATE, "mod", raising=False)
    assert segment_fast.compiled(segment) is segment_numba
    monkeypatch.setenv("PHYBENCH_NUMBA", "0")
    assert segment_fast.compiled(segment) is None


@pytest.mark.parametrize("density", [0.3, 0.55, 0.8])
def test_compiled_pieces_equal_ndimage_labels(density: float) -> None:
    """Random masks (pieces that meet only further down: U shapes, diagonals) and touching the
    borders: the compiled union-find gives `ndimage.label`'s pieces, numbering and sums."""
    from phybench.scoring.judge.segment import _piece_sums, _piece_sums_compiled

    kern = segment_fast.compiled(segment)
    assert kern is not None
    rng = np.random.default_rng(int(density * 100))
    soft = (rng.random((5, 23, 31)) * (rng.random((5, 23, 31)) < density)).astype(np.float32)
    soft[2] = 0.0  # a frame without pixels
    hidx = np.flatnonzero(soft > 0.2)
    n, sums, boxes = _piece_sums(soft, hidx)
    m, got, got_boxes = _piece_sums_compiled(kern, soft, hidx)
    assert n == m > 3
    assert np.array_equal(boxes, got_boxes) and boxes.dtype == got_boxes.dtype
    assert all(a.tobytes() == b.tobytes() for a, b in zip(sums, got))

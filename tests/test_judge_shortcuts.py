"""The judge's shortcuts (issue 52: work done once, or only where coverage is) give what the long
way gives: pieces' boxes equal `ndimage.find_objects`', a layer's extent holds every covered pixel,
registration restricted to it returns the same floats, and the per-body metrics' tracks equal
`tracks(back=False)`.  Each fails if its shortcut drops or moves a pixel."""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy import ndimage

from phybench.scoring.judge.abnormal import segment_pair
from phybench.scoring.judge.motion import colour_tracks, forward, tracks
from phybench.scoring.judge.registration import registered_change
from phybench.scoring.judge.segment import _IN_PLANE, _label_frames, segment, with_pieces


def _scene(seed: int = 0) -> np.ndarray:
    """(12, 64, 72, 3) uint8: a black bar that stays, a red ball that moves and a grey one that
    splits, on white, lightly blurred (partial coverage at the rims)."""
    rng = np.random.default_rng(seed)
    v = np.full((12, 64, 72, 3), 255, np.uint8)
    v[:, 50:54, 6:60] = 0
    for t in range(12):
        r, c = 10 + t, 8 + 3 * t
        v[t, r:r + 7, c:c + 7] = (200, 30, 30)
        v[t, 30:36, 40:44] = (128, 128, 128)
        if t >= 8:
            v[t, 30:36, 42] = 255
    v = ndimage.uniform_filter(v.astype(np.float32), (0, 2, 2, 0)).round().astype(np.uint8)
    noise = rng.integers(-2, 3, v.shape)
    return np.clip(v.astype(int) + noise, 0, 255).astype(np.uint8)


def test_piece_boxes_equal_find_objects():
    hard = (_scene()[..., 0] < 100) | (_scene()[..., 1] < 100)
    hidx = np.flatnonzero(hard)
    lab, n, rows, cols, spans = _label_frames(hidx, 64, 72)
    full = np.zeros(hard.size, np.int64)
    full[hidx] = lab
    labels = full.reshape(hard.shape)
    assert n == ndimage.label(hard, structure=_IN_PLANE)[1] and n > 12
    for k, sl in enumerate(ndimage.find_objects(labels)):
        assert tuple(spans[k]) == (sl[0].start, sl[1].start, sl[1].stop, sl[2].start, sl[2].stop)


def test_extent_holds_every_covered_pixel_and_registration_within_it_is_the_same():
    colours = [(0, 0, 0), (200, 30, 30), (128, 128, 128), (10, 200, 10)]
    seg = segment(_scene(), colours, soft_only=[(0, 0, 0)])
    for c, q in seg.layers.items():
        on = np.argwhere(q.soft.any(axis=0))
        want = (0, 0, 0, 0) if not len(on) else (int(on[:, 0].min()), int(on[:, 0].max()) + 1,
                                                 int(on[:, 1].min()), int(on[:, 1].max()) + 1)
        assert q.extent == want, c
        q2 = dataclasses.replace(q, extent=None)
        a, b = with_pieces(q, 2.0), with_pieces(q2, 2.0)
        assert [x.tolist() for x in a.centroids] == [x.tolist() for x in b.centroids]
    pr = segment_pair(_scene(1), _scene(), colours[:3], [True, False, False], 4)
    for q in (pr.gens.layers[(0, 0, 0)], pr.gts.layers[(0, 0, 0)]):
        for register in (True, False):
            want = registered_change(q.soft, pr.ctx.ref, range(4, 12), pr.ctx, register)
            got = registered_change(q.soft, pr.ctx.ref, range(4, 12), pr.ctx, register, extent=q.extent)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_per_body_tracks_are_the_judges_without_the_condition_frames():
    pr = segment_pair(_scene(2), _scene(), [(0, 0, 0), (200, 30, 30), (128, 128, 128)], [True, False, False], 4)
    assert pr.dynamic
    for c, v in pr.dynamic.items():
        seeds = v.g.centroids[pr.ctx.ref]
        for side, (lay, seg) in enumerate(((v.p, pr.gens), (v.g, pr.gts))):
            want = tracks(lay, seg, c, seeds, pr.ctx, v.reach)
            got = [forward(x, pr.ctx.ref) for x in colour_tracks(v, pr.gens, pr.gts, c, pr.ctx)[side]]
            assert len(got) == len(want) >= 1
            for a, b in zip(want, got):
                for f in dataclasses.fields(a):
                    x, y = getattr(a, f.name), getattr(b, f.name)
                    assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), f.name
        assert colour_tracks(v, pr.gens, pr.gts, c, pr.ctx) is colour_tracks(v, pr.gens, pr.gts, c, pr.ctx)

"""The near-copy rule (`phybench.leaderboard.hub.nearcopy`, issue 51 item 1) on synthetic scenes.

A dark disc moving over a white background at 128 px: the truth moves it 3 px a frame, a
"model" row 1 px a frame (its mistakes), an independent model 5 px a frame.  Copies of the row
(one value changed by one level, +-1 level noise everywhere, a crop-and-pad by 1 px) are near
copies; the independent model and a noisy rendering of the truth are not.  The thresholds are
checked at their edges (one value off by one level is "the same pixels", two are not).
"""
import math
from pathlib import Path

import numpy as np
import pytest

from phybench.benign import degrade
from phybench.leaderboard.hub import nearcopy as nc

T, C, H = 6, 2, 128  # frames, condition frames, px


def scene(speed: float, seed: int) -> np.ndarray:
    """uint8 (T, H, H, 3): an anti-aliased disc of radius 10 from a seeded start, `speed` px/frame."""
    rng = np.random.default_rng(seed)
    x0, y0 = rng.uniform(20, 60, 2)
    yy, xx = np.mgrid[0:H, 0:H]
    frames = []
    for t in range(T):
        cx = x0 + (speed if t >= C else 3.0) * (t - C + 1 if t >= C else t - C + 1)
        r = np.hypot(xx - cx, yy - y0)
        cover = np.clip(10.5 - r, 0, 1)[..., None]  # 1 inside, a 1-px ramp at the edge
        frames.append(np.rint(255 - cover * np.array([200, 150, 100])).astype(np.uint8))
    return np.stack(frames)


def fp(videos: dict[str, np.ndarray], model: str) -> nc.Fingerprint:
    return nc.fingerprint(videos.items(), C, True, model=model, submission_hash=model)


@pytest.fixture(scope="module")
def rows():
    ids = [f"{i:03d}" for i in range(4)]
    truth = {i: scene(3.0, k) for k, i in enumerate(ids)}
    model = {i: scene(1.0, k) for k, i in enumerate(ids)}
    other = {i: scene(5.0, k) for k, i in enumerate(ids)}
    return truth, model, other


def one_value(videos: dict[str, np.ndarray], count: int = 1) -> dict[str, np.ndarray]:
    out = {}
    for i, v in videos.items():
        v = v.copy()
        for k in range(count):
            v[-1, 2 + k, 2, 0] -= 1  # a white pixel: 255 -> 254
        out[i] = v
    return out


def test_copies_of_a_row_are_near_copies_and_independent_models_are_not(rows):
    truth, model, other = rows
    g, a = fp(truth, "truth"), fp(model, "row")
    rng = np.random.default_rng(1)
    noisy = {i: np.clip(v.astype(int) + rng.integers(-1, 2, v.shape), 0, 255).astype(np.uint8) for i, v in model.items()}
    copies = {
        "1 value, 1 level": one_value(model),
        "+-1 level noise": noisy,
        "crop-and-pad 1 px": {i: degrade("shift-1-edge", v, C, i) for i, v in model.items()},
        "lossless": {i: v.copy() for i, v in model.items()},
    }
    for kind, videos in copies.items():
        pair = nc.compare(fp(videos, kind), a, g)
        assert pair.near_copy and pair.share == 1.0, (kind, pair.share, nc.psnr(pair.d_sa), pair.ratio)
        assert nc.refusal(pair).startswith("[videos_near_reused] these videos are nearly identical to the admitted "
                                           "row of 'row'")
    independent = nc.compare(fp(other, "other"), a, g)
    assert not independent.near_copy and independent.share == 0.0, independent.ratio
    assert independent.ratio.min() > 2 * nc.RATIO  # far from the line, not just over it
    # the truth with noise is a degraded ground truth, not a copy of the row that is the truth
    noisy_truth = {i: degrade("noise-8", v, C, i) for i, v in truth.items()}
    assert not nc.compare(fp(noisy_truth, "noisy"), fp(truth, "gt-row"), g).near_copy
    # ... but the truth's row with one value changed is the same pixels
    assert nc.compare(fp(one_value(truth), "gt+1"), fp(truth, "gt-row"), g).near_copy


def test_the_same_pixels_threshold_at_its_edge(rows):
    """At 128 px and 4 generated frames (196,608 values) one value off by one level is 101.1 dB
    (>= SAME_DB: the same pixels), two are 98.1 dB (not); the ratio rule cannot fire against a
    row equal to the truth, so this is the pixel rule alone."""
    truth, _, _ = rows
    g = fp(truth, "truth")
    one = nc.compare(fp(one_value(truth, 1), "one"), g, g)
    two = nc.compare(fp(one_value(truth, 2), "two"), g, g)
    n = (T - C) * H * H * 3
    assert np.allclose(nc.psnr(one.d_sa), 10 * math.log10(255 ** 2 * n), atol=1e-6)  # a sketch is exact on one value
    assert (nc.psnr(one.d_sa) >= nc.SAME_DB).all() and one.near_copy
    assert (nc.psnr(two.d_sa) < nc.SAME_DB).all() and not two.near_copy
    assert np.isinf(two.ratio).all()


def test_most_samples(rows):
    """A near-copy on half the samples or fewer is not refused (MOST = 0.5: more than half)."""
    truth, model, other = rows
    g, a = fp(truth, "truth"), fp(model, "row")
    ids = sorted(model)
    half = {i: (model[i] if k < len(ids) // 2 else other[i]) for k, i in enumerate(ids)}
    more = {i: (model[i] if k <= len(ids) // 2 else other[i]) for k, i in enumerate(ids)}
    assert nc.compare(fp(half, "half"), a, g).share == 0.5 and not nc.compare(fp(half, "half"), a, g).near_copy
    assert nc.compare(fp(more, "more"), a, g).near_copy


def test_the_store_keeps_rows_on_the_board_only_and_never_unpickles(rows, tmp_path):
    truth, model, _ = rows
    store = nc.Store(tmp_path)
    row = fp(model, "row")
    row.meta.update(split_hash="s" * 64, row="hub/row.json")
    store.save(nc.row_key("hub/row.json"), row)
    [back] = store.rows("s" * 64)
    assert back.ids == row.ids and np.array_equal(back.sketches, row.sketches) and back.meta["model"] == "row"
    assert store.rows("t" * 64) == []
    assert not nc._on_board(tmp_path, back.meta["row"])  # its results file is not there (a killed sync's)
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "row.json").write_text("{}")
    assert nc._on_board(tmp_path, "hub/row.json")
    assert not nc._on_board(tmp_path, "../row.json") and not nc._on_board(tmp_path, str(tmp_path / "hub/row.json"))
    hostile = store.folder / "evil.npz"
    np.savez(hostile, ids=np.array([object()], dtype=object), sketches=np.zeros((1, 2 * nc.K), np.int32),
             meta=np.zeros(1, np.uint8))
    assert nc.Store.read(hostile) is None  # an object array is never unpickled
    assert len(store.rows("s" * 64)) == 1
    assert isinstance(Path(store.folder), Path)

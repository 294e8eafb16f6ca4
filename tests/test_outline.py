"""The shape rule's outline measures (`phybench.scoring.judge.outline`) on drawn pieces: a disc has no
notch at any size or blur, a bite or a hole through it has one as deep as drawn, and the
planted `bite` kind is judged abnormal (by the shape rule: on a sharp render the moments see a
bite of half the radius too) while the exact video is not."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.judge.abnormal import judge, segment_pair
from phybench.scoring.judge.outline import fill, notch, notches
from phybench.tasks import get_task
from phybench.violations import plant


def _layer(mask: np.ndarray, blur: float = 0.0):
    """The judge's red layer of one frame (repeated 4 times) drawing `mask` red on white."""
    cover = ndimage.gaussian_filter(mask.astype(float), blur) if blur else mask.astype(float)
    frame = (255 - np.clip(cover, 0, 1)[..., None] * np.array([0, 255, 255])).round().astype(np.uint8)  # (H, W, 3)
    video = np.repeat(frame[None], 4, axis=0)
    seg = segment_pair(video, video, [(255, 0, 0)], [False], 2)
    return next(iter(seg.dynamic.values())).p


def _disc(radius: float, centre=(64.0, 64.0), size: int = 128) -> np.ndarray:
    rows, cols = np.mgrid[:size, :size] + 0.5
    return (rows - centre[0]) ** 2 + (cols - centre[1]) ** 2 <= radius ** 2


@pytest.mark.parametrize("radius", [4.0, 9.5, 16.0, 24.0])
@pytest.mark.parametrize("blur", [0.0, 1.0, 2.0])
def test_a_disc_has_no_notch_at_any_size_or_blur(radius, blur):
    q = _layer(_disc(radius), blur)
    assert notch(q, 3) < 1.0, (radius, blur, notch(q, 3))
    assert fill(q, 3) > 0.8  # (a 4 px disc under a 2 px blur: 0.83)


@pytest.mark.parametrize("depth", [3.0, 5.0, 8.0])
def test_a_bite_is_as_deep_as_drawn(depth):
    """A bite of radius `depth` centred on the rim of a 15 px disc: the notch reads about its depth
    (less for a deep one: the centroid moves away from the bite)."""
    bitten = _disc(15.0) & ~_disc(depth, centre=(64.0, 49.0))
    assert 0.6 * depth <= notch(_layer(bitten, 1.0), 3) <= depth + 1.0


def test_a_hole_through_a_ball_is_a_notch():
    """A white stripe 2 px wide through a 15 px ball (the learned model's torn ball)."""
    torn = _disc(15.0)
    torn[60:62, 50:78] = False
    assert notch(_layer(torn), 3) > 5.0


def test_the_planted_bite_is_judged_and_the_exact_video_is_not(tmp_path):
    folder = tmp_path / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), folder, progress=False)
    reader = SplitReader(folder)
    cf = reader.spec.condition_frames
    for row in reader.rows():
        gt = reader.video(row)
        bodies = row_scene(row).bodies
        colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
        assert not judge(gt, gt, colours, static, cf).abnormal
        video, label = plant("bite", row, reader.spec, 128, gt)
        assert video is not None, label
        assert np.array_equal(video[:label["onset"]], gt[:label["onset"]])
        verdict = judge(video, gt, colours, static, cf)
        assert verdict.abnormal and any(f.rule == "shape" for f in verdict.findings), verdict


def _video(masks: list[np.ndarray], blur: float) -> np.ndarray:
    cover = [ndimage.gaussian_filter(m.astype(float), blur) if blur else m.astype(float) for m in masks]
    return np.stack([(255 - np.clip(c, 0, 1)[..., None] * np.array([0, 255, 255])).round().astype(np.uint8)
                     for c in cover])


@pytest.mark.parametrize("blur", [0.0, 0.7, 2.0])
def test_notches_of_many_frames_equal_notch_of_each_bit_for_bit(blur):
    """`notches` (every frame's rays at once, each ray read from the sample proved inside the piece
    on) returns exactly `notch` frame by frame: discs of every size, bitten, torn, cut by each edge
    of the frame, a bar, a ring (a hole at the centroid: every ray ends at once)."""
    torn = _disc(15.0)
    torn[60:62, 50:78] = False
    bar = np.zeros((128, 128), bool)
    bar[60:66, 20:100] = True
    masks = [_disc(r) for r in (2.5, 4.0, 9.5, 24.0)]
    masks += [_disc(15.0) & ~_disc(d, centre=(64.0, 49.0)) for d in (3.0, 8.0)]
    masks += [torn, bar, _disc(15.0) & ~_disc(6.0), _disc(9.0, centre=(2.0, 64.0)), _disc(9.0, centre=(64.0, 126.5)),
              _disc(7.0, centre=(125.0, 3.0)), _disc(20.0, centre=(-4.0, 60.0))]
    video = _video(masks, blur)
    seg = segment_pair(video, video, [(255, 0, 0)], [False], 1)
    q = next(iter(seg.dynamic.values())).p
    frames = [t for t in range(len(masks)) if q.count[t] == 1]
    assert len(frames) >= len(masks) - 2
    for margin in (1.0, 2.5):
        got = notches(q, frames, margin)
        want = [notch(q, t, margin) for t in frames]
        assert [repr(v) for v in got] == [repr(v) for v in want]


def test_the_fill_quantile_is_numpys_inverted_cdf_bit_for_bit():
    from phybench.scoring.judge.outline import FILL_QUANTILE, _inverted_cdf

    rng = np.random.default_rng(3)
    for n in [*range(1, 60), 99, 100, 101, 1000, 4321]:
        values = np.round(rng.random(n) * 400.0, 1 if n % 2 else 6)  # ties too
        for q in (FILL_QUANTILE, 0.5, 0.01, 0.999):
            assert _inverted_cdf(values, q) == float(np.quantile(values, q, method="inverted_cdf")), (n, q)


@pytest.mark.parametrize("blur", [0.0, 1.0])
def test_fills_of_many_frames_equal_fill_of_each_bit_for_bit(blur):
    from phybench.scoring.judge.outline import fills

    square = np.zeros((128, 128), bool)
    square[40:70, 50:80] = True
    masks = [_disc(r) for r in (2.5, 4.0, 9.5, 24.0)] + [square, _disc(15.0) & ~_disc(6.0),
                                                         _disc(9.0, centre=(3.0, 64.0)), _disc(7.0, centre=(125.0, 124.0))]
    video = _video(masks, blur)
    seg = segment_pair(video, video, [(255, 0, 0)], [False], 1)
    q = next(iter(seg.dynamic.values())).p
    frames = [t for t in range(len(masks)) if q.count[t] == 1]
    assert len(frames) == len(masks)
    assert [repr(v) for v in fills(q, frames)] == [repr(fill(q, t)) for t in frames]
    assert fills(q, []) == []

"""Tests for `phybench.scoring.physics.parse`: accuracy on our renderer and on the reference data, flags, junk.

Accuracy bounds are the measured figures (benchmarks/bench_parse.py, 200 clips per task:
mean position error ~2e-5 world units, max ~1e-4, velocity floor ~2.7e-4 units/s) with
about 2x margin; a plain red-pixel centroid misses them by two orders of magnitude.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phybench.scoring.physics.parse import (
    COLOUR_CHANGED,
    MISSING,
    PARTLY_OUT,
    PHYWORLD,
    SPLIT,
    TILE,
    PixelMapping,
    coverage,
    describe_flags,
    parse_video,
)
from phybench.world.render import render, shape_coverage
from phybench.world.scene import BLUE, RED, Body, Disc, Scene
from phybench.data.split import generate_sample, make_plan
from phybench.tasks import get_task

FIXTURES = Path(__file__).parent / "fixtures" / "phyworld"  # made by the reference authors' generators
FRAME_DT = 0.1  # s
WHITE = (255, 255, 255)

# Measured on 200 clips per task and split (see the module docstring), with margin.
MEAN_POSITION_ERROR = 4e-5  # world units
MAX_POSITION_ERROR = 3e-4
VELOCITY_FLOOR = 6e-4  # world units / s; the paper-metric target is 1e-3


def _scene(positions: np.ndarray, radii, colours) -> Scene:
    """Discs at positions (T, B, 2) world units."""
    positions = np.asarray(positions, dtype=np.float64)
    poses = np.zeros(positions.shape[:2] + (3,))
    poses[..., :2] = positions
    return Scene(tuple(Body(Disc(float(r)), c) for r, c in zip(radii, colours)), poses)


def _in_view(true: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """bool (T, B): the disc lies wholly inside the world square [0, 10]^2."""
    r = np.asarray(radii, dtype=np.float64)[None, :, None]
    return np.all((true - r >= 0) & (true + r <= 10.0), axis=-1)


def _errors(positions: np.ndarray, true: np.ndarray, radii) -> tuple[np.ndarray, np.ndarray]:
    """Position errors and |d(error)| / dt over fully-in-view frames (pairs)."""
    inside = _in_view(true, radii)
    error = positions - true
    both = inside[1:] & inside[:-1]
    return (
        np.linalg.norm(error, axis=-1)[inside],
        np.linalg.norm(np.diff(error, axis=0), axis=-1)[both] / FRAME_DT,
    )


@lru_cache(maxsize=None)
def _clips(task: str) -> list[tuple[np.ndarray, dict]]:
    """12 ID and 12 OOD ground-truth clips at 128 px, spread over each split."""
    out = []
    for split in ("id-eval", "ood-eval"):
        plan = make_plan(get_task(task), split, resolution=128)
        for index in np.linspace(0, plan.num_samples - 1, 12).astype(int):
            row, video = generate_sample(plan, int(index))
            out.append((video, row))
    return out


def _red_pixel_centroid(video: np.ndarray) -> np.ndarray:
    """What a naive parser does: centroid of pixels that look red, (T, 1, 2) world units."""
    mask = (video[..., 0] > 127) & (video[..., 1] < 128) & (video[..., 2] < 128)  # (T, H, W)
    rows, cols = np.indices(mask.shape[1:]) + 0.5
    count = np.maximum(mask.sum(axis=(1, 2)), 1)
    x = (mask * cols).sum(axis=(1, 2)) / count * 10 / video.shape[2]
    y = 10 - (mask * rows).sum(axis=(1, 2)) / count * 10 / video.shape[1]
    return np.stack([x, y], axis=-1)[:, None, :]


# ------------------------------------------------------------------ our renderer
@pytest.mark.parametrize("task", ["uniform", "parabola", "collision"])
def test_ground_truth_accuracy(task):
    positions, steps, naive_steps, centroid_steps = [], [], [], []
    for video, row in _clips(task):
        colours = [tuple(int(v) for v in c) for c in row["colours"]]
        true = np.asarray(row["positions"], dtype=np.float64)
        parsed = parse_video(video, colours)
        inside = _in_view(true, row["radii"])
        assert np.all(parsed.flags[inside] == 0), describe_flags(int(parsed.flags[inside].max()))
        radii = np.broadcast_to(row["radii"], inside.shape)
        np.testing.assert_allclose(parsed.radii[inside], radii[inside], atol=2e-4)
        err, step = _errors(parsed.positions, true, row["radii"])
        positions.append(err)
        steps.append(step)
        centroid = parse_video(video, colours, refine=False).positions
        centroid_steps.append(_errors(centroid, true, row["radii"])[1])
        if task != "collision":
            naive_steps.append(_errors(_red_pixel_centroid(video), true, row["radii"])[1])
    positions, steps = np.concatenate(positions), np.concatenate(steps)
    assert positions.mean() < MEAN_POSITION_ERROR
    assert positions.max() < MAX_POSITION_ERROR
    assert steps.mean() < VELOCITY_FLOOR
    # The exact-disc estimator is what buys the margin over a coverage centroid ...
    assert np.concatenate(centroid_steps).mean() > 1.2 * steps.mean()
    # ... and a red-pixel centroid is nowhere near.
    if naive_steps:
        assert np.concatenate(naive_steps).mean() > 20 * VELOCITY_FLOOR


@settings(max_examples=30, deadline=None)
@given(
    radius=st.floats(0.3, 2.0),
    x=st.floats(0.0, 1.0),
    y=st.floats(0.0, 1.0),
    vx=st.floats(-3.0, 3.0),
    vy=st.floats(-3.0, 3.0),
)
def test_round_trip_single_disc(radius, x, y, vx, vy):
    """Any disc wholly in view, anywhere, any sub-pixel phase: parsed to ~1e-4 units."""
    start = np.array([radius + x * (10 - 2 * radius), radius + y * (10 - 2 * radius)])
    t = np.arange(4)[:, None] * 0.02
    true = np.clip(start + t * [vx, vy], radius, 10 - radius)[:, None, :]  # (T, 1, 2)
    video = render(_scene(true, [radius], [RED]), 128)
    parsed = parse_video(video, [RED])
    assert np.all(parsed.flags == 0)
    assert np.abs(parsed.positions - true).max() < MAX_POSITION_ERROR
    assert np.abs(parsed.radii - radius).max() < 2e-4


def test_touching_discs_at_contact():
    """Red under blue, touching and overlapping slightly: both centres stay exact."""
    t = np.linspace(-1, 1, 9)[:, None]
    red = np.c_[5.0 - 1.1 + 0.3 * t, np.full_like(t, 4.37)]
    blue = np.c_[5.0 + 0.8 - 0.3 * t, np.full_like(t, 4.37)]
    true = np.stack([red, blue], axis=1)  # (T, 2, 2): gap from +0.6 down to -0.6 ... overlap
    true[:, 1, 0] = np.maximum(true[:, 1, 0], true[:, 0, 0] + 1.1 + 0.8 - 0.05)  # at most 0.05 overlap
    video = render(_scene(true, [1.1, 0.8], [RED, BLUE]), 128)
    parsed = parse_video(video, [RED, BLUE])
    assert np.all(parsed.flags == 0)
    assert np.abs(parsed.positions - true).max() < MAX_POSITION_ERROR


# ------------------------------------------------------------------ reference data
@lru_cache(maxsize=None)
def _fixture(name: str):
    import h5py

    from phybench.data.video import decode_mp4

    path = FIXTURES / f"{name}.hdf5"
    with h5py.File(path, "r") as f:
        streams = f["video_streams"]
        videos = [decode_mp4(bytes(streams[i])) for i in range(len(streams))]
        positions = f["position_streams"][:]
        init = f["init_streams"][:]
    if positions.ndim == 3:  # one ball: [frame, (x, y)], init [r, v]
        return videos, positions[:, :, None, :], init[:, :1], [RED]
    return videos, positions, init[:, :2], [RED, BLUE]  # [frame, ball, (x, y)], [r1, r2, v1, v2]


@pytest.mark.parametrize("name", ["uniform_128", "parabola_128", "collision_128", "uniform_256"])
def test_reference_fixtures(name):
    """Lossy H.264, the reference renderer, the grid mapping: within 1/4 px mean, 1/2 px max."""
    videos, positions, radii, colours = _fixture(name)
    errors = []
    for video, true, r in zip(videos, positions, radii):
        parsed = parse_video(video, colours, PHYWORLD)
        inside = _in_view(true, r)
        assert not np.any(parsed.flags[inside] & MISSING)
        errors.append(np.linalg.norm(parsed.positions - true, axis=-1)[inside])
    pixel = 10.0 / (videos[0].shape[2] - 1)  # world units per pixel on that grid
    errors = np.concatenate(errors) / pixel
    assert errors.mean() <= 0.25 and errors.max() <= 0.5, (errors.mean(), errors.max())


# ------------------------------------------------------------------ flags
def _ball_video(positions, radius=1.0, colour=RED, resolution=64) -> np.ndarray:
    true = np.asarray(positions, dtype=np.float64)[:, None, :]
    return render(_scene(true, [radius], [colour]), resolution)


def test_missing_frames_and_empty_video():
    video = _ball_video([[3.0, 4.0], [3.2, 4.0], [3.4, 4.0]])
    video[1] = 255  # the ball vanished in frame 1
    parsed = parse_video(video, [RED])
    assert parsed.flags[:, 0].tolist() == [0, MISSING, 0]
    assert np.isnan(parsed.positions[1]).all() and np.isnan(parsed.radii[1]).all()
    assert np.isfinite(parsed.positions[[0, 2]]).all()
    empty = parse_video(np.full((5, 32, 32, 3), 255, np.uint8), [RED, BLUE])
    assert (empty.flags == MISSING).all() and np.isnan(empty.positions).all()
    assert empty.positions.shape == (5, 2, 2) and empty.flags.dtype == np.uint8


def test_split_ball():
    video = _ball_video([[5.0, 5.0]] * 3, radius=1.5)
    video[1, :, 30:33] = 255  # a white bar tears the ball in frame 1
    parsed = parse_video(video, [RED])
    assert parsed.flags[:, 0].tolist() == [0, SPLIT, 0]
    assert np.abs(parsed.positions[1, 0] - [5.0, 5.0]).max() < 0.1  # best estimate still given


def test_colour_changed():
    video = np.concatenate(
        [
            _ball_video([[4.0, 5.0]], colour=RED),
            _ball_video([[4.1, 5.0]], colour=(150, 0, 170)),  # turned purple
            _ball_video([[4.2, 5.0]], colour=(235, 25, 15)),  # drifted a little: tolerated
            _ball_video([[4.3, 5.0]], colour=(128, 0, 0)),  # dark red
        ]
    )
    parsed = parse_video(video, [RED])
    assert [int(f) for f in parsed.flags[:, 0]] == [0, COLOUR_CHANGED, 0, COLOUR_CHANGED]
    assert np.isfinite(parsed.positions).all()  # found, under the tolerant match
    assert np.abs(parsed.positions[:, 0, 0] - [4.0, 4.1, 4.2, 4.3]).max() < 0.01


def test_colour_changed_in_collision():
    true = np.array([[[3.0, 5.0], [7.0, 5.0]]])
    video = render(_scene(true, [1.0, 1.0], [(230, 120, 0), BLUE]), 64)  # red ball turned orange
    parsed = parse_video(video, [RED, BLUE])
    assert parsed.flags[0, 0] == COLOUR_CHANGED
    assert parsed.flags[0, 1] == 0
    assert np.abs(parsed.positions[0] - true[0]).max() < 1e-2
    # Purple is red plus blue: the blue ball now also shows up where the red one is.
    video = render(_scene(true, [1.0, 1.0], [(200, 0, 200), BLUE]), 64)
    parsed = parse_video(video, [RED, BLUE])
    assert parsed.flags[0, 0] & COLOUR_CHANGED and parsed.flags[0, 1] & SPLIT


def test_partly_out():
    xs = [5.0, 3.0, 1.001, 0.4, -0.5]  # whole, whole, just inside (touches the edge pixels), cut, cut
    video = _ball_video([[x, 5.0] for x in xs], radius=1.0, resolution=128)
    parsed = parse_video(video, [RED])
    assert parsed.flags[:, 0].tolist() == [0, 0, 0, PARTLY_OUT, PARTLY_OUT]
    # The radius is known from the whole frames, so the cut axis is still exact.
    assert np.abs(parsed.positions[:, 0, 0] - xs).max() < 1e-3
    assert np.abs(parsed.positions[:, 0, 1] - 5.0).max() < 1e-3
    assert parsed.radii[3, 0] < 1.0  # the visible area's radius


def test_partly_out_without_whole_frames_is_flagged_and_biased_inwards():
    video = _ball_video([[0.3, 5.0], [9.6, 5.0]], radius=1.0)
    parsed = parse_video(video, [RED])
    assert (parsed.flags[:, 0] == PARTLY_OUT).all()
    assert 0.3 < parsed.positions[0, 0, 0] < 1.0 and 9.0 < parsed.positions[1, 0, 0] < 9.6


# ------------------------------------------------------------------ junk and checks
@pytest.mark.parametrize(
    "make",
    [
        lambda rng: np.zeros((4, 32, 32, 3), np.uint8),  # all black
        lambda rng: np.full((4, 32, 32, 3), 255, np.uint8),  # all white
        lambda rng: rng.integers(0, 256, (4, 32, 32, 3), dtype=np.uint8),  # noise
        lambda rng: rng.integers(0, 256, (4, 8, 8, 3), dtype=np.uint8).repeat(4, axis=1).repeat(4, axis=2),
        lambda rng: np.where(rng.random((3, 30, 30, 1)) < 0.02, 0, 255).astype(np.uint8).repeat(3, axis=3),
        lambda rng: np.full((1, 2, 2, 3), (255, 0, 0), np.uint8),  # one tiny frame, all red
        lambda rng: np.zeros((0, 16, 16, 3), np.uint8),  # no frames
        lambda rng: np.broadcast_to(np.linspace(0, 255, 48).astype(np.uint8)[:, None], (2, 48, 48, 3)),
    ],
)
def test_junk_never_crashes(make):
    rng = np.random.default_rng(0)
    video = make(rng)
    for colours in ([RED], [RED, BLUE]):
        for mapping in (TILE, PHYWORLD):
            parsed = parse_video(video, colours, mapping)
            t, k = video.shape[0], len(colours)
            assert parsed.positions.shape == (t, k, 2) and parsed.radii.shape == (t, k)
            assert parsed.flags.shape == (t, k) and parsed.flags.dtype == np.uint8
            missing = (parsed.flags & MISSING) != 0
            assert np.isnan(parsed.positions[missing]).all()
            assert np.isfinite(parsed.positions[~missing]).all()


def test_malformed_input_raises():
    ok = np.full((2, 16, 16, 3), 255, np.uint8)
    with pytest.raises(ValueError, match="square"):
        parse_video(np.full((2, 16, 20, 3), 255, np.uint8), [RED])
    with pytest.raises(ValueError, match="uint8"):
        parse_video(ok.astype(np.float32), [RED])
    with pytest.raises(ValueError, match="shape"):
        parse_video(ok[..., 0], [RED])
    with pytest.raises(ValueError, match="same"):
        parse_video(ok, [RED, RED])
    with pytest.raises(ValueError, match="background"):
        parse_video(ok, [WHITE])
    with pytest.raises(ValueError):
        parse_video(ok, [(300, 0, 0)])
    with pytest.raises(ValueError):
        PixelMapping("polar")
    assert parse_video(ok, []).positions.shape == (2, 0, 2)


# ------------------------------------------------------------------ mapping and coverage
def test_pixel_mappings():
    assert TILE.to_world(0.0, 0.0, 128) == (0.0, 10.0)  # top-left corner of the image
    assert TILE.to_world(128.0, 128.0, 128) == (10.0, 0.0)
    x, y = PHYWORLD.to_world(np.array([0.5, 127.5]), np.array([0.5, 127.5]), 128)  # pixel centres
    np.testing.assert_allclose(x, [0.0, 10.0])
    np.testing.assert_allclose(y, [10.0, 0.0])
    assert PHYWORLD.pixel_size(128) == pytest.approx(10 / 127)
    for mapping in (TILE, PHYWORLD):
        col, row = mapping.to_pixel(*mapping.to_world(13.25, 101.5, 64), 64)
        assert (col, row) == pytest.approx((13.25, 101.5))


def test_coverage_is_the_renderers():
    """The unmix inverts the renderer's blend: exact up to the uint8 rounding."""
    poses = np.array([[3.37, 6.01, 0.0]])
    exact, row0, col0 = shape_coverage(Disc(1.3), poses, 64, 10.0)
    video = render(_scene(poses[:, None, :2], [1.3], [RED]), 64)
    found = coverage(video, [RED])[0]  # (T, H, W)
    h, w = exact.shape[1:]
    window = found[0, row0[0] : row0[0] + h, col0[0] : col0[0] + w]
    assert np.abs(window - exact[0]).max() <= 0.5 / 255 + 1e-6
    assert found.sum() == pytest.approx(exact.sum(), abs=0.05)


def _bleed_frame() -> tuple[np.ndarray, np.ndarray]:
    """A small red ball beside a large blue one whose rim carries a red fringe, as lossy video's
    chroma subsampling leaves it (seen on reference-style mp4s): (1, H, W, 3) and the red centre."""
    red_at = np.array([[[2.5, 5.0], [6.5, 5.0]]])  # (T=1, B=2, 2) world units
    video = render(_scene(red_at, [0.3, 2.0], [RED, BLUE]), 128)
    px = 10.0 / 128
    rows, cols = np.mgrid[0:128, 0:128]
    x, y = (cols + 0.5) * px, 10.0 - (rows + 0.5) * px
    d = np.hypot(x - 6.5, y - 5.0)
    angle = np.degrees(np.arctan2(y - 5.0, x - 6.5))
    fringe = (d > 2.0 - 1.5 * px) & (d < 2.0) & (np.abs(angle - 90) < 60)  # a 1-2 px arc on top of the blue rim
    mixed = 0.5 * np.array(RED, float) + 0.5 * np.array(BLUE, float)
    video[0][fringe] = np.round(mixed).astype(np.uint8)
    return video, red_at[0, 0]


def test_colour_bleed_from_another_balls_rim_is_not_a_second_piece():
    video, true = _bleed_frame()
    parsed = parse_video(video, [RED, BLUE])
    assert not parsed.flags[0, 0] & SPLIT, describe_flags(int(parsed.flags[0, 0]))
    assert np.abs(parsed.positions[0, 0] - true).max() < 0.02  # world units (< 1/4 px at 128 px)
    # the blue ball's own parse is untouched by the fringe (it reads as partly red: colour, not place)
    assert np.abs(parsed.positions[0, 1] - [6.5, 5.0]).max() < 0.05


def test_a_torn_ball_is_still_split_with_a_bleed_rule():
    video = _ball_video([[5.0, 5.0]] * 2, radius=1.5, resolution=128)
    video[1, :, 62:64] = 255  # a 2 px white cut: two thick halves
    parsed = parse_video(video, [RED])
    assert parsed.flags[:, 0].tolist() == [0, SPLIT]

"""Velocity error: the ground-truth floor, known injected errors, untrackable videos."""

from __future__ import annotations

import numpy as np
import pytest

from phybench.scoring.physics.parse import TILE, parse_video
from phybench.data.split import generate_sample, make_plan, row_scene
from phybench.world.render import render
from phybench.tasks import get_task
from phybench.scoring.physics.velocity import scored_pairs, video_errors

FLOOR = 0.001  # world units / s: the target for ground truth at 128 px


def _errors(spec, row, video):
    colours = [tuple(int(c) for c in rgb) for rgb in row["colours"]]
    parsed = parse_video(video, colours, TILE)
    return video_errors(
        parsed,
        row["positions"],
        row["radii"],
        world_size=spec.world_size,
        frame_interval=spec.frame_interval,
        condition_frames=spec.condition_frames,
        contact_time=float(row["contact_time"]),
    )


@pytest.mark.parametrize("task", ["uniform", "parabola", "collision"])
@pytest.mark.parametrize("split", ["id-eval", "ood-eval"])
def test_ground_truth_scores_at_the_floor(task, split):
    spec = get_task(task)
    plan = make_plan(spec, split, None, 24, None)
    errs, both = [], 0
    for i in range(plan.num_samples):
        row, video = generate_sample(plan, i)
        e = _errors(spec, row, video)
        assert e.ok, (row["sample_id"], e.untrackable)
        errs.append(e.velocity_error)
        if task == "collision" and np.isfinite(e.momentum_error):  # NaN: never both balls in view
            assert e.momentum_error < 0.01 and e.energy_error < 0.01, row["sample_id"]
            both += 1
    assert np.mean(errs) <= FLOOR, (task, split, np.mean(errs))
    assert task != "collision" or both >= plan.num_samples // 2


def test_injected_velocity_error_is_measured():
    """Move the ball off course by a known extra velocity after the condition frames."""
    spec = get_task("uniform")
    plan = make_plan(spec, "id-eval", None, 6, None)
    for i in range(plan.num_samples):
        row, video = generate_sample(plan, i)
        states = row_scene(row)
        T = states.positions.shape[0]
        extra = np.array([0.0, -0.3])  # world units / s, straight down
        t = np.maximum(np.arange(T) - (spec.condition_frames - 1), 0) * spec.frame_interval
        states.positions[:, 0] += t[:, None] * extra
        fake = render(states, plan.resolution)
        e = _errors(spec, row, fake)
        # Pairs where the shifted ball is still wholly in view measure exactly 0.3; where it
        # leaves the frame, the parser's partial centroid is off, so allow a margin.
        assert e.ok
        assert e.velocity_error == pytest.approx(0.3, abs=0.02), row["sample_id"]


def test_static_ball_has_the_speed_as_error():
    spec = get_task("uniform")
    plan = make_plan(spec, "id-eval", None, 4, None)
    row, video = generate_sample(plan, 1)
    frozen = np.repeat(video[2:3], len(video), axis=0)  # copy-last
    e = _errors(spec, row, frozen)
    speed = float(np.linalg.norm(row["velocities"][0, 0]))
    # pair (2, 3) moves 0 vs v; later pairs also 0 vs v: the error is the speed
    assert e.velocity_error == pytest.approx(speed, rel=1e-3)


def test_missing_ball_is_untrackable_with_reason():
    spec = get_task("collision")
    plan = make_plan(spec, "id-eval", None, 2, None)
    row, video = generate_sample(plan, 0)
    blank = video.copy()
    blank[20:] = 255
    e = _errors(spec, row, blank)
    assert not e.ok and np.isnan(e.velocity_error)
    assert "red ball" not in (e.untrackable or "")  # names come from the scorer, not here
    assert "ball 0 not found in frame(s)" in e.untrackable and "20-" in e.untrackable
    # only scored frames count: frames where the ground-truth ball is out of view never do


def test_collision_pairs_start_at_contact():
    spec = get_task("collision")
    plan = make_plan(spec, "id-eval", None, 3, None)
    row, _ = generate_sample(plan, 0)
    pairs = scored_pairs(
        np.asarray(row["positions"], float),
        row["radii"],
        world_size=spec.world_size,
        frame_interval=spec.frame_interval,
        condition_frames=spec.condition_frames,
        contact_time=float(row["contact_time"]),
    )
    first = np.flatnonzero(pairs.any(axis=1))[0]
    assert first * spec.frame_interval >= row["contact_time"] - 1e-9
    assert (first - 1) * spec.frame_interval < row["contact_time"]


def test_a_ball_unseen_in_the_condition_frames_is_excluded_not_scored():
    spec = get_task("collision")
    plan = make_plan(spec, "id-eval", None, 2, None)
    row, video = generate_sample(plan, 0)
    positions = np.array(row["positions"], dtype=np.float64)
    positions[:2, 1, 0] = 50.0  # ball 1 far outside the view in frames 0 and 1
    parsed = parse_video(video, [tuple(int(c) for c in rgb) for rgb in row["colours"]], TILE)
    e = video_errors(parsed, positions, row["radii"], world_size=spec.world_size,
                     frame_interval=spec.frame_interval, condition_frames=spec.condition_frames,
                     contact_time=float(row["contact_time"]))
    assert not e.ok and e.excluded and "ball 1" in e.excluded and np.isnan(e.velocity_error)
    assert e.untrackable is None


def test_ground_truth_without_scorable_pair_is_excluded_not_untrackable():
    """A sample with nothing to score says so about the sample, never about the model."""
    from phybench.scoring.physics.parse import Parsed
    from phybench.scoring.physics.velocity import video_errors

    T = 8
    gt = np.zeros((T, 1, 2))
    gt[:, 0, 0] = np.linspace(1.0, 3.0, T)
    gt[:, 0, 1] = 5.0
    gt[4:, 0, 0] = 11.0  # out of view (world 10) from frame 4 on: no generated pair fully in view
    parsed = Parsed(positions=np.full((T, 1, 2), np.nan), radii=np.full((T, 1), np.nan), flags=np.zeros((T, 1), np.uint8))
    e = video_errors(parsed, gt, np.array([0.5]), world_size=10.0, frame_interval=0.1, condition_frames=4)
    assert e.scored_pairs == 0
    assert e.untrackable is None and e.excluded and "no scorable frame pair" in e.excluded
    assert not e.ok

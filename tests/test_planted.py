"""Planted violations: each moves a reported number by >= 10x over the ground truth (issue 17, item 4).

The four the paper's velocity error misses: a ball that vanishes for frames 20-31, a red ball
that turns blue, a ball that grows 20%, and a +/-0.3-unit wobble before a collision.  Each is
made by changing the simulated scene (never by painting pixels) and rendering it.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.run.score import score
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task
from phybench.world.render import render
from phybench.world.scene import BLUE, Disc, Scene

METRICS = ("velocity_error",)  # trajectory_error, size_error and colour_kept come with it
N = 6


def _vanish(scene: Scene, spec) -> list[Scene]:
    poses = scene.poses.copy()
    poses[20:, 0, :2] = -50.0  # far out of view from frame 20 on
    return [dataclasses.replace(scene, poses=poses)]


def _recolour(scene: Scene, spec) -> list[Scene]:
    bodies = (dataclasses.replace(scene.bodies[0], colour=BLUE),) + scene.bodies[1:]
    return [scene.frames(slice(0, spec.condition_frames)),
            Scene(bodies, scene.poses[spec.condition_frames:], scene.world_size)]


def _grow(scene: Scene, spec) -> list[Scene]:
    b = scene.bodies[0]
    bodies = (dataclasses.replace(b, shape=Disc(b.shape.radius * 1.2)),) + scene.bodies[1:]
    return [scene.frames(slice(0, spec.condition_frames)),
            Scene(bodies, scene.poses[spec.condition_frames:], scene.world_size)]


def _wobble(scene: Scene, spec, contact: float) -> list[Scene]:
    poses = scene.poses.copy()
    k = np.arange(scene.num_frames)
    pre = (k >= spec.condition_frames) & (k * spec.frame_interval < contact)
    poses[pre, :, 1] += np.where(k[pre] % 2 == 0, 0.3, -0.3)[:, None]
    return [dataclasses.replace(scene, poses=poses)]


def _videos(reader: SplitReader, plant):
    spec = reader.spec
    for row in reader.rows():
        scene = row_scene(row)
        parts = plant(scene, spec, float(row["contact_time"])) if plant is _wobble else (
            plant(scene, spec) if plant else [scene])
        video = np.concatenate([render(p, reader.plan.resolution) for p in parts])
        video[: spec.condition_frames] = reader.video(row)[: spec.condition_frames]  # the test's own
        yield row["sample_id"], video


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    out = {}
    for task in ("uniform", "collision"):
        folder = root / task
        generate(make_plan(get_task(task), "id-eval", limit=N), folder, progress=False)
        out[task] = folder
    return out


def _overall(tmp_path, split_dir, name, plant):
    reader = SplitReader(split_dir)
    sub = tmp_path / name
    write_submission(sub, submission_meta(reader.manifest, name), _videos(reader, plant))
    return score(sub, split_dir, METRICS, progress=False).results["summary"]["overall"]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["uniform", "collision"])
def test_vanish_colour_switch_and_growth_are_flagged(task, splits, tmp_path):
    truth = _overall(tmp_path, splits[task], "truth", None)
    assert truth["untrackable"]["count"] == 0 and truth["colour_kept"]["mean"] == 1.0
    vanish = _overall(tmp_path, splits[task], "vanish", _vanish)
    from phybench.world.laws import fully_in_view

    rows = list(SplitReader(splits[task]).rows())
    seen_late = sum(bool(fully_in_view(r["positions"], r["radii"], 10.0)[20:, 0].any()) for r in rows)
    assert seen_late >= 2
    # every video whose ball should still be seen after frame 20 says which ball is lost, and where
    assert vanish["untrackable"]["count"] == seen_late
    assert vanish["colour_kept"]["mean"] < truth["colour_kept"]["mean"]  # the lost frames are not "kept"
    blue = _overall(tmp_path, splits[task], "blue", _recolour)
    assert blue["colour_kept"]["mean"] <= 0.1 * truth["colour_kept"]["mean"]
    grown = _overall(tmp_path, splits[task], "grown", _grow)
    assert grown["size_error"]["mean"] >= 10 * truth["size_error"]["mean"]
    assert grown["size_error"]["mean"] > 0.1 > truth["size_error"]["mean"]


@pytest.mark.slow
def test_pre_contact_wobble_moves_the_trajectory_error(splits, tmp_path):
    truth = _overall(tmp_path, splits["collision"], "truth", None)
    wobble = _overall(tmp_path, splits["collision"], "wobble", _wobble)
    # the paper's velocity error scores post-contact pairs only: it does not see the wobble
    assert wobble["velocity_error"]["mean"] == pytest.approx(truth["velocity_error"]["mean"], rel=0.5)
    assert wobble["trajectory_error"]["mean"] >= 10 * truth["trajectory_error"]["mean"]


def _faster(scene: Scene, spec) -> list[Scene]:
    poses = scene.poses.copy()
    poses[:, :, :2] = poses[:1, :, :2] + 1.05 * (poses[:, :, :2] - poses[:1, :, :2])
    return [dataclasses.replace(scene, poses=poses)]


@pytest.mark.slow
def test_losing_a_ball_on_the_hardest_videos_never_improves_the_primary_column(splits, tmp_path):
    """The leaderboard ranks by velocity_error_penalised: a lost ball counts as the worst error."""
    reader = SplitReader(splits["uniform"])
    sub = tmp_path / "fast"
    write_submission(sub, submission_meta(reader.manifest, "fast"), _videos(reader, _faster))
    fast = score(sub, splits["uniform"], METRICS, progress=False)
    trackable = [d for d in fast.details if not d["untrackable"]]
    assert len(trackable) >= 4
    hardest = {d["sample_id"] for d in sorted(trackable, key=lambda d: -d["velocity_error"])[:2]}

    def cheat(scene, spec):
        return _vanish(scene, spec)

    def videos():
        for (sid, good), (_, lost) in zip(_videos(reader, _faster), _videos(reader, cheat)):
            yield sid, lost if sid in hardest else good

    sub2 = tmp_path / "fast-but-lost"
    write_submission(sub2, submission_meta(reader.manifest, "fast-but-lost"), videos())
    honest = fast.results["summary"]["overall"]
    lost = score(sub2, splits["uniform"], METRICS, progress=False).results["summary"]["overall"]
    assert lost["untrackable"]["count"] == honest["untrackable"]["count"] + 2
    # the paper's mean over trackable videos rewards the cheat; the primary column does not
    assert lost["velocity_error"]["mean"] < honest["velocity_error"]["mean"]
    assert lost["velocity_error_penalised"]["mean"] > honest["velocity_error_penalised"]["mean"]
    truth = _overall(tmp_path, splits["uniform"], "truth", None)
    vanish = _overall(tmp_path, splits["uniform"], "vanish", _vanish)
    assert vanish["velocity_error_penalised"]["mean"] > 100 * truth["velocity_error_penalised"]["mean"]


def test_swapped_condition_frames_are_reported(splits, tmp_path):
    reader = SplitReader(splits["uniform"])

    def swapped():
        for sid, video in _videos(reader, None):
            yield sid, video[..., ::-1].copy()  # BGR: every frame, condition frames included

    sub = tmp_path / "bgr"
    write_submission(sub, submission_meta(reader.manifest, "bgr"), swapped())
    out = score(sub, splits["uniform"], METRICS, progress=False)
    assert any("condition frames that differ from the split's" in w and f"{N} video(s)" in w for w in out.warnings)
    assert any("condition frames" in w for w in out.results["warnings"])

"""Task families are plug-ins: a new one is one file, and nothing downstream names a task.

The throwaway family below (a blue square sliding at constant speed, 8 frames at 32 px,
with its own split names) is defined here and registered only inside the tests that use
it: it is generated, verified, scored and shown on a leaderboard page without any change
to phybench.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.data.verify import verify
from phybench.submission import submission_meta, write_submission
from phybench.tasks import FAMILIES, TASKS, Placement, TaskFamily, family_of, temporary_task
from phybench.tasks.sampling import closed_form, make_sample, simulate_sample
from phybench.tasks.spec import CategoricalDof, Dof, OODLevel, SimulatorSettings, SplitDecl, TaskSpec, TrainingSet
from phybench.world.scene import BLUE, Body, Rect, Scene

ROOT = Path(__file__).resolve().parent.parent


class SlidingSquare(TaskFamily):
    """A blue square slides to the right at constant speed (test-only)."""

    name = "test-sliding-square"
    metrics = ("velocity_error", "position_error", "ssim", "psnr")
    plot_dof = "velocity"
    object_reader = "centroids"  # the exact-disc estimator does not apply to squares
    stores_bodies = True

    def place(self, spec, params, u):
        half, v = params["half_side"], params["velocity"]
        L, T, dt = spec.world_size, spec.frames, spec.frame_interval
        reach = half * math.sqrt(2)  # bounding radius
        x0 = reach + u[0] * (L - 2 * reach - v * dt * (T - 1))
        y0 = reach + u[1] * (L - 2 * reach)
        body = Body(Rect(2 * half, 2 * half), BLUE, name="blue square", attrs=(("shape", params["shape"]),))
        initial = Scene((body,), np.array([[[x0, y0, 0.0]]]), velocities=np.array([[[v, 0.0]]]))
        return Placement(initial, T)

    def closed_form(self, spec, initial):
        t = np.arange(spec.frames) * spec.frame_interval
        pos = initial.positions[0, 0] + initial.velocities[0, 0] * t[:, None]
        return pos[:, None], np.repeat(initial.velocities[0][None], spec.frames, axis=0)


SPEC = TaskSpec(
    name="test-sliding-square",
    version=1,
    scenario="test-sliding-square",
    description="A blue square slides to the right (test-only task).",
    dofs=(
        Dof("half_side", "world units", (0.6, 1.0), ((0.4, 0.5),)),
        Dof("velocity", "world units / s", (1.0, 3.0), ((3.5, 4.5),)),
    ),
    ood_levels=(OODLevel("v", ("velocity",), 4),),
    training_sets=(TrainingSet("train-tiny", (4, 6)),),
    id_eval_size=4,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    frames=8,
    resolution=32,
    resolutions=(32,),
    condition_frames=2,
    declared_splits=(
        SplitDecl("train-tiny", "train", 24, "grid"),
        SplitDecl("near", "eval", 4, "grid-midpoints", description="between the training points"),
        SplitDecl("far", "eval", 4, "ood-levels", description="faster than any training square"),
    ),
    categorical=(CategoricalDof("shape", ("square",), "the body's shape"),),
)


@pytest.fixture
def square_task():
    with temporary_task(SPEC, SlidingSquare) as spec:
        yield spec
    assert SPEC.name not in TASKS and SlidingSquare.name not in FAMILIES  # nothing leaks


def test_temporary_registration_does_not_leak():
    assert SPEC.name not in TASKS
    with temporary_task(SPEC, SlidingSquare):
        assert family_of(TASKS.get(SPEC.name)).object_reader == "centroids"
    assert SPEC.name not in TASKS


def test_square_family_follows_its_law(square_task):
    for split in square_task.split_names:
        sample = make_sample(square_task, split, 1)
        scene = simulate_sample(square_task, sample)
        pos, vel = closed_form(square_task, sample)
        assert np.abs(scene.positions - pos).max() < 1e-6
        assert np.abs(scene.velocities - vel).max() < 1e-6
        assert np.abs(scene.angles).max() == 0.0
        assert sample.params["shape"] == "square"


def test_square_family_generates_verifies_scores_and_shows(square_task, tmp_path):
    from phybench.leaderboard import build
    from phybench.scoring.run.results import results_bytes
    from phybench.scoring.run.score import score

    results = tmp_path / "results"
    for split in square_task.eval_splits:
        folder = tmp_path / split
        generate(make_plan(square_task, split), folder)
        report = verify(folder, regenerate=2)
        assert report.ok, report.problems
        reader = SplitReader(folder)
        rows = list(reader.rows())
        assert row_scene(rows[0]).bodies[0].attrs == (("shape", "square"),)  # bodies survive storage

        def videos(shift: float):
            for row in rows:
                video = reader.video(row)
                if shift:  # the square moves `shift` px further each generated frame
                    scene = row_scene(row)
                    scene.poses[square_task.condition_frames:, 0, 0] += shift * 10 / 32 * np.arange(
                        1, square_task.frames - square_task.condition_frames + 1)
                    from phybench.world.render import render

                    video = render(scene, 32)
                yield row["sample_id"], video

        for name, shift in (("ground-truth", 0.0), ("too-fast", 0.5)):
            sub = tmp_path / f"sub-{split}-{name}"
            write_submission(sub, submission_meta(reader.manifest, name), videos(shift))
            out = score(sub, folder, ("velocity_error", "ssim", "psnr"), progress=False)
            assert out.results["summary"]["overall"]["untrackable"]["count"] == 0
            (results / f"{split}-{name}.json").parent.mkdir(exist_ok=True)
            (results / f"{split}-{name}.json").write_bytes(results_bytes(out.results))
        truth = json.loads((results / f"{split}-ground-truth.json").read_text())["summary"]["overall"]
        fast = json.loads((results / f"{split}-too-fast.json").read_text())["summary"]["overall"]
        # Coverage centroids of a 4-6 px square at 32 px: a floor of a few hundredths of a
        # unit/s; a square 0.5 px/frame too fast is off by 1.56 units/s.
        assert truth["velocity_error"]["mean"] < 0.05
        assert fast["velocity_error"]["mean"] > 1.0 > 10 * truth["velocity_error"]["mean"]

    site = tmp_path / "site"
    report = build(results, site)
    assert report.ok, report.refused
    page = (site / "index.html").read_text()
    assert "test-sliding-square" in page
    data = json.loads((site / "leaderboard.json").read_text())
    board = next(b for b in data["boards"] if b["task"] == "test-sliding-square")
    shown = {split for row in board["rows"] for split in row["cell_splits"].values()}
    assert shown == {"near", "far"}  # every evaluation split the spec declares
    assert {row["model"] for row in board["rows"]} == {"ground-truth", "too-fast"}


def test_nothing_downstream_names_a_task():
    """Task and family names appear only in the family modules that register them."""
    own = {f"phybench/tasks/{n}.py" for n in ("uniform", "parabola", "collision")}
    pattern = re.compile(r'"(collision|parabola|uniform)"|scenario ==')
    offenders = []
    for folder in ("phybench", "baselines"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in own:
                continue
            for k, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{rel}:{k}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_readers_of_untrusted_input_do_not_import_box2d():
    code = ("import sys, phybench.scoring.run.score, phybench.leaderboard, phybench.submission.format, "
            "phybench.submission.validation, phybench.scoring.physics.parse; "
            "assert 'Box2D' not in sys.modules, 'Box2D imported'")
    subprocess.run([sys.executable, "-c", code], check=True)

"""The family checker (`phybench tasks check`): every registered family passes it, the docs'
example family runs exactly as printed and passes it, and its old version (a square that
leaves the view in frames its rows claim) is refused by the checker, by `generate` and by
`verify`."""
from __future__ import annotations

import dataclasses
import math
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from phybench import registry
from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitError, make_plan
from phybench.data.verify import verify
from phybench.tasks import FAMILIES, TASKS, Placement, TaskFamily, temporary_task
from phybench.tasks.check import (
    check_deterministic,
    check_spec_hash,
    check_spec_hashes_elsewhere,
    check_task,
    tasks_named,
)
from phybench.tasks.spec import CategoricalDof, Dof, OODLevel, SimulatorSettings, SplitDecl, TaskSpec, TrainingSet
from phybench.world.scene import BLUE, Body, Rect, Scene

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "adding-a-task.md"


# ------------------------------------------------------------------ every registered family
@pytest.mark.parametrize("family", list(FAMILIES))  # the registry: built-ins, probes and plug-ins
def test_every_registered_family_passes_the_checker(family):
    specs = [s for _, s in TASKS.items() if s.scenario == family]
    assert specs, f"family {family!r} registers no task"
    for spec in specs:
        report = check_task(spec, per_split=3)
        assert report.samples >= 3 * len(spec.split_names) - 2
        assert report.ok, "\n".join(str(f) for f in report.findings)


def test_spec_hashes_are_the_same_in_a_fresh_interpreter():
    specs = [s for _, s in TASKS.items()]
    findings, unknown = check_spec_hashes_elsewhere(specs)
    assert findings == [] and unknown == []


# ------------------------------------------------------------------ the docs' example, as printed
def _printed_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1 and blocks[0].startswith("# my_families/sliding_square.py")
    return blocks[0]


def _printed_commands() -> list[list[str]]:
    block = re.search(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("phybench ")]


@pytest.fixture
def docs_family(tmp_path, monkeypatch):
    """The docs' module, written as printed into a package folder and imported as a plug-in is."""
    package = tmp_path / "pkg" / "my_families"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sliding_square.py").write_text(_printed_code())
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    saved = registry.snapshot_registries()
    try:
        __import__("my_families.sliding_square")
        yield TASKS.get("sliding-square")
    finally:
        registry.restore(saved)
        for name in ("my_families.sliding_square", "my_families"):
            sys.modules.pop(name, None)
    assert "sliding-square" not in TASKS


def test_docs_example_passes_the_checker(docs_family):
    report = check_task(docs_family, per_split=16)
    assert report.ok, "\n".join(str(f) for f in report.findings)
    assert report.samples == 48
    assert [s.name for s in tasks_named("sliding-square")] == ["sliding-square"]


def test_docs_example_commands_run_as_printed(docs_family, tmp_path, monkeypatch, capsys):
    """The printed commands up to `verify` (baseline, score and leaderboard: tests/test_families.py)."""
    monkeypatch.chdir(tmp_path)
    commands = _printed_commands()
    assert [c[:2] for c in commands[:4]] == [["tasks", "show"], ["tasks", "check"], ["generate", "sliding-square"],
                                             ["verify", "data/square-far"]]
    for argv in commands[:4]:
        assert main(argv + (["--quiet"] if argv[0] in ("generate", "verify") else [])) == 0, argv
    out = capsys.readouterr().out
    assert "OK" in out and "64 samples checked" in out


# ------------------------------------------------------------------ the old example, kept broken
class OldSlidingSquare(TaskFamily):
    """docs/adding-a-task.md's square before the checker: it claims all T frames in view."""

    name = "old-sliding-square"
    metrics = ("velocity_error", "position_error", "ssim", "psnr", "lpips", "fvd")
    plot_dof = "velocity"
    object_reader = "centroids"
    stores_bodies = True

    def place(self, spec, params, u):
        half, v = params["half_side"], params["velocity"]
        L, T, dt = spec.world_size, spec.frames, spec.frame_interval
        reach = half * math.sqrt(2)  # world units: in view at any angle
        x0 = reach + u[0] * (L - 2 * reach - v * dt * (T - 1))
        y0 = reach + u[1] * (L - 2 * reach)
        body = Body(Rect(2 * half, 2 * half), BLUE, name="blue square",
                    attrs=(("shape", params["shape"]),))
        initial = Scene((body,), np.array([[[x0, y0, 0.0]]]), velocities=np.array([[[v, 0.0]]]))
        return Placement(initial, frames_in_view=T)

    def closed_form(self, spec, initial):
        t = np.arange(spec.frames) * spec.frame_interval  # s
        pos = initial.positions[0, 0] + initial.velocities[0, 0] * t[:, None]
        return pos[:, None], np.repeat(initial.velocities[0][None], spec.frames, axis=0)


OLD = TaskSpec(
    name="old-sliding-square", version=1, scenario="old-sliding-square",
    description="A blue square slides to the right at constant speed.",
    dofs=(Dof("half_side", "world units", (0.6, 1.0), ((0.4, 0.5),)),
          Dof("velocity", "world units / s", (1.0, 3.0), ((3.5, 4.5),))),
    ood_levels=(OODLevel("v", ("velocity",), 400),),
    training_sets=(TrainingSet("train-small", (40, 60)),),
    id_eval_size=400,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    declared_splits=(
        SplitDecl("train-small", "train", 2400, "grid"),
        SplitDecl("near", "eval", 400, "grid-midpoints", description="between the training points"),
        SplitDecl("far", "eval", 400, "ood-levels", description="faster than any training square"),
    ),
    categorical=(CategoricalDof("shape", ("square",)),),
)


@pytest.fixture
def old_task():
    with temporary_task(OLD, OldSlidingSquare) as spec:
        yield spec


def test_old_docs_example_is_refused_naming_frames_in_view(old_task, capsys):
    report = check_task(old_task, per_split=8, splits=["far"])
    assert len(report.findings) == 8 and {f.check for f in report.findings} == {"frames_in_view"}
    first = str(report.findings[0])
    assert first.startswith("old-sliding-square/far/0000000: frames_in_view: the row claims frames_in_view = 32")
    assert "blue square" in first and "outside the view" in first
    assert main(["tasks", "check", "old-sliding-square", "--samples", "2"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "frames_in_view = 32" in out


def test_generate_refuses_the_old_example_and_writes_nothing(old_task, tmp_path):
    out = tmp_path / "data" / "square-far"
    with pytest.raises(SplitError, match=r"8 of the 8 rows .*old-sliding-square/far/0000000: frames_in_view") as err:
        generate(make_plan(old_task, "far", limit=8), out, progress=False)
    assert err.value.code == "family_check"
    assert not (tmp_path / "data").exists()  # not even the folders it made


def test_verify_reports_rows_that_break_their_promise(old_task, tmp_path, monkeypatch):
    import phybench.data.split as split

    with monkeypatch.context() as m:  # a split written before the checker existed
        m.setattr(split, "refuse_failing_rows", lambda *args: None)
        generate(make_plan(old_task, "far", limit=4), tmp_path / "far", progress=False)
    report = verify(tmp_path / "far")
    assert [p.code for p in report.problems] == ["family_check"] * 4
    assert report.problems[0].sample_id == "old-sliding-square/far/0000000"
    assert "frames_in_view = 32" in report.problems[0].message


# ------------------------------------------------------------------ the other checks can fail
def test_closed_form_and_determinism_findings(old_task):
    class WrongLaw(OldSlidingSquare):
        name = "wrong-law"

        def place(self, spec, params, u):
            placed = super().place(spec, params, u)
            return dataclasses.replace(placed, frames_in_view=0)

        def closed_form(self, spec, initial):
            pos, vel = super().closed_form(spec, initial)
            return pos * 1.01, vel

    class Restless(WrongLaw):
        name = "restless"

        def place(self, spec, params, u):
            return super().place(spec, params, np.random.default_rng().random(len(u)))  # not its own randomness

        def closed_form(self, spec, initial):
            return OldSlidingSquare.closed_form(self, spec, initial)

    with temporary_task(dataclasses.replace(OLD, name="wrong-law", scenario="wrong-law"), WrongLaw) as spec:
        report = check_task(spec, per_split=2, splits=["near"])
        assert {f.check for f in report.findings} == {"closed_form"}
        assert "differ from the family's closed form" in report.findings[0].message
    with temporary_task(dataclasses.replace(OLD, name="restless", scenario="restless"), Restless) as spec:
        _, found = check_deterministic(spec, "near", 0)
        assert [f.check for f in found] == ["deterministic"] and "initial" in found[0].message


def test_a_spec_that_is_not_plain_json_has_no_stable_hash():
    spec = dataclasses.replace(OLD, family_params=(("colours", {"red", "blue"}),))
    found = check_spec_hash(spec)
    assert [f.check for f in found] == ["spec_hash"] and "not plain JSON" in found[0].message
    assert check_spec_hash(OLD) == []


def test_generate_checks_every_disc_row_at_once(tmp_path):
    """Rows of plain discs are checked a shard at a time; a lying row is still named."""
    from phybench.tasks import get_task
    from phybench.tasks.uniform import UniformFamily

    class Lying(UniformFamily):
        name = "lying-uniform"

        def place(self, spec, params, u):
            placed = super().place(spec, params, u)
            return dataclasses.replace(placed, frames_in_view=spec.frames if params["velocity"] > 3.0 else placed.frames_in_view)

    spec = dataclasses.replace(get_task("uniform"), name="lying-uniform", scenario="lying-uniform")
    with temporary_task(spec, Lying):
        with pytest.raises(SplitError, match=r"\d of the 12 rows .*lying-uniform/ood-eval/\d+: frames_in_view: "
                                             r"the row claims frames_in_view = 32, but only \d+ of 32") as err:
            generate(make_plan(spec, "ood-eval", limit=12), tmp_path / "t", progress=False)
        assert "outside the view" in str(err.value) and not (tmp_path / "t").exists()

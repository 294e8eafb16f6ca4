"""Adding a probe is one file: a throwaway probe module, written here, is generated, analysed and on the page.

The module registers everything itself (its family with ``probe = "toy"``, its task, its
analysis, summary, text and page section); nothing else in phybench is told about it.
"""
from __future__ import annotations

import importlib
import json
import sys

import pytest

from phybench import probes
from phybench.cli import main
from phybench.tasks import FAMILIES, TASKS

PROBE_MODULE = '''
"""A throwaway probe: one red ball moves right; did the generated ball keep moving right?"""
import numpy as np

from phybench.probes.page import esc
from phybench.probes.reading import read_body, share, split_videos
from phybench.probes.registry import Probe, register_probe
from phybench.tasks.family import Placement, TaskFamily, register_family, register_task
from phybench.tasks.spec import Dof, OODLevel, SimulatorSettings, SplitDecl, TaskSpec, TrainingSet
from phybench.world.scene import RED, Body, Disc, Scene


@register_family
class ToyFamily(TaskFamily):
    name = "test-toy-probe"
    probe = "toy"
    metrics = ("velocity_error", "ssim", "psnr")
    object_reader = "centroids"
    stores_bodies = True

    def place(self, spec, params, u):
        r, v = params["radius"], params["velocity"]
        L, T, dt = spec.world_size, spec.frames, spec.frame_interval
        x0 = r + 0.1 + u[0] * (L - 2 * r - 0.2 - v * dt * (T - 1))
        y0 = r + 0.1 + u[1] * (L - 2 * r - 0.2)
        initial = Scene((Body(Disc(r), RED, name="red ball"),), np.array([[[x0, y0, 0.0]]]),
                        velocities=np.array([[[v, 0.0]]]))
        return Placement(initial, T)

    def closed_form(self, spec, initial):
        t = np.arange(spec.frames) * spec.frame_interval
        pos = initial.positions[0, 0, :2] + initial.velocities[0, 0] * t[:, None]
        return pos[:, None], np.repeat(initial.velocities[0][None], spec.frames, axis=0)


SPEC = register_task(TaskSpec(
    name="test-toy-probe", version=1, scenario="test-toy-probe", description="A red ball moves right (test-only).",
    dofs=(Dof("radius", "world units", (0.8, 1.0), ((0.6, 0.7),)),
          Dof("velocity", "world units / s", (1.0, 3.0), ((3.5, 4.0),))),
    ood_levels=(OODLevel("v", ("velocity",), 4),),
    training_sets=(TrainingSet("train-tiny", (4, 6)),),
    id_eval_size=6,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    frames=10, resolution=32, resolutions=(32,), condition_frames=2,
    declared_splits=(SplitDecl("train-tiny", "train", 24, "grid"),
                     SplitDecl("near", "eval", 6, "grid-midpoints", description="between the training points")),
))


def analyse(reader, sub, progress, options):
    videos = []
    for row, video in split_videos(reader, sub, ["sample_id"], "toy", progress):
        reading = read_body(video, reader.spec.condition_frames, reader.spec.world_size, reader.spec.frame_interval)
        moved = reading.velocity is not None and reading.velocity > 0
        videos.append({"sample_id": row["sample_id"], "verdict": "right" if moved else "other"})
    n, k = len(videos), sum(v["verdict"] == "right" for v in videos)
    return {"videos_analysed": n, "verdicts": {"right": share(k, n), "other": share(n - k, n)}, "videos": videos}


def summarise(results):
    return {"model": results[0]["model"], "right": sum(r["analysis"]["verdicts"]["right"]["count"] for r in results),
            "n": sum(r["analysis"]["videos_analysed"] for r in results)}


def render(summary):
    return f"{summary['model']}: {summary['right']} of {summary['n']} kept moving right"


def section(summaries):
    return [f'<p class="toy-probe">{esc(m)}: {s["right"]} of {s["n"]} kept moving right</p>'
            for m, s in summaries.items()]


register_probe(Probe("toy", "a throwaway probe: does the ball keep moving right", analyse, summarise, render,
                     section=section, help="test only"))
'''


@pytest.fixture
def toy_probe(tmp_path):
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "toy_probe.py").write_text(PROBE_MODULE)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("toy_probe")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("toy_probe", None)
        for registry, name in ((probes.PROBES, "toy"), (TASKS, "test-toy-probe"), (FAMILIES, "test-toy-probe")):
            if name in registry:
                registry.unregister(name)


def test_a_probe_in_one_file_is_analysed_and_on_the_page(toy_probe, tmp_path, capsys):
    data, sub, results, site = (tmp_path / n for n in ("data", "sub", "results", "site"))
    assert main(["generate", "test-toy-probe", "--split", "near", "--out", str(data), "--quiet"]) == 0
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(sub)]) == 0
    results.mkdir()
    out = results / "toy-ground-truth.json"
    assert main(["analyze", "toy", str(sub), "--data", str(data), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["probe"] == "toy" and doc["analysis"]["verdicts"]["right"]["count"] == 6
    assert "ground-truth: 6 of 6 kept moving right" in capsys.readouterr().out
    from phybench.cli.probes import epilog

    assert "toy      (test only)" in epilog()
    assert main(["leaderboard", "build", str(results), "--out", str(site)]) == 0
    page = (site / "probes.html").read_text()
    assert '<section id="probe-toy">' in page and "a throwaway probe" in page
    assert '<p class="toy-probe">ground-truth: 6 of 6 kept moving right</p>' in page


def test_the_throwaway_probe_leaves_nothing_registered():
    assert "toy" not in probes.PROBES and "test-toy-probe" not in TASKS and "test-toy-probe" not in FAMILIES


EP_FAMILY = '''
from phybench.tasks.family import TaskFamily, register_family


@register_family
class EpFamily(TaskFamily):
    name = "test-ep-probe"
    probe = "ep"
'''
EP_ANALYSIS = '''
from phybench.probes.registry import Probe, register_probe

register_probe(Probe("ep", "an entry-point probe (test only)", lambda *a: {}, lambda r: {}, lambda s: "", help="test"))
'''


def test_a_plugin_probe_registers_its_family_and_its_analysis_on_their_layers(tmp_path):
    """A package's probe: its family through ``phybench.families`` (loaded by `phybench.tasks`),
    its analysis through ``phybench.probes`` (loaded by `phybench.probes`, above the scorer)."""
    import os
    import subprocess

    info = tmp_path / "epprobe-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: epprobe\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[phybench.families]\nep = ep_family\n\n[phybench.probes]\nep = ep_analysis\n")
    (tmp_path / "ep_family.py").write_text(EP_FAMILY)
    (tmp_path / "ep_analysis.py").write_text(EP_ANALYSIS)
    code = ("import sys\nfrom phybench.tasks import FAMILIES\n"
            "print('test-ep-probe' in FAMILIES, 'phybench.probes' in sys.modules, 'phybench.scoring' in sys.modules)\n"
            "from phybench.probes import PROBES\nprint('ep' in PROBES)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "False", "True"], (out.stdout, out.stderr)
    assert "plugin_broken" not in out.stderr, out.stderr

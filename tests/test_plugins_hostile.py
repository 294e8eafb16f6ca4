"""Family and metric plug-ins are foreign code: a broken one is skipped with one line (issue 27).

A fake distribution on PYTHONPATH declares entry points (a `*.dist-info/entry_points.txt`, as pip
writes it): one family plug-in that raises on import, one that registers a family name twice, one
metric plug-in that raises.  Every command still runs; each broken plug-in is named once, with its
code; a task the broken plug-in would have added is an unknown task (exit 2).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _fake_distribution(root: Path) -> None:
    info = root / "fakeplug-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(
        "[phybench.families]\nboom = fakeplug_boom\ntwice = fakeplug_twice\n\n"
        "[phybench.metrics]\nbad_metric = fakeplug_metric\n")
    (root / "fakeplug_boom.py").write_text("raise RuntimeError('the plug-in is broken\\non two lines')\n")
    (root / "fakeplug_twice.py").write_text(
        "from phybench.tasks.family import TaskFamily, register_family\n"
        "@register_family\nclass Again(TaskFamily):\n    name = 'uniform'\n")
    (root / "fakeplug_metric.py").write_text("import no_such_module_anywhere\n")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "phybench.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_broken_plugins_are_skipped_with_one_line_each(tmp_path: Path) -> None:
    _fake_distribution(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    out = _run(tmp_path, "tasks")
    assert out.returncode == 0, out.stderr
    assert "uniform" in out.stdout and "combinatorial" in out.stdout
    lines = [line for line in out.stderr.splitlines() if "[plugin_broken]" in line]
    assert len(lines) == 3, out.stderr
    def line(name: str) -> str:
        found = [x for x in lines if f"plug-in {name!r}" in x]
        assert len(found) == 1, lines
        return found[0]

    assert "family plug-in 'boom' (fakeplug_boom)" in line("boom")
    assert "RuntimeError: the plug-in is broken on two lines" in line("boom")
    assert "family plug-in 'twice'" in line("twice") and "already registered" in line("twice")
    assert "metric plug-in 'bad_metric'" in line("bad_metric") and "ModuleNotFoundError" in line("bad_metric")
    assert "Traceback" not in out.stderr
    unknown = _run(tmp_path, "tasks", "show", "boom-task")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == before  # nothing written


# ---------------------------------------------------------------- issue 36, item 7
def _distribution(root: Path, entry_points: str, modules: dict[str, str]) -> None:
    info = root / "hostileplug-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostileplug\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (root / f"{name}.py").write_text(text)


def test_a_plugin_that_exits_or_interrupts_at_import_is_skipped(tmp_path: Path) -> None:
    """Hostile (issue 36): a plug-in calling sys.exit(7) at import made every command exit 7
    silently.  SystemExit and KeyboardInterrupt at import are plugin_broken lines now."""
    _distribution(tmp_path, "[phybench.metrics]\nexits = hostile_exit\n\n[phybench.families]\nctrlc = hostile_ctrlc\n",
                  {"hostile_exit": "import sys\nsys.exit(7)\n", "hostile_ctrlc": "raise KeyboardInterrupt\n"})
    out = _run(tmp_path, "tasks")
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert "uniform" in out.stdout
    lines = [line for line in out.stderr.splitlines() if "[plugin_broken]" in line]
    assert len(lines) == 2, out.stderr
    assert any("metric plug-in 'exits'" in x and "SystemExit: 7" in x for x in lines), lines
    assert any("family plug-in 'ctrlc'" in x and "KeyboardInterrupt" in x for x in lines), lines
    assert "Traceback" not in out.stderr


METRIC_THEN_RAISE = """
from phybench.scoring.metrics import Metric, register_metric
register_metric(Metric("half_metric", label="Half", compute=lambda sample: 0.0))
raise RuntimeError("registered one metric, then failed")
"""
FAMILY_THEN_EXIT = """
import sys
from phybench.tasks.family import TaskFamily, register_family
@register_family
class Half(TaskFamily):
    name = "half_family"
sys.exit(3)
"""


def test_a_failing_plugins_registrations_are_rolled_back(tmp_path: Path) -> None:
    """Hostile (issue 36): a plug-in that registered a metric and then raised was reported
    skipped, but its metric stayed registered (listed twice).  Now nothing of it remains."""
    _distribution(tmp_path, "[phybench.metrics]\nhalf = hostile_half\n\n[phybench.families]\nhalffam = hostile_fam\n",
                  {"hostile_half": METRIC_THEN_RAISE, "hostile_fam": FAMILY_THEN_EXIT})
    code = ("from phybench.scoring.metrics import METRICS\nfrom phybench.tasks.family import FAMILIES\n"
            "print('half_metric' in METRICS, 'half_family' in FAMILIES, 'velocity_error' in METRICS, "
            "'uniform' in FAMILIES)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True", "True"], (out.stdout, out.stderr)
    lines = [line for line in out.stderr.splitlines() if "[plugin_broken]" in line]
    assert len(lines) == 2, out.stderr
    assert any("'half'" in x and "rolled back: metric 'half_metric'" in x for x in lines), lines
    assert any("'halffam'" in x and "rolled back: task family 'half_family'" in x for x in lines), lines

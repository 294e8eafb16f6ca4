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

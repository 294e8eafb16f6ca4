"""The CLI finds studies and plug-in baselines through entry points (`phybench.studies`,
`phybench.baselines`), never by a `phybench_baselines` module name: a fake entry point is found
and run, the package declares its own, and no module of `phybench/` names a baselines module."""
from __future__ import annotations

import ast
import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from phybench.cli import main

ROOT = Path(__file__).resolve().parent.parent

FAKE_STUDY = '''
HELP = "a fake study (test only)"


def add_arguments(p):
    p.add_argument("--n", type=int, required=True)


def run_from_args(args):
    print(f"fake study ran with n={args.n}")
    return 0
'''
FAKE_BASELINE = '''
def list_sizes():
    return "fake sizes: one"


def write_submission(args):
    if args.checkpoint is None:
        raise ValueError("fake needs --checkpoint")
    return args.out
'''


@pytest.fixture
def fake_plugins(tmp_path, monkeypatch):
    """Only the fake entry points are installed (the real ones are the package's: test below)."""
    (tmp_path / "fake_study_mod.py").write_text(FAKE_STUDY)
    (tmp_path / "fake_baseline_mod.py").write_text(FAKE_BASELINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [importlib.metadata.EntryPoint("fake", "fake_study_mod", "phybench.studies"),
           importlib.metadata.EntryPoint("fake", "fake_baseline_mod", "phybench.baselines")]
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: [e for e in eps if e.group == group])


def test_a_fake_study_entry_point_is_found_and_run(fake_plugins, capsys):
    assert main(["study", "fake", "--n", "3"]) == 0
    assert "fake study ran with n=3" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # the real studies are not entry points here: unknown
        main(["study", "scaling", "--help"])
    assert "invalid choice: 'scaling'" in capsys.readouterr().err


def test_a_fake_baseline_entry_point_is_found_and_run(fake_plugins, capsys, tmp_path):
    assert main(["baseline", "fake", "--list-sizes"]) == 0
    assert "fake sizes: one" in capsys.readouterr().out
    assert main(["baseline", "fake", "--data", "D", "--out", str(tmp_path / "sub"), "--checkpoint", "R"]) == 0
    assert f"wrote {tmp_path / 'sub'}" in capsys.readouterr().out
    assert main(["baseline", "fake", "--data", "D", "--out", "O"]) == 2
    assert "fake needs --checkpoint" in capsys.readouterr().err
    assert main(["baseline", "dit", "--list-sizes"]) == 2  # not installed as a plug-in here
    assert "installed: fake); 'dit' is not one" in capsys.readouterr().err


def test_the_package_declares_its_studies_and_baseline_with_their_interface():
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert set(eps["phybench.studies"]) == {"scaling", "modality", "findings"}
    assert set(eps["phybench.baselines"]) == {"dit"}
    for value in eps["phybench.studies"].values():
        module = importlib.import_module(value)
        assert isinstance(module.HELP, str) and callable(module.add_arguments) and callable(module.run_from_args)
    module = importlib.import_module(eps["phybench.baselines"]["dit"])
    assert callable(module.list_sizes) and callable(module.write_submission)


def baselines_named(root: Path = ROOT) -> list[str]:
    """"file:line" of each import of phybench_baselines in phybench/, and of each string that is a
    phybench_baselines module name (the module of an `import_module`): f-string prefixes too."""
    found: set[str] = set()
    for path in sorted((root / "phybench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and " " not in node.value:
                names = [node.value]
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                names = [str(node.values[0].value).split(" ")[0]]
            if any(n == "phybench_baselines" or n.startswith("phybench_baselines.") for n in names):
                found.add(f"{path.relative_to(root)}:{node.lineno}")
    return sorted(found)


def test_phybench_names_no_baselines_module(tmp_path):
    assert not baselines_named(), baselines_named()
    # the check sees what the CLI did before: a module-name string and an f-string prefix
    (tmp_path / "phybench").mkdir()
    (tmp_path / "phybench" / "m.py").write_text(
        'import importlib\nS = {"scaling": ("phybench_baselines.dit.study", "help text")}\n'
        'def f(name):\n    return importlib.import_module(f"phybench_baselines.dit.{name}")\n'
        'HELP = "trained with `python -m phybench_baselines.dit.train` (prose is fine)"\n')
    assert baselines_named(tmp_path) == ["phybench/m.py:2", "phybench/m.py:4"]


def test_with_no_entry_points_installed_the_commands_say_so(monkeypatch, capsys):
    """An install whose metadata predates the groups (an old editable install) is told to reinstall."""
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None, **kw: [])
    assert main(["study", "scaling", "--task", "uniform"]) == 2
    assert "no study is installed through the phybench.studies entry points" in capsys.readouterr().err
    assert main(["baseline", "dit", "--list-sizes"]) == 2
    assert "installed: none" in capsys.readouterr().err

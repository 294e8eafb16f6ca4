"""`.ci/mypy_allowlist.py` routes each error to the allowlist of its folder (phybench/, baselines/)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("mypy_allowlist", ROOT / ".ci" / "mypy_allowlist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_folder_has_its_own_allowlist_and_mypy_checks_both():
    import tomllib

    s = _script()
    assert s.allowlist_of("phybench/io.py: Bad  [x]").name == "mypy-allowlist.txt"
    assert s.allowlist_of("baselines/dit/runner.py: Cannot assign to a method  [method-assign]").name == \
        "mypy-allowlist-baselines.txt"
    with pytest.raises(SystemExit, match="outside"):
        s.allowlist_of("tests/test_x.py: Bad  [x]")
    assert all(path.exists() for path in s.ALLOWLISTS.values())
    files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert set(files) == set(s.ALLOWLISTS)

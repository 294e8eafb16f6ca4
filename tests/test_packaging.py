"""The wheel: ships the data cards, the leaderboard template and the schemas; no top-level `baselines`."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "phybench", "baselines", "data_cards")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources, so that the test writes nothing into the checkout."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, cwd=src, env={**os.environ, "PIP_CONSTRAINT": ""})
    (found,) = out.glob("phybench-*.whl")
    return found


@pytest.mark.slow
def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names}
    assert "baselines" not in tops and "phybench_baselines" in tops  # no clash with OpenAI's `baselines`
    cards = [p for p in (ROOT / "data_cards").iterdir() if p.is_file()]
    assert {"card_meta.yaml", "dataset_card.md.jinja"} <= {p.name for p in cards}
    for card in cards:
        assert f"phybench/data_cards/{card.name}" in names, card.name
    assert "phybench/leaderboard/template/leaderboard.js" in names
    assert "phybench/submission/schemas/submission.schema.json" in names
    # pyproject lists the packages explicitly: a new subpackage missing from that list fails here
    for folder, package in (("phybench", "phybench"), ("baselines", "phybench_baselines")):
        for module in (ROOT / folder).rglob("*.py"):
            member = f"{package}/{module.relative_to(ROOT / folder).as_posix()}"
            assert member in names, f"{module.relative_to(ROOT)} is not in the wheel (pyproject.toml packages)"


@pytest.mark.slow
def test_installed_wheel_finds_its_cards(wheel, tmp_path):
    """From the unpacked wheel (not the checkout), the card template resolves inside the package."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import phybench.data.card as h; "
            "folder = h._card_dir(None); assert str(folder).startswith(sys.argv[1]), folder; "
            "import phybench_baselines.dit.config as c; assert c.__file__.startswith(sys.argv[1])")
    subprocess.run([sys.executable, "-c", code, str(site)], check=True, cwd=tmp_path)


def test_the_version_is_one_number():
    """pyproject.toml's version is the one `phybench._version` stamps into what phybench writes."""
    import re

    import phybench
    from phybench._version import __version__

    declared = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared and declared.group(1) == __version__ == phybench.__version__

"""The wheel: ships the data cards, the leaderboard template and the schemas; no top-level `baselines`."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, cwd=build, env={**__import__("os").environ, "PIP_CONSTRAINT": ""})
    (found,) = out.glob("phybench-*.whl")
    return found


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert "baselines" not in tops and "phybench_baselines" in tops  # no clash with OpenAI's `baselines`
    for card in (ROOT / "data_cards").iterdir():
        assert f"phybench/data/cards/{card.name}" in names, card.name
    assert "phybench/leaderboard/template/leaderboard.js" in names
    assert "phybench/scoring/schemas/submission.schema.json" in names
    assert "phybench_baselines/dit/train.py" in names


def test_installed_wheel_finds_its_cards(wheel, tmp_path):
    """From the unpacked wheel (not the checkout), the card template resolves inside the package."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import phybench.data.hub as h; "
            "folder = h._card_dir(None); assert str(folder).startswith(sys.argv[1]), folder; "
            "import phybench_baselines.dit.config as c; assert c.__file__.startswith(sys.argv[1])")
    subprocess.run([sys.executable, "-c", code, str(site)], check=True, cwd=tmp_path)

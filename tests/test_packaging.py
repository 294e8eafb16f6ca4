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
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "phybench", "baselines", "data_cards", "leaderboard/keys")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources, so that the test writes nothing into the checkout."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # parents too
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
    assert "phybench/leaderboard/site/template/leaderboard.js" in names
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


def test_the_checkout_reads_its_one_keyring():
    """leaderboard/keys/ is the keyring's one copy: a checkout reads it there, a wheel ships it as
    the package data phybench/leaderboard/keys/ (pyproject.toml's package-dir), no second copy."""
    from phybench.leaderboard.verify.signing import REPO_KEYS

    assert REPO_KEYS == ROOT / "leaderboard" / "keys" and list(REPO_KEYS.glob("*.json"))
    assert not (ROOT / "phybench" / "leaderboard" / "keys").exists()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"phybench.leaderboard.keys" = "leaderboard/keys"' in text and '"phybench.leaderboard.keys" = ["*.json"' in text


@pytest.mark.slow
def test_a_wheel_install_verifies_a_shipped_signed_record(wheel, tmp_path):
    """Issue 50 item 6: installed from the wheel into a scratch venv (not the checkout), the board's
    keyring is found and a shipped signed record verifies by it (at 68724c0 the keyring was the
    checkout's leaderboard/keys/ only: empty in a wheel install, every signed record refused)."""
    import sysconfig
    import venv

    names = set(zipfile.ZipFile(wheel).namelist())
    keys = sorted(p.name for p in (ROOT / "leaderboard" / "keys").glob("*.json"))
    assert keys and all(f"phybench/leaderboard/keys/{k}" in names for k in keys)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, env={**os.environ, "PIP_CONSTRAINT": ""})
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # the dependencies (numpy, cryptography, ...) from this interpreter's site-packages, added as a
    # plain path: its .pth files (the editable install of the checkout) are not run there
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    shipped = ROOT / "leaderboard" / "results" / "fundamental" / "lite"
    results = tmp_path / "results"
    results.mkdir()
    name = "uniform-id-eval-nearest-neighbour"
    for suffix in (".json", ".samples.json", ".verified.json"):
        shutil.copy2(shipped / f"{name}{suffix}", results / f"{name}{suffix}")
    code = ("import sys, phybench\n"
            "from phybench.leaderboard.verify.signing import REPO_KEYS, load_keyring\n"
            "from phybench.leaderboard.verify.records import read_record\n"
            "assert phybench.__file__.startswith(sys.argv[2]), phybench.__file__\n"
            "assert str(REPO_KEYS).startswith(sys.argv[2]), REPO_KEYS\n"
            "record = read_record(sys.argv[1], load_keyring())\n"
            "assert record is not None and record.status == 'verified', record\n"
            "print('verified', REPO_KEYS)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PHYBENCH_BOARD_KEYS")}
    done = subprocess.run([str(python), "-c", code, str(results / f"{name}.json"), str(env_dir)], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr[-3000:]

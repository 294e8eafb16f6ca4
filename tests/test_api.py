"""The public API: `phybench.__all__` names every entry point, each resolves, and none is imported early."""
from __future__ import annotations

import subprocess
import sys

import phybench


def test_every_public_name_resolves():
    assert "score" in phybench.__all__ and "write_submission" in phybench.__all__
    for name in phybench.__all__:
        assert getattr(phybench, name) is not None, name
    assert phybench.validate.__module__ == "phybench.submission.validation"
    assert phybench.build_leaderboard.__module__ == "phybench.leaderboard"


def test_import_phybench_is_cheap():
    code = "import sys, phybench; print(sorted(m for m in sys.modules if m.startswith(('phybench', 'numpy', 'torch'))))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "['phybench', 'phybench._version']"  # the version module: one constant


def test_the_old_shims_are_gone():
    import importlib.util

    for name in ("phybench.score", "phybench.split", "phybench.hub", "phybench.baselines"):
        assert importlib.util.find_spec(name) is None, name

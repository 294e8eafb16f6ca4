import json
import os
from pathlib import Path

import pytest

# One thread for torch's and the BLAS's thread pools in every test process and in the CLI
# processes the tests start (they inherit the environment).  On shared cores a second OpenMP
# thread spins at every barrier while its sibling is descheduled, charged as CPU for no work:
# the random-weight framear test took 31.6 CPU-s on torch's default two threads at load 14 and
# 2.3 CPU-s on one (issue 52).  Tests that compare thread counts set these variables themselves
# for the processes they start (tests/test_fvd_cache.py, tests/test_image_metrics.py); a value
# already in the environment is kept.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

GOLDEN = Path(__file__).parent / "golden.json"


@pytest.fixture(scope="session")
def golden() -> dict:
    """Values that must never drift: spec hashes, split hashes, a few trajectories."""
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="session")
def fetched() -> dict:
    """The pinned metric weights (LPIPS's AlexNet, FVD's I3D), fetched once into the default cache.

    The one fixture that fetches weights: every test that computes LPIPS or FVD requests it,
    so it passes run alone on an empty cache (`phybench weights fetch` is idempotent: a no-op
    when the files verify, phybench/scoring/perceptual/weights.py)."""
    from phybench.scoring.perceptual import weights

    return weights.fetch(progress=False)


def golden_keys(section: str) -> list[str]:
    """The keys of one section of golden.json, to parametrize over: one test per pinned value."""
    return list(json.loads(GOLDEN.read_text())[section])


# ------------------------------------------------------------------ no silent shrinking
def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _skipped(config) -> list:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter is not None else []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Under CI a skipped test fails the run: the suite must not shrink without anyone noticing."""
    skipped = _skipped(config)
    if _ci() and skipped:
        terminalreporter.section("skipped tests fail a CI run (CI is set)", red=True)
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            terminalreporter.line(f"{report.nodeid}: {reason}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _ci() and _skipped(session.config) and session.exitstatus == 0:
        session.exitstatus = 1

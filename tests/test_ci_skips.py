"""Under CI a skipped test fails the run (tests/conftest.py), so the suite cannot shrink silently."""
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def _run(pytester, monkeypatch, ci: str | None):
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile("import pytest\ndef test_a():\n    pytest.skip('no thing')\ndef test_b():\n    pass\n")
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider")


@pytest.mark.slow
def test_a_skip_fails_a_ci_run(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "true")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*skipped tests fail a CI run*", "*test_a: Skipped: no thing*"])


@pytest.mark.slow
def test_a_skip_passes_locally(pytester, monkeypatch):
    assert _run(pytester, monkeypatch, None).ret == 0

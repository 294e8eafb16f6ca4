"""A 5,000-digit integer anywhere in a results folder, or in a signed record, is refused with a
code by `leaderboard build` and `leaderboard verify` (issue 51, item 2): at 68724c0 both crashed
with a traceback (Python's 4,300-digit int guard raises a plain ValueError that
`probes.is_probe_file` and the record reader did not catch).  Nothing here imports
`phybench.jsonsafe`, so the file runs against the old tree too.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LITE = ROOT / "leaderboard" / "results" / "fundamental" / "lite"
ID_FILE = "uniform-id-eval-nearest-neighbour.json"
BIG = "7" * 5000


def _folder(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    for name in (ID_FILE, ID_FILE.replace(".json", ".samples.json"), ID_FILE.replace(".json", ".verified.json")):
        shutil.copy(LITE / name, results / name)
    return results


def test_a_huge_integer_in_any_json_is_refused_by_build_not_a_traceback(tmp_path):
    """68724c0: ValueError (4,300-digit guard) out of `probes.is_probe_file` -> traceback."""
    from phybench.leaderboard import LeaderboardError, build

    results = _folder(tmp_path)
    (results / "junk.json").write_text('{"x": ' + BIG + "}")
    with pytest.raises(LeaderboardError) as err:
        build(results, tmp_path / "site")
    codes = {r.file: r.code for r in err.value.refused}
    assert codes == {"junk.json": "results_format"}
    assert not (tmp_path / "site").exists()


def test_a_huge_integer_in_a_signed_record_is_malformed_under_require_verified(tmp_path):
    from phybench.leaderboard import LeaderboardError, build

    results = _folder(tmp_path)
    record = results / ID_FILE.replace(".json", ".verified.json")
    record.write_text(record.read_text().replace('"extra": {', '"extra": {"big": ' + BIG + ",", 1))
    with pytest.raises(LeaderboardError) as err:
        build(results, tmp_path / "site", require_verified=True)
    assert {r.file: r.code for r in err.value.refused} == {ID_FILE: "verify-malformed"}


def test_leaderboard_verify_refuses_a_huge_integer_with_a_code(tmp_path, capsys):
    from phybench.cli import main

    results = tmp_path / "results"
    results.mkdir()
    (tmp_path / "subs").mkdir()
    (tmp_path / "splits").mkdir()
    (results / "junk.json").write_text('{"x": ' + BIG + "}")
    code = main(["leaderboard", "verify", str(results), "--submissions", str(tmp_path / "subs"),
                 "--splits", str(tmp_path / "splits")])
    err = capsys.readouterr().err
    assert code == 2 and "error [verify-unreadable]" in err and "json_big_number" in err

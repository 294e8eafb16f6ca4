"""The small trust items of issue 51 (point 6): `leaderboard verify --by` with a newline and
`--date` in the future are usage errors (a record `build` would call malformed, or one dated
2999, was written at 68724c0); a sync on a read-only results folder is a coded one-line error;
`leaderboard pull --revision` takes only main or a commit of main (refs/pr/N pulled an
unmerged row)."""
from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from phybench.cli import main

sys.path.insert(0, str(Path(__file__).parent))


def verify(capsys, tmp_path: Path, *extra: str) -> tuple[int, str]:
    (tmp_path / "results").mkdir(exist_ok=True)
    (tmp_path / "results" / "r.json").write_text("{}")
    code = main(["leaderboard", "verify", str(tmp_path / "results"), "--submissions", str(tmp_path),
                 "--splits", str(tmp_path), *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("by", ["maintainer\nphybench-results.json: verified", "a\x1b[2Jb", "x" * 201, "  "])
def test_verify_by_must_be_one_printable_line(capsys, tmp_path, by):
    code, err = verify(capsys, tmp_path, "--by", by)
    assert code == 2 and "error [verify-usage]" in err and "--by" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not list((tmp_path / "results").glob("*.verified.json"))


def test_verify_date_may_not_be_in_the_future(capsys, tmp_path):
    code, err = verify(capsys, tmp_path, "--date", "2999-01-01")
    assert code == 2 and "error [verify-usage]" in err and "future" in err, err
    from phybench.leaderboard.verify.rescore import check_date

    today = dt.datetime.now(dt.timezone.utc).date()
    assert check_date(today.isoformat()) == today.isoformat()
    assert check_date((today + dt.timedelta(days=1)).isoformat())  # a verifier a time zone ahead
    assert check_date("2024-02-29") == "2024-02-29"


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in: a chmod 555 one, or (root ignores modes) /sys."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:
        os.close(os.open("/sys/.phybench-probe", os.O_CREAT | os.O_RDWR))
        os.unlink("/sys/.phybench-probe")
    except OSError:
        return Path("/sys")
    pytest.skip("no folder is read-only to this (root) process")


def test_sync_on_a_read_only_results_folder_is_a_coded_error(capsys, tmp_path):
    results = _read_only_folder(tmp_path)
    (tmp_path / "splits").mkdir()
    try:
        code = main(["leaderboard", "sync", "--repo", "o/n", "--splits", str(tmp_path / "splits"), "--results",
                     str(results), "--site", str(tmp_path / "site")])
    finally:
        if results.parent == tmp_path:
            results.chmod(0o755)
    err = capsys.readouterr().err
    assert code == 2 and "error [sync_read_only]" in err and len(err.strip().splitlines()) == 1, err


def _fake(history: list[str], head: str = "a" * 40):
    info = SimpleNamespace(sha=head, siblings=[])
    return SimpleNamespace(repo_info=lambda *a, **k: info,
                           list_repo_commits=lambda *a, **k: [SimpleNamespace(commit_id=c) for c in history])


@pytest.mark.parametrize("revision", ["refs/pr/1", "refs%2Fpr%2F1", "dev", "v1.0", "b" * 40, "a" * 12])
def test_pull_takes_only_main_or_a_commit_of_main(tmp_path, revision):
    from phybench.leaderboard.hub.board import HubBoardError
    from phybench.leaderboard.hub.pull import pull

    (tmp_path / "results").mkdir()
    with pytest.raises(HubBoardError) as info:
        pull("o/n", tmp_path / "results", revision=revision, api=_fake(["a" * 40, "c" * 40]), log=lambda line: None)
    assert info.value.code in ("pull_revision", "hub_revision")
    assert sorted(os.listdir(tmp_path / "results")) == []
    done = pull("o/n", tmp_path / "results", revision="c" * 40, api=_fake(["a" * 40, "c" * 40], "c" * 40),
                log=lambda line: None)
    assert done.sha == "c" * 40

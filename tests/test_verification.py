"""The verification record's format: written beside its results file, checked against its bytes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from phybench.io import file_sha256
from phybench.leaderboard.verification import (
    Verification, VerificationError, compare_results, read_record, record_path, write_record,
)

RESULTS = Path(__file__).resolve().parents[1] / "leaderboard/results/fundamental/lite/uniform-id-eval-copy-last.json"


def _record(path: Path) -> Verification:
    doc = json.loads(path.read_bytes())
    return Verification(
        results_sha256=file_sha256(path), submission_hash=doc["provenance"]["submission_hash"],
        split_hash=doc["provenance"]["split_hash"], phybench_version="0.1.0", verified_by="test",
        date="2026-11-25", recomputed=("velocity_error", "ssim"), skipped=("fvd",))


def test_record_round_trip_and_edit_detected(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    assert read_record(results) is None
    out = write_record(results, _record(results))
    assert out == record_path(results) == tmp_path / "r.verified.json"
    got = read_record(results)
    assert got is not None and got.skipped == ("fvd",) and "verified" in got.words()
    results.write_bytes(results.read_bytes().replace(b'"copy-last"', b'"copy-lost"', 1))
    with pytest.raises(VerificationError) as err:
        read_record(results)
    assert err.value.code == "verify-stale"


def test_record_for_another_submission_refused(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    record = json.loads(json.dumps(_record(results).to_dict()))
    record["submission_hash"] = "0" * 64
    record_path(results).write_text(json.dumps(record))
    with pytest.raises(VerificationError) as err:
        read_record(results)
    assert err.value.code == "verify-mismatch"


@pytest.mark.parametrize("edit", [{"kind": "x"}, {"schema_version": 9}, {"status": "maybe"},
                                  {"recomputed": "all"}, {"date": ""}, {"verified_by": "a\nb"}])
def test_malformed_records_refused(tmp_path: Path, edit: dict) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    record = {**_record(results).to_dict(), **edit}
    record_path(results).write_text(json.dumps(record))
    with pytest.raises(VerificationError) as err:
        read_record(results)
    assert err.value.code == "verify-malformed"


def test_compare_results_names_each_field() -> None:
    claimed = json.loads(RESULTS.read_bytes())
    assert compare_results(claimed, json.loads(RESULTS.read_bytes())) == []
    forged = json.loads(RESULTS.read_bytes())
    forged["summary"]["overall"]["velocity_error"]["mean"] = 1e-6
    forged["untrackable"] = ["x"]
    diffs = compare_results(forged, claimed)
    assert len(diffs) == 2
    assert diffs[0].startswith("summary.overall.velocity_error.mean: claimed 1e-06")
    assert diffs[1].startswith("untrackable: claimed 1 items")
    # A skipped metric's entries are not compared.
    assert compare_results(forged, claimed, skip=("velocity_error", "untrackable")) == []


def test_sidecar_is_pinned_too(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    shutil.copy(RESULTS.with_name(RESULTS.name.replace(".json", ".samples.json")), tmp_path / "r.samples.json")
    write_record(results, _record(results))
    got = read_record(results)
    assert got is not None and got.samples_sha256 == file_sha256(tmp_path / "r.samples.json")
    side = tmp_path / "r.samples.json"
    side.write_bytes(side.read_bytes().replace(b"true_velocity", b"true_velocity ", 1))
    with pytest.raises(VerificationError, match="edited, added or removed") as err:
        read_record(results)
    assert err.value.code == "verify-stale"
    side.unlink()
    with pytest.raises(VerificationError, match="edited, added or removed"):
        read_record(results)

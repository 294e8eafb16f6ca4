"""The verification record's format: written beside its results file, checked against its bytes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from phybench.io import file_sha256
from phybench.leaderboard.verify.records import (
    Verification, VerificationError, claim_differences, compare_results, read_record, write_record,
)
from phybench.scoring.run.layout import record_path

RESULTS = Path(__file__).resolve().parents[1] / "leaderboard/results/fundamental/lite/uniform-id-eval-copy-last.json"


def _record(path: Path) -> Verification:
    doc = json.loads(path.read_bytes())
    return Verification(
        results_sha256=file_sha256(path), submission_hash=doc["provenance"]["submission_hash"],
        split_hash=doc["provenance"]["split_hash"], phybench_version="0.1.0", verified_by="test",
        date="2026-11-25", recomputed=tuple(doc["metrics"]))


def test_record_round_trip_and_edit_detected(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    assert read_record(results) is None
    out = write_record(results, _record(results))
    assert out == record_path(results) == tmp_path / "r.verified.json"
    got = read_record(results)
    assert got is not None and got.skipped == () and "verified" in got.words()
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
    # Only LPIPS and FVD may be left out: the ranked column, its inputs, or any other key never.
    for skip in (("velocity_error", "untrackable"), ("summary",), ("velocity_error_ranked",)):
        with pytest.raises(ValueError, match="only lpips, fvd"):
            compare_results(forged, claimed, skip=skip)


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


# ---------------------------------------------------------------- issue 36, item 3: compare everything
def _forge_every_mean(doc: dict) -> dict:
    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("mean", "median") and isinstance(v, float):
                    x[k] = 1e-6
                else:
                    walk(v)
    walk(doc["summary"])
    return doc


@pytest.mark.parametrize("hide", [["summary"], ["provenance"], ["model"], ["summary", "provenance", "model"]])
def test_a_claim_cannot_exclude_fields_from_the_comparison(hide: list) -> None:
    """Hostile (issue 36): a claim whose `metrics` list also names summary / provenance / model,
    every mean forged to 1e-6, was admitted by the sync ("every number is this sync's own")."""
    honest = json.loads(RESULTS.read_bytes())
    forged = _forge_every_mean(json.loads(RESULTS.read_bytes()))
    forged["metrics"] = forged["metrics"] + hide
    forged["model"]["name"] = "someone else"
    forged["provenance"]["submission_hash"] = "f" * 64
    differ, not_recomputed = claim_differences(forged, honest)
    assert not_recomputed == []
    assert any(d.startswith("summary.overall.velocity_error_ranked.mean: claimed 1e-06") for d in differ), differ
    assert any(d.startswith("metrics: claimed") for d in differ), differ
    assert any(d.startswith("model.name: claimed") for d in differ), differ
    assert any(d.startswith("provenance.submission_hash: claimed") for d in differ), differ


def _with_lpips(doc: dict, value: float) -> dict:
    """A results document as scored with LPIPS too (its fixed places), and the warning a scorer
    without the weights writes."""
    doc["metrics"] = doc["metrics"] + ["lpips"]
    doc["higher_is_better"]["lpips"] = False
    doc["summary"]["overall"]["lpips"] = {"mean": value, "count": 200, "ci95": [value, value]}
    for level in doc["summary"]["levels"].values():
        level["lpips"] = {"mean": value, "count": 200, "ci95": [value, value]}
    doc["provenance"]["metric_settings"]["lpips"] = {"net": "alex"}
    doc["provenance"]["weights"] = {"alexnet": "a" * 64, "alexnet.source": "url"}
    return doc


def test_a_skipped_metric_leaves_out_only_its_own_fields() -> None:
    honest = json.loads(RESULTS.read_bytes())
    claimed = _with_lpips(json.loads(RESULTS.read_bytes()), 0.01)  # LPIPS claimed, not recomputed here
    assert compare_results(claimed, honest, skip=("lpips",)) == []
    assert claim_differences(claimed, honest) == ([], ["lpips"])
    rescored = json.loads(RESULTS.read_bytes())
    rescored["warnings"] = ["skipping lpips: the alexnet weights are not installed"]
    assert compare_results(claimed, rescored, skip=("lpips",)) == []
    # ... but not a forged number beside it, nor a key the claim adds under a skipped name elsewhere
    claimed["summary"]["overall"]["velocity_error"]["mean"] = 1e-6
    claimed["provenance"]["lpips"] = "anything"
    claimed["model"]["lpips"] = "anything"
    rescored["warnings"].append("skipping ssim: no")
    diffs = compare_results(claimed, rescored, skip=("lpips",))
    assert [d.split(":")[0] for d in diffs] == [
        "model.lpips", "provenance.lpips", "summary.overall.velocity_error.mean", "warnings"], diffs
    # without the skip every LPIPS field is a difference
    assert len(compare_results(_with_lpips(json.loads(RESULTS.read_bytes()), 0.01), honest)) > 5


def test_a_record_skipping_anything_but_lpips_fvd_is_malformed(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    shutil.copy(RESULTS, results)
    record = {**_record(results).to_dict(), "skipped": ["velocity_error_ranked"]}
    record_path(results).write_text(json.dumps(record))
    with pytest.raises(VerificationError, match="only lpips, fvd") as err:
        read_record(results)
    assert err.value.code == "verify-malformed"

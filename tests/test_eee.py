"""Every Eval Ever records of board rows (`phybench export --every-eval-ever`, issue 49 item 7)."""
from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from phybench.cli import main
from phybench.leaderboard.hub.eee import eee_files, record, validate_eee
from phybench.leaderboard.hub.eval_results import HubFormatError

ROOT = Path(__file__).resolve().parents[1]
LITE = ROOT / "leaderboard" / "results" / "fundamental" / "lite"
LEARNED = ROOT / "leaderboard" / "results" / "learned" / "lite"


def test_every_shipped_lite_row_exports_as_a_valid_record():
    files = eee_files([LITE, LEARNED])
    beside = (".samples.json", ".verified.json")
    shipped = [p for p in [*LITE.glob("*.json"), *LEARNED.glob("*.json")] if not p.name.endswith(beside)]
    # 30 reference rows; 24 learned results files (dit-tiny-R1 and framear-U3-1t on uniform,
    # framear-1t on parabola and collision: 2 splits x 3 seeds each; the one-seed framear-flow and
    # dit-B rows were retired in session 9)
    assert len(files) == len(shipped) == 54
    for where, data in files.items():
        parts = where.split("/")
        assert parts[:2] == ["data", "phybench"] and len(parts) == 5
        assert uuid.UUID(parts[4][:-5]).version == 4
        rec = json.loads(data)
        validate_eee(rec)  # schema + finite scores
        assert rec["model_info"]["id"] == f"{parts[2]}/{parts[3]}"
        assert rec["source_metadata"]["evaluator_relationship"] == "first_party"  # all phybench's own
        ids = [r["evaluation_result_id"] for r in rec["evaluation_results"]]
        assert len(ids) == len(set(ids))


def test_the_record_carries_the_board_numbers():
    path = LITE / "uniform-ood-eval-copy-last.json"
    doc = json.loads(path.read_text())
    _, rec = record(path)
    by_id = {r["evaluation_result_id"]: r for r in rec["evaluation_results"]}
    ranked = by_id["uniform/ood-eval/velocity_error_ranked"]["score_details"]
    assert ranked["score"] == doc["summary"]["overall"]["velocity_error_ranked"]["mean"]
    ci = ranked["uncertainty"]["confidence_interval"]
    assert [ci["lower"], ci["upper"]] == doc["summary"]["overall"]["velocity_error_ranked"]["ci95"]
    assert by_id["uniform/ood-eval/ssim"]["metric_config"]["lower_is_better"] is False
    for level in ("r", "v", "r+v"):  # every OOD level is its own evaluation
        key = f"uniform/ood-eval/{level.replace('+', '-')}/velocity_error"  # '+' is not a path character
        level_score = by_id[key]["score_details"]["score"]
        assert level_score == doc["summary"]["levels"][level]["velocity_error"]["mean"]


def test_same_results_same_bytes():
    assert eee_files([LITE]) == eee_files([LITE])


def test_an_unverified_row_needs_a_timestamp_and_hostile_names_stay_inside(tmp_path):
    doc = json.loads((LITE / "uniform-id-eval-copy-last.json").read_text())
    doc["model"] = {"name": "../../etc/passwd", "family": "../x", "sampler": {}}
    path = tmp_path / "uniform-id-eval-evil.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(HubFormatError) as exc:
        eee_files([path])
    assert exc.value.code == "eee_timestamp"
    (where, data), = eee_files([path], timestamp="1764000000").items()
    assert ".." not in where.split("/") and where.startswith("data/phybench/x/etc-passwd/")
    rec = json.loads(data)
    assert rec["source_metadata"]["evaluator_relationship"] == "other"  # self-reported
    assert rec["retrieved_timestamp"] == "1764000000"


def test_a_record_outside_the_schema_is_refused():
    _, rec = record(LITE / "uniform-id-eval-ground-truth.json")
    rec["source_metadata"]["evaluator_relationship"] = "friend"
    with pytest.raises(HubFormatError) as exc:
        validate_eee(rec)
    assert exc.value.code == "eee_invalid" and "evaluator_relationship" in str(exc.value)
    _, rec = record(LITE / "uniform-id-eval-ground-truth.json")
    rec["unexpected"] = 1  # additionalProperties: false at the top
    with pytest.raises(HubFormatError):
        validate_eee(rec)


def test_the_cli_writes_the_datastore_layout(tmp_path, capsys):
    src = tmp_path / "rows"
    src.mkdir()
    for name in ("collision-id-eval-ground-truth.json", "collision-id-eval-ground-truth.verified.json"):
        shutil.copy(LITE / name, src / name)
    assert main(["export", "--every-eval-ever", str(tmp_path / "eee"), str(src)]) == 0
    written = [Path(line) for line in capsys.readouterr().out.split()]
    assert len(written) == 1 and written[0].parent.parent.name == "phybench" and written[0].suffix == ".json"
    assert main(["export", "--every-eval-ever", str(tmp_path / "x"), "--timestamp", "yesterday", str(src)]) == 2
    assert "--timestamp takes Unix seconds" in capsys.readouterr().err and not (tmp_path / "x").exists()

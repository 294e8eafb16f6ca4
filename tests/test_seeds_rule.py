"""The 3-seed rule's parts (`phybench.leaderboard.verify.seeds`) and the sync's view of seeds (issue 51 item 6)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from phybench.leaderboard.verify import seeds as rule

ROOT = Path(__file__).resolve().parents[1] / "leaderboard" / "results"


def _record(vh: str | None) -> SimpleNamespace:
    return SimpleNamespace(extra={"videos_hash": vh} if vh else {})


def test_every_shipped_reference_row_is_pinned_and_no_learned_one_is():
    """The pins are the shipped reference rows' signed videos hashes; no learned or modality row's."""
    pinned = rule.pins([])
    for record in sorted(ROOT.rglob("*.verified.json")):
        doc = json.loads(record.read_text())
        model = json.loads(record.with_name(record.name.replace(".verified.json", ".json")).read_text())["model"]
        claimed = rule.sampler_baseline(model)
        assert rule.is_reference_run(model, _record(doc["extra"]["videos_hash"]), pinned) == (claimed is not None), record


def test_a_claim_is_not_enough():
    pinned = {"a" * 64: "copy-last"}
    card = {"sampler": {"name": "baseline:copy-last"}, "seeds": [0]}
    assert rule.is_reference_run(card, _record("a" * 64), pinned)
    assert not rule.is_reference_run(card, _record("b" * 64), pinned)  # other videos: a claim only
    assert not rule.is_reference_run(card, None, pinned)  # not verified: no hash the board made
    assert not rule.is_reference_run({"sampler": {"name": "baseline:ground-truth"}}, _record("a" * 64), pinned)
    assert not rule.is_reference_run({"sampler": {"name": "copy-last"}}, _record("a" * 64), pinned)


def test_seeds_count_runs_not_card_lists():
    assert rule.seed_count([{"seeds": [0, 1, 2]}]) == 1  # one run listing three seeds is one run
    assert rule.seed_count([{"seeds": [0]}, {"seeds": [0]}, {}]) == 1  # a card without seeds is seed 0
    assert rule.seed_count([{"seeds": [0]}, {"seeds": [1]}, {"seeds": [2]}]) == 3
    assert rule.seeds_words(rule.seeds_state(1, False)) == "needs 3 seeds (has 1)"
    assert rule.seeds_state(1, True)["enough"] and not rule.seeds_state(2, False)["enough"]


def test_pin_files(tmp_path, monkeypatch):
    good = tmp_path / "pins.json"
    good.write_text(json.dumps({"kind": rule.PINS_KIND, "pins": {"c" * 64: "copy-last"}}))
    monkeypatch.setenv(rule.PINS_ENV, str(good))
    assert rule.pins()["c" * 64] == "copy-last" and len(rule.pins()) == len(rule.PINNED) + 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pins": {"c" * 64: "copy-last"}}))
    with pytest.raises(ValueError):
        rule.pins([bad])


def test_the_sync_admits_another_seed_of_an_admitted_model_and_refuses_the_same_seed(tmp_path):
    from phybench.leaderboard.hub.admission import on_the_board

    shipped = ROOT / "learned" / "lite" / "uniform-id-eval-dit-tiny-R1.json"
    (tmp_path / "results").mkdir()
    shutil_copy = (tmp_path / "results" / shipped.name)
    shutil_copy.write_bytes(shipped.read_bytes())
    doc = json.loads(shipped.read_text())
    meta = {"model": {"name": doc["model"]["name"]}, "split_hash": doc["provenance"]["split_hash"],
            "task": "uniform", "split": "id-eval", "seeds": [0]}
    out = tmp_path / "results" / "new.json"
    [line] = on_the_board(tmp_path / "results", meta, out)
    assert line.startswith("[intake-duplicate]") and "seeds [0]" in line
    assert on_the_board(tmp_path / "results", {**meta, "seeds": [1]}, out) == []
    assert on_the_board(tmp_path / "results", {**meta, "model": {"name": "other"}}, out) == []


def test_the_gap_shows_the_spread_of_the_per_seed_ratios():
    """The gap column's ± (issue 51 item 6d): each seed's OOD run over the same seed's ID run, paired by seed."""
    from phybench.leaderboard.site.gap import ratio_interval

    id_entry = {"mean": 2.0, "ci95": [1.0, 3.0], "runs": {"n": 3, "sd": 1.0, "values": [1.0, 2.0, 3.0],
                                                        "seeds": [[0], [1], [2]]}}
    ood_entry = {"mean": 8.0, "ci95": [4.0, 12.0], "runs": {"n": 3, "sd": 1.0, "values": [12.0, 4.0, 8.0],
                                                          "seeds": [[2], [0], [1]]}}  # another order: paired by seed
    got = ratio_interval(id_entry, ood_entry)
    assert got["runs"] == {"n": 3, "sd": 0.0} and got["ratio"] == 4.0  # seed 0: 4/1, seed 1: 8/2, seed 2: 12/3
    ood_entry["runs"]["values"] = [9.0, 4.0, 8.0]  # seed 2: 9/3 = 3
    assert got != ratio_interval(id_entry, ood_entry)
    assert ratio_interval(id_entry, ood_entry)["runs"]["sd"] == pytest.approx(0.57735, rel=1e-4)
    assert "runs" not in ratio_interval({"mean": 2.0, "ci95": [1.0, 3.0]}, {"mean": 8.0, "ci95": [4.0, 12.0]})

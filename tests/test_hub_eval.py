"""The Hub's Eval Results format (issue 36 item 8): `.eval_results/*.yaml` for a model repository
and `eval.yaml` for the board's dataset repository, both checked against the documented schemas
packaged in phybench/leaderboard/schemas/."""
import copy
import os
import shutil
from pathlib import Path

import pytest
import yaml

from phybench.cli import main
from phybench.leaderboard.hub.eval_results import (
    HubFormatError,
    eval_results_files,
    eval_yaml,
    load_yaml,
    validate_eval_results,
    validate_eval_yaml,
)
from phybench.scoring.metrics import METRICS

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT / "leaderboard" / "results"
LITE = BOARD / "fundamental" / "lite"
MODEL = [LITE / "uniform-id-eval-copy-last.json", LITE / "uniform-ood-eval-copy-last.json",
         LITE / "collision-id-eval-copy-last.json"]


@pytest.fixture(scope="module")
def board_yaml():
    return eval_yaml(BOARD)


def test_model_files_follow_the_schema_and_the_boards_tasks(tmp_path, board_yaml):
    assert main(["export", *map(str, MODEL), "--eval-results", str(tmp_path), "--benchmark", "phybench/board",
                 "--source-url", "https://huggingface.co/datasets/phybench/board"]) == 0
    files = sorted((tmp_path / ".eval_results").iterdir())
    assert [f.name for f in files] == ["phybench-collision-id-eval.yaml", "phybench-uniform-id-eval.yaml",
                                       "phybench-uniform-ood-eval.yaml"]
    tasks = {t["id"]: t for t in board_yaml["tasks"]}
    direction = {m["id"]: m["lower_is_better"] for m in board_yaml["metrics"]}
    for f in files:
        doc = load_yaml(f)
        validate_eval_results(doc)  # what the test read back, not what the writer meant
        for entry in doc:
            assert entry["dataset"]["id"] == "phybench/board"
            assert entry["dataset"]["task_id"] in tasks  # every value lands on one of the board's leaderboards
            assert isinstance(entry["date"], str) and "copy-last" in entry["notes"]
    entries = {e["dataset"]["task_id"]: e["value"] for e in load_yaml(files[1])}
    import json

    summary = json.loads(MODEL[0].read_text())["summary"]["overall"]
    assert entries["uniform/id-eval/velocity_error_ranked"] == summary["velocity_error_ranked"]["mean"]
    assert entries["uniform/id-eval/ssim"] == summary["ssim"]["mean"]
    assert direction["ssim"] is False and direction["velocity_error_ranked"] is True


def test_board_eval_yaml_declares_every_metric_with_its_direction(tmp_path, board_yaml):
    validate_eval_yaml(board_yaml)
    for metric in board_yaml["metrics"]:
        assert metric["lower_is_better"] is (not METRICS.get(metric["id"]).higher_is_better)
    ids = {t["id"] for t in board_yaml["tasks"]}
    assert {"uniform/id-eval/velocity_error_ranked", "collision/ood-eval/law_error",
            "combinatorial/in-template-eval/ssim"} <= ids
    assert not any(i.startswith(("priority", "flip", "composition")) for i in ids)  # probes are no leaderboards
    out = tmp_path / "board" / "eval.yaml"
    assert main(["export", "--eval-yaml", str(out), str(BOARD)]) == 0
    assert load_yaml(out) == board_yaml


@pytest.mark.parametrize("break_it, code", [
    (lambda d: d[0].pop("value"), "eval_results_invalid"),
    (lambda d: d[0].update(value="2.5"), "eval_results_invalid"),
    (lambda d: d[0].update(value=float("nan")), "eval_results_invalid"),
    (lambda d: d[0]["dataset"].pop("task_id"), "eval_results_invalid"),
    (lambda d: d[0]["dataset"].update(id="no-owner"), "eval_results_invalid"),
    (lambda d: d[0].update(score=1.0), "eval_results_invalid"),
    (lambda d: d[0].update(source={"name": "no url"}), "eval_results_invalid"),
    (lambda d: d[0].update(date="yesterday"), "eval_results_invalid"),
])
def test_a_broken_eval_results_file_fails(break_it, code):
    good = [{"dataset": {"id": "phybench/board", "task_id": "uniform/id-eval/ssim"}, "value": 0.9}]
    validate_eval_results(good)
    bad = copy.deepcopy(good)
    break_it(bad)
    with pytest.raises(HubFormatError) as info:
        validate_eval_results(bad)
    assert info.value.code == code


@pytest.mark.parametrize("break_it", [
    lambda d: d.pop("evaluation_framework"),
    lambda d: d.pop("tasks"),
    lambda d: d.update(tasks=[]),
    lambda d: d["tasks"].append(dict(d["tasks"][0])),  # a task id twice
    lambda d: d["tasks"][0].update(metrics=["not_declared"]),
    lambda d: d["metrics"][0].pop("lower_is_better"),
    lambda d: d.update(leaderboard="extra"),
])
def test_a_broken_eval_yaml_fails(board_yaml, break_it):
    bad = copy.deepcopy(board_yaml)
    break_it(bad)
    with pytest.raises(HubFormatError) as info:
        validate_eval_yaml(bad)
    assert info.value.code == "eval_yaml_invalid"


def test_hostile_inputs_are_refused_with_a_code(tmp_path, capsys):
    # a link to /dev/zero named like a results file: never opened
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(HubFormatError) as info:
        eval_results_files([tmp_path / "zero.json"], "phybench/board")
    assert info.value.code == "results_link"
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(HubFormatError) as info:
        eval_results_files([tmp_path / "fifo.json"], "phybench/board")
    assert info.value.code == "results_not_regular"
    # YAML that would build Python objects is not YAML to us
    (tmp_path / "evil.yaml").write_text("!!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(HubFormatError) as info:
        load_yaml(tmp_path / "evil.yaml")
    assert info.value.code == "yaml_unreadable"
    (tmp_path / "big.yaml").write_bytes(b"a: 1\n" * 300_000)
    with pytest.raises(HubFormatError) as info:
        load_yaml(tmp_path / "big.yaml")
    assert info.value.code == "results_too_large"
    # two models in one model repository, two files of one split, a bad benchmark id
    two = [LITE / "uniform-id-eval-copy-last.json", LITE / "uniform-ood-eval-ground-truth.json"]
    for paths, bench, code in ((two, "phybench/board", "eval_results_models"),
                               ([MODEL[0], MODEL[0]], "phybench/board", "eval_results_duplicate"),
                               (MODEL[:1], "../etc", "benchmark_id")):
        with pytest.raises(HubFormatError) as info:
            eval_results_files(paths, bench)
        assert info.value.code == code
    # a results file whose task is no plain name (it would be part of a file name)
    doc = yaml.safe_load(MODEL[0].read_text())
    doc["task"] = "../../x"
    import json

    (tmp_path / "odd.json").write_text(json.dumps(doc))
    out = tmp_path / "out"
    assert main(["export", str(tmp_path / "odd.json"), "--eval-results", str(out), "--benchmark", "a/b"]) == 2
    assert "[results_names]" in capsys.readouterr().err and not out.exists()


def test_a_folder_with_a_sidecar_and_a_record_exports_only_results(tmp_path):
    for name in ("uniform-id-eval-copy-last.json", "uniform-id-eval-copy-last.samples.json",
                 "uniform-id-eval-copy-last.verified.json"):
        shutil.copy(LITE / name, tmp_path / name)
    files = eval_results_files([tmp_path], "phybench/board", revision="a" * 40)
    assert list(files) == [".eval_results/phybench-uniform-id-eval.yaml"]
    assert all(e["dataset"]["revision"] == "a" * 40 for e in yaml.safe_load(files[".eval_results/phybench-uniform-id-eval.yaml"]))

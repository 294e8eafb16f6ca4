"""phybench's tasks as lmms-eval tasks (`phybench.harness.lmms`, issue 49 item 6).

lmms-eval is not installed here (it requires torchvision, which the pinned CPU torch cannot
import beside it), so these tests drive the adapter the way lmms-eval does: load the docs the
task YAML names, call ``doc_to_visual`` for the model's input, write the model's answer with
the backend's generation step and score it with ``process_results`` / ``nanmean``.  The end-to-end
run inside a real lmms-eval is in docs/harnesses.md (command and output).
"""
from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pytest
import yaml

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.harness import lmms
from phybench.scoring.run.score import score
from phybench.tasks import get_task


class _FunctionLoader(yaml.SafeLoader):
    """lmms-eval's YAML tag: ``!function module.name`` (kept as text here)."""


_FunctionLoader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    out = tmp_path_factory.mktemp("lmms") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=8), out, progress=False)
    return out


@pytest.fixture(scope="module")
def backend():
    """`lmms_backend` with a stand-in for lmms-eval's base class (only the generation step is used)."""
    fake = types.ModuleType("lmms_eval.api.model")
    fake.lmms = object
    saved = {k: sys.modules.get(k) for k in ("lmms_eval", "lmms_eval.api", "lmms_eval.api.model")}
    sys.modules.update({"lmms_eval": types.ModuleType("lmms_eval"), "lmms_eval.api": types.ModuleType("lmms_eval.api"),
                        "lmms_eval.api.model": fake})
    sys.modules.pop("phybench.harness.lmms_backend", None)
    from phybench.harness import lmms_backend

    yield lmms_backend
    sys.modules.pop("phybench.harness.lmms_backend", None)
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def _run(task_yaml, model, backend, out_dir):
    """What lmms-eval does with the task: docs, visuals, generation, per-doc results, aggregation."""
    task = yaml.load(task_yaml.read_text(), Loader=_FunctionLoader)
    docs = [json.loads(line) for line in open(task["dataset_kwargs"]["data_files"]["test"])]
    answers = {d["sample_id"]: backend.generate_request(model, lmms.doc_to_visual(d),
                                                        task["generation_kwargs"]["num_frames"], d["sample_id"],
                                                        out_dir) for d in docs}
    per_doc = [lmms.process_results(d, [answers[d["sample_id"]]]) for d in docs]
    return task, answers, {m: lmms.nanmean([r[m] for r in per_doc]) for m in lmms.METRICS}


class _GroundTruth:
    def __init__(self, reader):
        self.videos = {reader.video(r)[:3].tobytes(): reader.video(r) for r in reader.rows()}

    def generate(self, condition, num_frames):  # the split's own continuation of these very frames
        return np.stack([self.videos[np.ascontiguousarray(c).tobytes()] for c in condition])


class _CopyLast:
    def generate(self, condition, num_frames):  # (B, C, H, W, 3) -> (B, T, H, W, 3)
        return np.concatenate([condition, np.repeat(condition[:, -1:], num_frames - condition.shape[1], axis=1)], axis=1)


def test_the_task_yaml_is_an_lmms_eval_generation_task(split, tmp_path):
    path = lmms.write_task(split, tmp_path / "tasks")
    task = yaml.load(path.read_text(), Loader=_FunctionLoader)
    assert task["task"] == "phybench_uniform_id_eval" and task["output_type"] == "generate_until"
    assert task["doc_to_visual"] == ("function", "phybench_lmms_utils.doc_to_visual")
    assert [m["metric"] for m in task["metric_list"]] == list(lmms.METRICS)
    assert (tmp_path / "tasks" / "phybench_lmms_utils.py").read_text().count("from phybench.harness.lmms import") == 1
    docs = [json.loads(line) for line in open(task["dataset_kwargs"]["data_files"]["test"])]
    reader = SplitReader(split)
    assert [d["sample_id"] for d in docs] == [r["sample_id"] for r in reader.rows(["sample_id"])]
    frames = lmms.doc_to_visual(docs[0])
    assert len(frames) == 3 and np.array_equal(np.stack([np.asarray(f) for f in frames]),
                                               reader.video(next(reader.rows()))[:3])


@pytest.mark.slow
def test_the_harness_gives_phybench_numbers(split, tmp_path, backend):
    path = lmms.write_task(split, tmp_path / "tasks")
    reader = SplitReader(split)
    _, _, exact = _run(path, _GroundTruth(reader), backend, tmp_path / "gt")
    assert exact["velocity_error"] < 0.01 and exact["untrackable"] == 0 and exact["abnormal"] == 0
    _, answers, copy = _run(path, _CopyLast(), backend, tmp_path / "copy")
    assert copy["velocity_error"] > 1.0 and copy["abnormal"] == 1.0  # nothing moves
    # the same videos through phybench score: the same per-video means
    sub = lmms.outputs_to_submission(path, answers, tmp_path / "sub", "copy-last-lmms")
    doc = score(sub, split, metrics=("velocity_error", "ssim", "psnr"), progress=False).results
    for m in ("velocity_error", "velocity_error_ranked", "ssim", "psnr", "abnormal"):
        assert math.isclose(doc["summary"]["overall"][m]["mean"], copy[m], rel_tol=1e-6), m


def test_a_foreign_or_hostile_answer_is_refused(split, tmp_path, monkeypatch):
    path = lmms.write_task(split, tmp_path / "tasks", limit=2)
    doc = json.loads(path.with_suffix(".jsonl").read_text().splitlines()[0])
    assert len(path.with_suffix(".jsonl").read_text().splitlines()) == 2
    failed = lmms.process_results(doc, ["[GENERATION_FAILED] out of memory"])
    assert failed["untrackable"] == 1.0 and math.isnan(failed["velocity_error"])
    monkeypatch.setenv(lmms.OUTPUT_ROOT_ENV, str(tmp_path / "outputs"))
    outside = tmp_path / "elsewhere.npy"
    np.save(outside, np.zeros((32, 128, 128, 3), np.uint8))
    with pytest.raises(lmms.HarnessError, match="outside"):
        lmms.process_results(doc, [str(outside)])
    (tmp_path / "outputs").mkdir()
    wrong = tmp_path / "outputs" / "x.npy"
    np.save(wrong, np.zeros((32, 64, 64, 3), np.uint8))
    with pytest.raises(lmms.HarnessError, match="expected uint8"):
        lmms.process_results(doc, [str(wrong)])
    pickled = tmp_path / "outputs" / "p.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):  # numpy refuses object arrays without allow_pickle
        lmms.process_results(doc, [str(pickled)])
    with pytest.raises(lmms.HarnessError, match="split the task was written for"):
        lmms.process_results({**doc, "split_hash": "0" * 64}, [str(wrong)])

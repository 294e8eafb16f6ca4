"""Conditions beyond frames: a prompt and a numeric state per sample, for every family, never the future."""
from __future__ import annotations

import copy
import csv
import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import generate_sample, make_plan
from phybench.tasks import TASKS, get_task
from phybench.data.conditions import condition_state, condition_text, read_conditions
from phybench.tasks.conditions import CONDITIONS_VERSION, describe_state


def _row(task: str, index: int = 0) -> dict:
    spec = get_task(task)
    row, _ = generate_sample(make_plan(spec, spec.eval_splits[0], limit=index + 1), index)
    return row


@pytest.mark.parametrize("task", [name for name, _ in TASKS.items()])
def test_every_family_gets_a_state_and_a_prompt(task):
    spec = get_task(task)
    row = _row(task)
    state = condition_state(spec, row)
    text = condition_text(spec, row)
    assert state["conditions_version"] == CONDITIONS_VERSION and state["task"] == task
    assert state["state_frame"] == spec.condition_frames - 1 and state["fps"] == pytest.approx(1 / spec.frame_interval)
    assert len(state["bodies"]) == np.asarray(row["positions"]).shape[1]
    t = spec.condition_frames - 1
    for k, body in enumerate(state["bodies"]):  # the numbers are the row's, at the last condition frame
        assert body["position"] == [float(v) for v in np.asarray(row["positions"])[t, k]]
        assert body["velocity"] == [float(v) for v in np.asarray(row["velocities"])[t, k]]
        assert body["colour_name"] in text
    json.dumps(state, allow_nan=False)  # plain JSON
    assert text.endswith(".") and ("no gravity" in text) == (spec.simulator.gravity == 0)
    assert text.count(";") >= len(state["bodies"]) - 1


def test_wording_of_a_uniform_sample():
    state = {"bodies": [{"shape": "disc", "radius": 1.2, "colour": [255, 0, 0], "colour_name": "red", "dynamic": True,
                         "position": [3.0, 5.25], "velocity": [2.5, 0.0], "angle": 0.0}],
             "world_size": 10.0, "fps": 10.0, "gravity": 0.0, "walls": False, "background": [255, 255, 255]}
    text = describe_state(state)
    assert text.startswith("A red ball of radius 1.2 at (3, 5.25) moves right at 2.5 units per second.")
    assert text.endswith("on a white background, filmed at 10 frames per second; no gravity, no walls.")
    state["bodies"][0]["velocity"] = [-1.0, -1.0]
    assert "moves down and to the left at 1.41 units per second (1 left, 1 down)" in describe_state(state)


@pytest.mark.parametrize("task", ["uniform", "parabola", "collision", "combinatorial", "composition"])
def test_no_future_is_leaked(task):
    """Two rows identical up to the last condition frame but different after get the same text and state."""
    spec = get_task(task)
    row = _row(task)
    C = spec.condition_frames
    future = copy.deepcopy(row)
    rng = np.random.default_rng(0)
    for key in ("positions", "velocities", "angles"):
        if future.get(key) is not None:
            a = np.array(future[key], copy=True)
            a[C:] = rng.uniform(-5, 5, a[C:].shape).astype(a.dtype)  # another future entirely
            future[key] = a
    for key in [d.name for d in spec.dofs] + ["contact_time", "frames_in_view"]:  # columns that tell the future
        if isinstance(future.get(key), float):
            future[key] = future[key] + 1.0
    assert condition_state(spec, future) == condition_state(spec, row)
    assert condition_text(spec, future) == condition_text(spec, row)
    # the check can fail: a change at the last condition frame is seen
    past = copy.deepcopy(row)
    v = np.array(past["velocities"], copy=True)
    v[C - 1] += 0.5
    past["velocities"] = v
    assert condition_state(spec, past) != condition_state(spec, row)
    assert condition_text(spec, past) != condition_text(spec, row)


def test_family_may_override_the_wording(monkeypatch):
    from phybench.tasks import family_of

    spec = get_task("uniform")
    monkeypatch.setattr(type(family_of(spec)), "condition_text",
                        lambda self, spec, state: f"{len(state['bodies'])} body")
    assert condition_text(spec, _row("uniform")) == "1 body"


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    root = tmp_path_factory.mktemp("cond")
    generate(make_plan(get_task("collision"), "id-eval", limit=3), root / "split", progress=False)
    return root / "split"


def test_export_inputs_writes_prompts_and_states_deterministically(split, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["export-inputs", "--data", str(split), "--out", str(a), "--quiet"]) == 0
    assert main(["export-inputs", "--data", str(split), "--out", str(b), "--quiet"]) == 0
    for name in ("prompts.csv", "states.jsonl", "conditions.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ids = json.loads((a / "manifest.json").read_text())["sample_ids"]
    with open(a / "prompts.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["sample_id", "text"] and [r[0] for r in rows[1:]] == ids
    assert all("red ball" in r[1] and "blue ball" in r[1] for r in rows[1:])
    states = [json.loads(line) for line in (a / "states.jsonl").read_text().splitlines()]
    assert [s["sample_id"] for s in states] == ids and all(len(s["bodies"]) == 2 for s in states)
    doc = json.loads((a / "conditions.json").read_text())
    assert doc["conditions_version"] == CONDITIONS_VERSION and len(doc["conditions_hash"]) == 64
    texts, by_id = read_conditions(a)
    assert list(texts) == ids and by_id[ids[0]]["bodies"] == states[0]["bodies"]


def test_export_reads_stored_body_rows(tmp_path):
    """A family that stores bodies (shapes, angles) exports the same conditions as its in-memory rows."""
    spec = get_task("composition")
    generate(make_plan(spec, spec.eval_splits[0], limit=2), tmp_path / "split", progress=False)
    assert main(["export-inputs", "--data", str(tmp_path / "split"), "--out", str(tmp_path / "in"), "--quiet"]) == 0
    states = [json.loads(line) for line in (tmp_path / "in" / "states.jsonl").read_text().splitlines()]
    for index, state in enumerate(states):
        row = _row("composition", index)
        assert state.pop("sample_id") == row["sample_id"] and state == condition_state(spec, row)
    assert {b["shape"] for b in states[0]["bodies"]} == {"rect", "disc"}


def test_tasks_show_prints_an_example_prompt(capsys):
    assert main(["tasks", "show", "collision"]) == 0
    out = capsys.readouterr().out
    assert "prompt of collision/id-eval/0000000" in out and "blue ball" in out


class TextModel:
    """Copies the last condition frame; keeps the prompts and states it was given."""

    condition_frames_used = 1
    seen: list = []

    def generate(self, condition, num_frames, prompts=None, states=None):
        TextModel.seen.append((list(prompts), list(states)))
        return np.repeat(condition[:, -1:], num_frames, axis=1)


class StateModel:
    def generate(self, condition, num_frames, *, states):
        assert all(isinstance(s, dict) and s["bodies"] for s in states)
        return np.repeat(condition[:, -1:], num_frames, axis=1)


@pytest.mark.slow
def test_run_passes_prompts_and_states_and_records_the_track(split, tmp_path):
    from phybench.conditioning import accepted_conditions, track

    assert accepted_conditions(TextModel()) == (True, True) and track(StateModel()) == "frames+state"
    assert track(type("Kw", (), {"generate": lambda self, c, n, **kw: c})()) == "frames"  # **kwargs asks for nothing
    TextModel.seen.clear()
    out = tmp_path / "run"
    assert main(["run", "--model", "test_conditions:TextModel", "--data", str(split), "--out", str(out),
                 "--metrics", "velocity_error", "--batch-size", "2", "--quiet"]) == 0
    work = out / "collision-id-eval"
    with open(work / "inputs" / "prompts.csv", newline="") as f:
        texts = [r[1] for r in list(csv.reader(f))[1:]]
    assert [p for prompts, _ in TextModel.seen for p in prompts] == texts  # in order, batched 2 + 1
    assert [len(p) for p, _ in TextModel.seen] == [2, 1]
    assert all(s["bodies"][0]["colour_name"] == "red" for _, states in TextModel.seen for s in states)
    meta = json.loads((work / "submission" / "submission.json").read_text())
    assert meta["conditioning"] == {"inputs": "frames+text+state", "condition_frames_used": 1}
    results = json.loads((out / "results" / "collision-id-eval-TextModel.json").read_text())  # the class's name
    assert results["model"]["conditioning"] == meta["conditioning"]

    out2 = tmp_path / "run2"
    assert main(["run", "--model", "phybench.examples.shift:Model", "--data", str(split), "--out", str(out2),
                 "--metrics", "velocity_error", "--quiet"]) == 0
    meta = json.loads((out2 / "collision-id-eval" / "submission" / "submission.json").read_text())
    assert meta["conditioning"] == {"inputs": "frames", "condition_frames_used": 3}
    assert main(["run", "--model", "test_conditions:StateModel", "--data", str(split), "--out", str(tmp_path / "r3"),
                 "--metrics", "velocity_error", "--quiet"]) == 0


def test_bad_condition_frames_used_is_refused():
    from phybench.conditioning import condition_frames_used

    assert condition_frames_used(object(), 3) == 3
    with pytest.raises(ValueError, match="condition_frames_used"):
        condition_frames_used(type("M", (), {"condition_frames_used": 4})(), 3)

"""The board's paired comparison of neighbouring rows (issue 37, item 5): `phybench.leaderboard.site.paired`."""
from __future__ import annotations

import numpy as np

from phybench.leaderboard.site.paired import (
    PAIRED_METRIC,
    column_values,
    mark_board,
    paired_bootstrap,
    paired_mark,
    paired_note,
)


def test_two_identical_models_are_indistinguishable():
    x = np.random.default_rng(1).gamma(2.0, 1.0, 200)
    out = paired_bootstrap(x, x)
    assert out["same"] and out["diff"] == 0.0 and out["ci95"] == [0.0, 0.0] and out["n"] == 200


def test_noise_around_the_same_mean_is_indistinguishable_and_a_shift_is_not():
    rng = np.random.default_rng(2)
    a = rng.gamma(2.0, 1.0, 200)
    noisy = a + rng.normal(0.0, 0.5, 200)
    noisy += a.mean() - noisy.mean()  # the same mean, different videos
    assert paired_bootstrap(a, noisy)["same"]
    worse = a + 0.3 + rng.normal(0.0, 0.05, 200)  # every video a little worse: clearly different
    out = paired_bootstrap(a, worse)
    assert not out["same"] and out["ci95"][0] > 0.2 and abs(out["diff"] - 0.3) < 0.02


def test_the_resampling_is_paired_not_two_independent_samples():
    """A large spread over videos but the same small gap on every video: a paired test sees it, an
    unpaired interval (the rows' own 95% intervals) would overlap."""
    a = np.linspace(0.0, 100.0, 200)
    out = paired_bootstrap(a, a + 0.01)
    assert not out["same"] and out["ci95"] == [0.01, 0.01]


def test_deterministic():
    rng = np.random.default_rng(3)
    a, b = rng.random(150), rng.random(150)
    assert paired_bootstrap(a, b) == paired_bootstrap(a, b)
    assert paired_bootstrap(a, b, seed=1) != paired_bootstrap(a, b, seed=2)


def _row(model: str, means: dict[str, float]) -> dict:
    return {"model": model, "sources": [], "cells": {k: {"metrics": {PAIRED_METRIC: {"mean": v}}} for k, v in means.items()}}


def test_a_board_marks_each_row_against_the_row_above_in_each_column():
    rng = np.random.default_rng(4)
    ids = [f"t/id-eval/{i:07d}" for i in range(100)]
    base = rng.gamma(2.0, 1.0, 100)
    per_model = {"best": base, "twin": base + rng.normal(0, 0.2, 100), "worst": base + 5.0}
    per_model["twin"] += base.mean() + 0.001 - per_model["twin"].mean()
    board = {"layout": "levels", "metrics": [{"name": PAIRED_METRIC, "higher_is_better": False}],
             "levels": [{"key": "id"}],
             "rows": [_row(m, {"id": float(v.mean())}) for m, v in sorted(per_model.items())]}
    calls = []

    def values_of(row, column):
        calls.append(row["model"])
        v = per_model[row["model"]]
        return {sid: ("id", float(x)) for sid, x in zip(ids, v)}

    marks = mark_board(board, values_of)
    assert [(m["model"], m["above"], m["same"]) for m in marks] == [("twin", "best", True), ("worst", "twin", False)]
    rows = {r["model"]: r for r in board["rows"]}
    assert "paired" not in rows["best"]  # the top row has nothing above it
    assert rows["twin"]["paired"]["id"]["same"] and not rows["worst"]["paired"]["id"]["same"]
    assert sorted(calls) == ["best", "twin", "worst"]  # each row's values read once per column
    assert paired_mark(rows["twin"], "id", PAIRED_METRIC) == " ≈" and paired_mark(rows["worst"], "id", PAIRED_METRIC) == ""
    assert paired_mark(rows["twin"], "id", "ssim") == ""  # the mark is about the ranked column only
    note = paired_note(board, PAIRED_METRIC)
    assert note and "id: twin ≈ best" in note[-1]


def test_rows_without_values_get_no_mark():
    """A row whose values are missing (no viewer record, or one of its runs has none: `board_viewers`)
    is compared with nothing; a row of several runs with values is (issue 51: the seeds' mean)."""
    board = {"layout": "levels", "metrics": [{"name": PAIRED_METRIC, "higher_is_better": False}],
             "levels": [{"key": "id"}],
             "rows": [_row("a", {"id": 1.0}), dict(_row("b", {"id": 2.0}), runs=2), _row("c", {"id": 3.0})]}
    values = {"t/0": ("id", 1.0), "t/1": ("id", 2.0)}
    assert mark_board(board, lambda row, col: None if row["model"] == "b" else values) == []  # nothing to pair
    assert len(mark_board(board, lambda row, col: None if row["model"] == "a" else values)) == 1
    assert len(mark_board(board, lambda row, col: values)) == 2


def test_column_values_pick_the_level_and_drop_excluded_videos():
    values = {"a": ("id", 1.0), "b": ("r", 2.0), "c": ("v", None), "d": ("v", 4.0), "e": ("r", float("nan"))}
    assert column_values(values, "r") == {"b": 2.0}
    assert column_values(values, "ood-overall") == {"a": 1.0, "b": 2.0, "d": 4.0}
    assert column_values(values, "in-template-eval", whole=True) == {"a": 1.0, "b": 2.0, "d": 4.0}


def test_a_row_of_several_seeds_is_compared_by_its_per_video_values_averaged_over_seeds():
    """Issue 51 item 6: the paired comparison uses the seeds.  A row of 3 runs gets a mark (before:
    none, "no single per-video value"), from each video's mean over the seeds, then the same
    bootstrap over videos; a video a seed could not score is averaged over the others."""
    from phybench.leaderboard.site.paired import average_runs

    runs = [{"a": ("id", 1.0), "b": ("id", 2.0), "c": ("id", None)},
            {"a": ("id", 3.0), "b": ("id", float("nan")), "c": ("id", None)},
            {"a": ("id", 2.0), "b": ("id", 4.0), "c": ("id", None), "only-here": ("id", 9.0)}]
    assert average_runs(runs) == {"a": ("id", 2.0), "b": ("id", 3.0), "c": ("id", None)}

    rng = np.random.default_rng(5)
    ids = [f"t/id-eval/{i:07d}" for i in range(100)]
    truth = rng.gamma(2.0, 1.0, 100)
    seeds = [truth + 1.0 + rng.normal(0, 0.5, 100) for _ in range(3)]  # each seed noisy, their mean 1.0 worse
    board = {"layout": "levels", "metrics": [{"name": PAIRED_METRIC, "higher_is_better": False}],
             "levels": [{"key": "id"}],
             "rows": [_row("single", {"id": float(truth.mean())}),
                      {**_row("seeded", {"id": float(np.mean(seeds))}), "runs": 3}]}
    per_run = {"single": [truth], "seeded": seeds}

    def values_of(row, column):
        return average_runs([{s: ("id", float(v)) for s, v in zip(ids, run)} for run in per_run[row["model"]]])

    [mark] = mark_board(board, values_of)
    assert mark["model"] == "seeded" and not mark["same"] and mark["n"] == 100
    assert abs(mark["diff"] - float(np.mean(seeds, axis=0).mean() - truth.mean())) < 1e-5

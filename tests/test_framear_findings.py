"""`phybench study findings`: a tiny framear run end to end, the three sentences, and (b)'s numbers recomputed."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("accelerate")

from phybench_baselines.studies import findings as fa_findings  # noqa: E402
from phybench_baselines.framear import train as fa_train  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import SplitReader, make_plan  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

TINY = ["resolution=16", "width=8", "dilations=[1,2]", "train_rows=12", "val_rows=2", "batch_size=4",
        "steps=4", "eval_every=2", "log_every=2", "sample_steps=2", "warmup_steps=1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("findings")
    uniform = get_task("uniform")
    generate(make_plan(uniform, "train-30k", None, 16, None), root / "train", progress=False)
    generate(make_plan(uniform, "id-eval", None, 3, None), root / "id", progress=False)
    generate(make_plan(uniform, "ood-eval", None, 6, None), root / "ood", progress=False)
    fa_train.main(["--train-data", str(root / "train"), "--out", str(root / "run"), "--set", *TINY])
    # nearest-neighbour's sidecars, written by hand: known fitted speeds for the same sample ids
    for split, fit in (("id", lambda v: v * 1.05), ("ood", lambda v: float(np.clip(v, 1.0, 4.0)) + 0.25)):
        rows = list(SplitReader(root / split).rows(columns=["sample_id", "velocity"]))
        samples = [{"sample_id": r["sample_id"], "true_velocity": float(r["velocity"]),
                    "law": {"fit": {"velocity_x": fit(float(r["velocity"])), "velocity_y": 0.0}}} for r in rows]
        (root / f"nn-{split}.samples.json").write_text(json.dumps({"samples": samples}))
    return root


def _args(root, out, *extra):
    return ["--run", str(root / "run"), "--data", str(root / "id"), str(root / "ood"), "--train-split",
            str(root / "train"), "--nn-results", str(root / "nn-id.samples.json"), str(root / "nn-ood.samples.json"),
            "--limit", "6", "--probe-limit", "2", "--quiet", "--out", str(out), *extra]


@pytest.mark.slow
def test_findings_end_to_end(tiny, tmp_path, capsys):
    from phybench.cli import main as cli

    out = tmp_path / "findings.json"
    curve = tmp_path / "curve.jsonl"
    assert cli(["study", "findings", *_args(tiny, out, "--curve", str(curve))]) == 0
    printed = capsys.readouterr().out
    for key in ("(a) Learning curve", "(b) Case-based generalisation", "(c) Probe flip"):
        assert key in printed
    assert printed.count("The miniature") == 2 and "the miniature" in printed.split("(c)")[1]
    f = json.loads(out.read_text())
    assert set(f["sentences"]) == {"a", "b", "c"} and all(s in printed for s in f["sentences"].values())
    assert f["selected_step"] in (2, 4)  # the lower validation error of the two snapshots
    a = f["a_learning_curve"]
    assert [p["step"] for p in a["points"]] == [2, 4]
    rows = [json.loads(line) for line in curve.read_text().splitlines()]
    for p in a["points"]:
        i = next(r for r in rows if r["step"] == p["step"] and r["split"] == "id-eval")["velocity_errors"]
        o = next(r for r in rows if r["step"] == p["step"] and r["split"] == "ood-eval")["velocity_errors"]
        if i and o:
            assert p["ood_over_id"] == pytest.approx(np.mean(o) / np.mean(i), rel=1e-5)
            lo, hi = p["ood_over_id_ci95"]
            assert lo <= hi
    # (b), recomputed directly: the truth outside [1, 4], nearest training speed from the train split's rows
    b = f["b_case_based"]
    train_v = np.unique([r["velocity"] for r in SplitReader(tiny / "train").rows(columns=["velocity"])])
    assert b["training_range"] == [1.0, 4.0] and b["training_speeds"] == len(train_v)
    ood = {r["sample_id"]: float(r["velocity"]) for r in SplitReader(tiny / "ood").rows(columns=["sample_id", "velocity"])}
    out_ids = sorted(k for k, v in ood.items() if not 1.0 <= v <= 4.0)
    assert out_ids and b["nearest_neighbour"]["videos_out_of_range"] == len(out_ids)
    nn_fit = np.asarray([float(np.clip(ood[k], 1, 4)) + 0.25 for k in out_ids])
    nn_dist = np.min(np.abs(nn_fit[:, None] - train_v[None, :]), axis=1)
    nn = b["nearest_neighbour"]
    assert nn["share_inside_training_range"] == pytest.approx(np.mean((nn_fit >= 1) & (nn_fit <= 4)), abs=1e-6)
    assert nn["median_distance_to_nearest_training_speed"] == pytest.approx(np.median(nn_dist), abs=1e-5)
    assert nn["median_abs_error"] == pytest.approx(np.median(np.abs(nn_fit - [ood[k] for k in out_ids])), abs=1e-5)
    learned_row = next(r for r in rows if r["step"] == f["selected_step"] and r["split"] == "ood-eval")
    fits = dict(zip(learned_row["sample_ids"], (fv for _, fv in learned_row["true_vs_fitted_speed"]), strict=True))
    lf = np.asarray([fits[k] for k in out_ids if k in fits and fits[k] is not None and math.isfinite(fits[k])])
    m = b["learned"]
    assert m["with_fit"] == len(lf)
    if len(lf):
        assert m["share_inside_training_range"] == pytest.approx(np.mean((lf >= 1) & (lf <= 4)), abs=1e-6)
    assert b["id_control"]["nearest_neighbour"]["share"] == pytest.approx(1.0)  # 5% off: within 10%
    # (c): verdict shares that add up over the probe's videos
    c = f["c_probe"]
    assert c["videos"] == 2 and sum(v["count"] for v in c["verdicts"].values()) == 2
    # the same inputs give the same bytes (the curve reused, the probe's split and submission too)
    again = tmp_path / "again.json"
    fa_findings.main(_args(tiny, again, "--curve", str(curve), "--work", str(out) + ".work"))
    assert again.read_bytes() == out.read_bytes()


def test_nearest_distance_and_selection(tmp_path):
    grid = np.array([1.0, 2.0, 4.0])
    assert fa_findings.nearest_distance(np.array([0.5, 1.4, 3.5, 9.0]), grid) == pytest.approx([0.5, 0.4, 0.5, 5.0])
    assert fa_findings.nearest_distance(np.array([3.0]), np.array([2.0])).tolist() == [1.0]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(e) for e in (
        {"step": 1, "loss": 0.1}, {"step": 300, "val/velocity_error": 0.3}, {"step": 600, "val/velocity_error": 0.8},
        {"step": 900, "val/velocity_error": 0.3})) + "\n")
    assert fa_findings.selected_step(tmp_path) == 300
    lo, hi = fa_findings.bootstrap(np.mean, [np.array([1.0, 2.0, 3.0])])
    assert 1.0 <= lo < 2.0 < hi <= 3.0
    assert fa_findings.findings_bytes({"x": float("nan"), "y": 1 / 3}) == b'{\n "x": null,\n "y": 0.333333\n}\n'


def test_selection_charges_lost_balls(tmp_path):
    """A log with the ranked validation error selects on it: a snapshot whose low trackable-only error
    comes from losing most balls (the grid's step-50 picks before this rule) is not chosen."""
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(e) for e in (
        {"step": 50, "val/velocity_error": 0.4, "val/untrackable": 0.75, "val/velocity_error_ranked": 150.0},
        {"step": 100, "val/velocity_error": 0.9, "val/untrackable": 0.0, "val/velocity_error_ranked": 0.9},
        {"step": 150, "val/velocity_error": 0.8, "val/untrackable": 0.05, "val/velocity_error_ranked": 9.0})) + "\n")
    assert fa_findings.selected_step(tmp_path) == 100
    assert fa_findings.selected_step(tmp_path, "val/velocity_error") == 50  # the old rule, still nameable


@pytest.mark.slow
def test_findings_refuses_an_old_curve_and_a_missing_snapshot(tiny, tmp_path, capsys):
    from phybench.cli import main as cli

    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"step": 2, "split": "id-eval", "velocity_error": 1.0}) + "\n")
    assert cli(["study", "findings", *_args(tiny, tmp_path / "f.json", "--curve", str(old))]) == 2
    assert "older studies.curve" in capsys.readouterr().err
    assert cli(["study", "findings", *_args(tiny, tmp_path / "g.json", "--select", "3", "--probe", "none")]) == 2
    assert "no snapshot at step 3" in capsys.readouterr().err
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "g.json").exists()

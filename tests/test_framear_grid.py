"""The scaling grid's findings (`phybench study findings --grid`) on small synthetic results files,
and the grid trainer's lazy frames (the same pixels as rendering every row into memory)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("accelerate")
pd = pytest.importorskip("pandas")

from phybench_baselines.studies import grid_findings as gf  # noqa: E402
from phybench_baselines.studies.paper_fig3 import FIG3, paper_facts  # noqa: E402

VIDEOS = 40
SPEEDS = np.linspace(1.0, 4.0, 31)  # the training speeds (uniform's range is [1, 4])


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch):
    """200 bootstrap resamples instead of 2,000: the same logic, a tenth of the time (2 shared cores)."""
    from phybench_baselines.studies import findings as fa_findings

    monkeypatch.setattr(fa_findings, "RESAMPLES", 200)
    monkeypatch.setattr(gf, "RESAMPLES", 200)


def write_cell(folder, width: int, rows: int, split: str, errors, fits=None, lost: int = 0) -> None:
    """A results file with its card, per-video details and (OOD) samples sidecar, as `phybench score` writes them."""
    name = f"uniform-{split}-eval-framear-w{width}-n{rows}"
    ids = [f"uniform/{split}-eval/{i:07d}" for i in range(len(errors))]
    doc = {"task": "uniform", "split": f"{split}-eval", "model": {"family": "framear", "size": f"w{width}",
                                                                   "params": 1000 * width, "train_size": rows}}
    (folder / f"{name}.json").write_text(json.dumps(doc))
    untrackable = [1.0 if i < lost else np.nan for i in range(len(errors))]
    pd.DataFrame({"sample_id": ids, "excluded": [np.nan] * len(ids), "untrackable": untrackable,
                  "velocity_error": np.asarray(errors, float), "velocity_error_ranked": np.asarray(errors, float)}
                 ).to_parquet(folder / f"{name}.details.parquet")
    if fits is not None:
        samples = [{"sample_id": s, "true_velocity": t, "law": {"fit": {"velocity_x": f, "velocity_y": 0.0}}}
                   for s, (t, f) in zip(ids, fits, strict=True)]
        (folder / f"{name}.samples.json").write_text(json.dumps({"samples": samples}))


def make_grid(folder, id_err, ood_err, fit_of=lambda t: t, widths=(8, 32), rows=(1500, 29968)):
    """id_err / ood_err: (width, rows) -> mean error; per-video noise fixed by a seed, the same videos in every cell."""
    rng = np.random.default_rng(0)
    noise = rng.lognormal(0.0, 0.3, VIDEOS)
    true = np.concatenate([rng.uniform(0.3, 0.9, VIDEOS // 2), rng.uniform(4.2, 5.0, VIDEOS // 2)])  # all out of range
    for w in widths:
        for n in rows:
            write_cell(folder, w, n, "id", id_err(w, n) * noise / noise.mean())
            write_cell(folder, w, n, "ood", ood_err(w, n) * noise[::-1] / noise.mean(),
                       fits=[(float(t), float(fit_of(t))) for t in true])
    return folder


def findings(folder, grid=SPEEDS):
    return gf.compute_grid(gf.load_grid(folder, "framear"), "uniform", grid)


def test_paper_facts_say_what_figure_3_says():
    f = paper_facts("uniform")
    assert all(v["id"] < 1 for v in f["with_data"].values())  # ID falls with data for every DiT
    assert all(v["id"] < 1 for v in f["with_size"].values())  # and with size at every training set
    assert f["ood_over_id"][0] > 10  # OOD an order of magnitude above ID everywhere
    assert f["with_data"]["DiT-L"]["ood"] > 1  # OOD of the largest model rises with data
    assert FIG3["uniform"]["id"]["DiT-S"][0] == 0.022 and FIG3["uniform"]["id"]["DiT-L"][-1] == 0.012


def test_a_grid_that_scales_like_the_paper(tmp_path):
    f = findings(make_grid(tmp_path, id_err=lambda w, n: 0.3 * (8 / w) ** 0.5 * (1500 / n) ** 0.3,
                           ood_err=lambda w, n: 3.0, fit_of=lambda t: min(max(t, 1.0), 4.0)))
    assert [r["direction"] for r in f["id_with_data"]] == ["falls", "falls"]
    assert [r["direction"] for r in f["id_with_size"]] == ["falls", "falls"]
    r = f["id_with_data"][0]
    assert r["ratio"] == pytest.approx((1500 / 29968) ** 0.3, rel=1e-9)  # the same videos: noise cancels
    assert r["ci95"][0] <= r["ratio"] <= r["ci95"][1]
    assert all(x["direction"] == "no measurable change" for x in f["ood_with_data"] + f["ood_with_size"])
    assert all(x["ci95"][0] >= 3 for x in f["ood_over_id"])
    s = f["sentences"]
    assert "agrees with the paper with data" in s["1"] and "agrees with the paper with size" in s["1"]
    assert "stays at least 3x ID" in s["2"] and "does not fall with scale, as in the paper" in s["2"]
    assert all(c["share_inside_training_range"] == 1.0 for c in f["case_based"])  # every fit clipped into [1, 4]
    assert "snaps into the training range (lower bound above 50%) in 4 of 4 cells" in s["3"]
    assert "as the paper's case-based finding says" in s["3"]
    assert "not the same scale" in s["levels"]


def test_a_grid_that_disagrees_is_said_to(tmp_path):
    f = findings(make_grid(tmp_path, id_err=lambda w, n: 0.3, ood_err=lambda w, n: 0.6 * (1500 / n) ** 0.5))
    assert [r["direction"] for r in f["id_with_data"]] == ["no measurable change"] * 2
    assert [r["direction"] for r in f["ood_with_data"]] == ["falls"] * 2
    s = f["sentences"]
    assert "disagrees with the paper with data: ID error falls in only 0 of 2" in s["1"]
    assert "falls with scale in 2 comparison(s)" in s["2"] and "unlike the paper" in s["2"]
    assert "at only 0 of 4 cells" in s["2"]  # OOD 0.13-2x ID: never several times
    assert all(c["share_inside_training_range"] == 0.0 for c in f["case_based"])  # fits follow the truth
    assert "snaps into the training range (lower bound above 50%) in 0 of 4" in s["3"]
    assert "weaker than the paper's" in s["3"]


def test_untrackable_and_the_table(tmp_path):
    write_cell(tmp_path, 16, 1500, "id", [1.0, 2.0, 3.0, 100.0], lost=1)
    f = findings(tmp_path, grid=None)
    c = f["cells"][0]
    assert c["untrackable_id"] == 0.25 and c["trackable_mean_id"] == pytest.approx(35.0)  # rows 2..4 trackable
    assert c["error_id"] == pytest.approx(26.5)  # the ranked column keeps the lost video
    assert "case_based" not in f
    assert "| w16 | 16,000 | 1,500 | 26.500" in gf.table(f)
    assert "not measurable" in f["sentences"]["1"]
    tracked = gf.load_grid(tmp_path, "framear", gf.TRACKABLE)[0].splits["id"]  # the lost video leaves this reading
    assert tracked.errors.tolist() == [2.0, 3.0, 100.0] and tracked.untrackable == 0.25


def test_trackable_only_comparisons_pair_the_videos_both_cells_keep(tmp_path):
    write_cell(tmp_path, 8, 1500, "id", [1.0, 1.0, 9.0, 9.0], lost=2)  # keeps videos 2, 3 only
    write_cell(tmp_path, 8, 6000, "id", [5.0, 5.0, 3.0, 3.0])
    r = gf.along(gf.load_grid(tmp_path, "framear", gf.TRACKABLE), "id", "data")[0]
    assert r["videos"] == 2 and r["from_error"] == 9.0 and r["to_error"] == 3.0 and r["ratio"] == pytest.approx(1 / 3)
    assert r["direction"] == "falls"


def test_refuses_what_it_cannot_read(tmp_path):
    with pytest.raises(ValueError, match="no results files"):
        gf.load_grid(tmp_path)
    write_cell(tmp_path, 8, 1500, "id", [1.0, 2.0])
    (tmp_path / "uniform-id-eval-framear-w8-n1500.details.parquet").unlink()
    with pytest.raises(ValueError, match="details.parquet is missing"):
        gf.load_grid(tmp_path)
    doc = {"task": "uniform", "split": "id-eval", "model": {"family": "framear", "size": "w8"}}
    (tmp_path / "uniform-id-eval-framear-w8-n1500.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="lacks params or train_size"):
        gf.load_grid(tmp_path)


@pytest.mark.slow
def test_cli_prints_the_findings_and_draws_the_plot(tmp_path, capsys):
    from phybench.cli import main

    (tmp_path / "grid").mkdir()
    grid = make_grid(tmp_path / "grid", id_err=lambda w, n: 0.3 * (1500 / n) ** 0.3, ood_err=lambda w, n: 3.0)
    out, svg = tmp_path / "f.json", tmp_path / "grid.svg"
    assert main(["study", "findings", "--grid", str(grid), "--out", str(out), "--plot", str(svg)]) == 0
    printed = capsys.readouterr().out
    assert "(1) ID error" in printed and "(2) OOD / ID" in printed and "(3) Case-based statistic: not computed" in printed
    assert "(1t) ID error (velocity_error" in printed and "(2t) OOD / ID" in printed
    doc = json.loads(out.read_text())
    assert doc["schema"] == "phybench.framear-grid-findings/1" and len(doc["cells"]) == 4
    assert doc["trackable_only"]["id_with_data"][0]["direction"] == "falls"
    assert math.isclose(doc["paper"]["with_data"]["DiT-S"]["id"], 0.015 / 0.022, rel_tol=1e-5)
    text = svg.read_text()
    assert text.startswith("<svg") and "paper Figure 3, uniform" in text and text.count("<polyline") == 4 + 6
    assert main(["study", "findings", "--out", str(out)]) == 2  # without --grid, one run's arguments are required
    assert "--run, --data, --nn-results, --train-split are required" in capsys.readouterr().err


def test_lazy_frames_are_the_rendered_ones(tmp_path):
    import torch

    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan
    from phybench.tasks import get_task
    from phybench_baselines.framear.train import FrameConfig, LazyClips, render_clips, training_batch

    generate(make_plan(get_task("uniform"), "train-30k", None, 4, None), tmp_path / "train", progress=False)
    rows = list(SplitReader(tmp_path / "train").rows())
    eager, lazy = render_clips(rows, 16), LazyClips(rows, 16, 32)
    assert lazy.shape == tuple(eager.shape)
    cfg = FrameConfig(resolution=16)
    for step in range(3):
        idx = torch.randint(0, 4 * 29, (8,), generator=torch.Generator().manual_seed(step))
        for a, b in zip(training_batch(cfg, eager, idx, step, 0, 1, None), training_batch(cfg, lazy, idx, step, 0, 1, None)):
            assert torch.equal(a, b)


def test_cells_are_claimed_once_and_a_dead_workers_claim_is_taken_over(tmp_path):
    import subprocess
    import sys

    from phybench_baselines.studies.grid import claim

    assert claim(tmp_path, "w8-n1500") and not claim(tmp_path, "w8-n1500")  # held by a live process (this one)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "claims" / "w8-n6000").write_text(str(dead.pid))
    assert claim(tmp_path, "w8-n6000")
    assert (tmp_path / "claims" / "w8-n6000").read_text() == str(__import__("os").getpid())


def test_the_summary_reads_cpu_seconds_and_the_validation_curve(tmp_path):
    from phybench_baselines.studies.grid import summary

    run = tmp_path / "runs" / "w8-n1500"
    run.mkdir(parents=True)
    (run / "done").write_text("")
    log = [{"step": 50, "params": 40000, "val/velocity_error": 2.0, "val/untrackable": 0.5},
           {"step": 100, "params": 40000, "val/velocity_error": 1.5, "val/untrackable": 0.25},
           {"step": 150, "params": 40000, "val/velocity_error": 1.7, "val/untrackable": 0.0}]
    (run / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log))
    cmds = [{"cell": "w8-n1500", "what": "train", "cpu_s": 100.0}, {"cell": "w8-n1500", "what": "sample x", "cpu_s": 30.0},
            {"cell": "w8-n1500", "what": "score x", "cpu_s": 2.5}, {"cell": "other", "what": "train", "cpu_s": 9.0}]
    (tmp_path / "commands.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cmds))
    assert "| w8-n1500 | 40000 | 150 | 100 | 32 | 50: 2.000 (50%), 100: 1.500 (25%), 150: 1.700 (0%) | 100 |" in summary(tmp_path)


def test_a_failed_cell_does_not_stop_the_worker(tmp_path, monkeypatch):
    """A cell whose command fails (a run killed for memory) is reported; the worker goes on with the next
    cells and exits non-zero at the end, naming the failed one (it used to exit at the first failure)."""
    from phybench_baselines.studies import grid

    done = []

    def fake_cell(args, width, rows):
        if width == 8:
            raise SystemExit("w8 train failed (-9)")
        done.append(grid.cell_name(width, rows))

    monkeypatch.setattr(grid, "do_cell", fake_cell)
    with pytest.raises(SystemExit, match="1 cell\\(s\\) failed: w8-n100"):
        grid.main(["--train-data", str(tmp_path), "--eval-data", str(tmp_path), "--work", str(tmp_path / "w"),
                   "--results", str(tmp_path / "r"), "--widths", "8", "16", "--rows", "100"])
    assert done == ["w16-n100"]
    assert not (tmp_path / "w" / "claims" / "w8-n100").exists()  # unclaimed: the next run redoes it
    assert not (tmp_path / "w" / "finished" / "w8-n100").exists() and (tmp_path / "w" / "finished" / "w16-n100").exists()

"""The metric registry: built-in entries, and a throwaway metric end to end
(register -> `phybench score` -> results file -> leaderboard data), as docs/adding-a-metric.md."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard import LeaderboardError, build
from phybench.registry import RegistryError
from phybench.scoring.metrics import (
    METRICS,
    Metric,
    default_metrics,
    higher_is_better,
    register_metric,
    requestable_metrics,
    temporary_metric,
)
from phybench.scoring.run.results import markdown_table, results_bytes
from phybench.scoring.run.score import ScoreError, parse_metrics, samples_sidecar, score
from phybench.submission import submission_meta, write_submission
from phybench.tasks import family_of, get_task

BUILT_IN = ("velocity_error", "velocity_error_penalised", "velocity_error_ranked", "position_error", "momentum_error", "energy_error", "trajectory_error", "size_error",
            "colour_kept", "ssim", "psnr", "lpips", "fvd")


def mean_abs_pixel_error(sample) -> float:
    """Mean |generated - ground truth| over the generated frames, in 0-255 pixel levels."""
    start = sample.condition_frames
    return float(np.abs(sample.video[start:].astype(np.int16) - sample.gt_video[start:]).mean())


def toy_metric(**changes) -> Metric:
    kw = dict(label="Mean abs pixel error", unit="pixel levels", fmt=".3g",
              settings={"frames": "generated frames only", "norm": "mean |a - b| over pixels and channels"},
              compute=mean_abs_pixel_error)
    return Metric("mean_abs_pixel_error", **(kw | changes))


def test_built_in_metrics_are_registered_with_their_conventions():
    # each built-in metric, in order; a metric added later (or by a plugin) does not break this test
    assert [m for m in METRICS if m in BUILT_IN] == list(BUILT_IN)
    assert default_metrics() == ("velocity_error", "ssim", "psnr", "lpips", "fvd")
    assert requestable_metrics() == default_metrics()  # companions come with the parse
    assert [m for m in BUILT_IN if higher_is_better(m)] == ["colour_kept", "ssim", "psnr"]
    assert {m: METRICS.get(m).settings_key for m in BUILT_IN} == {
        "velocity_error": "velocity", "velocity_error_penalised": "ranking", "velocity_error_ranked": "ranked",
        "position_error": "velocity", "momentum_error": "velocity",
        "energy_error": "velocity", "trajectory_error": "attributes", "size_error": "attributes",
        "colour_kept": "attributes", "ssim": "image", "psnr": "image", "lpips": "lpips", "fvd": "fvd"}
    assert {m: METRICS.get(m).weights for m in BUILT_IN if METRICS.get(m).weights} == {"lpips": "alexnet", "fvd": "i3d"}
    assert METRICS.get("fvd").kind == "set" and METRICS.get("psnr").fmt == ".2f" and METRICS.get("ssim").fmt == ".4f"
    from phybench.scoring.physics.velocity import SETTINGS

    assert METRICS.get("velocity_error").settings is SETTINGS
    # every metric a family lists is registered
    from phybench.tasks import TASKS

    for name in TASKS:
        assert set(family_of(get_task(name)).metrics) <= set(METRICS)


def test_registration_errors_and_cleanup():
    with pytest.raises(RegistryError, match="already registered"):
        register_metric(Metric("ssim"))
    with pytest.raises(ValueError, match="direction"):
        Metric("x", direction="up")
    with pytest.raises(ValueError, match="kind"):
        Metric("x", kind="frame")
    with temporary_metric(toy_metric()):
        assert "mean_abs_pixel_error" in METRICS
        assert "mean_abs_pixel_error" in requestable_metrics()
        assert "mean_abs_pixel_error" not in default_metrics()  # default=False: only when asked for
        assert parse_metrics("mean_abs_pixel_error,velocity_error") == ("velocity_error", "mean_abs_pixel_error")
    assert "mean_abs_pixel_error" not in METRICS
    with pytest.raises(ScoreError, match="unknown metric.*choose from velocity_error"):
        parse_metrics("mean_abs_pixel_error")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A 6-video uniform ood-eval split, a ground-truth and a frozen-frame submission."""
    root = tmp_path_factory.mktemp("metric")
    split = root / "uniform-ood-eval"
    generate(make_plan(get_task("uniform"), "ood-eval", None, 6, None), split, progress=False)
    reader = SplitReader(split)
    subs = []
    for name, edit in (("ground-truth", None), ("copy-last", lambda v: np.repeat(v[2:3], len(v), axis=0))):
        def videos():
            for row in reader.rows():
                video = reader.video(row)
                yield row["sample_id"], (edit(video) if edit else video)

        subs.append(write_submission(root / name, submission_meta(reader.manifest, name), videos()))
    return split, subs[0], subs[1]


def test_a_new_metric_is_scored_reported_and_shown(tiny, tmp_path, capsys):
    split, gt_sub, frozen_sub = tiny
    results_dir = tmp_path / "results"
    results_dir.mkdir()
    with temporary_metric(toy_metric()):
        for sub in (gt_sub, frozen_sub):
            out = score(sub, split, ("velocity_error", "mean_abs_pixel_error"), progress=False)
            res = out.results
            assert res["metrics"] == ["velocity_error", "mean_abs_pixel_error", "velocity_error_penalised",
                                      "velocity_error_ranked", "position_error", "trajectory_error", "size_error",
                                      "colour_kept", "abnormal", "law_error",
                                      "velocity_error_paper", "velocity_error_paper_y"]
            # requested, then the family's companions
            assert res["higher_is_better"]["mean_abs_pixel_error"] is False
            assert res["provenance"]["metric_settings"]["mean_abs_pixel_error"] == toy_metric().settings
            overall = res["summary"]["overall"]["mean_abs_pixel_error"]
            assert overall["count"] == 6 and overall["ci95"][0] <= overall["mean"] <= overall["ci95"][1]
            assert all(d["mean_abs_pixel_error"] is not None for d in out.details)
            assert "mean_abs_pixel_error ↓" in markdown_table(res)
            name = res["model"]["name"]
            (results_dir / f"{name}.json").write_bytes(results_bytes(res))
            (results_dir / f"{name}.samples.json").write_text(
                json.dumps(samples_sidecar(res, out.details), sort_keys=True) + "\n")
            if sub == gt_sub:
                assert overall["mean"] == 0.0
            else:
                assert overall["mean"] > 0.0

        # the command line takes it too; spawned workers would not know it, so it is scored serially
        code = main(["score", str(gt_sub), "--data", str(split), "--metrics", "mean_abs_pixel_error,ssim",
                     "--fail-above", "mean_abs_pixel_error=0.5", "--quiet", "--workers", "2"])
        assert code == 0, capsys.readouterr().err
        assert "mean_abs_pixel_error ↓" in capsys.readouterr().out

        report = build(results_dir, tmp_path / "site")
        assert report.ok and len(report.accepted) == 2
        data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
        text = json.dumps(data)
        assert "mean_abs_pixel_error" in text and "Mean abs pixel error" in text

        # a results file whose settings for the new metric differ is refused, like any other
        with temporary_metric_swapped(toy_metric(settings={"frames": "every frame"})):
            with pytest.raises(LeaderboardError, match=r"metric_settings\['mean_abs_pixel_error'\] differ"):
                build(results_dir, tmp_path / "site2")
    assert "mean_abs_pixel_error" not in METRICS


def temporary_metric_swapped(metric: Metric):
    """Replace a registered metric for a ``with`` block."""
    import contextlib

    @contextlib.contextmanager
    def swap():
        old = METRICS.unregister(metric.name)
        register_metric(metric)
        try:
            yield metric
        finally:
            METRICS.unregister(metric.name)
            register_metric(old)

    return swap()


def test_leaderboard_data_lists_the_new_metric(tiny, tmp_path):
    """The board's metric columns come from the registry: label, unit and direction."""
    split, gt_sub, _ = tiny
    with temporary_metric(toy_metric(direction="higher", label="Toy", unit="levels")):
        res = score(gt_sub, split, ("velocity_error", "mean_abs_pixel_error"), progress=False).results
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "gt.json").write_bytes(results_bytes(res))
        build(tmp_path / "r", tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text()
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert "Toy" in page
    (board,) = data["boards"]
    cols = {m["name"]: (m["label"], m["unit"], m["higher_is_better"]) for m in board["metrics"]}
    assert cols["mean_abs_pixel_error"] == ("Toy", "levels", True)
    assert list(cols) == ["velocity_error", "velocity_error_penalised", "velocity_error_ranked", "position_error",
                          "trajectory_error", "size_error", "colour_kept", "abnormal", "law_error",
                          "velocity_error_paper", "velocity_error_paper_y",
                          "mean_abs_pixel_error"]  # registration order
    assert all(cell["metrics"]["mean_abs_pixel_error"]["mean"] == 0.0 for cell in board["rows"][0]["cells"].values())

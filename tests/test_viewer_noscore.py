"""`phybench view --results`: the viewer reuses the scores and never re-scores (issue 37, "Cost").

Every metric of the registry, the scorer and the per-sample scorer are made to raise while the
viewer is built from a results file: the build must succeed, and the numbers on the page must be
the sidecar's (and the details Parquet's) to the digits the page keeps.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task


def _page_data(folder: Path) -> dict:
    text = (folder / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', text, flags=re.S)
    assert m, "no inline data"
    return json.loads(m.group(1))


def _six(x: float | None) -> float | None:
    """What the page keeps of a number (`viewer_sources.num`: 6 significant digits)."""
    return None if x is None else float(f"{x:.6g}")


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict[str, Path]:
    """A 6-video uniform split, a submission that freezes after 3 frames and drifts, and its score on disk."""
    root = tmp_path_factory.mktemp("noscore")
    split = root / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 6, None), split, progress=False)
    reader = SplitReader(split)

    def videos():
        for i, row in enumerate(reader.rows()):
            v = reader.video(row)
            yield row["sample_id"], (np.repeat(v[2:3], len(v), axis=0) if i % 2 else np.roll(v, 1, axis=2))

    sub = root / "sub"
    write_submission(sub, submission_meta(reader.manifest, "half-frozen"), videos())
    other = root / "other"
    write_submission(other, submission_meta(reader.manifest, "ground-truth"),
                     ((r["sample_id"], reader.video(r)) for r in reader.rows()))
    results, details = root / "r.json", root / "d.parquet"
    assert main(["score", str(sub), "--data", str(split), "--metrics", "velocity_error,ssim,psnr",
                 "--out", str(results), "--details", str(details), "--quiet"]) == 0
    other_results = root / "other.json"
    assert main(["score", str(other), "--data", str(split), "--metrics", "velocity_error",
                 "--out", str(other_results), "--quiet"]) == 0
    return {"split": split, "sub": sub, "other": other, "results": results, "details": details,
            "other_results": other_results, "root": root}


@pytest.fixture
def no_scoring(monkeypatch):
    """Every way to score raises: the registry's metrics, the scorer, the per-sample scorer."""
    import phybench.scoring.run.sample as sample
    import phybench.scoring.run.score as score
    from phybench.scoring.metrics import all_metrics

    def boom(*_a, **_k):
        raise AssertionError("the viewer scored a metric")

    for metric in all_metrics():
        monkeypatch.setattr(metric, "compute", boom)
    monkeypatch.setattr(score, "score", boom)
    monkeypatch.setattr(sample, "score_sample", boom)
    monkeypatch.setattr(sample, "score_row", boom)


def test_the_viewer_shows_the_sidecars_numbers_and_scores_nothing(scored, no_scoring, tmp_path, monkeypatch):
    import phybench.scoring.judge.abnormal as abnormal

    monkeypatch.setattr(abnormal, "judge", lambda *a, **k: (_ for _ in ()).throw(AssertionError("judged")))
    out = tmp_path / "view"
    assert main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["results"]),
                 "--out", str(out), "--quiet"]) == 0
    data = _page_data(out)
    side = json.loads(scored["results"].with_name("r.samples.json").read_text())
    assert [v["id"] for v in data["videos"]] == [s["sample_id"] for s in side["samples"]]
    results = json.loads(scored["results"].read_text())
    untrackable = {u["sample_id"]: u["reason"] for u in results["untrackable"]}
    for video, row in zip(data["videos"], side["samples"], strict=True):
        cell = video["cells"][0]
        assert cell["true_velocity"] == _six(row["true_velocity"])
        assert cell["generated_velocity"] == _six(row["generated_velocity"])
        assert cell["untrackable"] == untrackable.get(video["id"])
        if row.get("law"):
            assert cell["law"]["law"] == row["law"]["law"]
            assert cell["law"]["fit"] == _six(row["law"]["fit"][cell["law"]["param"]])
            assert cell["law"]["truth"] == _six(row["law"]["truth"][cell["law"]["param"]])
        assert "velocity_error" not in cell and "ssim" not in cell  # no details given: no metric the files lack
    assert data["headline"][0][0]["value"] == _six(results["summary"]["overall"][data["headline"][0][0]["name"]]["mean"])


def test_with_details_every_metric_is_the_details(scored, no_scoring, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "view"
    assert main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["results"]),
                 "--details", str(scored["details"]), "--out", str(out), "--quiet"]) == 0
    data = _page_data(out)
    cols = pq.read_table(scored["details"]).to_pydict()
    by_id = {sid: i for i, sid in enumerate(cols["sample_id"])}
    checked = 0
    for video in data["videos"]:
        cell, i = video["cells"][0], by_id[video["id"]]
        for metric in ("velocity_error", "velocity_error_ranked", "ssim", "psnr", "abnormal"):
            want = cols[metric][i]
            assert cell[metric] == (None if want is None or not np.isfinite(want) else _six(want)), (metric, video["id"])
            checked += want is not None
    assert checked >= 6 * 4
    assert any(k["kind"] == "velocity_error" for k in data["gallery"])


def test_without_results_the_viewer_scores_once_and_shows_the_same_numbers(scored, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["results"]),
                 "--details", str(scored["details"]), "--out", str(a), "--quiet"]) == 0
    assert main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--out", str(b), "--quiet"]) == 0
    da, db = _page_data(a), _page_data(b)
    for va, vb in zip(da["videos"], db["videos"], strict=True):
        ca, cb = va["cells"][0], vb["cells"][0]
        for key in ("true_velocity", "generated_velocity", "velocity_error", "ssim", "psnr", "untrackable", "law"):
            assert ca.get(key) == cb.get(key), key


def test_another_submissions_results_or_sidecar_are_refused_and_the_old_viewer_is_kept(scored, no_scoring, tmp_path,
                                                                                          capsys):
    out = tmp_path / "view"
    assert main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["results"]),
                 "--out", str(out), "--quiet"]) == 0
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    code = main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["other_results"]),
                 "--out", str(out), "--quiet"])
    assert code == 2 and "[results_mismatch]" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # the results file's own sidecar swapped for another score's: refused too
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    (swapped / "r.json").write_bytes(scored["results"].read_bytes())
    (swapped / "r.samples.json").write_bytes(scored["other_results"].with_name("other.samples.json").read_bytes())
    code = main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(swapped / "r.json"),
                 "--out", str(tmp_path / "v2"), "--quiet"])
    assert code == 2 and "[samples_mismatch]" in capsys.readouterr().err and not (tmp_path / "v2").exists()


def test_details_of_another_score_are_refused(scored, no_scoring, tmp_path, capsys):
    from phybench.scoring.run.results import details_bytes

    rows = [{"sample_id": f"uniform/id-eval/{i:07d}", "level": "id", "untrackable": None} for i in range(6)]
    rows[0]["untrackable"] = "red ball not found in frame(s) 9"  # the results file lists none or others
    results = json.loads(scored["results"].read_text())
    if any(u["sample_id"] == rows[0]["sample_id"] for u in results["untrackable"]):
        rows[0]["untrackable"] = None
        rows[1]["untrackable"] = "planted"
        if any(u["sample_id"] == rows[1]["sample_id"] for u in results["untrackable"]):
            pytest.skip("the planted row is untrackable in the results too")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(details_bytes(rows, []))
    code = main(["view", str(scored["sub"]), "--data", str(scored["split"]), "--results", str(scored["results"]),
                 "--details", str(bad), "--out", str(tmp_path / "v"), "--quiet"])
    assert code == 2 and "[details_mismatch]" in capsys.readouterr().err and not (tmp_path / "v").exists()

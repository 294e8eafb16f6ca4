"""FVD: the split's own I3D features are cached, and a cached run gives the same bytes as a fresh one.

Every test requests `fetched` (tests/conftest.py): it passes run alone on an empty weights cache."""
from __future__ import annotations

import time

import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.scoring.run.results import results_bytes
from phybench.scoring.run.score import score
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

pytestmark = pytest.mark.slow  # the fast tier (pytest -m "not slow") leaves this file out: docs/testing.md


def test_reference_features_are_cached_and_change_nothing(tmp_path, monkeypatch, fetched):
    monkeypatch.setenv("PHYBENCH_FVD_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), data, progress=False)
    reader = SplitReader(data)

    def videos(shift: int):
        for row in reader.rows():
            video = reader.video(row)
            if shift:
                video[reader.spec.condition_frames:] = video[reader.spec.condition_frames:][:, :, ::-1]
            yield row["sample_id"], video

    sub = tmp_path / "mirror"
    write_submission(sub, submission_meta(reader.manifest, "mirror"), videos(1))
    t0 = time.perf_counter()
    first = score(sub, data, ("fvd",), progress=False, batch_size=4)
    t1 = time.perf_counter()
    cached = list((tmp_path / "cache").glob("*.npy"))
    assert len(cached) == 1
    second = score(sub, data, ("fvd",), progress=False, batch_size=4)
    t2 = time.perf_counter()
    assert results_bytes(first.results) == results_bytes(second.results)
    assert first.results["summary"]["overall"]["fvd"]["value"] > 0
    assert t2 - t1 < t1 - t0  # the reference half is not computed again
    monkeypatch.setenv("PHYBENCH_FVD_CACHE", "0")
    third = score(sub, data, ("fvd",), progress=False, batch_size=4)
    assert results_bytes(third.results) == results_bytes(first.results)


def test_a_long_lpips_fvd_run_prints_an_estimate_first(tmp_path, monkeypatch, capsys, fetched):
    import phybench.scoring.run.score as score_module

    monkeypatch.setenv("PHYBENCH_FVD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(score_module, "ESTIMATE_MIN_VIDEOS", 2)  # 2 videos stand for a long run
    data = tmp_path / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=2), data, progress=False)
    reader = SplitReader(data)
    sub = tmp_path / "gt"
    write_submission(sub, submission_meta(reader.manifest, "gt"), ((r["sample_id"], reader.video(r)) for r in reader.rows()))
    score(sub, data, ("lpips", "fvd"), progress=True, batch_size=4)
    err = capsys.readouterr().err
    assert "estimate: LPIPS+FVD on 2 videos: about" in err and "on this CPU" in err
    assert "I3D" in err and "x2 (reference and generated" in err
    assert "--metrics" not in err  # nothing cheaper was asked for
    score(sub, data, ("velocity_error", "ssim", "psnr", "lpips", "fvd"), progress=True, batch_size=4)
    line = capsys.readouterr().err.split("estimate: ", 1)[1].split("\n", 1)[0]
    assert "(reference features cached)" in line  # the first run cached the reference half
    assert line.endswith(tuple(f"; --metrics velocity_error,ssim,psnr takes about {k} s" for k in range(1, 90)))


def test_the_estimate_reads_as_a_person_says_it():
    from phybench.scoring.run.estimate import _duration

    assert [_duration(s) for s in (0.2, 40, 88, 95, 599, 3000, 9000)] == \
        ["1 s", "40 s", "88 s", "1.6 min", "10.0 min", "50 min", "2.5 h"]


def test_workers_and_threads_give_the_same_bytes_with_lpips_and_fvd(tmp_path, fetched):
    """`--workers 2` scores LPIPS and FVD in its workers too (whole I3D batches per worker, I3D on
    one thread everywhere): the results bytes equal one process's, and do not depend on the
    torch/BLAS thread count (I3D logits moved by ~7e-6 between 1 and 2 threads)."""
    import os
    import subprocess
    import sys

    data = tmp_path / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=8), data, progress=False)
    reader = SplitReader(data)
    cf = reader.spec.condition_frames

    def videos():
        for row in reader.rows():
            video = reader.video(row)
            video[cf:] = video[cf:][:, ::-1]  # flipped upside down: LPIPS and FVD far from 0
            yield row["sample_id"], video

    sub = tmp_path / "flip"
    write_submission(sub, submission_meta(reader.manifest, "flip"), videos(), fmt="npz")
    outs = {}
    for workers, threads in (("1", "2"), ("2", "2"), ("1", "1")):
        out = tmp_path / f"w{workers}-t{threads}.json"
        env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
               "PHYBENCH_FVD_CACHE": "0"}
        subprocess.run([sys.executable, "-m", "phybench.cli", "score", str(sub), "--data", str(data), "--metrics",
                        "velocity_error,ssim,lpips,fvd", "--workers", workers, "--batch-size", "2", "--out", str(out),
                        "--quiet"], env=env, check=True, capture_output=True)
        outs[(workers, threads)] = out.read_bytes()
    assert len(set(outs.values())) == 1, [k for k in outs if outs[k] != outs[("1", "2")]]
    import json

    overall = json.loads(outs[("1", "2")])["summary"]["overall"]
    assert overall["lpips"]["mean"] > 0.01 and overall["fvd"]["value"] > 0

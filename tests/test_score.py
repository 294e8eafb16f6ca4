"""`phybench score` end to end: results, determinism, thresholds, refusals, provenance."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

FAST = "velocity_error,ssim,psnr"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("split") / "collision-ood-eval"
    generate(make_plan(get_task("collision"), "ood-eval", None, 12, None), out, progress=False)
    return out


def _submission(split_dir: Path, out: Path, name: str, edit=None) -> Path:
    reader = SplitReader(split_dir)

    def videos():
        for row in reader.rows():
            video = reader.video(row)
            yield row["sample_id"], (edit(video) if edit else video)

    write_submission(out, submission_meta(reader.manifest, name), videos())
    return out


@pytest.fixture(scope="module")
def gt_sub(split_dir, tmp_path_factory) -> Path:
    return _submission(split_dir, tmp_path_factory.mktemp("sub") / "gt", "ground-truth")


@pytest.fixture(scope="module")
def frozen_sub(split_dir, tmp_path_factory) -> Path:
    return _submission(split_dir, tmp_path_factory.mktemp("sub") / "frozen", "copy-last",
                       lambda v: np.repeat(v[2:3], len(v), axis=0))


@pytest.mark.slow
def test_ground_truth_scores_at_the_floor_and_twice_gives_the_same_bytes(capsys, split_dir, gt_sub, tmp_path):
    a, b, details = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "d.parquet"
    code, out, err = run(capsys, "score", gt_sub, "--data", split_dir, "--metrics", FAST, "--out", a,
                         "--details", details, "--quiet")
    assert code == 0, err
    assert "| overall | 12 | 0 | " in out  # the Markdown table on stdout
    code, _, err = run(capsys, "score", gt_sub, "--data", split_dir, "--metrics", FAST, "--out", b, "--quiet",
                       "--workers", "2")
    assert code == 0, err
    assert a.read_bytes() == b.read_bytes()  # byte-identical, also across worker counts
    res = json.loads(a.read_text())
    overall = res["summary"]["overall"]
    assert overall["velocity_error"]["mean"] <= 0.001
    assert overall["ssim"]["mean"] == 1.0 and overall["psnr"]["mean"] == 100.0
    lo, hi = overall["velocity_error"]["ci95"]
    assert lo <= overall["velocity_error"]["mean"] <= hi
    assert sum(v["videos"] for v in res["summary"]["levels"].values()) == 12
    prov = res["provenance"]
    manifest = json.loads((split_dir / "manifest.json").read_text())
    assert prov["split_hash"] == manifest["split_hash"]
    assert prov["task_spec_hash"] == get_task("collision").spec_hash()
    assert len(prov["submission_hash"]) == 64 and "velocity" in prov["metric_settings"]
    assert res["model"]["name"] == "ground-truth"
    table = pq.read_table(details)
    assert table.num_rows == 12 and "velocity_error" in table.column_names


@pytest.mark.slow
def test_copy_last_is_worse_and_fail_above_fails_the_job(capsys, split_dir, frozen_sub, tmp_path):
    out_file = tmp_path / "r.json"
    code, out, err = run(capsys, "score", frozen_sub, "--data", split_dir, "--metrics", FAST, "--out", out_file,
                         "--fail-above", "velocity_error=0.05", "--quiet")
    assert code == 1
    assert "velocity_error" in err and "above 0.05" in err
    res = json.loads(out_file.read_text())  # still written: the job summary needs it
    assert res["summary"]["overall"]["velocity_error"]["mean"] > 0.5
    code, _, err = run(capsys, "score", frozen_sub, "--data", split_dir, "--metrics", FAST,
                       "--fail-below", "ssim=0.5", "--quiet")
    assert code == 0, err


def test_bad_thresholds_and_metrics_are_usage_errors(capsys, split_dir, gt_sub):
    code, _, err = run(capsys, "score", gt_sub, "--data", split_dir, "--fail-above", "velocity_error")
    assert code == 2 and "METRIC=VALUE" in err
    code, _, err = run(capsys, "score", gt_sub, "--data", split_dir, "--metrics", "velocity,ssim")
    assert code == 2 and "unknown metric" in err and "velocity_error" in err
    code, _, err = run(capsys, "score", gt_sub, "--data", split_dir, "--metrics", "ssim", "--fail-above", "fvd=1")
    assert code == 2 and "not scored" in err


def test_invalid_submission_is_refused_and_nothing_is_written(capsys, split_dir, gt_sub, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(gt_sub, bad)
    victim = next((bad / "videos").rglob("*.npy"))
    victim.unlink()
    out_file = tmp_path / "r.json"
    code, out, err = run(capsys, "score", bad, "--data", split_dir, "--metrics", FAST, "--out", out_file, "--quiet")
    assert code == 2 and "does not validate" in err and "missing" in err
    assert not out_file.exists()
    code, out, _ = run(capsys, "validate", bad, "--data", split_dir, "--json")
    assert code != 0 and json.loads(out)["ok"] is False


def test_a_tampered_split_is_refused(capsys, split_dir, gt_sub, tmp_path):
    copy = tmp_path / "split"
    shutil.copytree(split_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    # a consistent-looking forgery: the manifest's hash no longer matches the data
    manifest["split_hash"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest))
    sub = tmp_path / "sub"
    shutil.copytree(gt_sub, sub)
    meta = json.loads((sub / "submission.json").read_text())
    meta["split_hash"] = "0" * 64
    (sub / "submission.json").write_text(json.dumps(meta))
    out_file = tmp_path / "r.json"
    code, _, err = run(capsys, "score", sub, "--data", copy, "--metrics", FAST, "--out", out_file, "--quiet")
    assert code == 2 and "does not verify" in err and "phybench verify" in err
    assert not out_file.exists()


def test_without_weights_lpips_and_fvd_are_skipped_with_instructions(capsys, split_dir, gt_sub, tmp_path, monkeypatch):
    monkeypatch.setenv("PHYBENCH_WEIGHTS_DIR", str(tmp_path / "no-weights"))
    out_file = tmp_path / "r.json"
    code, out, err = run(capsys, "score", gt_sub, "--data", split_dir, "--out", out_file, "--quiet")
    assert code == 0, err
    assert "phybench weights fetch" in err
    res = json.loads(out_file.read_text())
    assert "lpips" not in res["summary"]["overall"] and "ssim" in res["summary"]["overall"]
    assert any("phybench weights fetch" in w for w in res["warnings"])
    assert not os.listdir(tmp_path / "no-weights") if (tmp_path / "no-weights").exists() else True


def test_scoring_decodes_each_video_once_and_still_reports_every_problem(split_dir, gt_sub, tmp_path, monkeypatch):
    """Validation and scoring share one read: each video file is decoded exactly once by `score`
    (it was twice: once to validate and hash it, once to score it), and a bad video found while
    scoring still stops the run with the validator's code, nothing written."""
    from phybench.scoring.run.score import ScoreError, score
    from phybench.submission.format import Submission

    calls: list[str] = []
    original = Submission._decode_file

    def counting(self, video, data):
        calls.append(video.sample_id)
        return original(self, video, data)

    monkeypatch.setattr(Submission, "_decode_file", counting)
    scored = score(gt_sub, split_dir, "velocity_error,ssim,psnr", progress=False)
    n = len(SplitReader(split_dir))
    assert sorted(calls) == sorted(set(calls)) and len(calls) == n
    from phybench.submission.validation import validate

    assert scored.results["provenance"]["submission_hash"] == validate(gt_sub, split_dir).submission_hash

    bad = tmp_path / "bad"
    shutil.copytree(gt_sub, bad)
    victim = sorted((bad / "videos").rglob("*.np*"))[-1]
    victim.write_bytes(b"not a video")
    with pytest.raises(ScoreError) as err:
        score(bad, split_dir, "velocity_error", progress=False)
    assert err.value.code == validate(bad, split_dir).errors[0].code


@pytest.mark.slow
def test_forked_workers_give_the_same_bytes(split_dir, frozen_sub, tmp_path):
    """`phybench score` from the command line does not load torch for the cheap metrics, so its
    workers are forked (no re-import); their results bytes equal one process's."""
    import subprocess
    import sys

    probe = subprocess.run([sys.executable, "-c", "import phybench.cli, sys; from phybench.scoring.run.loop import _context; "
                            "print(_context().get_start_method(), 'torch' in sys.modules)"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.split() == ["fork", "False"]
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        subprocess.run([sys.executable, "-m", "phybench.cli", "score", str(frozen_sub), "--data", str(split_dir),
                        "--metrics", FAST, "--workers", workers, "--out", str(out), "--quiet"],
                       capture_output=True, check=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]

"""`phybench leaderboard verify`: re-score results files from their submissions, compare every number."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard.verify.records import read_record
from phybench.scoring.run.layout import record_path
from phybench.leaderboard.verify.rescore import SubmissionIndex, verify_one
from phybench.scoring.run.score import score, write_results
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

CHEAP = "velocity_error,ssim,psnr"


def run(capsys, *argv):
    code = main(["leaderboard", "verify", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _submission(split_dir: Path, out: Path, name: str, edit=None) -> Path:
    reader = SplitReader(split_dir)
    videos = ((row["sample_id"], edit(reader.video(row)) if edit else reader.video(row)) for row in reader.rows())
    write_submission(out, submission_meta(reader.manifest, name), videos)
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """A 10-sample uniform split, a second split, a copy-last submission (a folder and a zip) and its results."""
    root = tmp_path_factory.mktemp("verify")
    splits = root / "data"
    generate(make_plan(get_task("uniform"), "id-eval", None, 10, None), splits / "uniform-id-eval", progress=False)
    generate(make_plan(get_task("uniform"), "ood-eval", None, 6, None), root / "other" / "uniform-ood-eval",
             progress=False)
    subs = root / "subs"
    sub = _submission(splits / "uniform-id-eval", subs / "copy-last", "copy-last",
                      lambda v: np.repeat(v[2:3], len(v), axis=0))
    gt = _submission(splits / "uniform-id-eval", root / "gt-src", "ground-truth")
    with zipfile.ZipFile(subs / "ground-truth.zip", "w") as z:  # a packed submission is found by hash too
        for f in sorted(gt.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(gt).as_posix())
    results = root / "results"
    for name, path in (("copy-last", sub), ("ground-truth", subs / "ground-truth.zip")):
        write_results(results / f"uniform-id-eval-{name}.json",
                      score(path, splits / "uniform-id-eval", CHEAP.split(","), progress=False))
    return {"root": root, "splits": splits, "subs": subs, "results": results, "other": root / "other"}


def _copy(world, tmp_path: Path, name: str = "copy-last") -> Path:
    """A fresh copy of one results file (and its sidecar) to verify and tamper with."""
    out = tmp_path / "results"
    out.mkdir(exist_ok=True)
    for suffix in (".json", ".samples.json"):
        src = world["results"] / f"uniform-id-eval-{name}{suffix}"
        if src.exists():
            shutil.copy(src, out / src.name)
    return out / f"uniform-id-eval-{name}.json"


def _args(world, *extra):
    return ("--submissions", world["subs"], "--splits", world["splits"], "--by", "tester", "--date", "2026-11-25",
            *extra)


@pytest.mark.slow
def test_verified_record_is_written_read_back_and_identical_twice(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    gt = _copy(world, tmp_path, "ground-truth")  # its submission is a .zip
    code, out, err = run(capsys, results.parent, *_args(world))
    assert code == 0, err
    assert f"{results}: verified" in out and f"{gt}: verified" in out
    record = read_record(results)
    assert record is not None and record.verified_by == "tester" and record.date == "2026-11-25"
    assert record.submission_hash == json.loads(results.read_text())["provenance"]["submission_hash"]
    assert "velocity_error" in record.recomputed and "ssim" in record.recomputed and record.skipped == ()
    assert read_record(gt) is not None
    first = record_path(results).read_bytes()
    code, _, err = run(capsys, results, *_args(world, "--workers", "2"))  # named directly; 2 worker processes
    assert code == 0, err
    assert record_path(results).read_bytes() == first


def test_forged_number_differs_names_the_field_and_removes_the_record(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    code, _, err = run(capsys, results, *_args(world))
    assert code == 0 and record_path(results).exists(), err
    doc = json.loads(results.read_text())
    doc["summary"]["overall"]["velocity_error"]["mean"] = 1e-6  # copy-last claims to be perfect
    results.write_text(json.dumps(doc, indent=2, sort_keys=True))
    code, out, err = run(capsys, results, *_args(world))
    assert code == 1, err
    assert f"{results}: differs: summary.overall.velocity_error.mean: claimed 1e-06, recomputed" in out
    assert len([line for line in out.splitlines() if ": differs: " in line]) == 1  # exactly that field
    assert not record_path(results).exists() and "was removed" in out


def test_forged_sidecar_value_is_named(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    sidecar = results.with_name(results.stem + ".samples.json")
    doc = json.loads(sidecar.read_text())
    doc["samples"][3]["generated_velocity"] = doc["samples"][3]["true_velocity"]
    sidecar.write_text(json.dumps(doc, sort_keys=True))
    code, out, err = run(capsys, results, *_args(world))
    assert code == 1, err
    assert f"differs: {sidecar.name}: samples.3.generated_velocity: claimed" in out
    assert not record_path(results).exists()


def test_missing_submission_is_one_line_exit_2_and_nothing_written(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    doc = json.loads(results.read_text())
    doc["provenance"]["submission_hash"] = "ab" * 32
    results.write_text(json.dumps(doc))
    good = _copy(world, tmp_path, "ground-truth")  # verifiable, but not written: one file was refused
    code, out, err = run(capsys, results.parent, *_args(world))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert lines[-1].startswith(f"{results}: error [verify-no-submission]: no submission with hash abababababab")
    assert sum("error [" in line for line in lines) == 1
    assert not record_path(results).exists() and not record_path(good).exists()


def test_wrong_split_is_exit_2(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    code, out, err = run(capsys, results, "--submissions", world["subs"], "--splits", world["other"])
    assert code == 2 and "error [verify-no-split]" in err and "no split with hash" in err
    assert not record_path(results).exists()
    # a split with the right hash but another name in the file: the file's split is not that one
    doc = json.loads(results.read_text())
    doc["split"] = "ood-eval"
    results.write_text(json.dumps(doc))
    code, _, err = run(capsys, results, *_args(world))
    assert code == 2 and "error [verify-split-mismatch]" in err and "split 'ood-eval'" in err


def test_unreadable_results_and_usage_errors(capsys, world, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, bad, *_args(world))
    assert code == 2 and f"{bad}: error [verify-unreadable]" in err
    results = _copy(world, tmp_path)
    code, _, err = run(capsys, results, *_args(world, "--skip", "lpipz"))
    assert code == 2 and "error [verify-usage]" in err and "lpipz" in err
    code, _, err = run(capsys, results, *_args(world, "--date", "25/11/2026"))
    assert code == 2 and "error [verify-usage]" in err and "YYYY-MM-DD" in err
    code, _, err = run(capsys, results, "--splits", world["splits"])
    assert code == 2 and "--submissions" in err
    assert not record_path(results).exists()


@pytest.mark.parametrize("skip", ["velocity_error,velocity_error_penalised,velocity_error_ranked", "velocity_error_ranked",
                                  "ssim", "abnormal", "summary", "lpips,velocity_error"])
def test_skip_is_only_for_lpips_and_fvd(capsys, world, tmp_path, skip):
    """Hostile (issue 36): `--skip velocity_error,velocity_error_penalised,velocity_error_ranked` on
    copy-last forged to 1e-6 printed `verified`, and the --require-verified board ranked it first."""
    results = _copy(world, tmp_path)
    doc = json.loads(results.read_text())
    for name in ("velocity_error", "velocity_error_penalised", "velocity_error_ranked"):
        doc["summary"]["overall"][name]["mean"] = 1e-6
    results.write_text(json.dumps(doc, indent=2, sort_keys=True))
    code, out, err = run(capsys, results, *_args(world, "--skip", skip))
    assert code == 2 and "error [verify-usage]" in err and "only lpips, fvd may be skipped" in err, (out, err)
    assert "verified" not in out and not record_path(results).exists()


def test_changed_settings_are_refused_not_reported_as_differences(capsys, world, tmp_path):
    results = _copy(world, tmp_path)
    doc = json.loads(results.read_text())
    block = doc["provenance"]["metric_settings"]["image"]
    key = sorted(block)[0]
    block[key] = "something else"
    results.write_text(json.dumps(doc))
    code, _, err = run(capsys, results, *_args(world))
    assert code == 2 and "error [verify-settings]" in err and "image" in err


def test_skip_lpips_and_fvd_lists_them_as_skipped(world, tmp_path):
    """A file that reports LPIPS and FVD (their values here forged: they are not recomputed)."""
    results = _copy(world, tmp_path)
    doc = json.loads(results.read_text())
    doc["metrics"] += ["lpips", "fvd"]
    doc["summary"]["overall"]["lpips"] = {"mean": 0.5}
    doc["summary"]["overall"]["fvd"] = {"value": 123.0}
    doc["provenance"]["metric_settings"]["lpips"] = {"anything": 1}
    doc["provenance"]["weights"] = {"alexnet": "x", "alexnet.source": "y", "i3d": "z", "i3d.source": "w"}
    results.write_text(json.dumps(doc))
    outcome = verify_one(results, world["subs"] / "copy-last", world["splits"] / "uniform-id-eval",
                         skip=("lpips", "fvd"), by="tester", date="2026-11-25")
    assert outcome.verified, outcome.differences
    record = read_record(results)
    assert record is not None and record.skipped == ("fvd", "lpips") and "lpips" not in record.recomputed
    assert "not recomputed: fvd, lpips" in record.words()


@pytest.mark.slow
def test_lpips_and_fvd_are_recomputed_unless_skipped(capsys, tmp_path, monkeypatch, fetched):
    """Scored for real with LPIPS and FVD (pinned weights), on 2 videos: verify recomputes
    both; a forged LPIPS is named when FVD is skipped (and listed as skipped)."""
    monkeypatch.setenv("PHYBENCH_FVD_CACHE_DIR", str(tmp_path / "fvd-cache"))
    splits, subs = tmp_path / "data", tmp_path / "subs"
    generate(make_plan(get_task("uniform"), "id-eval", None, 2, None), splits / "u2", progress=False)
    sub = _submission(splits / "u2", subs / "copy-last", "copy-last", lambda v: np.repeat(v[2:3], len(v), axis=0))
    results = tmp_path / "results" / "u2-copy-last.json"
    write_results(results, score(sub, splits / "u2", [*CHEAP.split(","), "lpips", "fvd"], progress=False))
    where = ("--submissions", subs, "--splits", splits, "--by", "tester", "--date", "2026-11-25")
    code, out, err = run(capsys, results, *where)
    assert code == 0, err
    record = read_record(results)
    assert record is not None and {"lpips", "fvd"} <= set(record.recomputed) and record.skipped == ()
    doc = json.loads(results.read_text())
    doc["summary"]["overall"]["lpips"]["mean"] /= 2
    results.write_text(json.dumps(doc))
    code, out, err = run(capsys, results, *where, "--skip", "fvd")
    assert code == 1 and "differs: summary.overall.lpips.mean: claimed" in out, err
    assert sum(": differs: " in line for line in out.splitlines()) == 1  # FVD's entries are not compared
    assert not record_path(results).exists()


def test_index_hashes_folders_and_archives_like_score(world):
    index = SubmissionIndex.build(world["subs"])
    for name in ("copy-last", "ground-truth"):
        claimed = json.loads((world["results"] / f"uniform-id-eval-{name}.json").read_text())
        assert claimed["provenance"]["submission_hash"] in index.by_hash
    assert sorted(p.name for p in index.by_hash.values()) == ["copy-last", "ground-truth.zip"]


def test_a_rescored_file_verifies_its_note_kept(capsys, world, tmp_path):
    """`phybench rescore` recomputes a metric in place and notes it in provenance.rescored: a
    note, not a number; the full re-score reproduces every number, so the file verifies."""
    results = _copy(world, tmp_path)
    assert main(["rescore", str(results), "--submission", str(world["subs"] / "copy-last"),
                 "--data", str(world["splits"] / "uniform-id-eval"), "--metrics", "ssim", "--quiet"]) == 0
    assert "rescored" in json.loads(results.read_text())["provenance"]
    code, out, err = run(capsys, results, *_args(world))
    assert code == 0 and ": verified" in out, err


def test_shard_bounds_are_whole_batches_covering_every_video():
    from phybench.leaderboard.verify.rescore import shard_bounds

    assert shard_bounds(200, 16, 2) == [(0, 96), (96, 200)]  # 13 batches: 6 + 7
    assert shard_bounds(2, 1, 2) == [(0, 1), (1, 2)]
    assert shard_bounds(3, 16, 2) == [(0, 0), (0, 3)]  # one batch: process 0 (which scores after) gets none
    for n, b, k in ((1050, 16, 3), (7, 2, 4)):
        bounds = shard_bounds(n, b, k)
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(x[1] == y[0] and x[1] % b in (0, n % b) for x, y in zip(bounds, bounds[1:]))


@pytest.mark.slow
def test_lpips_and_fvd_sharded_over_two_processes_give_the_one_process_bytes(tmp_path, fetched):
    """Two processes as `accelerate launch` starts them (RANK / WORLD_SIZE), one video each,
    reproduce a one-process score with LPIPS and FVD exactly (every process with one torch
    thread, as the one-process run: CPU kernels sum in a thread-dependent order)."""
    import os
    import subprocess
    import sys

    splits, subs = tmp_path / "data", tmp_path / "subs"
    generate(make_plan(get_task("uniform"), "id-eval", None, 2, None), splits / "u2", progress=False)
    _submission(splits / "u2", subs / "copy-last", "copy-last", lambda v: np.repeat(v[2:3], len(v), axis=0))
    results = tmp_path / "results" / "u2-copy-last.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PHYBENCH_FVD_CACHE": "0",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cli = [sys.executable, "-m", "phybench.cli"]
    subprocess.run([*cli, "score", str(subs / "copy-last"), "--data", str(splits / "u2"), "--metrics",
                    f"{CHEAP},lpips,fvd", "--batch-size", "1", "--out", str(results), "--quiet"],
                   env=env, check=True, capture_output=True)
    shards = tmp_path / "shards"
    shards.mkdir()  # TMPDIR must exist, or tempfile falls back to /tmp
    verify = [*cli, "leaderboard", "verify", str(results), "--submissions", str(subs), "--splits", str(splits),
              "--batch-size", "1", "--by", "tester", "--date", "2026-11-25"]
    procs = [subprocess.Popen(verify, env={**env, "RANK": str(r), "WORLD_SIZE": "2", "TMPDIR": str(shards)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in (1, 0)]
    (out1, err1), (out0, err0) = (p.communicate(timeout=900) for p in procs)
    assert procs[0].returncode == 0 and out1 == "", err1  # rank 1 only computed its features
    assert procs[1].returncode == 0 and f"{results}: verified" in out0, err0
    record = read_record(results)
    assert record is not None and {"lpips", "fvd"} <= set(record.recomputed)
    assert (shards / "phybench-verify-shards").is_dir()  # the shards went through files there
    assert not any(shards.rglob("*.npz"))  # and process 0 removed them


def test_verify_signs_its_records_with_an_active_board_key(capsys, world, tmp_path, monkeypatch):
    """Issue 36, item 1: `--signing-key` signs the record (the board's --require-verified takes no
    other); a key that is not an active key of the board's keyring is refused before any work."""
    from phybench.leaderboard.verify.signing import load_keyring, new_key_pair

    kid = new_key_pair(tmp_path / "board.pem", tmp_path / "keys")
    new_key_pair(tmp_path / "stranger.pem", tmp_path / "elsewhere")
    monkeypatch.setenv("PHYBENCH_BOARD_KEYS", str(tmp_path / "keys"))
    monkeypatch.delenv("PHYBENCH_SIGNING_KEY", raising=False)
    results = _copy(world, tmp_path)
    code, _, err = run(capsys, results, *_args(world, "--signing-key", tmp_path / "stranger.pem"))
    assert code == 2 and "error [verify-key]" in err and "not in the board's keyring" in err
    assert not record_path(results).exists()
    code, _, err = run(capsys, results, *_args(world, "--signing-key", tmp_path / "board.pem"))
    assert code == 0, err
    record = read_record(results, load_keyring())
    assert record is not None and record.signed_by == kid

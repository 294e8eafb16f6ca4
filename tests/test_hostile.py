"""Hostile inputs at three entry points (issue 27, security part): an HDF5 import that points at
other files, a local split manifest that names files outside its folder, a results folder
with a link out of it.  Each gets one line with what is wrong, exit 2, and nothing written.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitError, SplitReader, make_plan
from phybench.tasks import get_task

FIXTURE = Path(__file__).parent / "fixtures" / "phyworld" / "uniform_128.hdf5"
SHIPPED = Path(__file__).parent.parent / "leaderboard" / "results" / "fundamental" / "lite"


def _copy(tmp: Path, edit) -> Path:
    """A copy of the uniform fixture with `edit(f, src)` applied to its position_streams."""
    out = tmp / "hostile.hdf5"
    with h5py.File(FIXTURE, "r") as src, h5py.File(out, "w") as f:
        for name in ("video_streams", "init_streams"):
            src.copy(name, f)
        edit(f, src)
    return out


def _import_refused(tmp: Path, path: Path, capsys, needle: str) -> None:
    out = tmp / "split"
    assert main(["import", "phyworld", str(path), "--task", "uniform", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err
    assert not out.exists() or not any(out.iterdir())


def test_hdf5_external_storage_is_refused(tmp_path, capsys):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(16 * 32 * 2, dtype=np.float32).tobytes())  # a local file's bytes

    def edit(f, src):
        f.create_dataset("position_streams", shape=src["position_streams"].shape, dtype=np.float32,
                         external=[(str(secret), 0, secret.stat().st_size)])

    _import_refused(tmp_path, _copy(tmp_path, edit), capsys, "uses external storage")


@pytest.mark.parametrize("kind", ["soft", "external"])
def test_hdf5_links_are_refused(tmp_path, capsys, kind):
    other = tmp_path / "other.hdf5"
    with h5py.File(FIXTURE, "r") as src, h5py.File(other, "w") as f:
        src.copy("position_streams", f)

    def edit(f, src):
        f["real"] = src["position_streams"][()]
        f["position_streams"] = h5py.SoftLink("/real") if kind == "soft" else h5py.ExternalLink(str(other),
                                                                                                 "/position_streams")

    _import_refused(tmp_path, _copy(tmp_path, edit), capsys, "is a link")


def test_hdf5_values_are_checked(tmp_path, capsys):
    def nan(f, src):
        pos = src["position_streams"][()]
        pos[3, 5, 0] = np.nan
        f["position_streams"] = pos

    _import_refused(tmp_path, _copy(tmp_path, nan), capsys, "row 3: positions or init values are not finite")
    (tmp_path / "hostile.hdf5").unlink()

    def negative_radius(f, src):
        f["position_streams"] = src["position_streams"][()]
        del f["init_streams"]
        init = src["init_streams"][()]
        init[2, 0] = -1.0  # radius
        f["init_streams"] = init

    _import_refused(tmp_path, _copy(tmp_path, negative_radius), capsys, "a radius must be positive")


def test_hdf5_declaring_a_billion_rows_is_refused_before_reading(tmp_path, capsys):
    path = tmp_path / "huge.hdf5"
    with h5py.File(path, "w") as f:  # chunked and never written: declares 1e9 rows in a few KB
        f.create_dataset("video_streams", shape=(10 ** 9,), dtype=h5py.vlen_dtype(np.uint8), chunks=(1024,))
        f.create_dataset("position_streams", shape=(10 ** 9, 32, 2), dtype=np.float32, chunks=(1024, 32, 2))
        f.create_dataset("init_streams", shape=(10 ** 9, 2), dtype=np.float32, chunks=(1024, 2))
    assert path.stat().st_size < 1_000_000
    _import_refused(tmp_path, path, capsys, "declares 1,000,000,000 rows")


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), folder, progress=False)
    return folder


@pytest.mark.parametrize("name", ["/etc/passwd", "../../../../etc/passwd", "data/../../manifest.parquet",
                                  "data/x.parquet/../../../etc/passwd"])
def test_a_local_manifest_cannot_name_a_file_outside_its_split(split, tmp_path, capsys, name):
    bad = tmp_path / "split"
    shutil.copytree(split, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["shards"][0]["file"] = name
    (bad / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SplitError, match="refusing to read it"):
        SplitReader(bad)
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["score", str(sub), "--data", str(bad), "--metrics", "ssim", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "refusing to read it" in err and "Traceback" not in err, err
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.samples.json").exists()


def test_a_deeply_nested_manifest_is_one_line(split, tmp_path):
    bad = tmp_path / "split"
    shutil.copytree(split, bad)
    (bad / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SplitError, match="nested too deeply"):
        SplitReader(bad)


def test_the_leaderboard_refuses_a_link_out_of_its_results_folder(tmp_path):
    from phybench.leaderboard import LeaderboardError, build

    results = tmp_path / "results"
    results.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    name = "uniform-id-eval-copy-last"
    shutil.copy(SHIPPED / f"{name}.json", outside / f"{name}.json")
    (results / f"{name}.json").symlink_to(outside / f"{name}.json")
    with pytest.raises(LeaderboardError) as exc:
        build(results, tmp_path / "site")
    assert [r.code for r in exc.value.refused] == ["results_link"], exc.value.refused
    assert "is a link or lies outside" in exc.value.refused[0].reason
    assert not (tmp_path / "site").exists()


def test_score_refuses_outputs_that_overwrite_an_input_or_each_other(split, tmp_path, capsys):
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    before = (split / "manifest.json").read_bytes()
    cases = [["--out", str(split / "manifest.json")], ["--out", str(tmp_path / "x"), "--details", str(tmp_path / "x")],
             ["--out", str(tmp_path)], ["--details", str(sub / "d.parquet")]]
    for extra in cases:
        capsys.readouterr()
        assert main(["score", str(sub), "--data", str(split), "--metrics", "ssim", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
    assert (split / "manifest.json").read_bytes() == before
    assert not list(tmp_path.glob("*.samples.json")) and not (tmp_path / "x").exists()


def test_abnormal_may_be_named_and_is_said_to_be_always_on(split, tmp_path, capsys):
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["score", str(sub), "--data", str(split), "--metrics", "ssim,abnormal", "--quiet"]) == 0
    assert "abnormal is scored on every run" in capsys.readouterr().err
    assert main(["score", str(sub), "--data", str(split), "--metrics", "abnormal", "--quiet"]) == 2
    assert "comes with every score" in capsys.readouterr().err


def test_a_model_from_a_file_path_and_a_constructor_that_needs_arguments(split, tmp_path, capsys):
    model = tmp_path / "my-model.py"
    model.write_text(
        "import numpy as np\n"
        "class Model:\n"
        "    def __init__(self, scale):\n"
        "        self.scale = scale\n"
        "    def generate(self, condition, num_frames):\n"
        "        last = condition[:, -1:]\n"
        "        return np.repeat(last, num_frames, axis=1)\n")
    out = tmp_path / "run"
    capsys.readouterr()
    assert main(["run", "--model", f"{model}:Model", "--data", str(split), "--out", str(out), "--metrics", "ssim",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--model-args" in err and "Traceback" not in err, err
    assert main(["run", "--model", f"{model}:Model", "--model-args", "scale=2", "--data", str(split), "--out",
                 str(out), "--metrics", "ssim", "--quiet"]) == 0


def test_a_lone_surrogate_in_submission_json_is_refused_before_scoring(split, tmp_path, capsys):
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    meta = (sub / "submission.json").read_text()
    doc = json.loads(meta)
    doc["notes"] = "PLACEHOLDER"
    (sub / "submission.json").write_text(json.dumps(doc).replace("PLACEHOLDER", "\\ud800"))
    capsys.readouterr()
    assert main(["validate", str(sub), "--data", str(split)]) != 0
    assert "lone surrogate" in capsys.readouterr().out + capsys.readouterr().err
    out = tmp_path / "r.json"
    assert main(["score", str(sub), "--data", str(split), "--metrics", "ssim", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "lone surrogate" in err and "Traceback" not in err, err
    assert not out.exists() and not (tmp_path / "r.samples.json").exists()


def test_asking_for_fvd_without_weights_is_an_error_naming_the_fetch(split, tmp_path, capsys, monkeypatch):
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    monkeypatch.setenv("PHYBENCH_WEIGHTS_DIR", str(tmp_path / "no-weights"))
    capsys.readouterr()
    out = tmp_path / "r.json"
    assert main(["score", str(sub), "--data", str(split), "--metrics", "ssim,fvd", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "phybench weights fetch" in err and "Traceback" not in err, err
    assert not out.exists()



# ---------------------------------------------------------------- issue 36, item 6
def _planted_folder(tmp_path: Path) -> Path:
    """A results folder with one good file and every kind of *.json the build must not open:
    a link to /dev/zero (git stores symlinks), a FIFO, a FIFO sidecar and record, a link to a
    FIFO, a sparse 65 MB file, and a probe-looking FIFO name."""
    import os

    results = tmp_path / "results"
    (results / "sub").mkdir(parents=True)
    name = "uniform-id-eval-copy-last"
    shutil.copy(SHIPPED / f"{name}.json", results / f"{name}.json")
    (results / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(results / "fifo.json")
    os.mkfifo(results / "sub" / "probe-results.json")
    os.mkfifo(results / f"{name}.samples.json")
    (results / f"{name}.verified.json").symlink_to("/dev/zero")
    (results / "sub" / "to-fifo.json").symlink_to(results / "fifo.json")
    with open(results / "huge.json", "wb") as f:
        f.truncate(65 * 1024 * 1024)
    return results


def test_build_refuses_dev_zero_fifos_and_huge_files_in_bounded_time(tmp_path):
    """Hostile (issue 36): `zero.json -> /dev/zero` read until memory ran out (probes.is_probe_file
    read every *.json first) and a FIFO named *.json hung the build.  Run as a separate process
    under a timeout: every such file is refused with its code, none is opened, in seconds."""
    import subprocess
    import sys
    import time

    results = _planted_folder(tmp_path)
    root = Path(__file__).resolve().parents[1]
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "phybench.cli", "leaderboard", "build", str(results), "--out",
                           str(tmp_path / "site")], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    took = time.monotonic() - start
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert took < 60, took
    err = proc.stderr
    for file, code in (("zero.json", "results_link"), ("fifo.json", "results_not_regular"),
                       ("sub/probe-results.json", "results_not_regular"), ("sub/to-fifo.json", "results_link"),
                       ("uniform-id-eval-copy-last.samples.json", "results_not_regular"),
                       ("uniform-id-eval-copy-last.verified.json", "results_link"),
                       ("huge.json", "results_too_large")):
        line = [x for x in err.splitlines() if x.strip().startswith(file + ":")]
        assert line and f"[{code}]" in line[0], (file, code, err)
    assert "Traceback" not in err and not (tmp_path / "site").exists()


def test_verify_and_probe_listing_never_open_a_fifo_or_device(tmp_path):
    """`leaderboard verify FOLDER` lists results files the same way, and `is_probe_file` (the
    call that read /dev/zero) answers False for a link, a FIFO and an oversized file unopened."""
    import threading

    from phybench.leaderboard.verify.claims import results_files
    from phybench.leaderboard.common.files import UnsafeFile, read_regular
    from phybench.leaderboard.common.files import is_probe_file

    results = _planted_folder(tmp_path)
    out: dict = {}
    worker = threading.Thread(target=lambda: out.update(
        files=results_files([results]),
        probes=[is_probe_file(results / n) for n in ("zero.json", "fifo.json", "huge.json", "sub/to-fifo.json")]),
        daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "listing the folder blocked on a FIFO or read a device"
    assert [p.name for p in out["files"]] == ["uniform-id-eval-copy-last.json"]
    assert out["probes"] == [False, False, False, False]
    for name, code in (("zero.json", "results_link"), ("fifo.json", "results_not_regular"),
                       ("huge.json", "results_too_large")):
        with pytest.raises(UnsafeFile) as exc:
            read_regular(results / name)
        assert exc.value.code == code


def _repeated_shard(manifest: dict) -> dict:
    manifest["shards"] = manifest["shards"][:1] * 5000  # one shard listed 5,000 times
    return manifest


def _more_rows_than_the_task(manifest: dict) -> dict:
    full = get_task("uniform").split_size("id-eval")  # consistent tiling, files absent: only the protocol says no
    manifest.update(num_samples=full + 1, shard_size=1, shards=[
        {"file": f"data/s{i}.parquet", "start": i, "stop": i + 1, "sha256": f"{i:064x}"} for i in range(full + 1)])
    return manifest


@pytest.mark.parametrize("change", [_repeated_shard, _more_rows_than_the_task])
def test_validate_and_verify_refuse_a_manifest_outside_its_bounds(split, tmp_path, capsys, change):
    """Issue 51 item 4: at 68724c0 `verify` decoded the repeated shard for minutes and `validate`
    said OK; the declared sizes are checked before any shard is read (`manifest_sizes`)."""
    bad = tmp_path / "split"
    shutil.copytree(split, bad)
    (bad / "manifest.json").write_text(json.dumps(change(json.loads((bad / "manifest.json").read_text()))))
    with pytest.raises(SplitError) as err:
        SplitReader(bad)
    assert err.value.code == "manifest_sizes"
    sub = tmp_path / "sub"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(sub), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["validate", str(sub), "--data", str(bad)]) == 2
    out = capsys.readouterr()
    assert "manifest_sizes" in out.out + out.err, out
    assert main(["verify", str(bad), "--quiet"]) == 2
    assert "manifest_sizes" in capsys.readouterr().err

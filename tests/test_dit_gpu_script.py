"""The GPU run's pieces on the CPU: the trainer's time budget, the lossless 32 px packs, and
`benchmarks/gpu/paper_scale.sh` end to end in its tiny setting (issue 33, item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("accelerate")
pytest.importorskip("diffusers")

from phybench_baselines.dit import compact  # noqa: E402
from phybench_baselines.dit import sample as dit_sample  # noqa: E402
from phybench_baselines.dit import train as dit_train  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.submission import validate, write_submission  # noqa: E402
from phybench.submission.identity import videos_hash  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TINY = ["depth=2", "width=32", "heads=2", "frames=4", "resolution=16", "batch_size=2", "lr=0.001",
        "log_every=1", "sample_steps=2", "patch=2"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu")
    generate(make_plan(get_task("uniform"), "train-30k", None, 32, None), root / "train", progress=False)
    generate(make_plan(get_task("uniform"), "id-eval", None, 5, None), root / "eval", progress=False)
    return root / "train", root / "eval"


@pytest.fixture(scope="module")
def run(splits, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    history = dit_train.main(["--config", "tiny", "--train-data", str(splits[0]), "--out", str(out),
                              "--set", *TINY, "steps=50", "max_seconds=0"])
    assert [s for s, _ in history] == [1]  # a spent budget ends the run after the step in flight
    return out


def test_time_budget_stops_saves_and_records(run):
    assert (run / "ema.safetensors").is_file() and json.loads((run / "config.json").read_text())["max_seconds"] == 0
    timing = json.loads((run / "throughput.json").read_text())
    assert timing["steps"] == 1 and timing["batch_size"] == 2 and timing["hardware"].startswith("CPU")
    assert "max_seconds" not in dit_train.make_config("tiny", []).to_dict()  # a fixed-step run's config.json is as before


def test_sampler_records_training_facts(run, splits, tmp_path):
    sub = dit_sample.main(["--checkpoint", str(run), "--data", str(splits[1]), "--out", str(tmp_path / "s"), "--quiet",
                           "--precision", "fp32"])
    meta = json.loads((sub / "submission.json").read_text())
    model = meta["model"]
    assert meta["sampler"]["precision"] == "fp32"
    trained = json.loads((run / "train_split.json").read_text())
    assert model["train_split_hash"] == trained["split_hash"] and model["train_steps"] == 1
    assert model["hardware"].startswith("CPU") and model["train_seconds"] >= 0 and "lr=0.001" in model["train_config"]
    assert validate(sub, splits[1]).ok


def test_pack_round_trips_bit_for_bit_and_refuses_tampering(run, splits, tmp_path):
    sub = dit_sample.main(["--checkpoint", str(run), "--data", str(splits[1]), "--out", str(tmp_path / "sub"),
                           "--quiet"])
    parts = compact.pack_compact(sub, tmp_path / "p.npz", model_resolution=16, parts=2)
    assert [p.name for p in parts] == ["p-0.npz", "p-1.npz"]
    back = compact.unpack(list(reversed(parts)), splits[1], tmp_path / "back")  # any order of the parts
    assert videos_hash(back) == videos_hash(sub) and validate(back, splits[1]).ok
    with pytest.raises(ValueError, match="parts"):
        compact.unpack(parts[:1], splits[1], tmp_path / "half")
    # one generated pixel changed in a pack: refused, and nothing is left behind
    with np.load(parts[0]) as z:
        frames, header = z["frames"].copy(), z["header"]
    frames[0, 5, 3, 3] ^= 1
    np.savez_compressed(parts[0], frames=frames, header=header)
    with pytest.raises(ValueError, match="differs"):
        compact.unpack(parts, splits[1], tmp_path / "forged")
    assert not (tmp_path / "forged").exists()
    # a video that is not a nearest upsampling cannot be packed losslessly
    meta = json.loads((sub / "submission.json").read_text())
    rng = np.random.default_rng(0)
    noisy = write_submission(tmp_path / "noisy", meta, [(f"{i:07d}", rng.integers(0, 256, (32, 128, 128, 3), np.uint8))
                                                        for i in range(1)], fmt="npz")
    with pytest.raises(ValueError, match="nearest upsampling"):
        compact.pack_compact(noisy, tmp_path / "n.npz", model_resolution=16)


def test_paper_scale_script_runs_end_to_end_on_the_cpu(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    env = {**os.environ, "TINY": "1", "WORK": str(work), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "benchmarks/gpu/paper_scale.sh"), str(out)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("| overall |") == 2  # each split's untrackable count, in the log
    names = sorted(p.name for p in out.iterdir())
    assert names == ["log.jsonl", "pack-id-0.npz", "pack-id-1.npz", "pack-ood-0.npz", "pack-ood-1.npz", "run.json",
                     "timing.json"]  # at most 8 files come back from the device
    assert all(p.stat().st_size < 16 * 2 ** 20 for p in out.iterdir())
    timing = json.loads((out / "timing.json").read_text())
    assert timing["tokens_per_clip"] == 512 and timing["train_gflop_per_clip"] > 0 and 0 <= timing["mfu"] < 1
    run_facts = json.loads((out / "run.json").read_text())
    assert {k: run_facts["config"][k] for k in ("cond_fill", "prediction", "change_weight", "ema_warmup")} == {
        "cond_fill": "last", "prediction": "x0_residual", "change_weight": 20, "ema_warmup": True}  # issue 46's recipe
    assert run_facts["config"]["patch"] == 4 and set(run_facts["splits"]) == {
        "uniform-train-30k", "uniform-id-eval", "uniform-ood-eval"}
    for s in ("id", "ood"):
        back = compact.unpack(sorted(out.glob(f"pack-{s}-*.npz")), work / "data" / f"uniform-{s}-eval", tmp_path / s)
        assert validate(back, work / "data" / f"uniform-{s}-eval").ok

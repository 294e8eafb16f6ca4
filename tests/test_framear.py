"""The frame-autoregressive flow-matching baseline: trains, samples, scores end to end; a seed fixes the weights."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("accelerate")

from phybench_baselines.framear import sample as fa_sample  # noqa: E402
from phybench_baselines.framear import train as fa_train  # noqa: E402
from phybench_baselines.framear.model import FrameNet  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.submission import validate  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

TINY = ["resolution=16", "width=8", "dilations=[1,2]", "train_rows=12", "val_rows=2", "batch_size=4",
        "steps=4", "eval_every=2", "log_every=1", "sample_steps=2", "warmup_steps=1"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("framear")
    generate(make_plan(get_task("uniform"), "train-30k", None, 16, None), root / "train", progress=False)
    generate(make_plan(get_task("uniform"), "id-eval", None, 3, None), root / "eval", progress=False)
    return root / "train", root / "eval"


def test_model_starts_as_copy_last_and_sees_its_context():
    torch.manual_seed(0)
    net = FrameNet(context=3, width=8, dilations=(1, 2))
    ctx = torch.rand(2, 3, 3, 16, 16) * 2 - 1
    out = net(torch.randn(2, 3, 16, 16), ctx, torch.tensor([0.3, 1.0]))
    assert torch.equal(out, ctx[:, -1])  # the zero-initialised output layer: a still scene
    assert net.receptive_field() == 1 + 2 * (2 + 3)


def test_rows_split_disjoint_and_spread():
    train, val = fa_train.split_rows(100, 10, 5)
    assert len(set(train)) == 10 and len(set(val)) == 5 and not set(train) & set(val)
    assert min(train) == 0 and max(train) == 99 and max(val) > 80
    with pytest.raises(SystemExit):
        fa_train.split_rows(10, 8, 3)


@pytest.mark.slow
def test_tiny_run_trains_samples_scores(splits, tmp_path, capsys):
    """End to end: train (with validation on held-out training rows), sample a split, validate and score it."""
    from phybench.cli import main as cli

    train, eval_dir = splits
    run = tmp_path / "run"
    history = fa_train.main(["--train-data", str(train), "--out", str(run), "--set", *TINY])
    evals = [e for e in history if "val/velocity_error" in e]
    assert [e["step"] for e in evals] == [2, 4] and all(0 <= e["val/untrackable"] <= 1 for e in evals)
    assert all(not e["val/velocity_error_ranked"] < 0 for e in evals)  # logged for selection (a lost ball costs)
    assert sorted(p.name for p in (run / "snapshots").iterdir()) == ["ema_0000002.safetensors", "ema_0000004.safetensors"]
    assert (run / "snapshots" / "ema_0000004.safetensors").read_bytes() == (run / "ema.safetensors").read_bytes()
    sub = fa_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "sub"),
                          "--batch-size", "2"])
    report = validate(sub, eval_dir)
    assert report.ok, report.to_text()
    meta = json.loads((sub / "submission.json").read_text())
    assert meta["model"]["family"] == "framear" and meta["model"]["version"] == "step 4"
    assert meta["model"]["train_split"] == "train-30k" and meta["model"]["train_size"] == 12
    assert meta["model"]["params"] == sum(p.numel() for p in fa_sample.load_run(run)[1].parameters())
    # the card's training facts come from the run folder (the board shows them)
    assert meta["model"]["train_steps"] == 4 and 0 <= meta["model"]["train_seconds"] < 600  # a tiny run may round to 0.0 s
    assert meta["model"]["hardware"].startswith("CPU, 1 process(es)")
    assert meta["model"]["train_split_hash"] == json.loads((train / "manifest.json").read_text())["split_hash"]
    assert "rollout_frames=0" in meta["model"]["train_config"]
    results = tmp_path / "results.json"
    capsys.readouterr()
    assert cli(["score", str(sub), "--data", str(eval_dir), "--metrics", "velocity_error,law_error",
                "--out", str(results), "--quiet"]) == 0
    assert json.loads(results.read_text())["model"]["name"] == "framear-flow"
    # a snapshot samples too, and sampling is deterministic: the same videos from the same weights
    snap = run / "snapshots" / "ema_0000002.safetensors"
    cfg, model = fa_sample.load_run(snap)
    cond = np.zeros((1, 3, 128, 128, 3), np.uint8) + 255
    a = fa_sample.generate_videos(model, cfg, cond, 6)
    assert a.shape == (1, 6, 128, 128, 3) and np.array_equal(a, fa_sample.generate_videos(model, cfg, cond, 6))


@pytest.mark.slow
def test_fixed_seed_gives_same_weight_bytes(splits, tmp_path):
    train = str(splits[0])
    settings = ["--set", *TINY, "val_rows=0"]
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "a"), *settings])
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "b"), *settings])
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "c"), *settings[:-1], "seed=1", "val_rows=0"])
    a, b, c = ((tmp_path / x / "ema.safetensors").read_bytes() for x in "abc")
    assert a == b and a != c
    with pytest.raises(SystemExit, match="already holds a run"):
        fa_train.main(["--train-data", train, "--out", str(tmp_path / "a"), *settings])


def test_cases_counts_where_out_of_range_fits_land():
    from phybench_baselines.studies.cases import landing, velocity_range

    assert velocity_range("uniform") == (1.0, 4.0)

    def s(true, fit):
        return {"true_velocity": true, "law": {"fit": {"velocity_x": fit, "velocity_y": 0.0},
                                               "truth": {"velocity_x": true, "velocity_y": 0.0}}}

    r = landing([s(2.0, 2.0), s(5.0, 3.9), s(5.5, 5.5), s(0.5, None)], 1.0, 4.0)  # a sidecar writes null for no fit
    assert r["videos_out_of_range"] == 3 and r["with_fit"] == 2
    assert r["share_inside_training_range"] == 0.5 and r["median_distance_true_to_range"] == 1.25


def test_rollout_training_is_seeded_and_changes_the_weights(splits, tmp_path):
    """The rollout-training option (context ending in the model's own frames) trains deterministically,
    differs from teacher forcing, and `init` starts from a snapshot's weights."""
    train = str(splits[0])
    base = ["--set", *TINY, "val_rows=0"]
    rolled = [*base, "rollout_frames=2", "rollout_start=1", "rollout_share=0.5"]
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "a"), *rolled])
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "b"), *rolled])
    fa_train.main(["--train-data", train, "--out", str(tmp_path / "tf"), *base])
    a, b, tf = ((tmp_path / x / "ema.safetensors").read_bytes() for x in ("a", "b", "tf"))
    assert a == b and a != tf
    init = tmp_path / "a" / "ema.safetensors"
    history = fa_train.main(["--train-data", train, "--out", str(tmp_path / "i"), *base, "steps=1", "lr=0.0",
                             "warmup_steps=1", "min_lr_ratio=0.0", f"init={init}"])
    from safetensors.torch import load_file

    got, want = load_file(str(tmp_path / "i" / "ema.safetensors")), load_file(str(init))
    assert history and all(torch.equal(got[k], want[k]) for k in want)  # lr 0: the EMA stays at init
    # a fine-tuned model's card states its whole training: its own step and the start's
    before, after = fa_sample.training_record(init), fa_sample.training_record(tmp_path / "i" / "ema.safetensors")
    assert before["train_steps"] == 4 and after["train_steps"] == 5
    assert after["train_seconds"] >= before["train_seconds"] and after["hardware"] == before["hardware"]


def noisy_model(cfg):
    """A FrameNet whose output depends on the noise (the zero-initialised output layer would copy the last frame)."""
    torch.manual_seed(0)
    model = fa_train.make_model(cfg)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.05)
    return model.eval()


def test_each_videos_noise_is_its_seed_and_its_own_condition_frames():
    """Seeds 0 and 1 differ (the old `seed * 2**32 + digest` lost the seed on a CPU generator), the same seed
    gives the same bytes, and neither the batch size nor the batch's other videos change a video."""
    from phybench_baselines.seeding import video_seed

    cfg = fa_train.FrameConfig(resolution=16, width=8, dilations=[1, 2], sample_steps=2)
    model = noisy_model(cfg)
    cond = np.random.default_rng(0).integers(0, 256, (4, 3, 32, 32, 3), dtype=np.uint8)
    a = fa_sample.generate_videos(model, cfg, cond, 6, seed=0)
    assert np.array_equal(a, fa_sample.generate_videos(model, cfg, cond, 6, seed=0))
    b = fa_sample.generate_videos(model, cfg, cond, 6, seed=1)
    assert all(not np.array_equal(a[i, 3:], b[i, 3:]) for i in range(4))
    alone = np.concatenate([fa_sample.generate_videos(model, cfg, cond[i:i + 1], 6) for i in range(4)])
    assert np.array_equal(a, alone)
    swapped = fa_sample.generate_videos(model, cfg, cond[[2, 0]], 6)
    assert np.array_equal(swapped, a[[2, 0]])
    # every bit of the seed reaches the generator (a CPU generator keeps the low 32 bits of its seed)
    seeds = {video_seed(s, cond[0]) & 0xFFFFFFFF for s in (0, 1, 2**32, -1)}
    assert len(seeds) == 4 and all(0 <= video_seed(s, cond[0]) < 2**63 for s in (0, 2**40))


def test_tiny_preset_and_help_list_every_setting(capsys):
    cfg = fa_train.make_config(["steps=5"], "tiny")
    assert cfg.resolution == 24 and cfg.width == 16 and cfg.steps == 5  # --set overrides the preset
    assert fa_train.make_config([]).resolution == 48
    with pytest.raises(SystemExit):
        fa_train.parse_args(["--help"])
    out = capsys.readouterr().out
    defaults = fa_train.FrameConfig().to_dict()
    assert all(f"  {k}={json.dumps(v)}" in out for k, v in defaults.items())
    assert "tiny: resolution=24" in out


@pytest.mark.slow
def test_framear_through_run_is_its_own_sampler(splits, tmp_path):
    """`phybench run --model ...framear.sample:FrameAR` names the model as the sampler does, writes its
    sampler, seeds and checkpoint hash, and gives the same video bytes for the same checkpoint and seed,
    at another batch size."""
    from phybench.cli import main as cli
    from phybench.submission.identity import videos_hash

    train, eval_dir = splits
    run = tmp_path / "run"
    fa_train.main(["--train-data", str(train), "--out", str(run), "--set", *TINY, "val_rows=0"])
    assert json.loads((run / "config.json").read_text())["threads"] == torch.get_num_threads()
    own = fa_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "own"),
                          "--batch-size", "3", "--seed", "1"])
    out = tmp_path / "via-run"
    assert cli(["run", "--model", "phybench_baselines.framear.sample:FrameAR", "--model-args",
                f"checkpoint={run},seed=1", "--data", str(eval_dir), "--out", str(out), "--batch-size", "2",
                "--metrics", "velocity_error", "--quiet"]) == 0
    via = out / "uniform-id-eval" / "submission"
    a, b = (json.loads((p / "submission.json").read_text()) for p in (own, via))
    assert b["model"] == a["model"] and b["model"]["name"] == "framear-flow"
    assert b["sampler"] == a["sampler"] and b["sampler"]["threads"] == 1 and b["seeds"] == [1]
    assert len(a["model"]["checkpoint_sha256"]) == 64
    assert videos_hash(via) == videos_hash(own)
    assert (out / "results" / "uniform-id-eval-framear-flow.seed1.json").is_file()  # seed 1: its own name (layout.seeded_path)
    seed0 = fa_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "s0")])
    assert videos_hash(seed0) != videos_hash(own)


@pytest.mark.slow
def test_a_snapshot_validated_after_the_run_logs_what_the_trainer_logged(splits, tmp_path):
    """`framear.validate` re-computes a snapshot's validation entry exactly as the training loop
    did (same rows, same numbers, same training seconds), for runs stopped between a snapshot and
    its validation; it refuses a step that is validated already and a split the run did not train on."""
    from phybench_baselines.framear import validate as fa_validate

    train, eval_dir = splits
    run = tmp_path / "run"
    fa_train.main(["--train-data", str(train), "--out", str(run), "--set", *TINY])
    log = run / "log.jsonl"
    lines = log.read_text().splitlines()
    logged = next(json.loads(x) for x in lines if '"step": 2,' in x and "val/velocity_error" in x)
    with pytest.raises(SystemExit, match="validated already"):
        fa_validate.main([str(run), "--train-data", str(train), "--step", "2"])
    log.write_text("".join(x + "\n" for x in lines if not ('"step": 2,' in x and "val/velocity_error" in x)))
    entry = fa_validate.main([str(run), "--train-data", str(train), "--step", "2"])
    for key in ("val/velocity_error", "val/untrackable", "val/law_within_10pct", "train_s", "params", "hardware"):
        same_nan = isinstance(logged[key], float) and np.isnan(logged[key]) and np.isnan(entry[key])
        assert entry[key] == logged[key] or same_nan, key
    assert json.loads(log.read_text().splitlines()[-1])["step"] == 2 and entry["validated_after"]
    with pytest.raises(SystemExit, match="is not the split"):
        fa_validate.main([str(run), "--train-data", str(eval_dir), "--step", "4"])

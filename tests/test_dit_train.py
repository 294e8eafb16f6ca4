"""The DiT trainer and sampler: objectives learn, resumed runs repeat, submissions validate."""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch

pytest.importorskip("accelerate")
pytest.importorskip("diffusers")

from phybench_baselines.dit import sample as dit_sample  # noqa: E402
from phybench_baselines.dit import train as dit_train  # noqa: E402
from phybench_baselines.dit.diffusion import condition, make_scheduler, training_loss  # noqa: E402
from phybench_baselines.dit.models import DiT  # noqa: E402
from phybench_baselines.training import ema_decay  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import SplitReader, make_plan, render_row  # noqa: E402
from phybench.submission import validate  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

pytestmark = pytest.mark.slow  # the fast tier (pytest -m "not slow") leaves this file out: docs/testing.md

TINY = ["depth=2", "width=32", "heads=2", "frames=4", "resolution=16", "batch_size=2",
        "lr=0.001", "log_every=1", "sample_steps=2"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("dit")
    generate(make_plan(get_task("uniform"), "train-30k", None, 64, None), root / "train", progress=False)
    generate(make_plan(get_task("uniform"), "id-eval", None, 4, None), root / "eval", progress=False)
    return root / "train", root / "eval"


def test_zero_snr_v_prediction_schedule():
    s = make_scheduler()
    ab = s.alphas_cumprod
    assert ab[-1] == 0 and ab[0] > 0.99 and bool((ab[1:] <= ab[:-1]).all())
    x0, eps, t = torch.randn(3, 2, 4), torch.randn(3, 2, 4), torch.tensor([0, 500, 999])
    a, b = ab[t].sqrt().view(3, 1, 1), (1 - ab[t]).sqrt().view(3, 1, 1)
    assert torch.allclose(s.add_noise(x0, eps, t), a * x0 + b * eps, atol=1e-6)
    assert torch.allclose(s.get_velocity(x0, eps, t), a * eps - b * x0, atol=1e-6)
    s.set_timesteps(4)
    assert s.timesteps.tolist() == [999, 749, 499, 249]  # trailing spacing starts at pure noise


@pytest.mark.parametrize("objective", ["ddpm", "flow"])
def test_loss_falls_on_fixed_batch(splits, objective):
    reader = SplitReader(splits[0])
    rows = list(reader.rows())[:2]
    x0 = torch.stack([dit_train.clip_to_tensor(reader.video(r), 4, 16) for r in rows])
    cond, mask = condition(x0, 2)  # 2 of 4 frames given
    torch.manual_seed(0)
    model = DiT(dict(depth=2, width=32, heads=2), in_channels=7, out_channels=3, patch=2,
                frames=4, height=16, width=16)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(25):
        loss = training_loss(model, x0, cond, mask, objective, generator=torch.Generator().manual_seed(1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


def test_resume_repeats_uninterrupted_run(splits, tmp_path):
    train = str(splits[0])
    common = ["--config", "tiny", "--train-data", train]
    full = dit_train.main(common + ["--out", str(tmp_path / "a"), "--set", *TINY, "steps=4", "ckpt_every=2",
                                    "keep_checkpoints=5"])
    # the interrupted run also evaluates every step: evaluation must not touch training's randomness
    evals = ["--eval-data", str(splits[1])]
    first = dit_train.main(common + ["--out", str(tmp_path / "b"), *evals, "--set", *TINY, "steps=2",
                                     "ckpt_every=2", "eval_every=1", "eval_samples=2"])
    resumed = dit_train.main(common + ["--out", str(tmp_path / "b"), "--resume", *evals, "--set", *TINY,
                                       "steps=4", "ckpt_every=2", "eval_every=1", "eval_samples=2"])
    logged = [json.loads(line) for line in (tmp_path / "b" / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in logged if "eval/velocity_error" in e] == [1, 2, 3, 4]
    assert [s for s, _ in full] == [1, 2, 3, 4] and [s for s, _ in resumed] == [3, 4]
    assert first == full[:2]
    for (_, a), (_, b) in zip(full[2:], resumed):
        assert abs(a - b) <= 1e-6
    from safetensors.torch import load_file
    ema_a, ema_b = load_file(str(tmp_path / "a" / "ema.safetensors")), load_file(str(tmp_path / "b" / "ema.safetensors"))
    assert all(torch.allclose(ema_a[k], ema_b[k], atol=1e-6) for k in ema_a)
    assert sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir()) == ["step_0000002", "step_0000004"]


def test_resume_keeps_the_saved_config(splits, tmp_path):
    """A run trained with recipe options and resumed without repeating them goes on with them
    (its saved config.json), and ends with the uninterrupted run's weights; changing one is refused.
    Before: the config came from --config + --set alone, so the resumed steps trained the native
    objective on x0_residual weights (loss 0.05 -> 1.5 on a real run)."""
    from safetensors.torch import load_file

    common = ["--config", "tiny", "--train-data", str(splits[0]), "--set", *TINY]
    recipe = ["prediction=x0_residual", 'cond_fill="last"', "change_weight=20", "ema_warmup=true"]
    full = dit_train.main(common + [*recipe, "steps=4", "ckpt_every=2", "--out", str(tmp_path / "a")])
    dit_train.main(common + [*recipe, "steps=2", "ckpt_every=2", "--out", str(tmp_path / "b")])
    with pytest.raises(SystemExit, match="prediction"):
        dit_train.main(common + ["prediction=native", "steps=4", "--out", str(tmp_path / "b"), "--resume"])
    resumed = dit_train.main(common + ["steps=4", "ckpt_every=2", "--out", str(tmp_path / "b"), "--resume"])
    assert [s for s, _ in resumed] == [3, 4]
    assert all(abs(a - b) <= 1e-6 for (_, a), (_, b) in zip(full[2:], resumed))
    cfg = json.loads((tmp_path / "b" / "config.json").read_text())
    assert cfg["prediction"] == "x0_residual" and cfg["steps"] == 4
    ema_a, ema_b = (load_file(str(tmp_path / n / "ema.safetensors")) for n in ("a", "b"))
    assert all(torch.allclose(ema_a[k], ema_b[k], atol=1e-6) for k in ema_a)


def test_recipe_options_are_deterministic_and_recorded(splits, tmp_path):
    """Issue 46's options (EMA warm-up, last-frame fill, change-weighted loss): a fixed seed
    gives byte-identical weights, the config records them, and a run without them writes the
    config.json it wrote before they existed."""
    from safetensors.torch import load_file

    recipe = ["ema_warmup=true", 'cond_fill="last"', "change_weight=20", "steps=3", "ema_decay=0.999"]
    for name in ("a", "b"):
        dit_train.main(["--config", "tiny", "--train-data", str(splits[0]), "--out", str(tmp_path / name),
                        "--set", *TINY, *recipe])
    a, b = (load_file(str(tmp_path / n / "ema.safetensors")) for n in ("a", "b"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    cfg = json.loads((tmp_path / "a" / "config.json").read_text())
    assert cfg["ema_warmup"] is True and cfg["cond_fill"] == "last" and cfg["change_weight"] == 20
    assert not {"ema_warmup", "cond_fill", "change_weight"} & set(dit_train.make_config("tiny", []).to_dict())
    # with warm-up the EMA after 3 steps is mostly the trained weights, not the init (decay 0.1, 0.18, 0.25)
    warm, plain = dit_train.make_config("tiny", recipe), dit_train.make_config("tiny", [])
    assert ema_decay(warm.ema_decay, 0, warm.ema_warmup) == 0.1  # the one EMA schedule (`training.ema_decay`)
    assert ema_decay(plain.ema_decay, 0, plain.ema_warmup) == 0.995


def test_sampler_writes_valid_submission_that_scores(splits, tmp_path, capsys):
    from phybench.cli import main as cli

    train, eval_dir = splits
    run = tmp_path / "run"
    dit_train.main(["--config", "tiny", "--train-data", str(train), "--out", str(run), "--set", *TINY, "steps=2"])
    assert json.loads((run / "train_split.json").read_text())["task"] == "uniform"
    sub = dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "sub"),
                           "--batch-size", "3", "--quiet"])
    report = validate(sub, eval_dir)
    assert report.ok, report.to_text()
    meta = json.loads((sub / "submission.json").read_text())
    assert meta["model"]["name"] == "dit-tiny-ddpm" and meta["model"]["family"] == "dit"
    assert meta["model"]["params"] > 0 and meta["model"]["train_size"] == 64
    # the same through the CLI, then scored: the sampler's submissions score
    capsys.readouterr()
    assert cli(["baseline", "dit", "--checkpoint", str(run), "--data", str(eval_dir),
                "--out", str(tmp_path / "sub2"), "--batch-size", "4", "--quiet"]) == 0
    assert (tmp_path / "sub2" / "submission.json").is_file()
    assert cli(["baseline", "dit", "--checkpoint", str(run), "--data", str(eval_dir),
                "--out", str(tmp_path / "sub2"), "--quiet"]) == 2  # never overwrites: a one-line error
    assert "exists" in capsys.readouterr().err
    results = tmp_path / "results.json"
    assert cli(["score", str(tmp_path / "sub2"), "--data", str(eval_dir), "--metrics", "velocity_error,ssim,psnr",
                "--out", str(results), "--quiet"]) == 0
    scored = json.loads(results.read_text())
    assert scored["model"]["name"] == "dit-tiny-ddpm"


def test_sampler_refuses_other_task_and_unfinished_run(splits, tmp_path):
    train, eval_dir = splits
    run = tmp_path / "run"
    dit_train.main(["--config", "tiny", "--train-data", str(train), "--out", str(run), "--set", *TINY, "steps=1"])
    info = json.loads((run / "train_split.json").read_text())
    (run / "train_split.json").write_text(json.dumps({**info, "task": "collision"}))
    with pytest.raises(ValueError, match="trained on 'collision'"):
        dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "s")])
    (run / "ema.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="ema.safetensors is missing"):
        dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "s")])
    assert not (tmp_path / "s").exists()


def test_list_sizes(capsys):
    from phybench.cli import main as cli

    assert cli(["baseline", "dit", "--list-sizes"]) == 0
    out = capsys.readouterr().out
    for line in ("22,457,488", "89,446,672", "310,025,232", "456,048,016"):
        assert line in out


def test_window_dataset_renders_each_window(splits):
    data = dit_train.ClipDataset(splits[0], frames=4, resolution=16, windows=True)
    reader = SplitReader(splits[0])
    assert len(data) == 64 * (32 - 4 + 1)
    row = list(reader.rows())[5]
    full = render_row(row, 16)  # (32, 16, 16, 3)
    for offset in (0, 7, 28):
        clip = data[5 * 29 + offset]  # (3, 4, 16, 16)
        expect = torch.from_numpy(full[offset:offset + 4]).permute(3, 0, 1, 2).float() / 127.5 - 1
        assert torch.equal(clip, expect)


def test_two_processes_repeat_one(splits, tmp_path):
    """2 CPU processes (torchrun; Accelerate picks up its env, gloo): same losses and EMA as 1.

    `accelerate launch --cpu` starts one process unless given an MPI hostfile; on GPUs
    `accelerate launch --multi_gpu` takes this path.
    """
    import subprocess

    settings = ["--set", *TINY, "batch_size=4", "steps=3", "ckpt_every=3"]
    common = ["--config", "tiny", "--train-data", str(splits[0])]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # phybench_baselines: the installed package
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                           "-m", "phybench_baselines.dit.train", *common, "--out", str(tmp_path / "two"), *settings],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    one = dit_train.main(common + ["--out", str(tmp_path / "one"), *settings])
    logged = [json.loads(line) for line in (tmp_path / "two" / "log.jsonl").read_text().splitlines()]
    assert [e["processes"] for e in logged] == [2, 2, 2]
    assert len(one) == 3
    for (_, a), e in zip(one, logged):
        assert abs(a - e["loss"]) <= 1e-5
    from safetensors.torch import load_file
    ema_1, ema_2 = load_file(str(tmp_path / "one" / "ema.safetensors")), load_file(str(tmp_path / "two" / "ema.safetensors"))
    assert all(torch.allclose(ema_1[k], ema_2[k], atol=1e-5) for k in ema_1)


def test_latent_space_run_trains_samples_and_pins_its_autoencoder(splits, tmp_path):
    """The paper's setup in miniature: a frozen (2+1)D autoencoder, the DiT on its latents."""
    from phybench_baselines.dit.autoencoder import AEConfig, VideoAutoencoder, save_autoencoder

    torch.manual_seed(0)
    ae_dir = save_autoencoder(VideoAutoencoder(AEConfig(spatial=4, temporal=2, latent_channels=4,
                                                        channels=(8, 8, 8), blocks=1, norm="none")),
                              tmp_path / "ae")
    train, eval_dir = splits
    run = tmp_path / "run"
    history = dit_train.main(["--config", "tiny", "--train-data", str(train), "--out", str(run), "--set", *TINY,
                              "steps=2", "patch=2", f"vae={ae_dir}"])
    assert len(history) == 2 and all(loss == loss for _, loss in history)
    assert (run / "autoencoder.sha256").is_file()
    sub = dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "sub"),
                           "--quiet"])
    assert validate(sub, eval_dir).ok
    assert json.loads((sub / "submission.json").read_text())["sampler"]["space"] == str(ae_dir)
    # a different autoencoder at that path is refused, not silently used
    torch.manual_seed(1)
    save_autoencoder(VideoAutoencoder(AEConfig(spatial=4, temporal=2, latent_channels=4, channels=(8, 8, 8),
                                               blocks=1, norm="none")), ae_dir)
    with pytest.raises(ValueError, match="not the one"):
        dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "sub2")])


def test_dit_seeds_each_video_and_run_gives_the_samplers_bytes(splits, tmp_path):
    """Seeds 0 and 1 differ; `phybench run` with `runner.DiT` at another batch size writes the sampler's
    videos, name, card and sampler (the old runner seeded per batch with `seed * 2**32 + digest[:4]`)."""
    from phybench.cli import main as cli
    from phybench.submission.identity import videos_hash

    train, eval_dir = splits
    run = tmp_path / "run"
    dit_train.main(["--config", "tiny", "--train-data", str(train), "--out", str(run), "--set", *TINY, "steps=1"])
    own = dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "own"),
                           "--batch-size", "3", "--seed", "1", "--quiet", "--steps", "2"])
    out = tmp_path / "via-run"
    assert cli(["run", "--model", "phybench_baselines.dit.runner:DiT", "--model-args", f"checkpoint={run},seed=1,steps=2",
                "--data", str(eval_dir), "--out", str(out), "--batch-size", "2", "--metrics", "velocity_error",
                "--quiet"]) == 0
    via = out / "uniform-id-eval" / "submission"
    a, b = (json.loads((p / "submission.json").read_text()) for p in (own, via))
    assert b["model"] == a["model"] and b["model"]["name"] == "dit-tiny-ddpm"
    assert b["sampler"] == a["sampler"] and b["seeds"] == [1]
    assert videos_hash(via) == videos_hash(own)
    seed0 = dit_sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(tmp_path / "s0"),
                             "--quiet", "--steps", "2"])
    assert videos_hash(seed0) != videos_hash(own)

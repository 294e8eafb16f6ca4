"""`dit.train --resume` continues a run with the config it was trained with (its saved config.json).

The bug this pins: the config was rebuilt from `--config` + `--set` alone, so a run trained with
`--set prediction=x0_residual` and resumed without repeating it went on with the native
objective (loss 0.05 -> 1.5).  The end-to-end check (train, resume without the flags, compare
with an uninterrupted run) is `tests/test_dit_train.py::test_resume_keeps_the_saved_config`.
"""

from __future__ import annotations

import argparse
import json

import pytest

from phybench_baselines.dit.config import RUN_LENGTH_FIELDS, resumed_config, tiny

RECIPE = {"prediction": "x0_residual", "cond_fill": "last", "change_weight": 20.0, "ema_warmup": True}


def saved_run(**fields) -> dict:
    """A config.json as the trainer writes it: a tiny config with the recipe options set."""
    return tiny(**RECIPE, **fields).to_dict()


def test_resume_keeps_saved_fields_the_flags_leave_out():
    cfg = resumed_config(saved_run(steps=2000), ["steps=4000"])
    assert cfg.prediction == "x0_residual" and cfg.cond_fill == "last" and cfg.change_weight == 20.0
    assert cfg.ema_warmup is True and cfg.steps == 4000


def test_resume_applies_every_run_length_field():
    cfg = resumed_config(saved_run(), ["steps=7", "ckpt_every=3", "log_every=2", "keep_checkpoints=9",
                                      "eval_every=5", "eval_samples=4", "max_seconds=60", "sample_steps=3",
                                      "num_workers=1"])
    assert (cfg.steps, cfg.ckpt_every, cfg.log_every, cfg.keep_checkpoints) == (7, 3, 2, 9)
    assert (cfg.eval_every, cfg.eval_samples, cfg.max_seconds, cfg.sample_steps, cfg.num_workers) == (5, 4, 60.0, 3, 1)
    assert {"steps", "ckpt_every", "log_every", "keep_checkpoints", "eval_every", "eval_samples"} <= set(RUN_LENGTH_FIELDS)


def test_resume_accepts_a_repeated_command_and_refuses_a_changed_field():
    assert resumed_config(saved_run(), ["prediction=x0_residual", "change_weight=20", "lr=0.001"]).lr == 0.001
    with pytest.raises(SystemExit, match="prediction: saved 'x0_residual', --set 'native'"):
        resumed_config(saved_run(), ["prediction=native", "steps=10"])
    with pytest.raises(SystemExit, match="lr"):
        resumed_config(saved_run(), ["lr=0.01"])
    with pytest.raises(SystemExit, match="unknown config field"):
        resumed_config(saved_run(), ["no_such_field=1"])
    with pytest.raises(SystemExit, match="does not know"):
        resumed_config({**saved_run(), "from_the_future": 1}, [])


def test_resume_round_trips_a_frames_only_paper_config():
    """config.json leaves out fields at their off value; reading it back gives the same config."""
    from phybench_baselines.dit.config import TrainConfig

    for cfg in (TrainConfig(), tiny(), tiny(**RECIPE, max_seconds=30.0)):
        assert resumed_config(json.loads(json.dumps(cfg.to_dict())), []) == cfg


def test_run_config_reads_the_run_folder_on_resume(tmp_path):
    """The trainer's entry: with --resume and a checkpoint the saved config wins over --config and
    --set; without a checkpoint (nothing trained yet) the flags make the config."""
    pytest.importorskip("accelerate")
    from phybench_baselines.dit import train as dit_train

    out = tmp_path / "run"
    (out / "checkpoints" / "step_0000002").mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(saved_run(steps=2)))
    args = argparse.Namespace(config="tiny", set=["steps=4"], out=str(out), resume=True, train_data="unused")
    cfg = dit_train.run_config(args)  # no train_split.json: nothing to compare the split with
    assert cfg.prediction == "x0_residual" and cfg.steps == 4
    args.resume = False
    assert dit_train.run_config(args).prediction == "native"
    args.resume, args.set = True, ["steps=4", "cond_fill=zeros"]
    with pytest.raises(SystemExit, match="cond_fill"):
        dit_train.run_config(args)


def test_run_config_refuses_another_training_split(tmp_path, monkeypatch):
    pytest.importorskip("accelerate")
    from phybench_baselines.dit import train as dit_train

    class Reader:  # a split reader that only knows its hash
        def __init__(self, folder):
            self.manifest = {"split_hash": folder}

    monkeypatch.setattr(dit_train, "SplitReader", Reader)
    out = tmp_path / "run"
    (out / "checkpoints" / "step_0000002").mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(saved_run(steps=2)))
    (out / "train_split.json").write_text(json.dumps({"split_hash": "abc"}))
    args = argparse.Namespace(config="tiny", set=[], out=str(out), resume=True, train_data="abc")
    assert dit_train.run_config(args).prediction == "x0_residual"
    args.train_data = "def"
    with pytest.raises(SystemExit, match="another training split"):
        dit_train.run_config(args)

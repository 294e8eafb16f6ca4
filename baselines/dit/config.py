"""Training configurations of the video DiT baseline (nanoGPT's GPTConfig style)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Callable

from ..training import set_fields


@dataclass
class TrainConfig:
    """Defaults are the paper's setup; each field says why it has its value."""

    size: str = "B"  # DiT-B: the paper's mid-size model (S/B/L/XL are all in DIT_SIZES)
    depth: int | None = None  # set with width/heads to override `size` (tiny configs)
    width: int | None = None  # transformer width of a custom size
    heads: int | None = None  # attention heads of a custom size
    patch: int = 2  # 2x2 spatial patches (t=1), as in the paper's parameter counts
    frames: int = 32  # full-length clips: the split's 32 frames
    resolution: int = 128  # the split's 128 px frames
    condition_frames: int = 3  # the paper conditions on the first 3 frames
    windows: bool = False  # train on every `frames`-long window (short models that roll out)
    vae: str | None = "runs/autoencoder"  # frozen (2+1)D autoencoder folder (phybench_baselines.dit.train_autoencoder); None: pixels
    objective: str = "ddpm"  # DDPM, v-prediction, zero terminal SNR (the paper's); or "flow"
    num_train_timesteps: int = 1000  # standard DDPM discretisation
    steps: int = 100_000  # paper: 100K training steps
    batch_size: int = 256  # paper: global batch 256 (over all processes and accumulation)
    grad_accum: int = 1  # raise when 256 clips do not fit on the devices
    lr: float = 1e-4  # AdamW at 1e-4, constant, as in DiT
    weight_decay: float = 0.0  # DiT trains without weight decay
    warmup_steps: int = 0  # constant rate from the start, as in DiT
    grad_clip: float = 1.0  # guards against rare loss spikes in long runs
    compile: bool = False  # torch.compile the model (GPU runs: fused kernels; on CPU the compile time dominates)
    ema_decay: float = 0.9999  # DiT's EMA; samples use the EMA weights
    ema_warmup: bool = False  # decay min(ema_decay, (1 + step) / (10 + step)) (framear's): a short run's EMA is not the init
    cond_fill: str = "zeros"  # condition channels of the frames to generate: "zeros" (the paper's) or "last" (the last given frame)
    change_weight: float = 0.0  # loss weight added on cells that change from the last given frame (framear's 20); 0: plain MSE
    prediction: str = "native"  # the network outputs the objective's target, or "x0_residual": clean clip - condition channels
    seed: int = 0  # seeds init, data order and noise
    num_workers: int = 4  # render training clips on the fly in worker processes
    log_every: int = 100  # loss reduced across processes and logged this often
    ckpt_every: int = 5_000  # resumable Accelerate checkpoints this often
    keep_checkpoints: int = 2  # older checkpoints are deleted
    sample_steps: int = 100  # sampler steps at evaluation (trailing spacing)
    eval_every: int = 5_000  # periodic evaluation (with --eval-data): velocity error parsed from pixels
    eval_samples: int = 64  # clips of the evaluation split it samples
    max_seconds: float | None = None  # stop (and save) after this much training-loop wall time: a fixed-time GPU run
    # Conditioning beyond frames (the modality study, `conditioning`); left out of config.json when off.
    condition: str | None = None  # None: frames only; "state": + the numeric state; "text": + the prompt
    state_bodies: int = 0  # bodies of the state vector (the training split's most), set by the trainer
    text_vocab: list[str] | None = None  # the text encoder's words, built from the training prompts
    text_len: int = 0  # token slots of the text encoder, set by the trainer

    def model_size(self) -> str | dict:
        if self.depth is not None:
            return dict(depth=self.depth, width=self.width, heads=self.heads)
        return self.size

    def to_dict(self) -> dict:
        """The fields; a frames-only config leaves the conditioning fields out (its config.json is as before)."""
        d = asdict(self)
        if self.condition is None:
            for key in CONDITION_FIELDS:
                d.pop(key)
        if self.max_seconds is None:  # a fixed-step run's config.json is as before
            d.pop("max_seconds")
        for key, off in RECIPE_DEFAULTS.items():  # so is a run without the issue-46 options
            if d[key] == off:
                d.pop(key)
        return d


CONDITION_FIELDS = ("condition", "state_bodies", "text_vocab", "text_len")
RECIPE_DEFAULTS = {"ema_warmup": False, "cond_fill": "zeros", "change_weight": 0.0, "prediction": "native"}  # left out of config.json when so


def tiny(**overrides) -> TrainConfig:
    """The CPU demonstration: pixel space, 8-frame windows at 32 px, 4 layers of width 128.

    About 17 minutes on 2 CPU cores (1,500 steps of 16 clips).  Short windows roll out
    autoregressively at sampling time, so it trains on every window of the clips.
    """
    cfg = TrainConfig(size="tiny", depth=4, width=128, heads=4, patch=4, frames=8, resolution=32, vae=None,
                      windows=True, steps=1500, batch_size=16, lr=1e-3, ema_decay=0.995, num_workers=0,
                      log_every=50, ckpt_every=500, sample_steps=20, eval_every=500, eval_samples=16)
    return replace(cfg, **overrides)


CONFIGS: dict[str, Callable[..., TrainConfig]] = {"paper": TrainConfig, "tiny": tiny}


# Fields that say how long a run goes and how often it logs, saves and evaluates, not what it
# learns: the only ones `--resume` takes from the command line (`resumed_config`).  A resumed
# run's weights do not depend on them (max_seconds ends a run like `steps`; num_workers only
# renders the same clips in other processes; sample_steps and eval_samples only shape evaluation).
RUN_LENGTH_FIELDS = ("steps", "max_seconds", "ckpt_every", "keep_checkpoints", "log_every", "eval_every",
                     "eval_samples", "sample_steps", "num_workers")


def apply_overrides(cfg: TrainConfig, overrides: list[str]) -> TrainConfig:
    """`cfg` with KEY=VALUE items set in place (`training.set_fields`: JSON values, a path unquoted)."""
    return set_fields(cfg, overrides)


def resumed_config(saved: dict, overrides: list[str]) -> TrainConfig:
    """The config of a resumed run: the run folder's saved config.json, with only the run-length
    fields of `overrides` applied.

    Why: rebuilding the config from `--config` + `--set` silently dropped whatever the first
    command set (a run trained with `--set prediction=x0_residual`, resumed without it, went on
    with the native objective and wrecked its weights: loss 0.05 -> 1.5).  An override of any
    other field that differs from the saved value is refused, since it would change what the
    checkpoint's weights mean; one equal to it (a repeated command) is accepted.
    """
    unknown = set(saved) - set(TrainConfig.__dataclass_fields__)
    if unknown:
        raise SystemExit(f"the run's config.json has fields this trainer does not know: {sorted(unknown)}")
    cfg = TrainConfig(**saved)
    changed = []
    for item in overrides:
        key = item.split("=", 1)[0]
        if key in RUN_LENGTH_FIELDS:
            apply_overrides(cfg, [item])
            continue
        wanted = getattr(apply_overrides(replace(cfg), [item]), key)
        if wanted != getattr(cfg, key):
            changed.append(f"{key}: saved {getattr(cfg, key)!r}, --set {wanted!r}")
    if changed:
        raise SystemExit("--resume continues the run with its saved config.json; these --set values differ "
                         f"from it ({'; '.join(changed)}). Only {', '.join(RUN_LENGTH_FIELDS)} may change "
                         "on resume: start a new --out to train with other settings.")
    return cfg

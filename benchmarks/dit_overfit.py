"""Overfit a tiny DiT on a few uniform clips and regenerate them from their condition frames (issue 46).

    python benchmarks/dit_overfit.py --train-data SPLIT [--n 2 --steps 600 --prediction x0_residual
        --fill last --change-weight 20 --ema 0.995 --ema-warmup --bf16 --sample-bf16]

A model that has learnt a handful of clips by heart must give them back from their condition
frames if the sampler inverts what the loss trains; and what it gives back after a short run
says which recipe learns fast.  Prints one JSON line per weight set (raw, and EMA when --ema):
pixel MSE of the generated frames against the truth (copy-last's beside it), `bg_noise` (mean
|pixel - white| where the truth is white background: the GPU run's "pastel noise") and the ball's
centroid error in pixels (frames where no ball pixel is found count as lost).
"""
from __future__ import annotations

import argparse
import copy
import json
import time

import numpy as np
import torch

from phybench.data.split import SplitReader, render_row
from phybench_baselines.dit.diffusion import condition, make_scheduler, sample, training_loss
from phybench_baselines.dit.models import DiT


def load_clips(split: str, n: int, res: int, frames: int) -> torch.Tensor:
    """(n, 3, frames, res, res) in [-1, 1]: n rows evenly spread over the split, rendered at res."""
    rows = list(SplitReader(split).rows())
    idx = np.linspace(0, len(rows) - 1, n).round().astype(int)
    return torch.stack([torch.from_numpy(render_row(rows[i], res, slice(0, frames))).permute(3, 0, 1, 2).float()
                        / 127.5 - 1 for i in idx])


def overfit(clips: torch.Tensor, a: argparse.Namespace) -> tuple[DiT, DiT, list[tuple[int, float]], float]:
    """Train on the clips (all of them every step); returns raw and EMA models, the loss curve, CPU seconds."""
    torch.manual_seed(a.seed)
    model = DiT(dict(depth=a.depth, width=a.width, heads=a.heads), in_channels=7, out_channels=3, patch=a.patch,
                frames=clips.shape[2], height=clips.shape[3], width=clips.shape[4])
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0)
    lrs = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, a.warmup)))
    sched, gen = make_scheduler(), torch.Generator().manual_seed(a.seed)
    cond, mask = condition(clips, 3, a.fill)
    curve, t0 = [], time.process_time()
    for step in range(a.steps):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss = training_loss(model, clips, cond, mask, a.objective, generator=gen, scheduler=sched,
                                 change_weight=a.change_weight, prediction=a.prediction)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        lrs.step()
        d = min(a.ema, (1 + step) / (10 + step)) if a.ema_warmup else a.ema
        with torch.no_grad():
            for e, q in zip(ema.parameters(), model.parameters()):
                e.mul_(d).add_(q.detach(), alpha=1 - d)
        if step % max(1, a.steps // 10) == 0 or step == a.steps - 1:
            curve.append((step + 1, round(loss.item(), 5)))
    return model, ema, curve, time.process_time() - t0


def centroid(x: torch.Tensor) -> tuple[float, float] | None:
    """(x, y) of the non-white pixels of a frame (3, H, W) in [-1, 1]; None when there are none."""
    ys, xs = torch.nonzero((1 - x).sum(0) > 0.5, as_tuple=True)
    return (xs.float().mean().item(), ys.float().mean().item()) if len(xs) else None


@torch.no_grad()
def regenerate(model: DiT, clips: torch.Tensor, a: argparse.Namespace) -> dict:
    """Sample every clip from its 3 condition frames and compare the 5+ generated frames with the truth."""
    model.eval()
    cond, mask = condition(clips, 3, a.fill)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.sample_bf16):
        out = sample(model, cond, mask, a.sample_steps, a.objective, torch.Generator().manual_seed(123),
                     make_scheduler(), prediction=a.prediction).float()
    gen, truth = out[:, :, 3:], clips[:, :, 3:]
    bg = (truth > 0.99).all(1, keepdim=True).expand_as(truth)
    errs = [None if (c := centroid(out[n, :, t])) is None else float(np.hypot(*np.subtract(c, centroid(clips[n, :, t]))))
            for n in range(len(clips)) for t in range(3, clips.shape[2])]
    good = [e for e in errs if e is not None]
    return {"mse": ((gen - truth) ** 2).mean().item(),
            "mse_copy_last": ((clips[:, :, 2:3] - truth) ** 2).mean().item(),
            "bg_noise": (gen[bg] - 1).abs().mean().item(), "lost_frames": len(errs) - len(good),
            "centroid_err_px": float(np.mean(good)) if good else None}


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-data", required=True, help="a uniform training split (states are enough)")
    for name, kind, default in [("n", int, 4), ("res", int, 32), ("frames", int, 8), ("patch", int, 4),
                                ("depth", int, 2), ("width", int, 64), ("heads", int, 2), ("steps", int, 500),
                                ("lr", float, 1e-3), ("warmup", int, 0), ("sample-steps", int, 50),
                                ("ema", float, 0.0), ("change-weight", float, 0.0), ("seed", int, 0)]:
        p.add_argument(f"--{name}", type=kind, default=default)
    p.add_argument("--objective", default="ddpm", choices=["ddpm", "flow"])
    p.add_argument("--fill", default="zeros", choices=["zeros", "last"])
    p.add_argument("--prediction", default="native", choices=["native", "x0_residual"])
    for flag in ("ema-warmup", "bf16", "sample-bf16"):
        p.add_argument(f"--{flag}", action="store_true")
    return p.parse_args(argv)


def main(argv=None) -> list[dict]:
    a = parse(argv)
    torch.set_num_threads(1)
    clips = load_clips(a.train_data, a.n, a.res, a.frames)
    model, ema, curve, cpu_s = overfit(clips, a)
    out = []
    for tag, m in [("raw", model)] + ([("ema", ema)] if a.ema else []):
        out.append({"weights": tag, **regenerate(m, clips, a), "loss_curve": curve, "train_cpu_s": round(cpu_s, 1),
                    "args": vars(a)})
        print(json.dumps(out[-1]), flush=True)
    return out


if __name__ == "__main__":
    main()

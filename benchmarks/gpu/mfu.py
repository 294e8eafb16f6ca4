"""Training FLOPs of a DiT run, the device's measured bf16 matmul rate, and the run's MFU.

    python benchmarks/gpu/mfu.py RUN [--matmul] [--peak-tflops 989.4]

FLOPs are counted, not estimated: `torch.utils.flop_counter.FlopCounterMode` over one
forward and backward pass of the run's model on one clip (matmuls and attention, what the
tensor cores do; elementwise work is left out, as MFU conventions do).  One training step
is that count times the global batch.  RUN/throughput.json (written by the trainer) gives
the steady steps/s; MFU = achieved FLOP/s / the card's dense bf16 peak (H100 SXM:
989.4 TFLOP/s; pass --peak-tflops for another card).  --matmul also times an
8192^3 bf16 matmul on the GPU, the rate this card really reaches.  Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from phybench_baselines.dit.clips import build_model
from phybench_baselines.dit.config import TrainConfig
from phybench_baselines.dit.latent import PixelCodec, latent_grid


def flops_per_clip(cfg: TrainConfig) -> tuple[int, int, int]:
    """(training FLOPs of one clip (forward + backward), tokens per clip, parameters), on the CPU."""
    codec = PixelCodec()  # the token grid of a pixel-space run; a latent run's would need its autoencoder
    model = build_model(cfg, codec)
    C, T, H, W = latent_grid(codec, cfg.frames, cfg.resolution)
    x = torch.randn(1, 2 * C + 1, T, H, W)
    t = torch.randint(0, cfg.num_train_timesteps, (1,))
    with FlopCounterMode(display=False) as counter:
        model(x, t).float().square().mean().backward()
    tokens = T * (H // cfg.patch) * (W // cfg.patch)
    return int(counter.get_total_flops()), tokens, sum(p.numel() for p in model.parameters())


def matmul_tflops(n: int = 8192, repeats: int = 20) -> float:
    """Measured dense bf16 rate of this GPU: mean of `repeats` n^3 products after 3 warm-ups."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return 2 * n ** 3 * repeats / (time.perf_counter() - t0) / 1e12


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run")
    p.add_argument("--matmul", action="store_true", help="also time a bf16 matmul on the GPU")
    p.add_argument("--peak-tflops", type=float, default=989.4, help="dense bf16 peak (default: H100 SXM)")
    args = p.parse_args(argv)
    run = Path(args.run)
    cfg = TrainConfig(**json.loads((run / "config.json").read_text()))
    per_clip, tokens, params = flops_per_clip(cfg)
    timing = json.loads((run / "throughput.json").read_text())
    per_step = per_clip * cfg.batch_size
    rate = per_step * (timing["steps_per_s"] or 0.0) / 1e12  # achieved TFLOP/s
    out = {"params": params, "tokens_per_clip": tokens, "train_gflop_per_clip": round(per_clip / 1e9, 2),
           "train_tflop_per_step": round(per_step / 1e12, 3), **timing, "achieved_tflops": round(rate, 1),
           "peak_tflops": args.peak_tflops, "mfu": round(rate / args.peak_tflops, 4)}
    if args.matmul and torch.cuda.is_available():
        measured = matmul_tflops()
        out.update(matmul_tflops=round(measured, 1), of_matmul=round(rate / measured, 4))
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import _machine  # benchmarks/_machine.py: the CPU line every benchmark prints first
    print(_machine.line(), file=sys.stderr, flush=True)  # stderr: stdout is timing.json
    main()

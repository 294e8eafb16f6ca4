"""Training throughput of the frame-autoregressive flow model (`phybench_baselines.framear`) on this CPU.

    python benchmarks/bench_framear.py                    # the default recipe: batch 32, 48 px
    python benchmarks/bench_framear.py --steps 40 --json out.json

One step is what `framear.train` runs: a batch of (x_t, context) pairs, the weighted loss,
backward, gradient clipping, an AdamW step and the EMA update.  FLOPs are counted with
`torch.utils.flop_counter` over one forward + backward (convolutions dominate), not estimated.
The rate is set against an fp32 2048^3 matmul and an fp32 convolution of the model's own
shape measured in the same run, on the same threads, and against this machine's measured FMA
peak (`limits.py`; the CPU is named on the first line, `_machine.py`).  Every rate is per
CPU-second (user + system of all threads): on shared cores wall seconds count the time a
neighbour held the core, so a wall-time rate set against a CPU-time one (or two wall-time rates
taken at different loads) can show a step at "119% of the conv rate".  Wall seconds are printed
beside, for the reader who wants the elapsed time; no ratio uses them.  One thread by default
(`--threads`): with two on busy cores, a thread waiting at a barrier for its descheduled sibling
spins and is charged CPU time for no work (measured: the model's conv at 43 GFLOP per CPU-second
on two threads at load 16, 131 on one thread at load 15 two minutes later).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _machine  # noqa: E402
import limits  # noqa: E402
from phybench_baselines.training import update_ema  # noqa: E402
from phybench_baselines.framear.train import FrameConfig, make_model, weighted_loss  # noqa: E402


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn, reps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per call of fn, after one untimed call."""
    fn()
    w, c = time.perf_counter(), cpu_seconds()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - w) / reps, (cpu_seconds() - c) / reps


def matmul_rate(n: int = 2048, reps: int = 5) -> float:
    """GFLOP per CPU-second of an fp32 n x n x n matmul (mean of reps, all threads' CPU time)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    _, cpu = timed(lambda: a @ b, reps)
    return 2 * n**3 / cpu / 1e9


def conv_rate(batch: int, width: int, res: int, reps: int = 5) -> float:
    """GFLOP per CPU-second of the model's inner 3x3 convolution (width -> width at res x res),
    forward only."""
    conv = torch.nn.Conv2d(width, width, 3, padding=1)
    x = torch.randn(batch, width, res, res)
    with torch.no_grad():
        _, cpu = timed(lambda: conv(x), reps)
    return 2 * batch * width * width * 9 * res * res / cpu / 1e9


def step_flops(model: torch.nn.Module, batch: tuple[torch.Tensor, ...], cfg: FrameConfig) -> float:
    """FLOPs of one forward + backward, counted by torch's flop counter."""
    from torch.utils.flop_counter import FlopCounterMode

    xt, context, t, target, last = batch
    with FlopCounterMode(display=False) as counter:
        weighted_loss(model(xt, context, t), target, last, cfg.change_weight).backward()
    model.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def bench(cfg: FrameConfig, steps: int) -> dict:
    torch.manual_seed(0)
    model = make_model(cfg)
    ema = make_model(cfg).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    n, r, c = cfg.batch_size, cfg.resolution, cfg.context
    target = torch.rand(n, 3, r, r) * 2 - 1  # (N, 3, r, r) in [-1, 1]
    context = torch.rand(n, c, 3, r, r) * 2 - 1  # (N, context, 3, r, r)
    t = torch.rand(n)
    xt = (1 - t.view(-1, 1, 1, 1)) * target + t.view(-1, 1, 1, 1) * torch.randn_like(target)
    batch = (xt, context, t, target, context[:, -1])
    flops = step_flops(model, batch, cfg)

    def step() -> None:
        loss = weighted_loss(model(xt, context, t), target, context[:, -1], cfg.change_weight)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        update_ema(ema, model, cfg.ema_decay)

    wall, cpu = timed(step, steps)
    return dict(params=sum(p.numel() for p in model.parameters()), batch=n, resolution=r,
                gflop_per_step=flops / 1e9, wall_s_per_step=wall, cpu_s_per_step=cpu,
                steps_per_s=1 / wall, achieved_gflops=flops / cpu / 1e9, wall_gflops=flops / wall / 1e9)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="timed steps (after one untimed)")
    p.add_argument("--batch", type=int, default=None, help="clips per step (default: the recipe's)")
    p.add_argument("--resolution", type=int, default=None, help="model frames, px (default: the recipe's)")
    p.add_argument("--json", type=Path, help="also write the result here")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1; 0: torch's default). On shared cores OpenMP threads spin while "
                        "a sibling is descheduled: CPU time without work, so more threads understate the rate")
    args = p.parse_args(argv)
    cfg = FrameConfig()
    cfg.batch_size = args.batch or cfg.batch_size
    cfg.resolution = args.resolution or cfg.resolution
    if args.threads:
        torch.set_num_threads(args.threads)
    lim = limits.measure()  # one thread; restores the thread count
    print(lim.line())
    mm = matmul_rate()
    cv = conv_rate(cfg.batch_size, cfg.width, cfg.resolution)
    r = bench(cfg, args.steps)
    mm_after = matmul_rate()  # again after: a neighbour's load shows as a difference between the two
    r.update(threads=torch.get_num_threads(), torch=torch.__version__, matmul_gflops=[mm, mm_after],
             conv_gflops=cv, share_of_matmul=r["achieved_gflops"] / max(mm, mm_after),
             share_of_conv=r["achieved_gflops"] / cv, fp32_peak_gflops=lim.fp32_gflops,
             share_of_peak=r["achieved_gflops"] / lim.fp32_gflops, machine=_machine.line())
    for name, rate in (("framear step", r["achieved_gflops"]), ("2048^3 matmul", max(mm, mm_after)), ("3x3 conv", cv)):
        limits.check(name, rate, lim.fp32_gflops, "GFLOP per CPU-second", peak=lim.fp32_gflops)
    print(f"framear step: {r['params']:,} parameters, batch {r['batch']} at {r['resolution']} px, "
          f"{r['gflop_per_step']:.1f} GFLOP a step (counted)")
    print(f"  {r['cpu_s_per_step'] * 1e3:.0f} ms CPU a step on {r['threads']} threads (all threads' CPU time): "
          f"{r['achieved_gflops']:.1f} GFLOP per CPU-second; wall {r['wall_s_per_step'] * 1e3:.0f} ms a step, "
          f"{r['steps_per_s']:.2f} steps/s, {r['wall_gflops']:.1f} GFLOP/s elapsed (not compared: load-dependent)")
    print(f"  per CPU-second, same threads: fp32 2048^3 matmul {mm:.1f} / {mm_after:.1f} GFLOP (before / after); the "
          f"model's 3x3 conv {cv:.1f}; the step reaches {r['share_of_matmul']:.0%} of the matmul rate, "
          f"{r['share_of_conv']:.0%} of the conv rate, {r['share_of_peak']:.0%} of the FMA peak {lim.fp32_gflops:.0f}")
    if args.json:
        args.json.write_text(json.dumps(r, indent=2) + "\n")
    return r


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

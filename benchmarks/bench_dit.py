"""DiT training throughput and model FLOPs utilisation (MFU) at the paper's token count.

    python benchmarks/bench_dit.py                              # DiT-S and DiT-B, this machine
    python benchmarks/bench_dit.py --sizes B --batch 32 --compile   # on a GPU
    python benchmarks/bench_dit.py --device cpu --batch 2 --steps 3

The paper's clips are 32 frames at 128 px; through a 4x temporal / 8x spatial autoencoder
that is a (4, 8, 16, 16) latent, and 2x2 patches make 8 x 8 x 8 = 512 tokens.  One
training step is what `phybench_baselines.dit.train` runs per micro-batch: the DDPM v-prediction
loss in bf16 autocast (on GPU), backward, gradient clipping and a fused AdamW step.

FLOPs are counted, not estimated: `torch.utils.flop_counter` over one forward + backward
(matmuls, convolutions and attention, the ops that dominate).  MFU = counted FLOPs per
second / the device's peak dense bf16 rate: the datasheet value for known GPUs
(`--peak-tflops` overrides), and on CPU the rate of a large bf16 matmul measured here,
since CPUs publish no single peak.  On CPU every time is CPU seconds (`time.process_time`, all
threads): the cores are shared, and wall seconds would count a neighbour's time as the model's.
The achieved rate is checked against the FMA peak measured in the same run (`limits.py`): a
rate above it raises.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from phybench_baselines.dit.diffusion import condition, make_scheduler, training_loss  # noqa: E402
from phybench_baselines.dit.models import DiT, PAPER_SETUP  # noqa: E402

# Dense bf16 tensor-core peaks (TFLOP/s), from NVIDIA's datasheets (SXM parts, no sparsity).
GPU_PEAK_TFLOPS = {"H100": 989.4, "H200": 989.4, "A100": 312.0, "L40S": 362.1, "A10": 125.0, "4090": 165.2}


def gpu_peak(name: str) -> float | None:
    for key, value in GPU_PEAK_TFLOPS.items():
        if key in name:
            return value
    return None


def clock(device: str) -> float:
    """Wall seconds on a GPU (the host waits for the card), CPU seconds on a CPU."""
    return time.perf_counter() if device.startswith("cuda") else time.process_time()


def measured_matmul_peak(device: str, dtype: torch.dtype, n: int = 2048, reps: int = 5) -> float:
    """TFLOP/s of an n x n x n matmul, the best of `reps`: the practical peak of this device."""
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(reps + 1):
        sync(device)
        t = clock(device)
        a @ b
        sync(device)
        best = min(best, clock(device) - t)
    return 2 * n**3 / best / 1e12


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def train_step_flops(model, batch, device) -> float:
    """Counted FLOPs of one forward + backward of the loss on `batch` (no optimizer)."""
    from torch.utils.flop_counter import FlopCounterMode

    x0, cond, mask = batch
    with FlopCounterMode(display=False) as counter:
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device != "cpu"):
            loss = training_loss(model, x0, cond, mask, "ddpm", scheduler=make_scheduler())
        loss.backward()
    model.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def bench(size: str, batch_size: int, steps: int, warmup: int, device: str, compile_: bool) -> dict:
    torch.manual_seed(0)
    model = DiT(size, **PAPER_SETUP).to(device)
    params = sum(p.numel() for p in model.parameters())
    C, T, H, W = PAPER_SETUP["out_channels"], PAPER_SETUP["frames"], PAPER_SETUP["height"], PAPER_SETUP["width"]
    tokens = T * (H // PAPER_SETUP["patch"]) * (W // PAPER_SETUP["patch"])
    x0 = torch.randn(batch_size, C, T, H, W, device=device)
    cond, mask = condition(x0, 1)  # the first latent frame given
    flops = train_step_flops(model, (x0, cond, mask), device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.startswith("cuda"))
    step_model = torch.compile(model) if compile_ else model
    sched = make_scheduler()

    def step():
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device != "cpu"):
            loss = training_loss(step_model, x0, cond, mask, "ddpm", scheduler=sched)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    sync(device)
    t = clock(device)
    for _ in range(steps):
        step()
    sync(device)
    seconds = (clock(device) - t) / steps
    return dict(size=size, params=params, tokens=tokens, batch=batch_size, seconds_per_step=seconds,
                samples_per_s=batch_size / seconds, tflops_per_step=flops / 1e12,
                achieved_tflops=flops / seconds / 1e12)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", default=["S", "B"], choices=["S", "B", "L", "XL"])
    p.add_argument("--batch", type=int, default=None, help="clips per step (default 32 on GPU, 2 on CPU)")
    p.add_argument("--steps", type=int, default=None, help="timed steps (default 20 on GPU, 3 on CPU)")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps first (default 5 on GPU, 1 on CPU)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--peak-tflops", type=float, help="the device's peak dense bf16 TFLOP/s for MFU")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)
    gpu = args.device.startswith("cuda")
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = True
        name = torch.cuda.get_device_name()
        peak, peak_source = args.peak_tflops or gpu_peak(name), "datasheet"
    else:
        name = f"CPU ({torch.get_num_threads()} threads)"
        peak, peak_source = args.peak_tflops, "given"
        if peak is None:
            peak, peak_source = measured_matmul_peak("cpu", torch.float32), "measured fp32 2048^3 matmul"
    batch = args.batch or (32 if gpu else 2)
    steps = args.steps or (20 if gpu else 3)
    warmup = args.warmup if args.warmup is not None else (5 if gpu else 1)
    print(f"device: {name}; peak {peak and f'{peak:.2f}'} TFLOP/s ({peak_source}); torch {torch.__version__}; "
          f"{'bf16 autocast' if gpu else 'fp32 (CPU autocast off)'}{', compiled' if args.compile else ''}")
    print("size  params       tokens  batch  s/step   samples/s  TFLOP/step  TFLOP/s  MFU")
    rows = []
    for size in args.sizes:
        r = bench(size, batch, steps, warmup, args.device, args.compile)
        r.update(device=name, peak_tflops=peak, peak_source=peak_source, mfu=(r["achieved_tflops"] / peak) if peak else None,
                 compiled=args.compile, torch=torch.__version__)
        rows.append(r)
        if not gpu:
            import limits  # benchmarks/limits.py: one thread, restores the thread count

            limits.check(f"DiT-{size}", r["achieved_tflops"] * 1e3, limits.measure().fp32_gflops, "GFLOP per CPU-second",
                         peak=limits.measure().fp32_gflops)
        mfu = f"{100 * r['mfu']:.1f}%" if r["mfu"] is not None else "n/a"
        print(f"{size:<4}  {r['params']:>11,}  {r['tokens']:>6}  {batch:>5}  {r['seconds_per_step']:>6.3f}  "
              f"{r['samples_per_s']:>9.2f}  {r['tflops_per_step']:>10.3f}  {r['achieved_tflops']:>7.3f}  {mfu}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

"""Throughput of the LPIPS and FVD feature networks in clips per second.

A clip is 32 frames of 128 x 128 uint8 RGB (the paper's training resolution). LPIPS compares
each clip frame by frame with a second clip (32 AlexNet pairs per clip); I3D resizes each clip
to 224 x 224 and produces its 400 logits. The weights must be fetched first
(`phybench weights fetch`). One warm-up batch is run before timing.

Usage: python benchmarks/bench_lpips_fvd.py [--n 8] [--device cpu|cuda] [--batch-size 4] [--repeats 2]
       python benchmarks/bench_lpips_fvd.py --variants     # per core: fp32, channels-last, bf16 autocast

``--variants`` runs one CPU thread (clips/s/core) and compares each variant's output with
fp32's: the largest LPIPS difference (absolute) and the largest I3D logit difference
(relative to the largest logit), the numbers that decide whether a variant is exact enough
to score with.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from phybench.scoring.perceptual import fvd, lpips

sys.path.insert(0, str(Path(__file__).resolve().parent))
import limits  # noqa: E402


def _timed(fn, repeats: int) -> float:
    """Best of `repeats` runs: CPU seconds of this process on a CPU (the cores here are shared: wall
    time would count other jobs), wall seconds on a GPU."""
    cuda = torch.cuda.is_available()
    clock = time.perf_counter if cuda else time.process_time
    best = float("inf")
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        start = clock()
        fn()
        if cuda:
            torch.cuda.synchronize()
        best = min(best, clock() - start)
    return best


def _gflop(fn) -> float:
    """GFLOP of one call, counted by torch's flop counter (convolutions and matmuls)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() / 1e9


def variants(n: int, repeats: int) -> None:
    """Per-core throughput and error against fp32 of channels-last and bf16 autocast (CPU)."""
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    a = torch.as_tensor(rng.integers(0, 256, (n, 32, 128, 128, 3), dtype=np.uint8))
    b = torch.as_tensor(rng.integers(0, 256, (n, 32, 128, 128, 3), dtype=np.uint8))
    lp = lpips.LPIPS()
    i3d = fvd.cached_model("cpu")

    def lpips_run(model, cl: bool, bf16: bool) -> torch.Tensor:
        out = []
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for x, y in zip(a, b):
                x0, x1 = lpips._to_unit_range(x), lpips._to_unit_range(y)
                if cl:
                    x0, x1 = (t.contiguous(memory_format=torch.channels_last) for t in (x0, x1))
                out.append(model(x0, x1).float())
        return torch.cat(out)

    def i3d_run(model, cl: bool, bf16: bool) -> torch.Tensor:
        out = []
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for k in range(n):
                x = fvd.preprocess(a[k:k + 1])
                if cl:
                    x = x.contiguous(memory_format=torch.channels_last_3d)
                out.append(model(x).double())
        return torch.cat(out)

    lim = limits.measure()
    gl = _gflop(lambda: lpips_run(lp, False, False)) / n
    gi = _gflop(lambda: i3d_run(i3d, False, False)) / n
    print(lim.line())
    print(f"{n} clips of 32 x 128 x 128, 1 CPU thread, torch {torch.__version__}; LPIPS {gl:.1f} GFLOP per clip "
          f"(32 frame pairs), I3D {gi:.1f} GFLOP per clip; rates in CPU seconds")
    print(f"{'variant':<22} {'LPIPS clips/s/core':>18} {'max |dLPIPS|':>12} {'I3D clips/s/core':>16} {'max dlogit rel':>14}"
          f"  implied GFLOP/s (LPIPS, I3D) against the fp32 limit, or the bf16 one for bf16 rows")
    ref_l, ref_i = lpips_run(lp, False, False), i3d_run(i3d, False, False)
    for name, cl, bf16 in (("fp32 (used)", False, False), ("fp32 channels-last", True, False),
                           ("bf16 autocast", False, True), ("bf16 channels-last", True, True)):
        lm = lpips.LPIPS().to(memory_format=torch.channels_last) if cl else lp
        im = fvd.I3D().to(memory_format=torch.channels_last_3d) if cl else i3d
        out_l = lpips_run(lm, cl, bf16)
        lt = _timed(lambda: lpips_run(lm, cl, bf16), repeats)
        out_i = i3d_run(im, cl, bf16)
        it = _timed(lambda: i3d_run(im, cl, bf16), repeats)
        dl = float((out_l - ref_l).abs().max())
        di = float((out_i - ref_i).abs().max() / ref_i.abs().max())
        top = lim.bf16_gflops if bf16 else lim.fp32_gflops
        print(f"{name:<22} {n / lt:>18.2f} {dl:>12.2e} {n / it:>16.2f} {di:>14.2e}  "
              f"{limits.check('LPIPS', gl * n / lt, top, 'GFLOP/s', peak=top)}; "
              f"{limits.check('I3D', gi * n / it, top, 'GFLOP/s', peak=top)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=8, help="clips per measurement (default 8)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch-size", type=int, default=4, help="I3D clips per forward pass (default 4)")
    parser.add_argument("--lpips-batch-size", type=int, default=32, help="LPIPS frame pairs per pass (default 32)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs; the best is reported (default 2)")
    parser.add_argument("--frames", type=int, default=32)
    parser.add_argument("--resolution", type=int, default=128)
    parser.add_argument("--variants", action="store_true", help="per-core fp32 / channels-last / bf16 table")
    args = parser.parse_args()
    if args.variants:
        variants(args.n, args.repeats)
        return

    rng = np.random.default_rng(0)
    shape = (args.n, args.frames, args.resolution, args.resolution, 3)
    ref = rng.integers(0, 256, shape, dtype=np.uint8)
    gen = rng.integers(0, 256, shape, dtype=np.uint8)

    lpips_frames = lambda clips: [lpips.lpips_frames(r, g, args.lpips_batch_size, args.device)  # noqa: E731
                                  for r, g in zip(clips, gen)]
    lpips_frames(ref[:1])  # warm-up (loads and verifies the weights)
    lpips_s = _timed(lambda: lpips_frames(ref), args.repeats)

    i3d = lambda clips: fvd.i3d_logits(clips, args.batch_size, args.device)  # noqa: E731
    i3d(ref[:args.batch_size])  # warm-up
    i3d_s = _timed(lambda: i3d(ref), args.repeats)

    threads = torch.get_num_threads()
    lim = limits.measure()
    gl = _gflop(lambda: lpips_frames(ref[:1])) if args.device == "cpu" else 0.0
    gi = _gflop(lambda: i3d(ref[:1])) if args.device == "cpu" else 0.0
    print(lim.line())
    print(f"{args.n} clips of {args.frames} x {args.resolution} x {args.resolution}, device {args.device}"
          f"{f', {threads} CPU threads' if args.device == 'cpu' else ''}, torch {torch.__version__}")
    print(f"{'metric':<28} {'batch':>5} {'clips/CPU-s':>11} {'CPU-s/clip':>10}")
    print(f"{'LPIPS (AlexNet, per frame)':<28} {args.lpips_batch_size:>5} {args.n / lpips_s:>11.2f} {lpips_s / args.n:>10.3f}")
    print(f"{'I3D logits (FVD features)':<28} {args.batch_size:>5} {args.n / i3d_s:>11.2f} {i3d_s / args.n:>10.3f}")
    if args.device == "cpu":  # per CPU-second, all threads together: one core's limit applies
        print(limits.check(f"LPIPS, {gl:.1f} GFLOP per clip", gl * args.n / lpips_s, lim.fp32_gflops,
                           "GFLOP per CPU-second", peak=lim.fp32_gflops))
        print(limits.check(f"I3D, {gi:.1f} GFLOP per clip", gi * args.n / i3d_s, lim.fp32_gflops,
                           "GFLOP per CPU-second", peak=lim.fp32_gflops))


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

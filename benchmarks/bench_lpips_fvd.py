"""Throughput of the LPIPS and FVD feature networks in clips per second.

A clip is 32 frames of 128 x 128 uint8 RGB (the paper's training resolution). LPIPS compares
each clip frame by frame with a second clip (32 AlexNet pairs per clip); I3D resizes each clip
to 224 x 224 and produces its 400 logits. The weights must be fetched first
(`phybench weights fetch`). One warm-up batch is run before timing.

Usage: python benchmarks/bench_lpips_fvd.py [--n 8] [--device cpu|cuda] [--batch-size 4] [--repeats 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from phybench.scoring import fvd, lpips


def _timed(fn, repeats: int) -> float:
    """Best of `repeats` wall-clock runs (other processes on a shared machine only add time)."""
    best = float("inf")
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=8, help="clips per measurement (default 8)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch-size", type=int, default=4, help="I3D clips per forward pass (default 4)")
    parser.add_argument("--lpips-batch-size", type=int, default=32, help="LPIPS frame pairs per pass (default 32)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs; the best is reported (default 2)")
    parser.add_argument("--frames", type=int, default=32)
    parser.add_argument("--resolution", type=int, default=128)
    args = parser.parse_args()

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
    print(f"{args.n} clips of {args.frames} x {args.resolution} x {args.resolution}, device {args.device}"
          f"{f', {threads} CPU threads' if args.device == 'cpu' else ''}, torch {torch.__version__}")
    print(f"{'metric':<28} {'batch':>5} {'clips/s':>9} {'s/clip':>8}")
    print(f"{'LPIPS (AlexNet, per frame)':<28} {args.lpips_batch_size:>5} {args.n / lpips_s:>9.2f} {lpips_s / args.n:>8.3f}")
    print(f"{'I3D logits (FVD features)':<28} {args.batch_size:>5} {args.n / i3d_s:>9.2f} {i3d_s / args.n:>8.3f}")


if __name__ == "__main__":
    main()

"""I3D (the FVD feature network) per clip on ONE CPU thread, variant by variant, against the
convolution rate measured in the same run, with each variant's FVD deviation from today's.

    OMP_NUM_THREADS=1 python benchmarks/bench_i3d.py [--n 4] [--batches 1,4] [--repeats 1]

Clips: the first 2n clips of `--task`'s id-eval split (default uniform: 32 frames, 128 px), generated here; the
first n are the "real" side, the next n blurred (Gaussian sigma 0.7 px, as `bench_score.py`) are
the "fake" side.  "before" is the code before issue 52 (torch's max pool, the old resize, glibc's
default allocation).  Each variant computes the logits of both sides in batches of `--batches` (the
score's `--batch-size`; today's kernels depend on it: a batch of 1 sends most 3-D convolutions to
torch's im2col path, a larger one to oneDNN), times the real side (CPU seconds, best of
`--repeats`), and reports:

- CPU-s per clip, GFLOP per CPU-second (FLOPs counted by `torch.utils.flop_counter`: 111 per
  clip) and that as a share of the fp32 conv limit of the same run (`limits.py`);
- CPU seconds are user + system: `fp32 mmap` is the default without `fvd._keep_freed_buffers`
  (glibc then unmaps every large freed buffer), what the page faults of I3D's per-layer buffers cost;
- the largest logit change relative to the largest logit, and the FVD (n real vs n fake) change,
  against "before": "identical" means equal bytes.

A variant that changes a logit's bytes changes shipped FVD values, so only identical ones may be
the default (`score` uses `fvd.I3D` as it is); the others are measured for the record.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

from phybench.scoring.perceptual import fvd
from phybench.scoring.perceptual.fvd_reference import max_pool3d_torch, preprocess_before_issue_52

sys.path.insert(0, str(Path(__file__).resolve().parent))
import limits  # noqa: E402


def _clips(n: int, task: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(real, fake): n id-eval clips of `task` and n others blurred, (n, T, H, W, 3) uint8."""
    from scipy.ndimage import gaussian_filter

    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan
    from phybench.tasks import get_task

    with tempfile.TemporaryDirectory() as tmp:
        generate(make_plan(get_task(task), "id-eval", None, 2 * n, None), Path(tmp), progress=False)
        videos = np.stack([SplitReader(Path(tmp)).video(r) for r in SplitReader(Path(tmp)).rows()])
    fake = np.clip(gaussian_filter(videos[n:].astype(np.float32), (0, 0, 0.7, 0.7, 0)).round(), 0, 255)
    return torch.as_tensor(videos[:n]), torch.as_tensor(fake.astype(np.uint8))


@contextlib.contextmanager
def _variant(name: str) -> Iterator[None]:
    """Patch the module for one variant (pools, resize, kept buffers, autocast); restore it after."""
    saved = fvd.max_pool3d_exact, fvd.preprocess
    if name == "before":
        fvd.max_pool3d_exact, fvd.preprocess = max_pool3d_torch, preprocess_before_issue_52  # type: ignore[assignment]
    try:
        with contextlib.ExitStack() as stack:
            if name != "before" and "mmap" not in name:  # what fvd._logits does on the CPU
                stack.enter_context(fvd._keep_freed_buffers())
            if "mkldnn off" in name:
                stack.enter_context(torch.backends.mkldnn.flags(enabled=False))
            if "bf16" in name:
                stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
            yield
    finally:
        fvd.max_pool3d_exact, fvd.preprocess = saved  # type: ignore[assignment]


VARIANTS = ("before", "fp32 (default)", "fp32 mmap", "fp32 channels-last", "fp32 mkldnn off", "bf16 autocast",
            "bf16 channels-last")


def _logits(model: torch.nn.Module, clips: torch.Tensor, batch: int, channels_last: bool) -> torch.Tensor:
    out = []
    with torch.inference_mode():
        for start in range(0, len(clips), batch):
            x = fvd.preprocess(clips[start:start + batch])  # (B, 3, 32, 224, 224)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last_3d)
            out.append(model(x).double())  # (B, 400)
    return torch.cat(out)


def _best(fn: Callable[[], object], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4, help="clips per side (default 4)")
    ap.add_argument("--task", default="uniform", help="the task whose id-eval clips are timed (default uniform: 32 frames, 128 px)")
    ap.add_argument("--batches", default="1,4", help="I3D batch sizes to measure (default 1,4)")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs of the real side; best kept")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    lim = limits.measure()
    print(lim.line(), flush=True)
    real, fake = _clips(args.n, args.task)
    model = fvd.cached_model("cpu")
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        _logits(model, real[:1], 1, False)
    gflop = counter.get_total_flops() / 1e9
    print(f"{args.n} + {args.n} clips of 32 x 128 x 128 (uniform id-eval; blurred), 1 thread, torch {torch.__version__}, "
          f"{gflop:.1f} GFLOP per clip; conv limit {lim.conv_gflops:.0f}, fp32 peak {lim.fp32_gflops:.0f}, "
          f"bf16 peak {lim.bf16_gflops:.0f} GFLOP per CPU-s")
    print(f"{'variant':<22} {'batch':>5} {'CPU-s/clip':>10} {'GFLOP/CPU-s':>11} {'of conv':>7} {'max dlogit rel':>14} "
          f"{'FVD':>12} {'dFVD rel':>9}", flush=True)
    refs: dict[int, tuple[torch.Tensor, torch.Tensor, float]] = {}  # batch -> the first variant's (real, fake, FVD)
    for name in args.variants.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            cl = "channels-last" in name
            m = fvd.I3D().to(memory_format=torch.channels_last_3d) if cl else model
            with _variant(name):
                lr, lf = _logits(m, real, batch, cl), _logits(m, fake, batch, cl)  # also the warm-up
                cpu = _best(lambda: _logits(m, real, batch, cl), args.repeats) / args.n
            value = fvd.frechet_distance(lr.numpy(), lf.numpy())
            ref = refs.setdefault(batch, (lr, lf, value))
            same = torch.equal(lr, ref[0]) and torch.equal(lf, ref[1])
            dl = float(max((lr - ref[0]).abs().max(), (lf - ref[1]).abs().max()) / ref[0].abs().max())
            rate = gflop / cpu
            top = lim.bf16_gflops if "bf16" in name else lim.fp32_gflops
            limits.check(f"I3D {name}", rate, top, "GFLOP/s", peak=top)  # raises above the measured peak
            print(f"{name:<22} {batch:>5} {cpu:>10.3f} {rate:>11.1f} {rate / lim.conv_gflops:>7.0%} "
                  f"{'identical' if same else f'{dl:.1e}':>14} {value:>12.6f} {abs(value - ref[2]) / ref[2]:>9.1e}",
                  flush=True)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

"""This machine's limits, measured, for checking every throughput a benchmark prints.

A throughput is only believable below what the hardware can do, so each benchmark prints the
implied rate (GFLOP per CPU-second from a FLOP count, or GB per CPU-second from the bytes
touched) beside these, measured on the same machine in the same run:

- fp32 GEMM through torch's BLAS (MKL): the classic "matmul rate".
- fp32 direct convolution through oneDNN (torch's CPU conv kernels): on some CPUs oneDNN
  uses wider vectors than the BLAS does (AMD Zen 4/5: oneDNN runs AVX-512, MKL's sgemm AVX2),
  so the conv rate, not the matmul rate, is the FMA limit that LPIPS and I3D run against.
- bf16 convolution: the same under `torch.autocast` (the limit of the bf16 variants).
- memcpy: numpy copy of a 256 MB buffer, bytes read + written per CPU-second.
- the FMA peak, fp32 and bf16: the best of many cache-resident GEMMs (`torch.mm` into a
  preallocated output, n x n with n from 128 to 1024; one call does n^3 fused multiply-adds
  from tiles held in registers).  Without a compiler this is the tightest FMA loop Python can
  reach: an elementwise `addcmul_` on an L1-sized tensor is bound by its loads and stores (and
  by torch's per-call dispatch: about 6 GFLOP/s), not by the FMA pipes, while a BLAS micro-kernel
  keeps every pipe busy and reaches 85-100% of the core's peak.  bf16 goes through oneDNN (AMX
  tiles where the CPU has them), so its peak can be many times fp32's.  The figure is a lower
  bound on what the core can do; the per-cycle peak the CPU flags imply (`_machine.py`) is the
  upper bound, and the line prints both (their ratio is the clock the measurement implies).

Every benchmark checks its implied rates with `check()`: a rate more than `TOLERANCE` above the
measured peak of its precision is not a fast kernel but a wrong measurement (wall seconds under
load, a FLOP count off by a factor), and `check()` raises `AbovePeakError` instead of printing it.

All on one thread and timed in CPU seconds (`time.process_time`): the cores here are shared.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

try:
    from . import _machine  # type: ignore[no-redef]  # imported as benchmarks.limits (the tests)
except ImportError:
    import _machine  # type: ignore[no-redef]  # run as a script from benchmarks/

#: how far above the measured peak a rate may sit before it is an error: the peak is the best of
#: a few runs on shared cores, so a long kernel measured in a quieter moment can beat it a little
TOLERANCE = 1.10


class AbovePeakError(RuntimeError):
    """A benchmark's implied rate is above what this machine's FMA pipes were measured to do."""


def _best_cpu_seconds(fn: Callable[[], object], repeats: int = 5) -> float:
    fn()  # warm-up: kernel selection, page faults
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return max(best, 1e-9)


@dataclass(frozen=True)
class Limits:
    matmul_gflops: float  # fp32 GEMM, GFLOP per CPU-second, one thread
    conv_gflops: float  # fp32 3x3 direct convolution (oneDNN), GFLOP per CPU-second, one thread
    bf16_conv_gflops: float  # the same convolution under bf16 autocast (AVX512-BF16 where the CPU has it)
    memcpy_gbs: float  # GB (read + written) per CPU-second, one thread
    cpu: str
    fp32_peak_gflops: float = 0.0  # the FMA peak: best cache-resident fp32 GEMM, GFLOP per CPU-second
    bf16_peak_gflops: float = 0.0  # the same in bf16 (oneDNN; AMX where the CPU has it)

    @property
    def fp32_gflops(self) -> float:
        """The highest fp32 rate any of the measured kernels reaches: a figure above it is a bug."""
        return max(self.fp32_peak_gflops, self.matmul_gflops, self.conv_gflops)

    @property
    def bf16_gflops(self) -> float:
        """The same for bf16 figures (bf16 never runs slower than its fp32 fallback)."""
        return max(self.bf16_peak_gflops, self.bf16_conv_gflops, self.fp32_gflops)

    def line(self) -> str:
        peak, top = _machine.machine(), self.fp32_gflops
        theory = peak.peak_gflops("fp32")
        vs = (f" ({top / theory:.0%} of {theory:.0f} at the cpuinfo clock: {top / peak.fp32_flop_per_cycle():.2f} GHz"
              f" at {peak.fp32_flop_per_cycle()} FLOP/cycle)" if theory else "")
        return (f"limits ({self.cpu}, 1 thread, per CPU-second): FMA peak fp32 {top:.0f} GFLOP/s{vs}, "
                f"bf16 {self.bf16_gflops:.0f}; fp32 matmul 1024^3 {self.matmul_gflops:.0f} ({self.matmul_gflops / top:.0%}), "
                f"fp32 conv (oneDNN) {self.conv_gflops:.0f} ({self.conv_gflops / top:.0%}), bf16 conv "
                f"{self.bf16_conv_gflops:.0f} ({self.bf16_conv_gflops / self.bf16_gflops:.0%} of bf16), "
                f"memcpy {self.memcpy_gbs:.1f} GB/s")


def _cpu_name() -> str:
    m = _machine.machine()
    isa = "AMX" if "amx_bf16" in m.flags else "AVX-512" if "avx512f" in m.flags else "AVX2" if "avx2" in m.flags else "SSE"
    return f"{m.name}, {m.vendor} family {m.family} model {m.model}, {isa}" if m.family is not None else \
        platform.processor() or "unknown CPU"


def gemm_peak(dtype: object, sizes: tuple[int, ...] = (128, 256, 512, 1024), flop_per_run: float = 2e9) -> float:
    """GFLOP per CPU-second of the best n x n x n `torch.mm` into a preallocated output, on the
    current threads: each size runs about `flop_per_run` FLOP a timing (many calls of a small
    one), best of 5 after a warm-up.  See the module docstring for why a GEMM, not addcmul."""
    import torch

    best = 0.0
    for n in sizes:
        a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)  # type: ignore[arg-type]
        out = torch.empty_like(a)
        calls = max(1, int(flop_per_run / (2 * n**3)))

        def run() -> None:
            for _ in range(calls):
                torch.mm(a, b, out=out)
        best = max(best, 2 * n**3 * calls / _best_cpu_seconds(run) / 1e9)
    return best


@lru_cache(maxsize=1)
def measure() -> Limits:
    """Measure once per process (about 2 s)."""
    import numpy as np
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        n = 1024
        a, b = torch.randn(n, n), torch.randn(n, n)
        matmul = 2 * n**3 / _best_cpu_seconds(lambda: a @ b) / 1e9
        conv = torch.nn.Conv2d(256, 256, 3, padding=1, bias=False).eval()
        x = torch.randn(8, 256, 28, 28)
        flops = 2 * 8 * 256 * 256 * 9 * 28 * 28
        with torch.inference_mode():
            conv_rate = flops / _best_cpu_seconds(lambda: conv(x)) / 1e9
            with torch.autocast("cpu", dtype=torch.bfloat16):
                bf16_rate = flops / _best_cpu_seconds(lambda: conv(x)) / 1e9
        fp32_peak = gemm_peak(torch.float32)
        bf16_peak = gemm_peak(torch.bfloat16)
    finally:
        torch.set_num_threads(threads)
    src = np.ones(32 * 2**20, np.float64)  # 256 MB
    dst = np.empty_like(src)
    memcpy = 2 * src.nbytes / _best_cpu_seconds(lambda: np.copyto(dst, src), repeats=3) / 1e9
    return Limits(matmul, conv_rate, bf16_rate, memcpy, _cpu_name(), fp32_peak, bf16_peak)


def measure_in_child() -> Limits:
    """`measure()` in a child process: the caller stays free of torch (a scorer that has not loaded
    torch forks its workers instead of spawning them, so loading it here would change what is timed)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--json"], check=True, capture_output=True, text=True).stdout
    return Limits(**json.loads(out))


def check(name: str, implied: float, limit: float, unit: str, peak: float | None = None) -> str:
    """'name: implied unit (x% of limit)', a loud mark where a figure exceeds its limit (a
    kernel's rate: a bandwidth can beat memcpy from cache), and `AbovePeakError` where it exceeds
    `peak`, the measured FMA peak of its precision, by more than `TOLERANCE`: no kernel can."""
    if peak is not None and implied > peak * TOLERANCE:
        raise AbovePeakError(f"{name}: {implied:.1f} {unit} is {implied / peak:.0%} of this machine's measured "
                             f"peak {peak:.0f} ({_machine.line()}): the measurement is wrong, not the kernel fast")
    share = implied / limit
    mark = "  ** ABOVE THE LIMIT: a bug in the measurement **" if share > 1.05 else ""
    return f"{name}: {implied:.1f} {unit} ({share:.0%} of {limit:.0f}){mark}"


if __name__ == "__main__":
    import dataclasses
    import json
    import sys

    lim = measure()
    if "--json" in sys.argv:
        print(json.dumps(dataclasses.asdict(lim)))
    else:
        print(_machine.line())
        print(lim.line())

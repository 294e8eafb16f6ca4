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

All on one thread and timed in CPU seconds (`time.process_time`): the cores here are shared.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable


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

    @property
    def fp32_gflops(self) -> float:
        """The highest fp32 rate any of the measured kernels reaches: a figure above it is a bug."""
        return max(self.matmul_gflops, self.conv_gflops)

    def line(self) -> str:
        return (f"limits ({self.cpu}, 1 thread, per CPU-second): fp32 matmul {self.matmul_gflops:.0f} GFLOP/s, "
                f"fp32 conv (oneDNN) {self.conv_gflops:.0f} GFLOP/s, bf16 conv {self.bf16_conv_gflops:.0f} GFLOP/s, memcpy {self.memcpy_gbs:.1f} GB/s")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    flags = next((ln for ln in open("/proc/cpuinfo") if ln.startswith("flags")), "")
                    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE"
                    return f"{name}, {isa}"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


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
    finally:
        torch.set_num_threads(threads)
    src = np.ones(32 * 2**20, np.float64)  # 256 MB
    dst = np.empty_like(src)
    memcpy = 2 * src.nbytes / _best_cpu_seconds(lambda: np.copyto(dst, src), repeats=3) / 1e9
    return Limits(matmul, conv_rate, bf16_rate, memcpy, _cpu_name())


def measure_in_child() -> Limits:
    """`measure()` in a child process: the caller stays free of torch (a scorer that has not loaded
    torch forks its workers instead of spawning them, so loading it here would change what is timed)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--json"], check=True, capture_output=True, text=True).stdout
    return Limits(**json.loads(out))


def check(name: str, implied: float, limit: float, unit: str) -> str:
    """'name: implied unit (x% of limit)' and a loud mark where a figure exceeds its limit."""
    share = implied / limit
    mark = "  ** ABOVE THE LIMIT: a bug in the measurement **" if share > 1.05 else ""
    return f"{name}: {implied:.1f} {unit} ({share:.0%} of {limit:.0f}){mark}"


if __name__ == "__main__":
    import dataclasses
    import json
    import sys

    lim = measure()
    print(json.dumps(dataclasses.asdict(lim)) if "--json" in sys.argv else lim.line())

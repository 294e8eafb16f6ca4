"""benchmarks/limits.py and benchmarks/_machine.py (issue 52, item 1): a rate above the measured
FMA peak is an error the benchmark raises, and the machine line names the CPU and the per-cycle
peak its flags allow."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # limits imports _machine as the benchmarks do
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


limits = _load("limits")
machine = _load("_machine")

ZEN4 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14 96-Core Processor
cpu MHz\t\t: 3600.000
flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512_bf16 avx512vl

processor\t: 1
vendor_id\t: SomethingElse
"""
XEON_AMX = ZEN4.replace("AuthenticAMD", "GenuineIntel").replace("25", "6").replace("17", "143").replace(
    "avx512vl", "avx512vl amx_bf16 amx_tile").replace("3600.000", "2600.000")
ZEN5 = ZEN4.replace("family\t: 25", "family\t: 26")
AVX2 = ZEN4.replace(" avx512f avx512_bf16 avx512vl", "")


def test_check_raises_above_the_measured_peak():
    # within the tolerance: a share is printed, no error
    assert "(95% of 100)" in limits.check("k", 95.0, 100.0, "GFLOP/s", peak=100.0)
    limits.check("k", 100.0 * limits.TOLERANCE * 0.99, 100.0, "GFLOP/s", peak=100.0)
    with pytest.raises(limits.AbovePeakError, match="measured peak 100"):
        limits.check("k", 100.0 * limits.TOLERANCE * 1.01, 100.0, "GFLOP/s", peak=100.0)
    with pytest.raises(limits.AbovePeakError):  # the 119%-of-the-conv-rate case of issue 52
        limits.check("framear step", 119.0, 100.0, "GFLOP per CPU-second", peak=100.0)
    # no peak (a bandwidth against memcpy): marked, not raised
    assert "ABOVE THE LIMIT" in limits.check("copy", 150.0, 100.0, "GB/s")


def test_limits_peak_is_the_highest_measured_kernel():
    lim = limits.Limits(matmul_gflops=90, conv_gflops=110, bf16_conv_gflops=400, memcpy_gbs=30, cpu="x",
                        fp32_peak_gflops=100, bf16_peak_gflops=300)
    assert lim.fp32_gflops == 110  # a kernel beating the GEMM peak raises the peak, never the reverse
    assert lim.bf16_gflops == 400
    assert "FMA peak fp32 110" in lim.line()


def test_machine_line_names_the_cpu_and_its_per_cycle_peak():
    zen4 = machine.parse_cpuinfo(ZEN4)
    assert (zen4.vendor, zen4.family, zen4.model) == ("AuthenticAMD", 25, 17)
    assert zen4.fp32_flop_per_cycle() == 32  # 512-bit FMAs split over two 256-bit pipes
    assert zen4.bf16_flop_per_cycle() == 64
    assert zen4.peak_gflops() == pytest.approx(32 * 3.6)
    line = zen4.line()
    for part in ("AuthenticAMD family 25 model 17", "AMD EPYC 9R14", "fma avx2 avx512f avx512_bf16",
                 "32 fp32 / 64 bf16 FLOP/cycle/core"):
        assert part in line
    xeon = machine.parse_cpuinfo(XEON_AMX)
    assert (xeon.fp32_flop_per_cycle(), xeon.bf16_flop_per_cycle()) == (64, 1024)
    assert "amx_bf16" in xeon.line()
    assert machine.parse_cpuinfo(ZEN5).fp32_flop_per_cycle() == 64
    assert machine.parse_cpuinfo(AVX2).fp32_flop_per_cycle() == 32
    empty = machine.parse_cpuinfo("")
    assert empty.peak_gflops() is None and "family ?" in empty.line()


def test_this_machine_has_a_line():
    assert machine.line().startswith("machine: ")

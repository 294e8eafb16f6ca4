"""Which CPU a figure was measured on: the line every benchmark prints first.

The project's sessions run on machines that are not all the same CPU (an AMD Zen 4 EPYC, a Zen 5
one, an Intel Xeon with AMX have all been seen), and a throughput means nothing without the
machine it was taken on: 200 GFLOP/s is an error on a Zen 4 core and ordinary on a Xeon with two
AVX-512 FMA pipes.  So each benchmark prints the vendor, CPUID family and model, the model name,
the flags that set the FMA width (avx2, fma, avx512f, avx512_bf16, amx_bf16) and the peak FLOP per
cycle that those imply.

The per-cycle peak is an upper bound read off a small table, not a measurement: the flags do not
say how many FMA pipes a core has (a Xeon Silver has one 512-bit pipe, a Gold two; a Zen 4 core
splits a 512-bit FMA into two 256-bit halves), so the table takes the larger where they do not
tell.  The clock in /proc/cpuinfo is the nominal one in a VM (turbo runs above it).  The number to
check a benchmark against is the measured peak in `limits.py`; this line says which CPU that was.

No torch or numpy here: `bench_score.py` stays free of torch (a scorer without torch forks its
workers, and loading torch would change what it times).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from functools import lru_cache

#: the flags that decide the vector FMA width and the bf16 paths, in the order printed
FLAGS = ("fma", "avx2", "avx512f", "avx512_bf16", "amx_bf16")


@dataclass(frozen=True)
class Machine:
    vendor: str  # CPUID vendor string, e.g. GenuineIntel, AuthenticAMD
    family: int | None  # CPUID family (AMD Zen 3/4: 25, Zen 5: 26; Intel: 6)
    model: int | None  # CPUID model
    name: str  # "model name" as /proc/cpuinfo spells it
    flags: frozenset[str]  # the whole flag list
    mhz: float | None  # clock in /proc/cpuinfo (nominal in a VM)
    cores: int  # logical CPUs this process may use

    def fp32_flop_per_cycle(self) -> int:
        """Peak fp32 FLOP per cycle and core the flags allow (an FMA counts 2), an upper bound."""
        if "avx512f" in self.flags:
            # Zen 4 (family 25) runs a 512-bit FMA as two 256-bit halves on its two pipes: 32;
            # Intel Xeon (two 512-bit pipes on Gold/Platinum and later) and Zen 5: 2 x 16 x 2 = 64
            return 32 if self.vendor == "AuthenticAMD" and self.family == 25 else 64
        if "avx2" in self.flags and "fma" in self.flags:
            return 16 if self.vendor == "AuthenticAMD" and self.family == 23 and (self.model or 0) < 0x30 else 32
        if "avx" in self.flags:
            return 16  # no FMA: one 8-wide add and one 8-wide multiply a cycle
        return 8

    def bf16_flop_per_cycle(self) -> int:
        """Peak bf16 FLOP per cycle and core: AMX tiles (Intel's 1,024), else VDPBF16PS (two
        products per fp32 lane: twice the fp32 figure), else bf16 is converted and runs at fp32's."""
        if "amx_bf16" in self.flags:
            return 1024
        if "avx512_bf16" in self.flags:
            return 2 * self.fp32_flop_per_cycle()
        return self.fp32_flop_per_cycle()

    def peak_gflops(self, dtype: str = "fp32") -> float | None:
        """Per-cycle peak times the cpuinfo clock, GFLOP per core-second (None: no clock known)."""
        per_cycle = self.fp32_flop_per_cycle() if dtype == "fp32" else self.bf16_flop_per_cycle()
        return per_cycle * self.mhz / 1e3 if self.mhz else None

    def line(self) -> str:
        """One line: which CPU, its FMA-relevant flags and the per-cycle peak they imply."""
        fam = f"family {self.family} model {self.model}" if self.family is not None else "family ?"
        flags = " ".join(f for f in FLAGS if f in self.flags) or "none of " + "/".join(FLAGS)
        clock = f"{self.mhz:.0f} MHz (cpuinfo)" if self.mhz else "clock unknown"
        return (f"machine: {self.vendor} {fam} '{self.name}', {self.cores} CPUs, {clock}; flags {flags}; "
                f"peak by the flags {self.fp32_flop_per_cycle()} fp32 / {self.bf16_flop_per_cycle()} bf16 "
                f"FLOP/cycle/core")


def parse_cpuinfo(text: str) -> Machine:
    """The first processor's entry of /proc/cpuinfo text (all cores of a VM report the same)."""
    fields: dict[str, str] = {}
    for ln in text.splitlines():
        if not ln.strip():
            if fields:
                break  # end of the first processor
            continue
        key, _, value = ln.partition(":")
        fields.setdefault(key.strip(), value.strip())

    def num(key: str, conv: type = int) -> int | float | None:
        try:
            return conv(fields[key])
        except (KeyError, ValueError):
            return None

    fam, model, mhz = num("cpu family"), num("model"), num("cpu MHz", float)
    return Machine(vendor=fields.get("vendor_id", platform.machine() or "unknown"),
                   family=int(fam) if fam is not None else None, model=int(model) if model is not None else None,
                   name=fields.get("model name", platform.processor() or "unknown CPU"),
                   flags=frozenset(fields.get("flags", "").split()), mhz=float(mhz) if mhz else None,
                   cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@lru_cache(maxsize=1)
def machine() -> Machine:
    """This machine, from /proc/cpuinfo (an empty entry where there is none: not Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            return parse_cpuinfo(f.read())
    except OSError:
        return parse_cpuinfo("")


def line() -> str:
    """What every benchmark prints first."""
    return machine().line()


if __name__ == "__main__":
    print(line())

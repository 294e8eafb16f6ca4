"""Generation throughput and memory (issue 2, item 8).  Not a test: prints figures.

    python benchmarks/bench_generate.py                 # everything but the 3M run
    python benchmarks/bench_generate.py --train-3m      # + peak memory of train-3m states

Figures, single process unless stated:
  render      uniform videos/s at 128 and 256 px (from simulated states)
  sim+render  videos/s per task at 256 px (the reference: 8.6 / 11.8 / 10.7, REFERENCE.md s1)
  end-to-end  videos/s of `generate` (simulate + render + PNG + Parquet + hashes) at 128 and
              256 px (the reference with mp4 + HDF5 at 256 px: 2.7 / 4.9 / 3.4)
  size        KB per stored 32x128x128 uniform clip
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REFERENCE_SIM_RENDER = {"uniform": 8.6, "parabola": 11.8, "collision": 10.7}  # videos/s, 256 px
REFERENCE_END_TO_END = {"uniform": 2.7, "parabola": 4.9, "collision": 3.4}


def bench_render(n: int) -> None:
    from phybench.tasks import get_task
    from phybench.tasks.sampling import make_sample, simulate_sample
    from phybench.world.render import render

    spec = get_task("uniform")
    states = [simulate_sample(spec, make_sample(spec, "id-eval", i)) for i in range(n)]
    for res in (128, 256):
        render(states[0], res)
        t0 = time.perf_counter()
        for s in states:
            render(s, res)
        dt = time.perf_counter() - t0
        print(f"render      uniform {res:>3} px: {n / dt:8.0f} videos/s  ({n} videos, 1 process)")


def bench_sim_render(n: int) -> None:
    from phybench.tasks import get_task
    from phybench.tasks.sampling import make_sample, simulate_sample
    from phybench.world.render import render

    for task in ("uniform", "parabola", "collision"):
        spec = get_task(task)
        t0 = time.perf_counter()
        for i in range(n):
            render(simulate_sample(spec, make_sample(spec, "id-eval", i)), 256)
        rate = n / (time.perf_counter() - t0)
        print(f"sim+render  {task:<9} 256 px: {rate:8.1f} videos/s  = {rate / REFERENCE_SIM_RENDER[task]:5.1f}x the reference "
              f"({REFERENCE_SIM_RENDER[task]})")


def bench_end_to_end(n: int, workers: int) -> None:
    from phybench.data.generate import generate
    from phybench.data.arrow import features
    from phybench.data.split import make_plan
    from phybench.tasks import get_task

    features(get_task("uniform"), True)  # import `datasets` once, outside the timings
    for res in (128, 256):
        for task in ("uniform", "parabola", "collision"):
            plan = make_plan(get_task(task), "id-eval", res, n, None)
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                generate(plan, Path(tmp) / "s", workers=workers, progress=False)
                rate = n / (time.perf_counter() - t0)
                size = sum(p.stat().st_size for p in Path(tmp).rglob("*.parquet")) / n / 1024
            ref = f"  = {rate / REFERENCE_END_TO_END[task]:5.1f}x the reference ({REFERENCE_END_TO_END[task]})" if res == 256 else ""
            print(f"end-to-end  {task:<9} {res:>3} px: {rate:8.1f} videos/s, {size:5.1f} KB/clip  "
                  f"({n} videos, {workers} worker(s)){ref}")


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        stack.extend(children.get(p, []))
    return total


def bench_train_3m(workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "phybench.cli", "generate", "uniform", "--split", "train-3m",
               "--out", f"{tmp}/t", "--workers", str(workers), "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd)
        peak = 0
        stop = threading.Event()

        def poll() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, _tree_rss(proc.pid))
                time.sleep(0.2)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        code = proc.wait()
        stop.set()
        thread.join()
        dt = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.parquet")) / 2**20
    print(f"train-3m    uniform states: exit {code}, {dt:.0f} s, {3_000_000 / dt:.0f} samples/s, "
          f"peak memory {peak / 2**30:.2f} GiB (all processes), {size:.0f} MiB on disk ({workers} workers)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=500, help="videos per measurement")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--train-3m", action="store_true", help="also generate uniform train-3m and report peak memory")
    args = p.parse_args()
    bench_render(args.n)
    bench_sim_render(min(args.n, 200))
    bench_end_to_end(args.n, args.workers)
    if args.train_3m:
        bench_train_3m(max(2, args.workers))


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

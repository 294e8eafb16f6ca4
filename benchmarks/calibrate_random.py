"""The randomised calibration at size, with a fresh seed each run (`phybench.randomised`, issue 48).

Every row of each split gets DRAWS random compositions of benign families (inside the published
bounds: docs/judge.md, "The contract") and PLANTED kinds drawn among those a judge rule claims;
it prints the per-family false-positive table, the recall, every flagged case (split, row, the
composition, the rules that fired), the CPU seconds and the machine, and writes the JSON.

    PYTHONPATH=. python benchmarks/calibrate_random.py lite/{uniform,parabola,collision}-{id,ood}-eval \
        --limit 30 --draws 3 --json benchmarks/calibration/random-<seed>.json

Without --seed a fresh one is drawn (printed, and kept in the JSON): nobody can tune to it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import secrets
import time
from pathlib import Path


def main() -> int:
    from phybench.randomised import calibrate_random, random_markdown

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("splits", nargs="+")
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--planted", type=int, default=2)
    p.add_argument("--seed", type=int, help="default: a fresh random seed")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    t0 = time.process_time()
    cal = calibrate_random(args.splits, seed=seed, draws=args.draws, planted=args.planted, limit=args.limit,
                           workers=args.workers)
    cpu = time.process_time() - t0 + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    print(random_markdown(cal))
    for case in cal["flagged"]:
        print(f"flagged: {case['split']} row {case['row']}: {case['composition']} -> {', '.join(case['rules'])}")
    cpu_name = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name")), platform.processor()) if os.path.exists("/proc/cpuinfo") else "?"
    print(f"seed {seed}; {cal['cases']} compositions; {cpu:.1f} CPU s; CPU: {cpu_name}")
    if args.json:
        cal["cpu_seconds"], cal["cpu"] = round(cpu, 1), cpu_name
        Path(args.json).write_text(json.dumps(cal, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

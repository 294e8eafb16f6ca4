"""`leaderboard verify` against `score` on the same lite submission: the issue-26 target is
verify <= 1.2x score for the cheap metrics (velocity error, SSIM, PSNR and their companions).

    python benchmarks/bench_verify.py                       # uniform id-eval, lite (200), copy-last
    python benchmarks/bench_verify.py --baseline ground-truth --repeats 5 --work /tmp/bv

Both are timed in the same process on the same files, alternating (score, verify, score,
verify, ...) so that a change in machine load hits both alike; both wall-clock and CPU
seconds of this process are reported (everything runs in it: one process, no workers), the
CPU ratio being the steadier one on a shared machine.  `score` is the library call
`phybench score` makes (validate, re-hash the split, parse and measure every video) plus
writing the results file; `verify` is the whole `leaderboard verify` path: read the claim,
index --splits and --submissions (every candidate submission hashed once), check settings,
re-score, compare every field and the sidecar, write the record.  The split and submission
are made once under --work and reused by later runs.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

CHEAP = ("velocity_error", "ssim", "psnr")


def prepare(work: Path, task: str, split: str, baseline: str) -> tuple[Path, Path]:
    """(split folder, submission folder): the protocol-lite split and a reference baseline's submission."""
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.reference import run_baseline
    from phybench.tasks import get_task
    from phybench.tasks.protocols import PROTOCOLS

    spec = get_task(task)
    data = work / "data" / f"{task}-{split}"
    if not (data / "manifest.json").is_file():
        generate(make_plan(spec, split, None, PROTOCOLS.get("lite").size(spec, split), None), data, progress=False)
    sub = work / "subs" / f"{task}-{split}-{baseline}"
    if not (sub / "submission.json").is_file():
        run_baseline(baseline, data, sub, progress=False, fmt="npz")  # npz: as `phybench quickstart` writes
    return data, sub


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="uniform")
    ap.add_argument("--split", default="id-eval")
    ap.add_argument("--baseline", default="copy-last", help="copy-last or ground-truth (no training split needed)")
    ap.add_argument("--repeats", type=int, default=3, help="score/verify pairs (default 3)")
    ap.add_argument("--work", help="where the split and submission are kept (default: a temporary folder)")
    args = ap.parse_args()

    from phybench.leaderboard.verify.rescore import verify_many
    from phybench.scoring.run.score import score, write_results

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-verify-"))
    t0 = time.perf_counter()
    data, sub = prepare(work, args.task, args.split, args.baseline)
    print(f"split {data} and submission {sub} ready in {time.perf_counter() - t0:.1f} s")
    results = work / "results" / f"{args.task}-{args.split}-{args.baseline}.json"
    score_s, verify_s, score_cpu, verify_cpu = [], [], [], []
    for i in range(args.repeats):
        t, c = time.perf_counter(), time.process_time()
        write_results(results, score(sub, data, CHEAP, progress=False))
        score_s.append(time.perf_counter() - t)
        score_cpu.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        report = verify_many([results], sub.parent, data.parent, by="bench", date="2026-01-01")
        verify_s.append(time.perf_counter() - t)
        verify_cpu.append(time.process_time() - c)
        if report.exit_code != 0:
            print("\n".join(report.lines()), file=sys.stderr)
            return 1
        print(f"run {i + 1}: score {score_s[-1]:.2f} s ({score_cpu[-1]:.2f} CPU s), verify {verify_s[-1]:.2f} s "
              f"({verify_cpu[-1]:.2f} CPU s): ratio {verify_s[-1] / score_s[-1]:.3f} wall, "
              f"{verify_cpu[-1] / score_cpu[-1]:.3f} CPU")
    s, v = statistics.median(score_s), statistics.median(verify_s)
    sc, vc = statistics.median(score_cpu), statistics.median(verify_cpu)
    n = sum(1 for _ in (sub / "videos").rglob("*.npz"))
    print(f"\n{args.task}/{args.split} lite ({n} videos), {args.baseline}, metrics {','.join(CHEAP)} + companions")
    print(f"score  median {s:.2f} s wall (min {min(score_s):.2f}), {sc:.2f} CPU s (min {min(score_cpu):.2f})")
    print(f"verify median {v:.2f} s wall (min {min(verify_s):.2f}), {vc:.2f} CPU s (min {min(verify_cpu):.2f})")
    print(f"ratio verify/score, wall: median {v / s:.3f}, min/min {min(verify_s) / min(score_s):.3f}; "
          f"CPU: median {vc / sc:.3f}, min/min {min(verify_cpu) / min(score_cpu):.3f} (target <= 1.2)")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    sys.exit(main())

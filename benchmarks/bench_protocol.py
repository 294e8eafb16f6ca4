"""What scoring one model on the full protocol of every task costs: CPU and peak memory, an
extrapolation from per-clip slopes measured on small generated splits (for sizing the board's machine).

    python benchmarks/bench_protocol.py                                  # cheap metrics, every family
    python benchmarks/bench_protocol.py --small 8 --large 24 --torch 4,8 --workers-tasks uniform,combinatorial

For one task per family and resolution (the others of that family share its slope) the first
evaluation split is generated twice, `--small` and `--large` clips, and a submission of its ground
truth blurred (`bench_score.py`'s) is scored by `python -m phybench.cli score` in a child process
(OMP_NUM_THREADS=1, as docs/leaderboard.md pairs with verify).  The per-clip slope is
(CPU(large) - CPU(small)) / (large - small): the child's start-up (imports, weights) cancels.
CPU is the child's user + system time including its workers (`os.wait4`); memory is the peak of
the summed RSS of the child and its workers (sampled every 50 ms; pages shared by forked workers
count once per process, so an upper bound) and the peak of the largest single process (ru_maxrss).

`--torch A,B` also scores one 128 px and one 256 px task with `lpips` and with `fvd` alone
(`--batch-size 4`, FVD reference cache off, so the I3D slope covers both sides), at A and B clips:
LPIPS's and I3D's per-clip slopes with the cheap companions' slope subtracted.  The full-protocol
rows come from `phybench/tasks/protocols.py` (every sample of every evaluation split) and lite's.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_score  # noqa: E402  (its blurred-ground-truth submission)

from phybench.tasks import TASKS, family_of, get_task  # noqa: E402
from phybench.tasks.protocols import PROTOCOLS  # noqa: E402

CHEAP = bench_score.METRICS


@dataclass
class Run:
    cpu_s: float  # user + system of the child and its waited-for workers
    wall_s: float
    tree_rss_mib: float  # peak of the summed RSS of the child and its descendants
    max_rss_mib: float  # the largest single process's peak RSS


def run_score(sub: Path, split: Path, metrics: str, out: Path, workers: int = 1, batch: int = 16) -> Run:
    """`phybench score` in a child process: its CPU (with workers), wall and peak memory."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PHYBENCH_FVD_CACHE="0")
    cmd = [sys.executable, "-m", "phybench.cli", "score", str(sub), "--data", str(split), "--metrics", metrics,
           "--workers", str(workers), "--batch-size", str(batch), "--out", str(out), "--quiet"]
    return run_cmd(cmd, env)


def prepare(task: str, n: int, root: Path) -> tuple[Path, Path]:
    """(split, submission) of `n` clips of the task's first evaluation split."""
    (root / f"n{n}").mkdir(parents=True, exist_ok=True)
    return bench_score._prepare(task, n, root / f"n{n}")


def representatives() -> dict[str, list[str]]:
    """One measured task per (family, resolution) -> the tasks that share its slope."""
    groups: dict[tuple[str, int], list[str]] = {}
    for name in TASKS:
        spec = get_task(name)
        groups.setdefault((type(family_of(spec)).__name__, spec.resolution), []).append(name)
    return {tasks[0]: tasks for tasks in groups.values()}


def rows(task: str) -> tuple[int, int]:
    """(full, lite) samples of the task over all its evaluation splits."""
    spec = get_task(task)
    return tuple(sum(PROTOCOLS.get(p).size(spec, s) for s in spec.eval_splits) for p in ("full", "lite"))  # type: ignore[return-value]


def slope(task: str, small: int, large: int, root: Path, metrics: str = CHEAP, batch: int = 16) -> tuple[float, Run]:
    """CPU-s per clip between `small` and `large` clips, and the large run."""
    runs = []
    for n in (small, large):
        split, sub = prepare(task, n, root)
        runs.append(run_score(sub, split, metrics, root / f"n{n}" / f"{metrics}.json", batch=batch))
    return (runs[1].cpu_s - runs[0].cpu_s) / (large - small), runs[1]


def cheap_table(small: int, large: int, root: Path) -> dict[str, float]:
    """Per task: cheap-metric slope, full-protocol CPU hours, peak memory; returns slopes by task."""
    print(f"\ncheap metrics ({CHEAP} + companions), 1 process, slope between {small} and {large} clips")
    print(f"{'task (measured)':<24} {'px':>4} {'CPU-ms/clip':>11} {'RSS peak MiB':>12} {'shares its slope':<40} "
          f"{'full rows':>9} {'full CPU-h':>10} {'lite rows':>9} {'lite CPU-min':>12}", flush=True)
    slopes: dict[str, float] = {}
    for rep, tasks in representatives().items():
        s, big = slope(rep, small, large, root)
        for t in tasks:
            slopes[t] = s
        full = sum(rows(t)[0] for t in tasks)
        lite = sum(rows(t)[1] for t in tasks)
        others = ", ".join(tasks[1:]) or "-"
        print(f"{rep:<24} {get_task(rep).resolution:>4} {1000 * s:>11.1f} {big.tree_rss_mib:>12.0f} {others[:40]:<40} "
              f"{full:>9} {s * full / 3600:>10.2f} {lite:>9} {s * lite / 60:>12.1f}", flush=True)
    total_full = sum(slopes[t] * rows(t)[0] for t in TASKS)
    total_lite = sum(slopes[t] * rows(t)[1] for t in TASKS)
    print(f"all {len(TASKS)} tasks: full protocol {sum(rows(t)[0] for t in TASKS)} clips, {total_full / 3600:.2f} CPU-h; "
          f"lite {sum(rows(t)[1] for t in TASKS)} clips, {total_lite / 60:.1f} CPU-min")
    return slopes


def torch_table(tasks: list[str], sizes: tuple[int, int], root: Path, cheap: dict[str, float]) -> None:
    """LPIPS and I3D slopes per clip (cheap companions subtracted), at each task's resolution."""
    print(f"\nLPIPS / FVD alone (--batch-size 4, FVD cache off: I3D on both sides), slope between {sizes} clips")
    for task in tasks:
        lp, _ = slope(task, *sizes, root / "torch-lpips", metrics="lpips", batch=4)
        fv, big = slope(task, *sizes, root / "torch-fvd", metrics="fvd", batch=4)
        lp, i3d = lp - cheap.get(task, 0.0), (fv - cheap.get(task, 0.0)) / 2
        full, lite = rows(task)
        print(f"{task} ({get_task(task).resolution} px): LPIPS {lp:.3f} CPU-s per clip, I3D {i3d:.3f} per clip and side; "
              f"peak RSS (fvd run) {big.tree_rss_mib:.0f} MiB; one model, warm reference cache (LPIPS + I3D): "
              f"full {full} clips {(lp + i3d) * full / 3600:.2f} CPU-h, lite {(lp + i3d) * lite / 3600:.2f}; "
              f"first model on the split (+ its reference side): full {(lp + 2 * i3d) * full / 3600:.2f} CPU-h", flush=True)


def workers_table(tasks: list[str], n: int, root: Path) -> None:
    """--workers 1 vs 2 on n clips (cheap metrics): CPU of all processes, wall, peak memory."""
    print(f"\n--workers 1 vs 2, {n} clips, cheap metrics")
    for task in tasks:
        split, sub = prepare(task, n, root / "workers")
        one, two = (run_score(sub, split, CHEAP, root / f"w{w}.json", workers=w) for w in (1, 2))
        print(f"{task}: CPU {one.cpu_s:.1f} -> {two.cpu_s:.1f} s ({two.cpu_s / one.cpu_s:.2f}x); wall {one.wall_s:.1f} -> "
              f"{two.wall_s:.1f} s; peak RSS all processes {one.tree_rss_mib:.0f} -> {two.tree_rss_mib:.0f} MiB, "
              f"largest process {one.max_rss_mib:.0f} -> {two.max_rss_mib:.0f} MiB", flush=True)


def run_cmd(cmd: list[str], env: dict[str, str]) -> Run:
    """Any command in a child process: CPU of it and every waited-for descendant, wall, peak memory."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    ps, peak = psutil.Process(proc.pid), 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            peak = max(peak, sum(p.memory_info().rss for p in [ps, *ps.children(recursive=True)]))
        except psutil.Error:
            pass  # a process ended between the listing and the read
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}")
    return Run(usage.ru_utime + usage.ru_stime, time.perf_counter() - t0, peak / 2**20, usage.ru_maxrss / 1024)


def accelerate_table(n: int, root: Path) -> None:
    """`leaderboard verify` of an LPIPS + FVD score (the passes it shards): one process against
    `accelerate launch` with 2 CPU processes, `--batch-size 4`, warm reference cache; records compared."""
    import shutil

    import numpy as np

    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan
    from phybench.submission import submission_meta, write_submission

    task = next(iter(representatives()))  # the first registered family's first task
    split_name = get_task(task).eval_splits[0]
    data, subs, res = root / "acc" / "data", root / "acc" / "subs", root / "acc" / "results"
    split = data / f"{task}-{split_name}"
    generate(make_plan(get_task(task), split_name, None, n, None), split, progress=False)
    reader = SplitReader(split)
    write_submission(subs / "copy-last", submission_meta(reader.manifest, "copy-last"),
                     ((r["sample_id"], np.repeat(reader.video(r)[2:3], reader.video(r).shape[0], axis=0))
                      for r in reader.rows()))
    res.mkdir(parents=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", PHYBENCH_FVD_CACHE_DIR=str(root / "acc" / "cache"))
    cli = [sys.executable, "-m", "phybench.cli"]
    scored = run_cmd([*cli, "score", str(subs / "copy-last"), "--data", str(split), "--metrics",
                      "velocity_error,ssim,psnr,lpips,fvd", "--batch-size", "4", "--out", str(res / "r.json"),
                      "--quiet"], env)
    verify = ["leaderboard", "verify", str(res / "r.json"), "--submissions", str(subs), "--splits", str(data),
              "--batch-size", "4", "--by", "bench", "--date", "2026-11-29"]
    one = run_cmd([*cli, *verify], env)
    shutil.copytree(res, root / "acc" / "one")
    two = run_cmd([str(Path(sys.executable).parent / "accelerate"), "launch", "--multi_gpu", "--num_processes", "2",
                   "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                   "--num_cpu_threads_per_process", "1", "-m", "phybench.cli", *verify], env)
    same = all((root / "acc" / "one" / f.name).read_bytes() == f.read_bytes() for f in res.iterdir())
    print(f"\n{task} {split_name}, {n} clips, copy-last, LPIPS + FVD, --batch-size 4: score (cold cache) {scored.cpu_s:.1f} "
          f"CPU-s, peak {scored.tree_rss_mib:.0f} MiB; verify, 1 process: {one.cpu_s:.1f} CPU-s, {one.wall_s:.1f} s wall, "
          f"peak {one.tree_rss_mib:.0f} MiB; accelerate launch, 2 processes: {two.cpu_s:.1f} CPU-s "
          f"({two.cpu_s / one.cpu_s:.2f}x), {two.wall_s:.1f} s wall, peak {two.tree_rss_mib:.0f} MiB all processes; "
          f"records the same bytes: {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=8)
    ap.add_argument("--large", type=int, default=24)
    ap.add_argument("--torch", default="", help="A,B: also LPIPS and FVD slopes between A and B clips")
    ap.add_argument("--torch-tasks", default="uniform,combinatorial")
    ap.add_argument("--workers-tasks", default="", help="tasks to score with --workers 1 and 2 (at --large clips)")
    ap.add_argument("--accelerate", type=int, default=0, metavar="N",
                    help="also verify an N-clip LPIPS + FVD score in 1 process and under accelerate launch (2)")
    ap.add_argument("--skip-cheap", action="store_true", help="only the --torch / --workers / --accelerate parts")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} / {os.getloadavg()[2]:.1f} (1/5/15 min), "
          f"{os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if args.accelerate:
            accelerate_table(args.accelerate, Path(tmp))
        cheap = {} if args.skip_cheap else cheap_table(args.small, args.large, Path(tmp))
        if args.torch:
            a, b = (int(x) for x in args.torch.split(","))
            torch_table(args.torch_tasks.split(","), (a, b), Path(tmp), cheap)
        if args.workers_tasks:
            workers_table(args.workers_tasks.split(","), args.large, Path(tmp))
    print(f"load average at the end {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

"""The scaling grid: framear at several widths x training-set sizes, one recipe, selected on validation.

    python -m phybench_baselines.studies.grid --train-data W/data/uniform-train-30k \
        --eval-data W/data/uniform-id-eval W/data/uniform-ood-eval --work W/grid \
        --results leaderboard/studies/scaling-framear [--widths 16 32 64] [--rows 1500 6000 29968] \
        [--set steps=400 eval_every=100]

Figure 3 of the paper is a grid of model sizes x training-set sizes; this is its miniature.  Every
cell is the trainer's defaults (recipe `L1`) with only `width`, `train_rows` and the shared `--set`
changed; each cell's snapshot is chosen by the trainer's own validation (held-out rows of the
training split, `studies.findings.selected_step`), then sampled on each evaluation split and scored.

Run it as one or more workers (each claims the next unclaimed cell, so two processes share the
grid); a worker killed mid-cell leaves a claim whose process is gone, and the next worker to reach
it starts that cell again from nothing (cell-level resumption: finished cells are never redone).
Every command, its CPU seconds (`resource` children usage) and its exit status go to
`W/grid/commands.jsonl`.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .findings import selected_step, snapshot_path


def cell_name(width: int, rows: int) -> str:
    return f"w{width}-n{rows}"


def run_logged(cmd: list[str], work: Path, cell: str, what: str) -> None:
    """Run a command (nice'd, 1 thread), appending its CPU seconds and exit status to commands.jsonl."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.time()
    rc = subprocess.run(["nice", "-n", "15", *cmd], env=env).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(work / "commands.jsonl", "a") as f:
        f.write(json.dumps({"cell": cell, "what": what, "cmd": " ".join(cmd), "rc": rc, "cpu_s": round(cpu, 1),
                            "wall_s": round(time.time() - tic, 1)}) + "\n")
    if rc:
        raise SystemExit(f"{cell} {what} failed ({rc}): {' '.join(cmd)}")


def claim(work: Path, cell: str) -> bool:
    """Claim a cell for this process; a claim whose process is gone (killed) is taken over."""
    lock = work / "claims" / cell
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            pid = int(lock.read_text() or 0)
            os.kill(pid, 0)
            return False  # alive: someone else's
        except (ValueError, ProcessLookupError):
            lock.unlink(missing_ok=True)
            return claim(work, cell)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


def do_cell(args, width: int, rows: int) -> None:
    """Train (or reuse) the cell's run, select on validation, sample and score each evaluation split."""
    cell, py = cell_name(width, rows), sys.executable
    run = args.work / "runs" / cell
    if not (run / "done").is_file():
        shutil.rmtree(run, ignore_errors=True)  # a killed run restarts from nothing (seeded: same weights)
        lazy = ["lazy_render=true"] if rows > args.lazy_above else []
        run_logged([py, "-m", "phybench_baselines.framear.train", "--train-data", str(args.train_data), "--out", str(run),
                    "--set", f"width={width}", f"train_rows={rows}", "threads=1", *args.set, *lazy], args.work, cell, "train")
        (run / "done").write_text("")
    step = selected_step(run)
    for data in args.eval_data:
        split = json.loads((data / "manifest.json").read_text())
        name = f"{split['task']}-{split['split']}-framear-{cell}"
        result = args.results / f"{name}.json"
        if result.is_file():
            continue
        sub = args.work / "subs" / name
        shutil.rmtree(sub, ignore_errors=True)
        run_logged([py, "-m", "phybench_baselines.framear.sample", "--checkpoint", str(snapshot_path(run, step)),
                    "--data", str(data), "--out", str(sub), "--name", f"framear-{cell}"], args.work, cell, f"sample {name}")
        run_logged([py, "-m", "phybench.cli", "score", str(sub), "--data", str(data), "--metrics", "velocity_error",
                    "--details", str(args.results / f"{name}.details.parquet"), "--out", str(result), "--quiet"],
                   args.work, cell, f"score {name}")


def summary(work: Path) -> str:
    """Markdown: per cell its params, CPU seconds (training run incl. validation; sampling and scoring) from
    commands.jsonl, and the validation curve (velocity error / untrackable share per snapshot) from its log."""
    cmds = [json.loads(line) for line in (work / "commands.jsonl").read_text().splitlines() if line.strip()]
    lines = ["| cell | params | steps | train CPU s | sample + score CPU s | validation: step error (untrackable, ranked) | selected |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for run in sorted((work / "runs").iterdir()):
        if not (run / "done").is_file():
            continue
        log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines() if line.strip()]
        evals = [e for e in log if "val/velocity_error" in e]
        cpu = {w: sum(c["cpu_s"] for c in cmds if c["cell"] == run.name and c["what"].startswith(w))
               for w in ("train", "sample", "score")}
        curve = ", ".join(f"{e['step']}: {e['val/velocity_error']:.3f} ({100 * e['val/untrackable']:.0f}%"
                          + (f", ranked {e['val/velocity_error_ranked']:.2f}" if "val/velocity_error_ranked" in e else "")
                          + ")" for e in evals)
        lines.append(f"| {run.name} | {evals[-1]['params'] if evals else '-'} | {evals[-1]['step'] if evals else '-'} | "
                     f"{cpu['train']:.0f} | {cpu['sample'] + cpu['score']:.0f} | {curve} | {selected_step(run)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-data", type=Path, help="the training split (required unless --summary)")
    p.add_argument("--eval-data", type=Path, nargs="+", help="evaluation splits (required unless --summary)")
    p.add_argument("--work", type=Path, required=True, help="runs, submissions, claims and the command log")
    p.add_argument("--results", type=Path, help="where the results files go (required unless --summary)")
    p.add_argument("--widths", type=int, nargs="+", default=[16, 32, 64])
    p.add_argument("--rows", type=int, nargs="+", default=[1500, 6000, 29968])
    p.add_argument("--order", nargs="*", default=[], help="cells first, as wW-nN (then the rest, row-major)")
    p.add_argument("--lazy-above", type=int, default=8000, help="render lazily above this many rows (memory)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="the recipe changes every cell shares")
    p.add_argument("--summary", action="store_true", help="print the finished cells' CPU seconds and validation curves")
    args = p.parse_args(argv)
    if args.summary:
        print(summary(args.work))
        return
    if not (args.train_data and args.eval_data and args.results):
        p.error("--train-data, --eval-data and --results are required (unless --summary)")
    args.work.mkdir(parents=True, exist_ok=True)
    args.results.mkdir(parents=True, exist_ok=True)
    cells = [cell_name(w, n) for w in args.widths for n in args.rows]
    order = [c for c in args.order if c in cells] + [c for c in cells if c not in args.order]
    failed = []
    for cell in order:
        if claim(args.work, cell):
            w, n = (int(x[1:]) for x in cell.split("-"))
            try:
                do_cell(args, w, n)
            except SystemExit as e:  # one cell's failed command (e.g. killed for memory): go on with the rest
                print(f"grid: {e}; the next worker to reach {cell} starts it again", file=sys.stderr, flush=True)
                failed.append(cell)
                continue
            finally:
                (args.work / "claims" / cell).unlink(missing_ok=True)
            (args.work / "finished").mkdir(exist_ok=True)
            (args.work / "finished" / cell).write_text("")
    if failed:
        raise SystemExit(f"grid: {len(failed)} cell(s) failed: {' '.join(failed)} (run the grid again to redo them)")


if __name__ == "__main__":
    main()

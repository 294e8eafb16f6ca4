"""The judge's and the body metrics' share of a cheap scoring run, per family (issue 34's cost target).

    python benchmarks/bench_cost.py                     # 60 videos per family, blurred ground truth
    python benchmarks/bench_cost.py --n 20 --exact      # exact ground truth instead
    python benchmarks/bench_cost.py --profile uniform   # + cProfile of that family's run, by tottime

Per family (uniform, parabola and collision at 128 px; combinatorial at its protocol resolution,
256 px) a small evaluation split is generated, its ground-truth submission is degraded by
`phybench degrade --kinds blur-1.0` (a Gaussian blur of sigma 1 px at 128 px, 2 px at 256 px, on
the generated frames: closer to a model's output than exact frames; `--exact` skips it) and
`score --metrics velocity_error,ssim,psnr --workers 1` runs on it in this process.  CPU time
(`time.process_time`) is summed for the whole run and inside three disjoint groups of entry
points, each timed only at its outermost call (a nested one, or the segmentation the judge and the
body metrics share, is counted once, by whoever computes it first):

* judge: `phybench.scoring.judge.abnormal.abnormal` (segmentation, rules, the no-ball check);
* bodies: `phybench.scoring.learned.bodies.body_position_error / body_angle_error / body_details`
  (tracks, census, pose errors);
* law: `phybench.scoring.learned.law.law_error / law_details` (for combinatorial: the law fitted to the
  judge's tracks; for the fundamental families: a fit to the parser's positions).

The target (issue 34): judge + bodies at most 40% of the run per family; the share with the law
is printed too.  The cheap metrics are the judge's largest possible share: a default run adds
LPIPS and FVD.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import tempfile
import time
from typing import Any, Callable, Iterator

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

DEFAULT_TASKS = "uniform,parabola,collision,combinatorial"  # the families the target names
GROUPS = {"judge": [("phybench.scoring.judge.abnormal", "abnormal")],
          "bodies": [("phybench.scoring.learned.bodies", n) for n in ("body_position_error", "body_angle_error", "body_details")],
          "law": [("phybench.scoring.learned.law", n) for n in ("law_error", "law_details")]}
METRICS = ("velocity_error", "ssim", "psnr")


@contextlib.contextmanager
def timed_groups() -> Iterator[dict[str, float]]:
    """CPU seconds per group, each entry point wrapped; only the outermost wrapped call counts, so
    a group's time never includes another's (the metrics call each other lazily through these
    module attributes: `phybench.scoring.metrics` imports them inside its compute functions)."""
    import importlib

    spent = {g: 0.0 for g in GROUPS}
    depth = [0]
    saved: list[tuple[Any, str, Callable[..., Any]]] = []

    def wrap(group: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return fn(*args, **kwargs)
            depth[0] += 1
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[group] += time.process_time() - t
                depth[0] -= 1
        return timed

    for group, names in GROUPS.items():
        for mod_name, attr in names:
            mod = importlib.import_module(mod_name)
            saved.append((mod, attr, getattr(mod, attr)))
            setattr(mod, attr, wrap(group, getattr(mod, attr)))
    try:
        yield spent
    finally:
        for mod, attr, fn in saved:
            setattr(mod, attr, fn)


def where(task: str) -> tuple[str, int]:
    """(split, px) a task is measured on: its first evaluation split at its own resolution (the
    task's spec says which; nothing here knows a task)."""
    from phybench.tasks import get_task

    spec = get_task(task)
    return spec.eval_splits[0], spec.resolution


def prepare(task: str, n: int, tmp: str, exact: bool) -> tuple[str, str]:
    """(split folder, submission folder) of a family: n videos, ground truth blurred unless exact."""
    from phybench.cli import main
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.tasks import get_task

    split_name, res = where(task)
    split = os.path.join(tmp, f"{task}-{split_name}")
    generate(make_plan(get_task(task), split_name, res, n), split, progress=False)
    sub = os.path.join(tmp, f"{task}-gt")
    blurred = os.path.join(tmp, f"{task}-blur")
    with contextlib.redirect_stdout(io.StringIO()):  # the CLI's "wrote ..." lines
        assert main(["baseline", "ground-truth", "--data", split, "--out", sub, "--quiet"]) == 0
        if exact:
            return split, sub
        assert main(["degrade", "--data", split, "--kinds", "blur-1.0", "--out", blurred, "--quiet"]) == 0
    return split, os.path.join(blurred, "blur-1.0")


def measure(split: str, sub: str, profile: bool) -> tuple[float, dict[str, float]]:
    """(total CPU s, CPU s per group) of one `score --metrics velocity_error,ssim,psnr` run."""
    from phybench.scoring.run.score import score

    prof = cProfile.Profile() if profile else None
    with timed_groups() as spent:
        t0 = time.process_time()
        if prof is not None:
            prof.enable()
        score(sub, split, METRICS, workers=1, progress=False)
        if prof is not None:
            prof.disable()
        total = time.process_time() - t0
    if prof is not None:
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    return total, dict(spent)


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="videos per family")
    ap.add_argument("--families", default=DEFAULT_TASKS, help="comma-separated task names")
    ap.add_argument("--exact", action="store_true", help="score the exact ground truth (default: blurred 1 px)")
    ap.add_argument("--profile", default="", help="a family to also profile (cProfile, by tottime)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per family (the smallest total is kept)")
    args = ap.parse_args()
    run(args.n, args.families.split(","), args.exact, args.profile, args.repeat)


def run(n: int, families: list[str], exact: bool = False, profile: str = "", repeat: int = 1) -> None:
    """The table: one row per family (also `bench_judge.py --share`)."""
    print(f"{'family':<15}{'px':>5}{'videos':>8}{'total s':>9}{'judge s':>9}{'bodies s':>10}{'law s':>7}"
          f"{'judge+bodies':>14}{'+ law':>7}")
    for task in families:
        with tempfile.TemporaryDirectory() as tmp:
            split, sub = prepare(task, n, tmp, exact)
            runs = [measure(split, sub, False) for _ in range(repeat)]
            total, spent = min(runs, key=lambda r: r[0])
            if task == profile:
                measure(split, sub, True)
        jb = spent["judge"] + spent["bodies"]
        print(f"{task:<15}{where(task)[1]:>5}{n:>8}{total:>9.2f}{spent['judge']:>9.2f}{spent['bodies']:>10.2f}"
              f"{spent['law']:>7.2f}{100 * jb / total:>13.0f}%{100 * (jb + spent['law']) / total:>6.0f}%", flush=True)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main_()

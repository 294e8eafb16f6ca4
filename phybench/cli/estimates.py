"""Up-front time estimates of `quickstart` and `run` (issue 49: neither said how long it would take).

Each task's costs are measured on this machine first (`scoring.run.estimate.measure_task`: a split
sample written, one video scored, a few training samples; about a second a task), then
multiplied by what the command will do.  A model's own time cannot be measured before it
runs: `run` says it after the model's first batch.
"""
from __future__ import annotations

import sys
from typing import Sequence

from ..scoring.run.estimate import duration, measure_task

Job = tuple[str, str, int, bool]  # (task, split, samples, already written)


def _measured(tasks: Sequence[str], metrics: Sequence[str], train: dict[str, str]) -> dict[str, dict[str, float]]:
    return {t: measure_task(t, "id-eval", metrics, train=train.get(t)) for t in dict.fromkeys(tasks)}


def _line(parts: list[tuple[str, float]], tail: str = "") -> str:
    total = sum(s for _, s in parts)
    shown = (", ".join(f"{what} {duration(s)}" for what, s in parts if s >= 0.5)
             or ", ".join(f"{what} under a second" for what, s in parts if s > 0))  # a fast machine: name them anyway
    return f"estimate: about {duration(total)} on this machine ({shown}; measured here){tail}"


def run_estimate(jobs: Sequence[Job], metrics: Sequence[str], *, reference_rows: int, view: bool) -> str:
    """`run`'s line: splits to write, the model's videos scored, the cheap reference rows scored on
    splits of their own (`reference_rows` baselines each), the viewers (the judge re-traced, tracks)."""
    cost = _measured([t for t, _, _, _ in jobs], metrics, {})
    parts = [("splits", sum(n * cost[t]["generate"] for t, _, n, made in jobs if not made)),
             ("scoring", sum(n * cost[t]["score"] for t, _, n, _ in jobs))]
    if reference_rows:
        parts.append(("reference rows", sum(reference_rows * n * cost[t]["score"] for t, _, n, _ in jobs)))
    if view:
        parts.append(("viewers", sum(n * cost[t]["score"] for t, _, n, _ in jobs)))
    return _line(parts, "; plus the model's own time, said after its first batch")


def quickstart_estimate(jobs: Sequence[Job], train: Sequence[Job], metrics: Sequence[str], baselines: int) -> str:
    """`quickstart`'s line: evaluation and training splits, the nearest-neighbour index over the training
    split, every baseline scored, the board's viewers."""
    cost = _measured([t for t, _, _, _ in jobs], metrics, {t: s for t, s, _, _ in train})
    index = {t: _index_cost(t, s) for t, s, _, _ in train}
    return _line([("splits", sum(n * cost[t]["generate"] for t, _, n, made in jobs if not made)),
                  ("training splits", sum(n * cost[t].get("train", 0.0) for t, _, n, made in train if not made)),
                  ("nearest-neighbour index", sum(n * index[t] for t, _, n, _ in train)),
                  ("baselines scored", sum(baselines * n * cost[t]["score"] for t, _, n, _ in jobs)),
                  ("viewers", sum(baselines * n * cost[t]["score"] for t, _, n, _ in jobs))])


def _index_cost(task: str, train: str, n: int = 200) -> float:
    """Seconds per training sample of the nearest-neighbour index (its condition frames rendered and
    stored): the index over `n` training samples less the one over 8, over the difference (the fixed
    cost left out), about a second."""
    import tempfile
    import time
    from pathlib import Path

    from ..data.generate import generate
    from ..data.split import make_plan
    from ..reference import run_baseline
    from ..tasks import get_task

    spec = get_task(task)
    with tempfile.TemporaryDirectory(prefix="phybench-estimate-") as tmp:
        root = Path(tmp)
        generate(make_plan(spec, spec.eval_splits[0], None, 1, None), root / "eval", progress=False)
        took = []
        for size in (8, n):
            generate(make_plan(spec, train, None, size, None), root / f"train{size}", progress=False)
            t0 = time.perf_counter()
            run_baseline("nearest-neighbour", root / "eval", root / f"sub{size}", root / f"train{size}", False,
                         cache_dir=root / f"cache{size}")
            took.append(time.perf_counter() - t0)
        return max(0.0, (took[1] - took[0]) / (n - 8))


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

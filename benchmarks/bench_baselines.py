"""Baseline throughput, and the nearest-neighbour index on a 30K training split.

    python benchmarks/bench_baselines.py                     # uniform, train-30k, 256 queries
    python benchmarks/bench_baselines.py --task collision --queries 512
    python benchmarks/bench_baselines.py --train data/uniform-30k --work /tmp/pb-bench

Generates what it needs once under --work (the training split states only, ~7 s for
uniform train-30k; an id-eval split of --queries samples) and reuses it on later runs.
Reports: index build from a cold cache (read states, render the condition frames,
features), index load from the cache, exact search alone in queries/s, and each
baseline end to end (`run_baseline`: read the split, make and write every video).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from phybench.reference import BASELINES, NearestNeighbourIndex, nn_features, run_baseline
from phybench.data.frames import decode_video
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, read_manifest
from phybench.tasks import get_task


def _split(task: str, split: str, out: Path, limit: int | None) -> tuple[Path, float | None]:
    """The split folder, generated unless already there; and how long generating took."""
    try:
        read_manifest(out)
        return out, None
    except Exception:  # not there, or unfinished: (re)generate, resumable
        pass
    t0 = time.perf_counter()
    generate(make_plan(get_task(task), split, None, limit, None), out, workers=2 if limit is None else 1,
             progress=True)
    return out, time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="uniform", choices=["uniform", "parabola", "collision"])
    p.add_argument("--train", type=Path, help="training split folder (default: generate train-30k under --work)")
    p.add_argument("--queries", type=int, default=256, help="id-eval samples to answer")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "phybench-bench-baselines")
    args = p.parse_args()

    train, gen_s = (args.train, None) if args.train else _split(
        args.task, "train-30k", args.work / f"{args.task}-train-30k", None)
    evaluation, _ = _split(args.task, "id-eval", args.work / f"{args.task}-id-eval-{args.queries}", args.queries)
    rows: list[tuple[str, str]] = []
    if gen_s is not None:
        rows.append((f"generate {args.task}/train-30k states (2 workers)", f"{gen_s:.1f} s"))

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        t0 = time.perf_counter()
        index = NearestNeighbourIndex(train, cache_dir=cache, progress=True)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = NearestNeighbourIndex(train, cache_dir=cache, progress=False)
        load = time.perf_counter() - t0
        n = len(index)
        mib = index.features.nbytes / 2**20
        rows.append((f"index build, cold cache ({n:,} samples, {mib:.0f} MiB uint8)",
                     f"{build:.1f} s ({n / build:,.0f} samples/s)"))
        rows.append(("index load from cache (+ read states)", f"{load:.2f} s"))

        reader = SplitReader(evaluation)
        queries = np.stack([nn_features(decode_video(r["video"][:3])) for r in reader.rows(columns=["video"])])
        queries = np.concatenate([queries] * max(1, 1024 // len(queries)))  # >= 1024 for a stable figure
        index.search(queries[:8])  # warm up BLAS
        t0 = time.perf_counter()
        index.search(queries)
        search = time.perf_counter() - t0
        rows.append((f"exact search alone ({len(queries)} queries x {n:,})", f"{len(queries) / search:,.0f} queries/s"))

        for name in BASELINES:
            out = Path(tmp) / f"sub-{name}"
            t0 = time.perf_counter()
            run_baseline(name, evaluation, out, train if name == "nearest-neighbour" else None, progress=False,
                         cache_dir=cache)
            dt = time.perf_counter() - t0
            rows.append((f"{name}: end to end, {len(reader)} videos (warm cache)", f"{len(reader) / dt:,.0f} videos/s"))

    width = max(len(r[0]) for r in rows)
    print(f"\n{args.task}, {len(reader)}-sample id-eval, training split {read_manifest(train)['split']}")
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

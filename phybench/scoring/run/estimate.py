"""How long a `score` run will take, said before it starts (stderr), measured here on one video.

The network metrics (`network_metrics()`: rows that name pinned weights) run whenever their
weights are fetched (the README's set-up fetches them), and on a CPU they cost tens of times
what the velocity and image metrics do: a first-time author saw a plain `phybench score` run
past 50 minutes on 200 videos with nothing said, where the same run
without them takes a minute and a half.  So before such a run `score` times, on the split's
first ground-truth video, one pass of each batched metric (`cost` of its batching class: a set
metric's twice when its reference features are not cached yet) and the other metrics, and prints
the total and what the run would cost without the network metrics, with the `--metrics` to get that.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
from ...data.documents import SplitRow


def _duration(seconds: float) -> str:
    """'40 s', '1.5 min', '2.3 h': rounded, as a person says it."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _time_cheap(reader: Any, row: SplitRow, video: np.ndarray, cheap: Sequence[str]) -> float:
    """One row as the pass scores it (ground truth decoded and hashed, then scored), plus one more
    decode for the submission's own video."""
    from .sample import score_row

    t0 = time.perf_counter()
    score_row(reader, row, video, cheap)
    reader.video(row)
    return time.perf_counter() - t0


def estimate_line(reader: Any, row: SplitRow, n: int, metrics: Sequence[str], torch_metrics: Sequence[str],
                  *, cached: bool, batch_size: int = 16, device: str = "cpu", workers: int = 1) -> str:
    """One line for stderr: the run's cost with and without the network metrics, from one measured video.

    reader, row: the split and its first row, whose ground-truth video is the one measured (a
    real one: the parser's cost depends on what it finds).  `workers` divide the time (they
    score whole videos in parallel)."""
    from .batches import batch_class

    manifest, video = reader.manifest, reader.video(row)
    generated = int(manifest["frames"]) - int(manifest["condition_frames"])
    cheap = [m for m in metrics if m not in torch_metrics]
    per_video, parts = _time_cheap(reader, row, video, cheap), []
    base = per_video
    for name in torch_metrics:  # each batched metric times itself (its row's class: `cost`)
        dt, words = batch_class(name).cost(video, generated, batch_size=batch_size, device=device, cached=cached)
        per_video += dt
        parts.append(words)
    par = max(1, workers)
    names = "+".join(m.upper() for m in torch_metrics)
    where = f"this {'CPU' if str(device) == 'cpu' else device}" + (f" with {par} workers" if par > 1 else "")
    line = (f"estimate: {names} on {n} videos: about {_duration(per_video * n / par)} on {where} "
            f"({', '.join(parts)} per video, measured here on one video)")
    return line + (f"; --metrics {','.join(cheap)} takes about {_duration(base * n / par)}" if cheap else "")


def measure_task(task: str, split: str, metrics: Sequence[str], *, train: str | None = None) -> dict[str, float]:
    """Seconds per sample on this machine, measured on a few samples (a second or two): ``generate``
    (simulate and render one evaluation sample), ``score`` (one video scored with `metrics`, the judge
    with them) and, given a training split, ``train`` (one training sample).  What `quickstart` and
    `run` say up front (issue 49: neither estimated its time)."""
    import tempfile
    from pathlib import Path

    from ...data.generate import generate
    from ...data.split import SplitReader, make_plan
    from ...tasks import get_task
    from .sample import score_row

    spec, out = get_task(task), {}
    with tempfile.TemporaryDirectory(prefix="phybench-estimate-") as tmp:
        def made(name: str, what: str, n: int) -> float:  # seconds to write an n-sample split
            t0 = time.perf_counter()
            generate(make_plan(spec, what, None, n, None), Path(tmp) / name, progress=False)
            return time.perf_counter() - t0

        made("warm", split, 1)  # imports and first calls, paid once by any run
        one = made("one", split, 1)
        out["generate"] = max(0.0, (made("eval", split, 4) - one) / 3)  # per sample, without the fixed cost
        reader = SplitReader(Path(tmp) / "eval")
        row = next(iter(reader.rows()))
        video = reader.video(row)
        out["score"] = _per_call(lambda _: score_row(reader, row, video, list(metrics)), (0,))
        if train is not None:
            out["train"] = max(0.0, (made("train", train, 33) - made("train1", train, 1)) / 32)
    return out


def _per_call(call: Any, args: Sequence[int] | range) -> float:
    t0 = time.perf_counter()
    for a in args:
        call(a)
    return (time.perf_counter() - t0) / max(1, len(args))


def duration(seconds: float) -> str:
    """'40 s', '1.5 min', '2.3 h' (the public name of `_duration`)."""
    return _duration(seconds)

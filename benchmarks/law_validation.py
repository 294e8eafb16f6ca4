"""The law-identification figures of docs/results.md ("Law identification"): per case, the share of
videos whose fitted parameter is within the tolerance, the median and the worst deviation.

    python benchmarks/law_validation.py --n 40

Same cases as tests/test_law.py (which asserts the thresholds on 20 videos): ground truth,
speed x1.2, Box2D re-runs with gravity x1.2 / x0.8 and restitution 0.8 / 0.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_law as T  # noqa: E402  the test's own planted submissions

from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.tasks import get_task  # noqa: E402


def _row(name: str, vals: list[float], tol: float) -> None:
    v = np.array(vals)
    print(f"| {name} | {tol:.0%} | {(v <= tol).sum()}/{len(v)} | {np.median(v):.1e} | {v.max():.1e} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40, help="videos per id-eval split")
    n = ap.parse_args().n
    root = Path(tempfile.mkdtemp(prefix="law-validation-"))
    for task in ("uniform", "parabola", "collision"):
        generate(make_plan(get_task(task), "id-eval", limit=n), root / task, progress=False)
    g = get_task("parabola").simulator.gravity
    length = get_task("uniform").frames * get_task("uniform").frame_interval
    print("| case | tolerance | within | median | worst |\n|---|---|---:|---:|---:|")
    _, t = T._scored(root, root / "uniform", None)
    _row("uniform ground truth, velocity_x / v - 1", [abs(f["fit"]["velocity_x"] / r["velocity"] - 1) for r, f in t], .01)
    _row("uniform ground truth, gravity x video length / v", [f["fit"]["gravity"] * length / r["velocity"] for r, f in t], .01)
    _, t = T._scored(root, root / "uniform", "speed-1.2")
    _row("uniform speed x1.2, velocity_x / (1.2 v) - 1", [abs(f["fit"]["velocity_x"] / (1.2 * r["velocity"]) - 1) for r, f in t], .03)
    _, t = T._scored(root, root / "parabola", None)
    _row("parabola ground truth, gravity vector, relative", [np.hypot(f["fit"]["gravity_x"], f["fit"]["gravity_y"] + g) / g for r, f in t], .01)
    _row("parabola ground truth, velocity_x / v - 1", [abs(f["fit"]["velocity_x"] / r["velocity"] - 1) for r, f in t], .01)
    for k, kind in ((1.2, "gravity-1.2"), (0.8, "gravity-0.8")):
        _, t = T._scored(root, root / "parabola", kind)
        _row(f"parabola {kind}, gravity vector, relative", [np.hypot(f["fit"]["gravity_x"], f["fit"]["gravity_y"] + k * g) / (k * g) for r, f in t], .03)
    _, t = T._scored(root, root / "collision", None)
    _row("collision ground truth, restitution - 1", [abs(f["fit"]["restitution"] - 1) for r, f in t], .01)
    _row("collision ground truth, momentum_change", [abs(f["fit"]["momentum_change"]) for r, f in t], .01)
    _row("collision ground truth, contact_time_offset / contact time", [abs(f["fit"]["contact_time_offset"]) / r["contact_time"] for r, f in t], .01)
    for e, kind in ((0.8, "restitution-0.8"), (0.0, "restitution-0")):
        _, t = T._scored(root, root / "collision", kind)
        _row(f"collision {kind}, (e - {e}) / {e or 1.0}", [abs(f["fit"]["restitution"] - e) / (e or 1.0) for r, f in t], .03)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

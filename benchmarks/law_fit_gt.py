"""The ground truth's own fitted law against the simulator's (issue 34, item 3 target).

For every row of each given evaluation split (or the first --rows): the family's law is fitted
to the exact rendered video the way a submission's is (`phybench.scoring.learned.law`: parsed pixels,
generated frames, whole balls inside the view) and compared with the simulator's value from
the row's stored states (`free_flight_from_states`, `collision_from_states`) by `judge_law`'s
aspects (velocity, acceleration, gravity; restitution, momentum).  A video is "within" when
every aspect is at most --tolerance (default 1%), "no fit" when the fit had too few frames,
"off" otherwise.  Target: within + no fit >= 99% of the videos of every family.

    PYTHONPATH=. python benchmarks/law_fit_gt.py SPLIT_DIR [SPLIT_DIR ...] [--rows N] [--show-off 5]
        [--degrade blur-1.0,h264-28]

--degrade applies benign degradations (`phybench.benign`, in the order given) to the ground
truth first: the law of a degraded but physically exact video must still be the simulator's.

Splits are made with `phybench generate TASK --split id-eval --protocol lite --out DIR`.
"""
from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from phybench.benign import degrade
from phybench.data.split import SplitReader
from phybench.scoring.learned.law import LAW_FITS, collision_from_states, free_flight_from_states, judge_law
from phybench.scoring.run.sample import score_sample
from phybench.tasks import family_of, get_task
from phybench.world.laws import fully_in_view


def simulator_law(name: str, row: dict[str, Any], manifest: dict[str, Any], contact: float) -> dict[str, float]:
    """The law's parameters from the simulator's stored states (the generated frames)."""
    if name == "collision_1d":
        return collision_from_states(row["velocities"], row["radii"], contact)
    cf, dt = int(manifest["condition_frames"]), float(manifest["frame_interval"])
    v = np.asarray(row["velocities"], dtype=np.float64)[:, 0]
    ok = np.arange(v.shape[0]) >= cf
    return free_flight_from_states(v, ok, dt)


def verdict(law: dict[str, Any], sim: dict[str, float], headline: str | None, window: tuple[float, float],
            tolerance: float) -> tuple[str, dict[str, float]]:
    """("within" | "no fit" | "off", aspect errors) of one video's fitted law."""
    names = LAW_FITS[law["law"]].params
    if not any(math.isfinite(law["fit"].get(n, math.nan)) for n in names):
        return "no fit", {}
    errors = judge_law(law["law"], law["fit"], sim, headline, window)
    aspects = {k: v for k, v in errors.items() if k != "law_error"}
    if all(math.isfinite(v) and v <= tolerance for v in aspects.values()):
        return "within", aspects
    return "off", aspects


def run_split(path: str, rows: int | None, tolerance: float, show_off: int,
              kinds: tuple[str, ...] = ()) -> dict[str, int]:
    reader = SplitReader(path)
    manifest = reader.manifest
    family = family_of(get_task(manifest["task"]))
    cf, dt = int(manifest["condition_frames"]), float(manifest["frame_interval"])
    counts = {"within": 0, "no fit": 0, "off": 0, "truth from states": 0, "excluded": 0}
    shown = 0
    for i, row in enumerate(reader.rows()):
        if rows is not None and i >= rows:
            break
        gt = reader.video(row)
        video = gt
        for kind in kinds:
            video = degrade(kind, video, cf, row["sample_id"])
        detail = score_sample(row, video, gt, manifest, ("law_error",))
        law = detail.get("law")
        if detail["excluded"] or law is None:
            counts["excluded"] += 1
            continue
        positions = np.asarray(row["positions"], dtype=np.float64)
        window = (cf * dt, (positions.shape[0] - 1) * dt)
        sim = simulator_law(law["law"], row, manifest, family.contact_time(row))
        kind, aspects = verdict(law, sim, family.law_headline, window, tolerance)
        counts[kind] += 1
        counts["truth from states"] += bool(law["truth"].get("from_states"))
        if kind == "off" and shown < show_off:
            shown += 1
            seen = int(fully_in_view(positions, np.asarray(row["radii"]), float(manifest["world_size"]))[cf:].all(
                axis=1).sum())
            print(f"  off: {row['sample_id']} {', '.join(f'{k} {v:.3g}' for k, v in aspects.items())} "
                  f"(frames with every ball fully in view: {seen})")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("splits", nargs="+")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--show-off", type=int, default=3)
    ap.add_argument("--degrade", default="", help="comma-separated benign kinds applied in order")
    args = ap.parse_args()
    kinds = tuple(k for k in args.degrade.split(",") if k)
    for path in args.splits:
        c = run_split(path, args.rows, args.tolerance, args.show_off, kinds)
        n = c["within"] + c["no fit"] + c["off"]
        share = (c["within"] + c["no fit"]) / n if n else float("nan")
        m = SplitReader(path).manifest
        label = f" under {'+'.join(kinds)}" if kinds else ""
        print(f"{m['task']}/{m['split']}{label} ({m['num_samples']} rows): {n} videos, within {args.tolerance:.0%} "
              f"{c['within']}, no fit {c['no fit']}, off {c['off']} -> {share:.1%} within or no fit; "
              f"truth from states {c['truth from states']}, excluded {c['excluded']}", flush=True)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

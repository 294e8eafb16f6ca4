"""Case-based generalisation, measured: where each OOD video's fitted speed lands against the training range.

    python -m phybench_baselines.studies.cases MODEL.samples.json [OTHER.samples.json ...] --task uniform

Reads the samples sidecars `phybench score` writes (per video the true velocity and the learned-law
block's free-flight fit) and prints, per model, for the videos whose true speed lies outside the
training range (the OOD velocity levels): how many have a fit, the share of fitted speeds that land
inside the training range (snapped into it), the median distance of the fitted speed to the nearest
training speed (0 inside the range; the training grids are dense in the range) against the true
speed's own distance, and the median |fitted - true|.  Over every video of the file it also prints the
share whose fitted speed lies within 10% of the ground truth's own fit (a video with no fit is a miss):
the learned-law target of issue 33.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from ..framear.sample import fitted_speed, law_within
from phybench.tasks import get_task


def velocity_range(task: str) -> tuple[float, float]:
    for d in get_task(task).dofs:
        if d.name == "velocity":
            lo, hi = d.id_range
            return float(lo), float(hi)
    raise ValueError(f"{task} has no velocity degree of freedom")


def landing(samples: list[dict], lo: float, hi: float) -> dict:
    true_v: list[float] = []
    fit_v: list[float] = []
    for s in samples:
        v = float(s["true_velocity"])
        if lo <= v <= hi:
            continue
        fv = fitted_speed((s.get("law") or {}).get("fit"))
        true_v.append(v)
        fit_v.append(fv)
    true, fit = np.asarray(true_v), np.asarray(fit_v)
    ok = np.isfinite(fit)
    t, f = true[ok], fit[ok]

    def dist(x):
        return np.maximum(lo - x, 0) + np.maximum(x - hi, 0)

    return {"videos_out_of_range": int(len(true)), "with_fit": int(ok.sum()),
            "share_inside_training_range": float(np.mean((f >= lo) & (f <= hi))) if len(f) else float("nan"),
            "median_distance_fit_to_range": float(np.median(dist(f))) if len(f) else float("nan"),
            "median_distance_true_to_range": float(np.median(dist(t))) if len(t) else float("nan"),
            "median_abs_error": float(np.median(np.abs(f - t))) if len(f) else float("nan")}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("samples", nargs="+", help="samples.json sidecars of `phybench score` on an OOD split")
    p.add_argument("--task", required=True, help="the task the samples answer (its training velocity range)")
    args = p.parse_args(argv)
    lo, hi = velocity_range(args.task)
    out = []
    for path in args.samples:
        samples = json.load(open(path))["samples"]
        within = [law_within(s.get("law"), 0.1) for s in samples]
        r = {"file": path, "videos": len(samples), "law_within_10pct": float(np.mean(within)) if within else float("nan"),
             **landing(samples, lo, hi)}
        out.append(r)
        print(f"{path}: fitted speed within 10% of the truth's fit in {100 * r['law_within_10pct']:.1f}% of "
              f"{len(samples)} videos")
        print(f"{path}: {r['with_fit']} of {r['videos_out_of_range']} videos with a true speed outside [{lo:g}, {hi:g}] "
              f"have a fit; {100 * r['share_inside_training_range']:.0f}% of fitted speeds land inside it; median "
              f"distance to it {r['median_distance_fit_to_range']:.2f} (truth {r['median_distance_true_to_range']:.2f}); "
              f"median |fit - truth| {r['median_abs_error']:.2f}")
    return out


if __name__ == "__main__":
    main()

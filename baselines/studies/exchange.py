"""Does a collision model condition its momentum exchange on the masses?  Read from a scored run.

    python -m phybench_baselines.studies.exchange \
        leaderboard/results/learned/lite/collision-id-eval-framear-1t.samples.json

Why: a collision model can place both balls well before contact and still miss the law, and the
ranked error alone does not say which part it misses.  The per-video law fits of a results file's
samples sidecar (`law.fit` from the model's pixels, `law.truth` from the simulator) do: regress the
model's fitted velocities on the truth's, before contact and after.  The part of ball 1's outgoing
velocity that depends on the masses is ``after_1 - before_2`` (for equal masses the balls swap
velocities, so this is zero); a model that ignores the masses shrinks it toward zero (slope 0), one
that learned the exchange keeps it (slope 1).  Issue 46 item 2 uses it to say why collision misses.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from phybench import jsonsafe

SIDES = ("velocity_before_1", "velocity_before_2", "velocity_after_1", "velocity_after_2")


def fitted_laws(samples: dict[str, Any]) -> list[dict[str, Any]]:
    """The law blocks of the videos whose model fit and truth both have every velocity (world units / s)."""
    out = []
    for s in samples["samples"]:
        law = s.get("law") or {}
        fit, truth = law.get("fit") or {}, law.get("truth") or {}
        if all(isinstance(fit.get(k), float) and isinstance(truth.get(k), float) for k in SIDES):
            out.append(law)
    return out


def _line(truth: np.ndarray, model: np.ndarray) -> dict[str, float]:
    """Least-squares slope of model on truth, r^2, and the mean absolute difference (units / s)."""
    return {"slope": float(np.polyfit(truth, model, 1)[0]), "r2": float(np.corrcoef(truth, model)[0, 1] ** 2),
            "mae": float(np.abs(model - truth).mean())}


def exchange_report(samples: dict[str, Any]) -> dict[str, Any]:
    """Per velocity (before and after contact) the model-on-truth line, and the mass-dependent part's."""
    laws = fitted_laws(samples)
    if len(laws) < 3:
        raise ValueError(f"{len(laws)} videos with a complete collision fit: too few to regress")

    def col(key: str, side: str) -> np.ndarray:
        return np.array([law[side][key] for law in laws], float)  # (videos,) world units / s

    report: dict[str, Any] = {"videos": len(laws)}
    for key in SIDES:
        report[key] = _line(col(key, "truth"), col(key, "fit"))
    truth_part = col("velocity_after_1", "truth") - col("velocity_before_2", "truth")
    model_part = col("velocity_after_1", "fit") - col("velocity_before_2", "fit")
    report["mass_dependent_after_1"] = {**_line(truth_part, model_part), "truth_sd": float(truth_part.std()),
                                        "model_sd": float(model_part.std())}
    return report


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("samples", type=Path, help="a collision results file's .samples.json")
    args = p.parse_args(argv)
    report = exchange_report(jsonsafe.read(args.samples, "a samples sidecar"))
    print(f"{report['videos']} videos with a complete fit")
    for key in (*SIDES, "mass_dependent_after_1"):
        r = report[key]
        print(f"{key}: slope {r['slope']:.3f}, r^2 {r['r2']:.3f}, mean |model - truth| {r['mae']:.3f} units/s")
    return report


if __name__ == "__main__":
    main()

"""Interpolation gaps probe (paper section 5.1, Fig. 5): does a ball in an unseen speed range snap to a seen one?

Uniform motion of one red ball.  Five training sets of equal size (the paper's 200K),
each covering v in [1, 4] minus a middle gap: the paper gives set (1) in words,
[1.0, 1.25] U [3.75, 4.0]; the other four are ours, built as its text describes
(a smaller gap; a sub-range reintroduced "without increasing data amount").  The
evaluation split covers the whole [1, 4], so every set is evaluated on the same videos:
the analysis (below, probe ``gaps``) is told which set the model was
trained on and reports, for the videos whose speed lies in that set's gap, the share
whose generated speed moved toward a training range, and the errors in and out of it.
"""
from __future__ import annotations

from typing import Any, Sequence


import numpy as np

from ..world import laws
from ..world.scene import RED, Body, Scene
from ..tasks.family import Placement, TaskFamily, frames_possible, register_family, register_task
from ..tasks.sampling import uniform_in
from ..tasks.spec import Dof, SimulatorSettings, SplitDecl, TaskSpec
from .page import esc, num, pct, rows_section, scatter
from .reading import (
    MIN_FRAMES,
    BodyReading,
    pct_text,
    read_body,
    share,
    split_videos,
)
from .registry import Probe, ProbeError, register_probe

RADIUS = (0.7, 1.4)  # world units
VELOCITY = (1.0, 4.0)  # world units / s
MARGIN = 0.1  # world units between the ball and the border while in view
TRAIN_SIZE = 200_000  # the paper's size, equal for every set (states only)
EVAL_SIZE = 1000
# training velocity ranges of each set, world units / s
GAP_SETS = (
    ("train-gap1", ((1.0, 1.25), (3.75, 4.0)), "the paper's set (1): gap [1.25, 3.75]"),
    ("train-gap2", ((1.0, 1.75), (3.25, 4.0)), "gap [1.75, 3.25]"),
    ("train-gap3", ((1.0, 2.25), (2.75, 4.0)), "a small gap [2.25, 2.75]"),
    ("train-gap4", ((1.0, 1.25), (2.375, 2.625), (3.75, 4.0)), "set (1)'s gap with [2.375, 2.625] reintroduced"),
    ("train-gap5", ((1.0, 1.25), (2.0, 2.25), (2.75, 3.0), (3.75, 4.0)),
     "set (1)'s gap with [2.0, 2.25] and [2.75, 3.0] reintroduced"),
)


@register_family
class GapsFamily(TaskFamily):
    """One red ball at constant speed; training sets miss a middle range of speeds."""

    name = "probe-gaps"
    probe = "gaps"
    plot_dof = "velocity"
    stores_bodies = False
    board_layout = "splits"
    frames_in_view_doc = ("at least this many frames have the ball fully in view: min(24, the most its size and "
                          "speed allow)")

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "velocity-ranges":
            return super().draw(spec, decl, index, u)
        ranges = tuple(tuple(r) for r in decl.option("ranges"))
        return "id", {"radius": RADIUS[0] + (RADIUS[1] - RADIUS[0]) * float(u[1]),
                      "velocity": uniform_in(ranges, float(u[2]))}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        r, v, L, dt = params["radius"], params["velocity"], spec.world_size, spec.frame_interval
        reach = r + MARGIN
        n = min(spec.min_frames_in_view, frames_possible(v * dt, L - 2 * reach, spec.frames))
        x_hi = max(reach, L - reach - v * dt * (n - 1))
        x0 = reach + u[0] * (x_hi - reach)
        y0 = reach + u[1] * (L - 2 * reach)
        scene = Scene.discs([[x0, y0]], [[v, 0.0]], [r], [RED], L)
        initial = Scene((Body(scene.bodies[0].shape, RED, name="red ball"),), scene.poses, L, scene.velocities)
        return Placement(initial, n)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        t = laws.frame_times(spec.frames, spec.frame_interval)
        pos, vel = laws.ballistic(initial.positions[0, 0], initial.velocities[0, 0], 0.0, t)
        return pos[:, None, :], vel[:, None, :]

    def describe(self, spec: TaskSpec) -> list[str]:
        return [f"{name}: v in {' U '.join(f'[{a:g}, {b:g}]' for a, b in ranges)}  ({text})"
                for name, ranges, text in GAP_SETS]


GAPS = register_task(TaskSpec(
    name="interpolation-gaps",
    version=1,
    scenario="probe-gaps",
    description=("Interpolation gaps (Fig. 5): a red ball at constant speed; five training sets of equal size miss "
                 "a middle range of speeds; one evaluation split over the whole [1, 4]."),
    dofs=(Dof("radius", "world units", RADIUS, (), "radius of the ball"),
          Dof("velocity", "world units / s", VELOCITY, (), "initial horizontal speed")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    base_seed=2024_11_16,
    declared_splits=tuple(SplitDecl(name, "train", TRAIN_SIZE, "velocity-ranges", (("ranges", ranges),), text)
                          for name, ranges, text in GAP_SETS) + (
        SplitDecl("eval", "eval", EVAL_SIZE, "velocity-ranges", (("ranges", (VELOCITY,)),),
                  "v uniform over [1, 4]: seen and unseen speeds of every set"),
    ),
    family_params=(("gap_sets", tuple((name, ranges) for name, ranges, _ in GAP_SETS)),),
    notes=("The paper states the ranges of set (1) only; sets (2)-(5) are ours, as its text describes them.",),
))


# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ interpolation gaps
GAP_VERDICTS = ("snapped", "held", "lost")
# world units / s: a move toward the training ranges smaller than this is reading noise (the
# reader's speed is within 0.02 of the truth on ground truth), not a snap
SNAP_TOLERANCE = 0.05  # for the videos whose speed lies in the training set's gap


def distance_to(ranges: Sequence[Sequence[float]], v: float) -> float:
    """World units / s from v to the nearest training range (0 inside one)."""
    return min(0.0 if a <= v <= b else min(abs(v - a), abs(v - b)) for a, b in ranges)


def gap_verdict(ranges: Sequence[Sequence[float]], v0: float, reading: BodyReading) -> str | None:
    """None for a conditioned speed inside a training range; else "snapped" (the generated
    speed is less than half as far from the training ranges as the conditioned one, and
    at least `SNAP_TOLERANCE` nearer), "held" or "lost"."""
    d0 = distance_to(ranges, v0)
    if d0 == 0.0:
        return None
    if reading.lost:
        return "lost"
    d = distance_to(ranges, reading.velocity)
    return "snapped" if d < 0.5 * d0 and d0 - d > SNAP_TOLERANCE else "held"


def _gaps_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    sets = {name: ranges for name, ranges in spec.param("gap_sets")}
    train = options.get("train_split")
    if train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    ranges = [list(r) for r in sets[train]]
    videos = []
    columns = ["sample_id", "velocity"]
    for row, video in split_videos(reader, sub, columns, "gaps", progress):
        sample_id = row["sample_id"]
        v0 = float(row["velocity"])
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "conditioned_velocity": v0, "velocity": reading.velocity,
                       "in_gap": distance_to(ranges, v0) > 0.0, "verdict": gap_verdict(ranges, v0, reading)})
    videos.sort(key=lambda v: v["sample_id"])
    gap = [v for v in videos if v["in_gap"]]
    counts = {v: sum(1 for x in gap if x["verdict"] == v) for v in GAP_VERDICTS}

    def error(vs: list[dict[str, Any]]) -> float:
        errs = [abs(v["velocity"] - v["conditioned_velocity"]) for v in vs if np.isfinite(v["velocity"])]
        return float(np.mean(errs)) if errs else float("nan")

    return {"train_split": train, "train_ranges": ranges, "videos_analysed": len(videos), "in_gap": len(gap),
            "verdicts": {v: share(counts[v], len(gap)) for v in GAP_VERDICTS},
            "velocity_error_in_gap": error(gap), "velocity_error_in_range": error([v for v in videos
                                                                                   if not v["in_gap"]]),
            "verdict_meaning": {"snapped": "in the gap, the generated speed is less than half as far from a "
                                           f"training range as the conditioned one (and {SNAP_TOLERANCE} nearer)",
                                "held": "in the gap, the generated speed did not move (that much) toward a "
                                        "training range",
                                "lost": f"ball not found wholly in view in {MIN_FRAMES} generated frames"},
            "videos": videos}


def gaps_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["analysis"]["train_split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "train_split": a["train_split"],
                     "train_ranges": a["train_ranges"], "n": a["videos_analysed"], "in_gap": a["in_gap"],
                     **{v: a["verdicts"][v] for v in GAP_VERDICTS},
                     "velocity_error_in_gap": a["velocity_error_in_gap"],
                     "velocity_error_in_range": a["velocity_error_in_range"],
                     "points": [[v["conditioned_velocity"], v["velocity"]] for v in a["videos"]]})
    return {"rows": rows}


def render_gaps(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        ranges = " U ".join(f"[{a:g}, {b:g}]" for a, b in row["train_ranges"])
        lines.append(f"{row['model']} trained on {row['train_split']} (v in {ranges}): {row['n']} videos, "
                     f"{row['in_gap']} in the gap")
        for v in GAP_VERDICTS:
            lines.append(f"  {v:<8} {pct_text(row[v])}")
        lines.append(f"  mean |v_gen - v| in the gap {row['velocity_error_in_gap']:.3f}, in range "
                     f"{row['velocity_error_in_range']:.3f} world units / s")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
def _gaps_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "trained on", "snapped (in the gap)", "held", "lost", "|v_gen - v| in gap", "in range", "in gap / n"],
        summaries,
        lambda model, row: [esc(model), esc(row["train_split"]), *(esc(pct(row[v])) for v in ("snapped", "held", "lost")),
                            esc(num(row["velocity_error_in_gap"])), esc(num(row["velocity_error_in_range"])),
                            f"{row['in_gap']} / {row['n']}"],
        lambda model, row: f'{scatter(row["points"], lo=0.0, hi=4.5, bands=row["train_ranges"])}<figcaption>'
                           f'{esc(model)}, {esc(row["train_split"])}: generated vs conditioned velocity '
                           f'(shaded: training speeds)</figcaption>')


register_probe(Probe("gaps", "interpolation gaps (section 5.1): does an unseen speed snap to a seen one",
                     _gaps_analyse, gaps_summary, render_gaps,
                     section=_gaps_section,
                     help='interpolation gaps: does an unseen speed snap to a seen one; section 5.1'))

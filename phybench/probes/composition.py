"""Spatial and temporal composition probe (paper Fig. 11 and Fig. 15): two learnt events at once or in turn.

A static black wall stands at the right edge (x in [9.5, 10], full height).  Two dynamic
bodies of equal mass (equal area, density 1): a red ball of radius r in [0.6, 0.9] and a
blue square of half-side r sqrt(pi) / 2.  No gravity, no friction, elastic contacts
(Box2D, `phybench.world.simulate`).  Speeds v in [1, 2] world units / s, to the right.

Training (``train``, states only) alternates two disjoint events, the bodies in separate
horizontal lanes (which body is above is drawn):

    square-moves   the blue square moves at constant speed (never reaching the wall),
                   the red ball rests;
    ball-bounces   the red ball moves, bounces off the wall (0.5-2.3 s) and comes back,
                   the square rests.

Evaluation, both bodies moving:

    eval-spatial   both events at once, in separate lanes (Fig. 11 left);
    eval-temporal  one event after the other, in one lane: the square moves and strikes
                   the resting ball (0.4-0.8 s); equal masses exchange velocities, so the
                   square stops and the ball moves on, then bounces off the wall (Fig. 11
                   right, Fig. 15).  The ball never meets the square again in the clip.

The paper's temporal case joins "two balls collide" with "a ball bounces off the wall";
ours keeps the two training events of the spatial case and joins them through one
contact, so that each half of a temporal video looks like one training event.  The
analysis (below, probe ``composition``) reads both bodies by colour
and checks each sub-event against the simulated trajectory, and flags a ball that
vanishes after its first contact (Fig. 15's failure).
"""
from __future__ import annotations

import math
from typing import Any


import numpy as np

from ..world.scene import BLACK, BLUE, RED, Body, Disc, Rect, Scene
from ..tasks.family import Placement, TaskFamily, register_family, register_task
from ..tasks.spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec
from .page import esc, pct, rows_section
from .reading import (
    INK_FLOOR,
    pct_text,
    share,
    split_videos,
)
from .registry import Probe, register_probe

RADIUS = (0.6, 0.9)  # world units, the ball; the square's half-side is r sqrt(pi) / 2 (equal area)
VELOCITY = (1.0, 2.0)  # world units / s
WALL_X = 9.5  # world units: the wall's face; it spans x in [9.5, 10], y in [0, 10]
MARGIN = 0.1  # world units between a body and the border / the wall / the other lane
BOUNCE = (0.5, 2.3)  # seconds: when a bouncing ball meets the wall (>= 8 frames after it)
CONTACT = (0.4, 0.8)  # seconds: temporal, when the square strikes the ball
SECOND_CONTACT_AFTER = 3.3  # seconds: temporal, the returning ball meets the square after the clip
TRAIN_SIZE = 40_000  # states only; the paper gives no size
EVAL_SIZE = 1000
EVENTS = {"train": ("square-moves", "ball-bounces"), "eval-spatial": ("spatial",), "eval-temporal": ("temporal",)}
WALL, SQUARE, BALL = 0, 1, 2  # body order in every scene (drawing order)


def half_side(r: float) -> float:
    return r * math.sqrt(math.pi) / 2


def _lerp(interval: tuple[float, float], u: float) -> float:
    return float(interval[0] + (interval[1] - interval[0]) * u)


@register_family
class CompositionFamily(TaskFamily):
    """A wall, a blue square and a red ball: each training video is one event, evaluation joins two."""

    name = "probe-composition"
    probe = "composition"
    metrics = ("velocity_error", "position_error", "trajectory_error", "ssim", "psnr", "lpips", "fvd")
    plot_dof = None
    object_reader = "centroids"
    stores_bodies = True
    # when the ball first touches anything (the square in a temporal video, else the wall)
    # and when it meets the wall; NaN when it does not in the clip
    extra_columns = ("ball_contact", "bounce_time")
    board_layout = "splits"
    frames_in_view_doc = "every frame has every body fully in view"

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "composition":
            return super().draw(spec, decl, index, u)
        events = decl.option("events")
        event = events[index % len(events)]
        return event, {"radius": _lerp(RADIUS, u[1]), "velocity": _lerp(VELOCITY, u[2]), "event": event}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        from ..world.simulate import simulate  # Box2D: generation only

        r, v, event = params["radius"], params["velocity"], params["event"]
        a, L, T = half_side(r), spec.world_size, spec.frames
        duration = spec.frame_interval * (T - 1)
        square_moves = event in ("square-moves", "spatial", "temporal")
        ball_moves = event in ("ball-bounces", "spatial")
        if event == "temporal":
            y = _lerp((r + MARGIN, L - r - MARGIN), u[0])
            y_square = y_ball = y
            t1 = _lerp(CONTACT, u[1])
            tau = _lerp(((SECOND_CONTACT_AFTER - t1) / 2, BOUNCE[1] - t1), u[2])  # ball -> wall after the hit
            x_ball = WALL_X - r - v * tau
            x_square = x_ball - r - a - v * t1
        else:
            upper = u[0] < 0.5  # the square's lane is the upper one
            lanes = ((MARGIN + L / 2 + a, L - a - MARGIN), (a + MARGIN, L / 2 - a - MARGIN))
            y_square = _lerp(lanes[0] if upper else lanes[1], u[1])
            ball_lanes = ((r + MARGIN, L / 2 - r - MARGIN), (L / 2 + r + MARGIN, L - r - MARGIN))
            y_ball = _lerp(ball_lanes[0] if upper else ball_lanes[1], u[2])
            if square_moves:  # never reaching the wall
                x_square = _lerp((a + MARGIN, WALL_X - MARGIN - a - v * duration), u[3])
            else:
                x_square = _lerp((a + MARGIN, WALL_X - MARGIN - a), u[3])
            if ball_moves:
                x_ball = WALL_X - r - v * _lerp(BOUNCE, u[4])
            else:
                x_ball = _lerp((r + MARGIN, WALL_X - MARGIN - r), u[4])
        bodies = (Body(Rect(L - WALL_X, L), BLACK, dynamic=False, name="wall"),
                  Body(Rect(2 * a, 2 * a), BLUE, name="blue square", attrs=(("shape", "square"),)),
                  Body(Disc(r), RED, name="red ball", attrs=(("shape", "disc"),)))
        poses = np.array([[[(L + WALL_X) / 2, L / 2, 0.0], [x_square, y_square, 0.0], [x_ball, y_ball, 0.0]]])
        velocities = np.array([[[0.0, 0.0], [v if square_moves else 0.0, 0.0], [v if ball_moves else 0.0, 0.0]]])
        initial = Scene(bodies, poses, L, velocities)
        trajectory, touch = simulate(initial, spec.simulator, T, spec.frame_interval, record_contacts=True)
        ball_square, ball_wall, square_wall = touch[BALL, SQUARE], touch[BALL, WALL], touch[SQUARE, WALL]
        expected = {  # the event each scene must be (the placement's guarantee; tests check it too)
            "square-moves": np.isinf(ball_square) and np.isinf(ball_wall) and np.isinf(square_wall),
            "ball-bounces": np.isinf(ball_square) and np.isfinite(ball_wall) and np.isinf(square_wall),
            "spatial": np.isinf(ball_square) and np.isfinite(ball_wall) and np.isinf(square_wall),
            "temporal": np.isfinite(ball_square) and ball_square < ball_wall < np.inf and np.isinf(square_wall),
        }[event]
        if not expected:  # pragma: no cover - the placement rule makes it so
            raise RuntimeError(f"{event} scene is not its event: contacts {touch.tolist()}")
        first = min(ball_square, ball_wall)
        extra = {"ball_contact": float(first) if np.isfinite(first) else float("nan"),
                 "bounce_time": float(ball_wall) if np.isfinite(ball_wall) else float("nan")}
        return Placement(initial, T, extra=extra, trajectory=trajectory)

    def describe(self, spec: TaskSpec) -> list[str]:
        return [f"{split}: {', '.join(events)}" for split, events in EVENTS.items()]


COMPOSITION = register_task(TaskSpec(
    name="composition",
    version=1,
    scenario="probe-composition",
    description=("Spatial and temporal composition (Fig. 11, 15): a static wall, a blue square and a red ball. "
                 "Training: the square moves while the ball rests, or the ball bounces off the wall while the "
                 "square rests. Evaluation: both at once (eval-spatial) or one after the other through a "
                 "square-ball contact (eval-temporal)."),
    dofs=(Dof("radius", "world units", RADIUS, (), "radius of the ball (the square has its area)"),
          Dof("velocity", "world units / s", VELOCITY, (), "speed of each moving body, to the right")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=10, time_scale=1000.0, length_scale=10.0, gravity=0.0),
    base_seed=2024_11_18,
    declared_splits=tuple(SplitDecl(name, "train" if name == "train" else "eval",
                                    TRAIN_SIZE if name == "train" else EVAL_SIZE, "composition",
                                    (("events", events),), " / ".join(events))
                          for name, events in EVENTS.items()),
    categorical=(CategoricalDof("event", ("square-moves", "ball-bounces", "spatial", "temporal")),),
    notes=("The paper's temporal case joins two-ball collisions with a wall bounce; ours joins the spatial case's "
           "two events through one square-ball contact (equal masses: the square stops, the ball moves on).",
           "Sizes, speeds, the wall's place and the training size are ours; the paper gives none.",),
))


# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ spatial / temporal composition
COMPOSITION_VERDICTS = ("both", "square-only", "ball-only", "neither", "vanished")
# world units (3 px at 128; ground truth reads within 0.004): a sub-event is correct when the
# body's mean position error is at most this
POSITION_TOLERANCE = 0.25
PRESENT_SHARE = 0.9  # ... and the body is found in at least this share of the generated frames
PRESENT_AREA = 0.5  # a body is found in a frame when its colour covers >= this share of its true area


def colour_coverage(frame: np.ndarray) -> dict[str, np.ndarray]:
    """Per pixel coverage of the pure red and pure blue bodies on white (black, the wall, is neither).

    A pixel covered c by red (and nothing else) is (255, 255 (1 - c), 255 (1 - c)): red
    coverage is (R - max(G, B)) / 255, blue likewise; grey and black give 0."""
    f = frame.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    out = {"red": np.clip((r - np.maximum(g, b)) / 255.0, 0.0, 1.0),
           "blue": np.clip((b - np.maximum(r, g)) / 255.0, 0.0, 1.0)}
    for c in out.values():
        c[c < INK_FLOOR] = 0.0
    return out


def read_tracks(video: np.ndarray, world_size: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"red": (areas (T,), centres (T, 2)), "blue": ...}: each colour's area (world units^2) and
    coverage centroid (world units, y up) per frame; centres NaN where the colour is absent."""
    video = np.asarray(video)
    T, H, W, _ = video.shape
    s = world_size / W
    xs = (np.arange(W) + 0.5) * s
    ys = world_size - (np.arange(H) + 0.5) * s  # image row 0 is the top of the world
    out = {}
    for name in ("red", "blue"):
        areas, centres = np.zeros(T), np.full((T, 2), np.nan)
        for k in range(T):
            c = colour_coverage(video[k])[name]
            total = float(c.sum())
            areas[k] = total * s * s
            if total > 0:
                centres[k] = (float((c.sum(axis=0) * xs).sum() / total), float((c.sum(axis=1) * ys).sum() / total))
        out[name] = (areas, centres)
    return out


def _sub_event(areas: np.ndarray, centres: np.ndarray, truth: np.ndarray, area: float,
               frames: np.ndarray) -> tuple[bool, float, float]:
    """(correct, share of frames found, mean position error) of one body over `frames`."""
    found = areas[frames] >= PRESENT_AREA * area
    if not found.any():
        return False, 0.0, float("nan")
    err = float(np.linalg.norm(centres[frames][found] - truth[frames][found], axis=-1).mean())
    present = float(found.mean())
    return present >= PRESENT_SHARE and err <= POSITION_TOLERANCE, present, err


def composition_verdict(row: dict[str, Any], video: np.ndarray, condition_frames: int, world_size: float,
                        frame_interval: float) -> dict[str, Any]:
    """Read the square and the ball of one video and judge each sub-event against the row's trajectory.

    square: found in >= 90% of the generated frames, mean position error <= POSITION_TOLERANCE (0.25 world units);
    ball: the same, and after the ground truth's wall bounce it moves away from the wall
    (the slope of its x over the frames after the bounce has the truth's sign);
    vanished: after the ball's first contact it is missing in at least half of the
    generated frames (Fig. 15's failure)."""
    pos = np.asarray(row["positions"], dtype=np.float64)  # (T, 3, 2): wall, square, ball
    T = pos.shape[0]
    tracks = read_tracks(video, world_size)
    r = float(row["radius"])
    area = math.pi * r * r  # the square has the ball's area
    gen = np.arange(condition_frames, T)
    t = np.arange(T) * frame_interval
    square_ok, square_found, square_err = _sub_event(*tracks["blue"], pos[:, 1], area, gen)
    ball_ok, ball_found, ball_err = _sub_event(*tracks["red"], pos[:, 2], area, gen)
    bounce = row.get("bounce_time")
    away = None
    if bounce is not None and math.isfinite(float(bounce)):
        after = gen[t[gen] > float(bounce) + 1e-9]
        areas, centres = tracks["red"]
        seen = after[areas[after] >= PRESENT_AREA * area]
        if len(seen) >= 2:
            slope = float(np.polyfit(t[seen], centres[seen, 0], 1)[0])
            truth = float(np.polyfit(t[after], pos[after, 2, 0], 1)[0])
            away = slope * truth > 0
        else:
            away = False
        ball_ok = ball_ok and away
    contact = row.get("ball_contact")
    vanished = False
    if contact is not None and math.isfinite(float(contact)):
        after = gen[t[gen] > float(contact) + 1e-9]
        if len(after):
            vanished = bool((tracks["red"][0][after] < PRESENT_AREA * area).mean() >= 0.5)
    v = ("vanished" if vanished else "both" if square_ok and ball_ok else "square-only" if square_ok
         else "ball-only" if ball_ok else "neither")
    return {"square_ok": bool(square_ok), "ball_ok": bool(ball_ok), "vanished": vanished,
            "square_found": square_found, "ball_found": ball_found, "square_error": square_err,
            "ball_error": ball_err, "ball_moves_away_after_bounce": away, "verdict": v}


def _composition_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    videos = []
    columns = ["sample_id", "level", "radius", "velocity", "ball_contact", "bounce_time", "positions"]
    for row, video in split_videos(reader, sub, columns, "composition", progress):
        sample_id = row["sample_id"]
        got = composition_verdict(row, video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "event": row["level"], **got})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in COMPOSITION_VERDICTS}
    return {"videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in COMPOSITION_VERDICTS},
            "sub_events": {"square": share(sum(x["square_ok"] for x in videos), n),
                           "ball": share(sum(x["ball_ok"] for x in videos), n),
                           "ball_vanished": share(sum(x["vanished"] for x in videos), n)},
            "verdict_meaning": {
                "both": "the square's motion and the ball's bounce are both correct",
                "square-only": "the square's motion is correct, the ball's is not",
                "ball-only": "the ball's bounce is correct, the square's motion is not",
                "neither": "neither sub-event is correct",
                "vanished": "the ball is missing in at least half of the generated frames after its first contact"},
            "tolerance": {"position": POSITION_TOLERANCE, "found_share": PRESENT_SHARE, "found_area": PRESENT_AREA},
            "videos": videos}


def composition_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in COMPOSITION_VERDICTS}, **a["sub_events"]})
    return {"rows": rows}


def render_composition(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']}, {row['n']} videos")
        lines.append(f"  square's motion correct  {pct_text(row['square'])}")
        lines.append(f"  ball's bounce correct    {pct_text(row['ball'])}")
        lines.append(f"  ball vanished            {pct_text(row['ball_vanished'])}")
        for v in COMPOSITION_VERDICTS:
            lines.append(f"  {v:<12} {pct_text(row[v])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
COMPOSITION_BARS = (("square", "square's motion correct", "#1f77b4"), ("ball", "ball's bounce correct", "#2ca02c"),
                    ("ball_vanished", "ball vanished after contact", "#d62728"))


def _composition_bars(row: dict[str, Any], width: int = 400, left: int = 200) -> str:
    parts = []
    for i, (key, label, colour) in enumerate(COMPOSITION_BARS):
        share = float(row[key]["share"] or 0.0)
        y = 4 + 18 * i
        parts.append(f'<rect x="{left}" y="{y}" width="{width - left}" height="12" fill="#eee"/>')
        parts.append(f'<rect class="probe-share" x="{left}" y="{y}" width="{(width - left) * share:.1f}" height="12" '
                     f'fill="{colour}"><title>{esc(label)} {100 * share:.1f}%</title></rect>')
        parts.append(f'<text x="{left - 4}" y="{y + 10}" font-size="10" text-anchor="end">{esc(label)} '
                     f'{100 * share:.0f}%</text>')
    height = 4 + 18 * len(COMPOSITION_BARS)
    return f'<svg class="probe-bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">' \
           f'{"".join(parts)}</svg>'


def _composition_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "split", "both correct", "square correct", "bounce correct", "ball vanished", "n"], summaries,
        lambda model, row: [esc(model), f"{esc(row['task'])}/{esc(row['split'])}",
                            *(esc(pct(row[k])) for k in ("both", "square", "ball", "ball_vanished")), str(row["n"])],
        lambda model, row: f'{_composition_bars(row)}<figcaption>{esc(model)}, {esc(row["split"])}: share of videos '
                           f'per sub-event</figcaption>')


register_probe(Probe("composition", "spatial and temporal composition (Fig. 11, 15): two training events at once "
                                    "or in turn; does each sub-event stay correct, does the ball vanish",
                     _composition_analyse, composition_summary, render_composition,
                     section=_composition_section,
                     help="a square's motion and a ball's wall bounce, at once or in turn; Fig. 11, 15"))

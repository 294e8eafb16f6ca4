"""PHYRE-style combinatorial scenes: a red ball plus 4 of 8 object types (70 templates).

The paper's section 4 tests *combinatorial* generalisation: every object type is seen in
training, never every combination.  A template is a set of 4 object types (C(8, 4) = 70);
a scene of a template draws each type's sizes, positions and angles, adds the red ball,
and lets everything fall under gravity (objects start at rest; 1 condition frame).

Units.  PHYRE's scene is 256 px at 6 px per metre (42.67 m a side) with gravity
9.8 m/s^2, friction 0.5, restitution 0.2, density 0.25 and angular damping 0.01; our
world is 10 units a side, so Box2D runs at `length_scale` = 256 / 6 / 10 (one Box2D
unit is one PHYRE metre) and gravity is 9.8 m/s^2 in PHYRE metres, 2.297 units/s^2 in
ours.  Box2D steps at PHYRE's 1/60 s, 6 steps a frame, 0.1 s a frame.  A floor and two
side walls sit just outside the view (PHYRE's scene boundary), never drawn.

The eight object types.  The paper lists "two dynamic gray balls, a group of fixed black
balls, a fixed black bar, a dynamic bar, a group of dynamic standing bars, a dynamic jar,
and a dynamic standing stick" as eight types; we read the two grey balls as two types
(a small and a large one) so that there are eight, and say so in the task's notes.

Placement rule (`CombinatorialFamily.place`), per attempt: draw every object of the
template and the red ball from the attempt's own random stream; reject the attempt if
any body is not wholly in view (exact bounds, any angle) or two bodies touch in the
initial scene, or if the scene is not an *event*: no two bodies (walls aside) touch
before the last frame.  Box2D says when bodies touch, after every step.  The attempt
count is stored (``redraws``) so the rejected fraction is measured on the data itself.

Splits.  The 70 templates are shuffled with a fixed seed.  The 6-template training set
is the first set of 6 templates (in shuffled order, found by exhaustive search) that
covers all 28 pairs of object types; the 10 out-of-template templates are the last 10 of
the remaining shuffled order, and the training sets nest: 6 in 30 in 60.  Sample i of a
split belongs to template ``templates[i % n]``, draw ``i // n``; a draw's randomness
comes from (template, draw, stream) with stream "train" for every training set and
"eval" for the evaluation splits, so training sets share scenes where they share
templates, and an evaluation scene is never a training scene.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from ..world.scene import PHYRE_BLACK, PHYRE_GREY, PHYRE_RED, Body, Disc, Jar, Rect, Scene, body_bounds
from .family import IMAGE_METRICS, Placement, TaskFamily, register_family, register_task
from .spec import CategoricalDof, SimulatorSettings, SplitDecl, TaskSpec

_WORDS = 64  # random words per placement attempt
MAX_ATTEMPTS = 200  # placement attempts before a sample is declared impossible
_IN_VIEW_TOLERANCE = 0.02  # world units (half a pixel at 256 px): resting bodies sink ~0.001
PER_TEMPLATE_TRAIN = 100_000  # the paper's 100K videos per template


class _Uniforms:
    """Floats in [0, 1) of one placement attempt, handed out in order."""

    def __init__(self, words: np.ndarray) -> None:
        self._u = (words >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
        self._next = 0

    def __call__(self, lo: float = 0.0, hi: float = 1.0) -> float:
        value = float(self._u[self._next])
        self._next += 1
        return lo + (hi - lo) * value


Placed = list[tuple[Body, tuple[float, float, float]]]  # bodies and their (x, y, angle)
_GREY = PHYRE_GREY


def _ball(u: _Uniforms, L: float, r_range: tuple[float, float], y_range: tuple[float, float],
          colour: tuple[int, int, int], dynamic: bool, name: str, kind: str) -> tuple[Body, tuple[float, float, float]]:
    r = u(*r_range)
    body = Body(Disc(r), colour, dynamic=dynamic, name=name, attrs=(("type", kind),), fixed_rotation=False)
    return body, (u(r, L - r), u(*y_range), 0.0)


def _bar(u: _Uniforms, L: float, length: tuple[float, float], thickness: float, angle: float,
         y_range: tuple[float, float], colour: tuple[int, int, int], dynamic: bool, name: str, kind: str):
    w, a = u(*length), u(-angle, angle)
    half = 0.5 * (abs(math.cos(a)) * w + abs(math.sin(a)) * thickness)
    body = Body(Rect(w, thickness), colour, dynamic=dynamic, name=name, attrs=(("type", kind),), fixed_rotation=False)
    return body, (u(half, L - half), u(*y_range), a)


def _standing(u: _Uniforms, L: float, width: float, height: tuple[float, float], name: str, kind: str):
    h = u(*height)
    body = Body(Rect(width, h), _GREY, name=name, attrs=(("type", kind),), fixed_rotation=False)
    return body, (u(width / 2, L - width / 2), h / 2, 0.0)  # on the floor


def _grey_ball_small(u: _Uniforms, L: float) -> Placed:
    return [_ball(u, L, (0.3, 0.5), (3.5, 9.0), _GREY, True, "small grey ball", "grey-ball-small")]


def _grey_ball_large(u: _Uniforms, L: float) -> Placed:
    return [_ball(u, L, (0.55, 0.8), (3.5, 8.8), _GREY, True, "large grey ball", "grey-ball-large")]


def _static_balls(u: _Uniforms, L: float) -> Placed:
    n = 2 + int(u() < 0.5)
    return [_ball(u, L, (0.25, 0.45), (1.5, 6.0), PHYRE_BLACK, False, "black ball", "static-balls") for _ in range(n)]


def _static_bar(u: _Uniforms, L: float) -> Placed:
    return [_bar(u, L, (2.5, 4.5), 0.3, 0.5, (1.5, 6.0), PHYRE_BLACK, False, "black bar", "static-bar")]


def _dynamic_bar(u: _Uniforms, L: float) -> Placed:
    return [_bar(u, L, (2.0, 3.5), 0.3, 0.3, (3.0, 7.5), _GREY, True, "grey bar", "dynamic-bar")]


def _standing_bars(u: _Uniforms, L: float) -> Placed:
    n = 2 + int(u() < 0.5)
    return [_standing(u, L, 0.3, (0.8, 1.6), "standing bar", "standing-bars") for _ in range(n)]


def _jar(u: _Uniforms, L: float) -> Placed:
    w, h = u(1.4, 2.2), u(1.0, 1.6)
    body = Body(Jar(w, h, 0.15), _GREY, name="jar", attrs=(("type", "jar"),), fixed_rotation=False)
    return [(body, (u(w / 2, L - w / 2), h / 2, 0.0))]


def _stick(u: _Uniforms, L: float) -> Placed:
    return [_standing(u, L, 0.2, (2.5, 4.0), "standing stick", "stick")]


@dataclass(frozen=True)
class ObjectType:
    """One of the eight object types a template picks 4 of."""

    key: str  # stable id, stored in each body's attrs as ("type", key)
    label: str
    build: Callable[[_Uniforms, float], Placed]


OBJECT_TYPES: tuple[ObjectType, ...] = (
    ObjectType("grey-ball-small", "dynamic grey ball (small, r 0.3-0.5)", _grey_ball_small),
    ObjectType("grey-ball-large", "dynamic grey ball (large, r 0.55-0.8)", _grey_ball_large),
    ObjectType("static-balls", "group of 2-3 static black balls", _static_balls),
    ObjectType("static-bar", "static black bar", _static_bar),
    ObjectType("dynamic-bar", "dynamic grey bar", _dynamic_bar),
    ObjectType("standing-bars", "group of 2-3 dynamic standing bars", _standing_bars),
    ObjectType("jar", "dynamic jar", _jar),
    ObjectType("stick", "dynamic standing stick", _stick),
)

TEMPLATES: tuple[tuple[int, ...], ...] = tuple(itertools.combinations(range(len(OBJECT_TYPES)), 4))
TEMPLATE_IDS: tuple[str, ...] = tuple(f"t{i:02d}" for i in range(len(TEMPLATES)))
ALL_PAIRS: frozenset[tuple[int, int]] = frozenset(itertools.combinations(range(len(OBJECT_TYPES)), 2))


def template_types(template_id: str) -> tuple[ObjectType, ...]:
    return tuple(OBJECT_TYPES[k] for k in TEMPLATES[TEMPLATE_IDS.index(template_id)])


def pairs_of(template_ids: tuple[str, ...] | list[str]) -> frozenset[tuple[int, int]]:
    """The pairs of object types that appear together in some template of the list."""
    return frozenset(p for t in template_ids for p in itertools.combinations(TEMPLATES[TEMPLATE_IDS.index(t)], 2))


def _key(text: str) -> int:
    return zlib.crc32(text.encode())


def _minimal_cover(order: tuple[int, ...], size: int) -> tuple[int, ...] | None:
    """The first `size` templates, in `order`'s priority, covering all type pairs (backtracking)."""
    rank = {t: i for i, t in enumerate(order)}

    def search(chosen: list[int], covered: frozenset) -> list[int] | None:
        missing = sorted(ALL_PAIRS - covered)
        if not missing:
            return chosen
        if len(chosen) == size:
            return None
        a, b = missing[0]  # every cover holds a template with this pair: branch on those
        for t in sorted((t for t in order if a in TEMPLATES[t] and b in TEMPLATES[t] and t not in chosen), key=rank.__getitem__):
            found = search(chosen + [t], covered | frozenset(itertools.combinations(TEMPLATES[t], 2)))
            if found is not None:
                return found
        return None

    found = search([], frozenset())
    return None if found is None else tuple(sorted(found, key=rank.__getitem__))


@lru_cache(maxsize=8)
def template_sets(base_seed: int, cover_size: int = 6, train_sizes: tuple[int, ...] = (6, 30, 60)) -> dict[str, tuple[str, ...]]:
    """Template ids of each training set (nested, cover first) and the out-of-template set."""
    seq = np.random.SeedSequence(entropy=base_seed, spawn_key=(_key("combinatorial-templates"),))
    order = tuple(int(i) for i in np.argsort(seq.generate_state(len(TEMPLATES), dtype=np.uint64), kind="stable"))
    cover = _minimal_cover(order, cover_size)
    if cover is None:  # pragma: no cover - 6-template covers exist (the covering number C(8, 4, 2) is 6)
        raise RuntimeError(f"no {cover_size}-template cover of all pairs")
    rest = tuple(t for t in order if t not in cover)
    held_out = rest[len(rest) - (len(TEMPLATES) - max(train_sizes)):]
    train_order = cover + tuple(t for t in rest if t not in held_out)
    sets = {f"train-{n}t": tuple(TEMPLATE_IDS[t] for t in train_order[:n]) for n in train_sizes}
    sets["out-of-template"] = tuple(TEMPLATE_IDS[t] for t in held_out)
    return sets


def split_templates(spec: TaskSpec, decl: SplitDecl) -> tuple[str, ...]:
    return template_sets(spec.base_seed)[decl.option("templates")]


def attempt_uniforms(spec: TaskSpec, stream: str, template_id: str, draw: int, attempt: int) -> _Uniforms:
    seq = np.random.SeedSequence(
        entropy=spec.base_seed,
        spawn_key=(_key(spec.name), spec.version, _key(stream), TEMPLATE_IDS.index(template_id), draw, attempt),
    )
    return _Uniforms(seq.generate_state(_WORDS, dtype=np.uint64))


def red_ball(u: _Uniforms, L: float) -> tuple[Body, tuple[float, float, float]]:
    return _ball(u, L, (0.35, 0.6), (6.8, 9.3), PHYRE_RED, True, "red ball", "red-ball")


def draw_scene(spec: TaskSpec, template_id: str, u: _Uniforms) -> Scene:
    """One attempt's initial scene: the red ball, then the template's objects (drawn on top)."""
    L = spec.world_size
    placed = [red_ball(u, L)]
    for kind in template_types(template_id):
        placed.extend(kind.build(u, L))
    bodies = tuple(b for b, _ in placed)
    poses = np.array([[pose for _, pose in placed]], dtype=np.float64)  # (1, B, 3)
    return Scene(bodies, poses, L, np.zeros((1, len(bodies), 2)))


def in_view(bounds: np.ndarray, L: float, tolerance: float = _IN_VIEW_TOLERANCE) -> np.ndarray:
    """bool (...): boxes (..., 4) wholly inside the view, give or take `tolerance`."""
    return ((bounds[..., 0] >= -tolerance) & (bounds[..., 1] >= -tolerance)
            & (bounds[..., 2] <= L + tolerance) & (bounds[..., 3] <= L + tolerance))


def touching_at_start(spec: TaskSpec, initial: Scene) -> bool:
    """Do any two bodies overlap or touch in the initial scene (Box2D's contact test)?

    Box2D makes no contacts between two static bodies, so the check runs on a copy with
    every body dynamic; no step is taken."""
    from ..world.simulate import simulate

    loose = Scene(tuple(dataclasses.replace(b, dynamic=True) for b in initial.bodies), initial.poses, initial.world_size)
    result = simulate(loose, spec.simulator, 1, spec.frame_interval, record_contacts=True)
    assert isinstance(result, tuple)  # record_contacts: (scene, first_touch)
    _, touching = result
    return bool((touching == 0.0).any())


@register_family
class CombinatorialFamily(TaskFamily):
    """A red ball and 4 of 8 PHYRE object types fall, collide, roll and topple."""

    name = "combinatorial"
    metrics = IMAGE_METRICS + ("abnormal", "body_position_error", "body_angle_error", "law_error")
    law_fit = "tracked"  # phybench.scoring.learned.bodies: free-flight gravity and angular velocity of each body
    law_headline = "gravity"
    plot_dof = None
    object_reader = "none"  # grey and black bodies share colours: image metrics only
    extra_columns = ("draw", "redraws")
    stores_bodies = True
    board_layout = "splits"  # in-template / out-of-template, as the paper's Table 2
    paper_quote = "Table 2"  # its abnormal shares, quoted beside the board's abnormal column
    lite_size = 64  # 256 px, the set metric costs ~3 s a video on 2 cores: 64 per split fits a CPU CI job
    stores_training_states = False  # 6M scenes: rows keep parameters, the loader simulates and renders
    frames_in_view_doc = ("at least this many frames have every body in view (here: exactly this many, with half "
                          "a pixel of tolerance at 256 px for bodies resting on the floor)")
    in_view_tolerance = _IN_VIEW_TOLERANCE  # the half pixel its frames_in_view counts with

    def draw(self, spec: TaskSpec, decl: SplitDecl, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "templates":
            return super().draw(spec, decl, index, u)
        templates = split_templates(spec, decl)
        template = templates[index % len(templates)]
        return template, {"template": template, "draw": index // len(templates), "stream": decl.role}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        from ..world.simulate import simulate  # the event rule needs Box2D's contacts

        template, draw, stream = params["template"], int(params["draw"]), params["stream"]
        L, T, dt = spec.world_size, spec.frames, spec.frame_interval
        for attempt in range(MAX_ATTEMPTS):
            initial = draw_scene(spec, template, attempt_uniforms(spec, stream, template, draw, attempt))
            if not in_view(body_bounds(initial)[0], L, 0.0).all():
                continue
            if touching_at_start(spec, initial):
                continue  # bodies overlap or touch in the initial scene
            result = simulate(initial, spec.simulator, T, dt, record_contacts=True)
            assert isinstance(result, tuple)  # record_contacts: (scene, first_touch)
            scene, first_touch = result
            first = float(first_touch.min())
            if not first < dt * (T - 1):
                continue  # not an event: nothing touches before the last frame
            frames_in_view = int(in_view(body_bounds(scene), L).all(axis=1).sum())
            return Placement(initial, frames_in_view, first, {"draw": float(draw), "redraws": float(attempt)}, scene)
        raise RuntimeError(f"{spec.name}: no valid scene for template {template} draw {draw} in {MAX_ATTEMPTS} attempts")

    def contact_time(self, row: Mapping[str, Any]) -> float:
        return float("nan")  # every generated frame is scored

    def describe(self, spec: TaskSpec) -> list[str]:
        sets = template_sets(spec.base_seed)
        lines = ["object types:"]
        lines += [f"  {i}  {t.key:<16} {t.label}" for i, t in enumerate(OBJECT_TYPES)]
        lines.append("\ntemplates (red ball + 4 types):")
        for name, ids in sets.items():
            lines.append(f"  {name:<16} {len(ids):>2}: {' '.join(ids)}")
        cover = sets["train-6t"]
        covered = pairs_of(cover)
        lines.append(f"\npair covering: train-6t covers {len(covered)} of {len(ALL_PAIRS)} pairs of object types "
                     f"({'all' if covered == ALL_PAIRS else 'NOT all'}); no 5 templates can: each type "
                     f"must meet 7 others, 3 per template holding it, so it is in >= 3 templates, and "
                     f"8 types x 3 / 4 types per template = 6 (exhaustive search agrees)")
        for t in cover:
            lines.append(f"  {t}  {' + '.join(k.key for k in template_types(t))}")
        lines.append("\nsamples per template:")
        for decl in spec.splits:
            ids = split_templates(spec, decl)
            lines.append(f"  {decl.name:<21} {decl.size // len(ids):>7,} x {len(ids)} templates")
        return lines


def _spec() -> TaskSpec:
    sets = template_sets(0)
    train = tuple(
        SplitDecl(name, "train", len(sets[name]) * PER_TEMPLATE_TRAIN, "templates", (("templates", name),),
                  f"{len(sets[name])} templates x {PER_TEMPLATE_TRAIN:,} scenes (the paper's sizes)")
        for name in ("train-6t", "train-30t", "train-60t")
    )
    return TaskSpec(
        name="combinatorial",
        version=1,
        scenario="combinatorial",
        description=(
            "PHYRE-style scenes: a red ball and 4 of 8 object types (grey balls, static black balls, static "
            "and dynamic bars, standing bars, a jar, a standing stick) fall and collide. 70 templates; "
            "60 train (nested sets of 6 / 30 / 60), 10 held out (out-of-template)."
        ),
        dofs=(),
        ood_levels=(),
        training_sets=(),
        id_eval_size=0,
        simulator=SimulatorSettings(
            steps_per_frame=6, time_scale=1.0, length_scale=256 / 6 / 10, gravity=9.8 * 6 * 10 / 256,
            density=0.25, restitution=0.2, friction=0.5, velocity_iterations=10, position_iterations=10,
            angular_damping=0.01, walls=True,
        ),
        frames=32,
        frame_interval=0.1,
        resolution=256,
        resolutions=(128, 256),
        condition_frames=1,
        min_frames_in_view=32,
        declared_splits=train + (
            SplitDecl("in-template-eval", "eval", 20 * len(sets["train-60t"]), "templates",
                      (("templates", "train-60t"),), "20 held-out scenes of each of the 60 training templates"),
            SplitDecl("out-of-template-eval", "eval", 100 * len(sets["out-of-template"]), "templates",
                      (("templates", "out-of-template"),), "100 scenes of each of the 10 held-out templates"),
        ),
        categorical=(CategoricalDof("template", TEMPLATE_IDS, "which 4 of the 8 object types (t00-t69)"),),
        notes=(
            "The paper lists the eight object types as 'two dynamic gray balls, a group of fixed black balls, a "
            "fixed black bar, a dynamic bar, a group of dynamic standing bars, a dynamic jar, and a dynamic "
            "standing stick'; we read the two grey balls as two types (small and large).",
            "PHYRE units: one Box2D unit is one PHYRE metre (256 px scene at 6 px/m = our 10 units); gravity "
            "9.8 m/s^2, 1/60 s steps, 0.1 s per frame.",
            "Training splits store parameters only (template, draw, redraws, contact time); a loader "
            "simulates and renders each scene, bit-identical to an evaluation video.",
        ),
    )


COMBINATORIAL = register_task(_spec())

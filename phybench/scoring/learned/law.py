"""Law identification: which law did the model learn?  (issue 24, item 3)

The velocity error says how far a video is from the law; this fits the family's law, with
its parameters free, to the trajectory parsed from the pixels, and to the ground truth's
stored trajectory the same way, so a model's learned law can be read against the true one
("your gravity is 2.2 for a true 2.5").

A family says which fit applies with `TaskFamily.law_fit` (a key of `LAW_FITS`) and which
of its parameters is the headline one with `TaskFamily.law_headline`; nothing here knows a
task's name.  Fits (`SETTINGS` states them; every fit uses the generated frames only, so
the conditioning cannot pull the fit towards the truth):

- ``free_flight`` (uniform, parabola): per axis, least squares of p(t) = p0 + v t + g t^2 / 2
  over the generated frames where the ball is found whole (parser flags 0) with its centre at
  least its true radius less a pixel inside every edge (a sliver in a corner is no whole
  ball), t = k dt, at least 6 frames.  Parameters: ``velocity_x``, ``velocity_y`` (at t = 0),
  ``gravity_x``, ``gravity_y`` (the constant acceleration; 0 for uniform motion), ``gravity``
  (its norm), ``speed`` and ``acceleration_along`` (the acceleration along the motion, negative
  when the ball slows down) at the middle of the fitted frames.
- ``collision_1d`` (collision): both balls' x against t, piecewise linear with one common
  break (the split that minimises the squared residual of both balls' two lines, at least
  three frames on each side).  Parameters: each ball's velocity before and after, the
  ``restitution`` (w2 - w1) / (u1 - u2), the momentum exchange: ``momentum_change``
  (sum m w - sum m u) / sum m |u| with m = r^2 (0 when momentum is conserved; a ratio P' / P
  is undefined when the total momentum is near 0), ``mass_ratio`` -(w1 - u1) / (w2 - u2) (the
  m2 / m1 the velocity changes imply; the truth's is (r2 / r1)^2) and ``energy_change``
  (KE' - KE) / KE; and the ``contact_time`` where the pre- and post-contact lines of each ball
  cross (weighted by each ball's velocity change), with its offset from the family's
  closed-form contact time, and the ``contact_gap`` there (how the balls meet:
  `phybench.scoring.physics.contact`, whose ``contact`` settings block, quoted by the collision
  results only, also states the law error's ``contact`` aspect and its ``fallback`` where the
  model's fit finds nothing: this module's `SETTINGS` text stays as uniform and parabola quote it).

Fits are closed-form least squares with correctly rounded sums (`phybench.scoring.learned.lawfit`),
so the same video gives the same bits on every CPU.  A fit with too few frames is "no fit"
(NaN; null in JSON) and counted (`no_fit` in the summary), never a number.  The ground
truth's fit uses its stored positions where they determine the law and falls back to the
simulator's stored velocities where they do not (a ball leaving the view a frame after the
contact; the truth then carries ``from_states`` 1, counted as ``truth_from_states``).

Per video the fitted parameters of the model and of the ground truth go to the details and
the samples sidecar, with the aspects of the law that are wrong (`judge_law`: off by more
than `WRONG`; e.g. ``acceleration`` for a uniform ball that slows down, ``momentum`` for an
unequal-mass collision answered with the equal-mass outcome); per group the results carry
each parameter's median and interquartile range for the model and for the ground truth, the
no-fit counts and the count of videos naming each wrong aspect (`summarise_law`).  The
registered metric ``law_error`` compares signed parameters (`judge_law`): reversed gravity is
2, not 0.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..inputs import Sample  # its own module, below this one: no circle with the metric registry
from .lawfit import poly_fit
from ..physics.contact import contact_aspect, fallback_aspect, turning_point
from ...data.documents import Manifest

SPEED_FLOOR = 0.05  # world units / s (~2 px over the generated frames at 128 px): the least speed errors are relative to
WRONG = 0.05  # a parameter off the truth by more than this (relative; see `judge_law`) is a wrong law

SETTINGS: dict[str, Any] = {
    "frames": "generated frames (k >= condition_frames) where the parsed ball is found whole (parser flags 0) with "
              "its centre at least its true radius - 1 px inside every edge, t = k dt; the ground truth's fit uses "
              "the generated frames where its ball is fully in view, and the simulator's stored velocities where "
              "those frames cannot determine the law (truth.from_states = 1)",
    "free_flight": "per axis closed-form least squares of p(t) = p0 + v t + g t^2 / 2 (at least 6 frames, else no "
                   "fit); velocity_x/_y at t = 0, gravity_x/_y the constant acceleration, gravity its norm, speed "
                   "and acceleration_along (negative: slowing down) at the middle of the fitted frames",
    "collision_1d": ("x of each ball piecewise linear in t with one common break chosen by least squares (>= 3 frames "
                     "per side and ball, else no fit); restitution (w2 - w1) / (u1 - u2); momentum_change "
                     "(sum m w - sum m u) / sum m |u| with m = r^2; mass_ratio -(w1 - u1) / (w2 - u2); energy_change "
                     "(KE' - KE) / KE; contact_time where each ball's two lines cross, weighted by |w - u|; "
                     "contact_time_offset = contact_time - the family's closed-form contact time"),
    "law_error": "signed parameters against the ground truth's fit: gravity headline |g - g_true| / |g_true| "
                 "(vectors); velocity headline max(|v - v_true| / |v_true| at the middle of the generated frames, "
                 f"|g - g_true| x generated duration / |v_true|), |v_true| at least {SPEED_FLOOR} units / s; "
                 "collision max(|e - e_true| / |e_true|, |momentum_change - truth's|, contact_error) with the "
                 "contact block's fallback where the fit finds nothing; otherwise |fit - truth| / |truth| of the headline",
    "wrong_law": f"an aspect of the law whose error (as law_error's parts) exceeds {WRONG}",
    "summary": "per parameter: median and interquartile range (25th, 75th percentile) over the videos with a fit, "
               "for the model and for the ground truth; no_fit counts; videos naming each wrong aspect",
}

MIN_FREE_FLIGHT_FRAMES = 6  # fewer frames: "no fit" (None in JSON), counted
MIN_SEGMENT_FRAMES = 3  # frames per ball on each side of a contact; fewer: "no fit"

Params = dict[str, float]


def _nan(names: Sequence[str]) -> Params:
    return {n: float("nan") for n in names}


FREE_FLIGHT_PARAMS = ("velocity_x", "velocity_y", "gravity_x", "gravity_y", "gravity", "speed", "acceleration_along")


def _free_flight_params(v: np.ndarray, g: np.ndarray, t_mid: float) -> Params:
    """The named parameters of p0 + v t + g t^2 / 2; speed and along-track acceleration at t_mid."""
    vm = v + g * t_mid
    speed = float(np.hypot(vm[0], vm[1]))
    along = float((g[0] * vm[0] + g[1] * vm[1]) / speed) if speed > 1e-12 else float("nan")
    return {"velocity_x": float(v[0]), "velocity_y": float(v[1]), "gravity_x": float(g[0]), "gravity_y": float(g[1]),
            "gravity": float(np.hypot(g[0], g[1])), "speed": speed, "acceleration_along": along}


def fit_free_flight(positions: np.ndarray, ok: np.ndarray, frame_interval: float) -> Params:
    """positions (T, 2) of one body, ok (T,) frames to use: the constant-acceleration law's parameters.

    speed and acceleration_along (the acceleration's component along the motion: negative
    when the body slows down) are read at the middle of the fitted frames."""
    k = np.flatnonzero(ok)
    if k.size < MIN_FREE_FLIGHT_FRAMES:
        return _nan(FREE_FLIGHT_PARAMS)
    t = k * frame_interval
    v, g = np.zeros(2), np.zeros(2)
    for axis in range(2):
        fit = poly_fit(t, positions[k, axis], 2)
        if fit is None:
            return _nan(FREE_FLIGHT_PARAMS)
        v[axis], g[axis] = fit[0][1], 2.0 * fit[0][2]
    return _free_flight_params(v, g, 0.5 * (float(t[0]) + float(t[-1])))


def free_flight_from_states(velocities: np.ndarray, ok: np.ndarray, frame_interval: float) -> Params:
    """The same parameters from the simulator's stored velocities (T, 2): v(t) = v0 + g t by least squares."""
    k = np.flatnonzero(ok)
    if k.size < 2:
        return _nan(FREE_FLIGHT_PARAMS)
    t = k * frame_interval
    v, g = np.zeros(2), np.zeros(2)
    for axis in range(2):
        fit = poly_fit(t, velocities[k, axis], 1)
        if fit is None:
            return _nan(FREE_FLIGHT_PARAMS)
        v[axis], g[axis] = fit[0][0], fit[0][1]
    return _free_flight_params(v, g, 0.5 * (float(t[0]) + float(t[-1])))


_TINY = 1e-6  # world units / s: a velocity (difference) below this is no motion

COLLISION_PARAMS = ("velocity_before_1", "velocity_before_2", "velocity_after_1", "velocity_after_2", "restitution",
                    "momentum_change", "energy_change", "mass_ratio", "contact_time", "contact_time_offset",
                    "contact_gap")  # contact_gap: `phybench.scoring.physics.contact` (the results' "contact" block)


def _line(t: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """(intercept, slope, squared residual) of x against t (deterministic closed form)."""
    fit = poly_fit(t, x, 1)
    if fit is None:
        return float("nan"), float("nan"), float("nan")
    return fit[0][0], fit[0][1], fit[1]


def _best_break(t: np.ndarray, x: np.ndarray, ok: np.ndarray) -> int | None:
    """The split s (pre: frames < s, post: frames >= s) minimising both balls' two-line squared residual.

    Residuals of every split at once from prefix sums (O(T) per ball, not a fit per split);
    the lines of the chosen split are then fitted with least squares.  Ties: the earliest s.
    A split needs one ball with two frames on each side, not every ball, and not
    `MIN_SEGMENT_FRAMES`: a ball that leaves the view a frame after the contact, or a contact
    a frame or two after the condition frames, must not push the break to a split that fits
    frames of both sides with one line (the caller says "no fit" for a side that is too short).
    """
    T = len(t)
    total = np.zeros(T + 1)
    enough = {"pre": np.zeros(T + 1, dtype=bool), "post": np.zeros(T + 1, dtype=bool)}
    for b in range(x.shape[1]):
        w = ok[:, b].astype(np.float64)
        xb = np.where(ok[:, b], x[:, b], 0.0)
        sums = [np.concatenate([[0.0], np.cumsum(v)]) for v in (w, w * t, xb, w * t * t, t * xb, xb * xb)]
        for part in (slice(None), "post"):
            if part == "post":
                n, st, sx, stt, stx, sxx = (c[-1] - c for c in sums)
            else:
                n, st, sx, stt, stx, sxx = sums
            enough["post" if part == "post" else "pre"] |= n >= 2
            with np.errstate(divide="ignore", invalid="ignore"):
                vtt = stt - st * st / n
                ssr = sxx - sx * sx / n - np.where(vtt > 0, (stx - st * sx / n) ** 2 / vtt, 0.0)
            total += np.where(np.isfinite(ssr), np.maximum(ssr, 0.0), 0.0)
    valid = enough["pre"] & enough["post"]
    valid[0] = False
    if not valid.any():
        return None
    return int(np.flatnonzero(valid)[np.argmin(total[valid])])


def _collision_params(u: Sequence[float], w: Sequence[float], m: np.ndarray) -> Params:
    """Velocities before (u) and after (w) of two balls of masses m: the collision law's parameters."""
    u1, u2 = u
    w1, w2 = w
    out = {"velocity_before_1": u1, "velocity_before_2": u2, "velocity_after_1": w1, "velocity_after_2": w2}
    # Below these (world units / s, times a mass of order 1) the velocities are a fit's
    # rounding (a frozen video fits 1e-17): no ratio of them is a law.
    closing = u1 - u2
    out["restitution"] = (w2 - w1) / closing if abs(closing) > _TINY else float("nan")
    scale = m[0] * abs(u1) + m[1] * abs(u2)
    out["momentum_change"] = ((m[0] * w1 + m[1] * w2) - (m[0] * u1 + m[1] * u2)) / scale if scale > _TINY \
        else float("nan")
    before = m[0] * u1 * u1 + m[1] * u2 * u2
    out["energy_change"] = (m[0] * w1 * w1 + m[1] * w2 * w2 - before) / before if before > _TINY ** 2 else float("nan")
    dv2 = w2 - u2
    out["mass_ratio"] = -(w1 - u1) / dv2 if abs(dv2) > max(_TINY, 1e-6 * (abs(u1) + abs(u2))) else float("nan")
    return {k: float(v) for k, v in out.items()}


def fit_collision(positions: np.ndarray, ok: np.ndarray, radii: np.ndarray, frame_interval: float,
                  closed_form_contact: float) -> Params:
    """positions (T, 2, 2), ok (T, 2): two balls meeting head-on along x.

    mass_ratio is the ratio m2 / m1 the velocity changes imply (momentum conservation:
    m1 (w1 - u1) = -m2 (w2 - u2)); the truth's is (r2 / r1)^2."""
    T = positions.shape[0]
    t_all = np.arange(T) * frame_interval
    s = _best_break(t_all, positions[..., 0], ok)
    if s is None:
        return _nan(COLLISION_PARAMS)
    lines = []
    for b in range(2):
        pre = ok[:, b] & (np.arange(T) < s)
        post = ok[:, b] & (np.arange(T) >= s)
        if min(pre.sum(), post.sum()) < MIN_SEGMENT_FRAMES:
            return _nan(COLLISION_PARAMS)  # too few frames of this ball on one side: no fit
        lines.append((_line(t_all[pre], positions[pre, b, 0]), _line(t_all[post], positions[post, b, 0])))
    (a1, u1, _), (c1, w1, _) = lines[0]
    (a2, u2, _), (c2, w2, _) = lines[1]
    m = np.asarray(radii, dtype=np.float64) ** 2
    out = _collision_params((u1, u2), (w1, w2), m)
    weights, times = [], []
    for (a, u, _), (c, w, _) in lines:
        if abs(u - w) > 1e-9:
            weights.append(abs(u - w))
            times.append((c - a) / (u - w))
    tc = math.fsum(wt * ti for wt, ti in zip(weights, times)) / math.fsum(weights) if weights else float("nan")
    out["contact_time"] = float(tc)
    out["contact_time_offset"] = float(tc - closed_form_contact) if np.isfinite(closed_form_contact) else float("nan")
    out["contact_gap"] = turning_point([((a, u), (c, w)) for (a, u, _), (c, w, _) in lines], [float(r) for r in radii],
                                     (float(t_all[ok.any(axis=1)][0]), float(t_all[ok.any(axis=1)][-1])))[1]
    return out


def collision_from_states(velocities: np.ndarray, radii: np.ndarray, contact_time: float) -> Params:
    """The collision law from the simulator's stored velocities (T, 2, 2): first and last frame's x velocity.

    The ground truth's fallback where its frames in view cannot determine the law (a ball
    leaves the view within a frame or two of the contact)."""
    v = np.asarray(velocities, dtype=np.float64)
    m = np.asarray(radii, dtype=np.float64) ** 2
    out = _collision_params((v[0, 0, 0], v[0, 1, 0]), (v[-1, 0, 0], v[-1, 1, 0]), m)
    out["contact_time"] = float(contact_time)
    out["contact_time_offset"] = 0.0 if np.isfinite(contact_time) else float("nan")
    out["contact_gap"] = 0.0 if np.isfinite(contact_time) else float("nan")  # the closed form: the balls touch
    return out


def _tracked(sample: Any) -> tuple[Params, Params] | None:
    from .bodies import tracked_law

    return tracked_law(sample)


class LawFit:
    """One law's fit: its parameter names and how to fit them to (T, B, 2) positions."""

    def __init__(self, name: str, params: tuple[str, ...],
                 fit: Callable[[np.ndarray, np.ndarray, np.ndarray, float, float], Params] | None = None,
                 from_sample: Callable[[Any], tuple[Params, Params] | None] | None = None,
                 from_states: Callable[[Mapping[str, Any], np.ndarray, float, float], Params] | None = None,
                 fallback: Callable[..., float] | None = None) -> None:
        # fit: to the parsed (T, B, 2) positions and to the row's; from_sample: (fit, truth) of a
        # whole sample, for laws read another way (multi-body scenes: the judge's tracks);
        # from_states(row, truth_ok, dt, contact): the truth's fallback from the stored velocities;
        # fallback(parsed, gt, found, radii, contact, dt, truth): the law error where the model's fit
        # finds nothing (`phybench.scoring.physics.contact.fallback_aspect`), None: NaN stays NaN
        self.name, self.params, self.fit, self.from_sample = name, params, fit, from_sample
        self.from_states, self.fallback = from_states, fallback


LAW_FITS: dict[str, LawFit] = {
    "free_flight": LawFit("free_flight", FREE_FLIGHT_PARAMS,
                          lambda p, ok, r, dt, tc: fit_free_flight(p[:, 0], ok[:, 0], dt),
                          from_states=lambda row, ok, dt, tc: free_flight_from_states(
                              np.asarray(row["velocities"], dtype=np.float64)[:, 0], ok[:, 0], dt)),
    "collision_1d": LawFit("collision_1d", COLLISION_PARAMS, fit_collision,
                           from_states=lambda row, ok, dt, tc: collision_from_states(row["velocities"], row["radii"], tc),
                           fallback=fallback_aspect),
    "tracked": LawFit("tracked", ("gravity", "angular_velocity", "bodies_fitted"), from_sample=_tracked),
}


def _family(manifest: Manifest) -> Any:
    from ...tasks import family_of, get_task

    return family_of(get_task(manifest["task"]))


def inside_border(positions: np.ndarray, radii: np.ndarray, world_size: float, pixel: float) -> np.ndarray:
    """bool (T, B): the parsed centre lies at least its true radius less one pixel inside every edge.

    A sliver of a ball in a corner can parse as a small whole ball (blur and codecs soften
    the edge test of `phybench.scoring.physics.parse`); its centroid lies within the sliver, far
    closer to the edge than the true radius, so no fit takes it for a ball in view.  The pixel
    of slack keeps a whole ball rolling along the floor (its rim in the last pixel row)."""
    margin = np.asarray(radii, dtype=np.float64)[None, :, None] - pixel
    with np.errstate(invalid="ignore"):
        inside = np.asarray(((positions >= margin) & (positions <= world_size - margin)).all(axis=-1), dtype=bool)
    return inside


def _truth(law: LawFit, sample: Sample, gt: np.ndarray, ok: np.ndarray, radii: np.ndarray, dt: float,
           tc: float) -> Params:
    """The ground truth's fit; the simulator's stored state where its frames in view cannot fix the law."""
    truth = law.fit(gt, ok, radii, dt, tc) if law.fit is not None else _nan(law.params)
    if law.from_states is not None and not all(np.isfinite(v) for v in truth.values()) \
            and sample.row.get("velocities") is not None:
        truth = law.from_states(sample.row, ok, dt, tc)
        truth["from_states"] = 1.0
    return truth


def law_of(sample: Sample) -> dict[str, Any] | None:
    """{"law", "fit", "truth", "errors", "wrong"} of one video (cached); None when its family has no law fit."""
    cached = sample.__dict__.get("_law", False)
    if cached is not False:
        return cached
    family = _family(sample.manifest)
    law = LAW_FITS.get(getattr(family, "law_fit", None) or "")
    result: dict[str, Any] | None = None
    window = (float("nan"), float("nan"))
    if law is not None and law.from_sample is not None:
        pair = law.from_sample(sample)
        result = None if pair is None else {"law": law.name, "fit": pair[0], "truth": pair[1]}
    elif law is not None and law.fit is not None and sample.parsed is not None:
        from ...world.laws import fully_in_view

        cf = sample.condition_frames
        dt = float(sample.manifest["frame_interval"])
        size = float(sample.manifest["world_size"])
        gt = np.asarray(sample.row["positions"], dtype=np.float64)
        radii = np.asarray(sample.row["radii"], dtype=np.float64)
        tc = family.contact_time(sample.row)
        generated = (np.arange(gt.shape[0]) >= cf)[:, None]
        width = getattr(sample.video, "shape", (0, 0, 0))[2] or int(sample.manifest.get("resolution", 0) or 0)
        pixel = size / width if width else 0.0
        found = sample.parsed.clean() & np.isfinite(sample.parsed.positions).all(axis=-1)
        found &= inside_border(sample.parsed.positions, radii, size, pixel)
        truth_ok = fully_in_view(gt, radii, size)
        result = {"law": law.name, "fit": law.fit(sample.parsed.positions, found & generated, radii, dt, tc),
                  "truth": _truth(law, sample, gt, truth_ok & generated, radii, dt, tc)}
        window = (cf * dt, (gt.shape[0] - 1) * dt)
    if result is not None:
        headline = getattr(family, "law_headline", None)
        errors = judge_law(result["law"], result["fit"], result["truth"], headline, window,
                           radii=sample.row.get("radii"))
        if law is not None and law.fallback is not None and not np.isfinite(errors.get("law_error", np.nan)) \
                and sample.errors.untrackable is None and sample.errors.excluded is None:
            errors["fallback"] = errors["law_error"] = float(law.fallback(
                sample.parsed.positions, gt, found & generated, radii, tc, dt, result["truth"]))
        result["errors"] = errors
        result["wrong"] = sorted(k for k, v in errors.items() if k != "law_error" and np.isfinite(v) and v > WRONG)
    sample.__dict__["_law"] = result
    return result


def _worst(*parts: float) -> float:
    """The largest finite part; NaN when none is (Python's max is order-dependent with NaN)."""
    finite = [p for p in parts if np.isfinite(p)]
    return max(finite) if finite else float("nan")


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if np.isfinite(a) and np.isfinite(b) and abs(b) > 1e-12 else float("nan")


def judge_law(name: str, fit: Mapping[str, float], truth: Mapping[str, float], headline: str | None,
              window: tuple[float, float], radii: Sequence[float] | None = None) -> dict[str, float]:
    """Relative error of each aspect of the law (signed parameters, never only their size) and `law_error`.

    free_flight: ``velocity`` |v_fit - v_true| / |v_true| at the middle of the generated frames
    (vectors; |v_true| at least `SPEED_FLOOR`, so a ball nearly at rest is not judged on the
    parser's sub-pixel noise); ``acceleration`` |g_fit - g_true| times the generated duration over |v_true| (the
    velocity the wrong acceleration adds by the last frame: a ball slowing 3% a frame is far
    off); ``gravity`` |g_fit - g_true| / |g_true| (vectors: reversed gravity is 2).
    collision_1d: ``restitution`` relative; ``momentum`` the difference of the momentum changes
    (already relative to sum m |u|); ``contact`` (with `radii`: the gap and the contact time against
    the truth's, `phybench.scoring.physics.contact.contact_aspect`).  law_error: the headline's aspect
    (gravity; restitution, momentum and contact together for collisions, their maximum; velocity and
    acceleration together for a velocity headline).  tracked: the relative error of the signed headline."""
    out: dict[str, float] = {}
    if name == "free_flight":
        gf = np.array([fit["gravity_x"], fit["gravity_y"]])
        gt = np.array([truth["gravity_x"], truth["gravity_y"]])
        t0, t1 = window
        tm = 0.5 * (t0 + t1)
        vf = np.array([fit["velocity_x"], fit["velocity_y"]]) + gf * tm
        vt = np.array([truth["velocity_x"], truth["velocity_y"]]) + gt * tm
        speed = max(float(np.hypot(*vt)), SPEED_FLOOR)  # a ball nearly at rest: errors against the floor
        ok = bool(np.isfinite(vf).all() and np.isfinite(vt).all())
        out["velocity"] = float(np.hypot(*(vf - vt)) / speed) if ok else float("nan")
        out["acceleration"] = float(np.hypot(*(gf - gt)) * (t1 - t0) / speed) if ok else float("nan")
        g_norm = float(np.hypot(*gt))
        good = headline == "gravity" and np.isfinite(gf).all() and np.isfinite(gt).all() and g_norm > 1e-12
        if good:
            out["gravity"] = float(np.hypot(*(gf - gt)) / g_norm)
        out["law_error"] = out["gravity"] if headline == "gravity" and good else \
            _worst(out["velocity"], out["acceleration"])
    elif name == "collision_1d":
        out["restitution"] = _rel(fit["restitution"], truth["restitution"])
        diff = fit["momentum_change"] - truth["momentum_change"]
        out["momentum"] = abs(diff) if np.isfinite(diff) else float("nan")
        if radii is not None:  # how the balls meet (`phybench.scoring.physics.contact`): gap, overlap, timing
            out["contact"] = contact_aspect(dict(fit), dict(truth), [float(r) for r in radii], window)
        out["law_error"] = _worst(out["restitution"], out["momentum"], out.get("contact", float("nan")))
    elif headline is not None:
        out[headline] = out["law_error"] = _rel(fit.get(headline, float("nan")), truth.get(headline, float("nan")))
    return {k: float(v) for k, v in out.items()}


def law_error(sample: Sample) -> float:
    """The family's law error (`judge_law`): signed parameters, relative; NaN without a fit."""
    law = law_of(sample)
    if law is None or getattr(_family(sample.manifest), "law_headline", None) is None:
        return float("nan")
    return float(law["errors"].get("law_error", float("nan")))


def contact_error(sample: Sample) -> float:
    """How the bodies meet (`phybench.scoring.physics.contact`): the law's ``contact`` aspect, or its
    fallback where the fit finds nothing; NaN without a two-body contact law."""
    law = law_of(sample)
    errors = {} if law is None else law["errors"]
    value = errors.get("contact", float("nan"))
    return float(value) if np.isfinite(value) else float(errors.get("fallback", float("nan")))


def contact_details(sample: Sample) -> dict[str, Any]:
    """The detail row's ``contact`` entry: gap (world units) and contact time (s), the model's and the truth's,
    and the position error around the contact (world units); {} without a two-body contact law."""
    law = law_of(sample)
    if law is None or "contact_gap" not in law["fit"] or sample.parsed is None:
        return {}
    from ..physics.contact import position_error_at_contact

    fit, truth = law["fit"], law["truth"]
    gt = np.asarray(sample.row["positions"], dtype=np.float64)
    found = sample.parsed.clean() & np.isfinite(sample.parsed.positions).all(axis=-1)
    found[:sample.condition_frames] = False
    near = position_error_at_contact(sample.parsed.positions, gt, found, float(truth["contact_time"]),
                                     float(sample.manifest["frame_interval"]))
    return {"contact": {"gap": fit["contact_gap"], "gap_truth": truth["contact_gap"], "time": fit["contact_time"],
                        "time_truth": truth["contact_time"], "position_error": near}}


def law_details(sample: Sample) -> dict[str, Any]:
    """The detail row's `law` entry (the samples sidecar carries it)."""
    law = law_of(sample)
    return {} if law is None else {"law": law}


def sidecar_law(law: Mapping[str, Any]) -> dict[str, Any]:
    """A detail row's `law` for the samples sidecar: 9 significant digits, null where not finite."""
    def num(x: float) -> float | None:
        return float(f"{x:.9g}") if x is not None and np.isfinite(x) else None

    return {"law": law["law"], "fit": {k: num(v) for k, v in law["fit"].items()},
            "truth": {k: num(v) for k, v in law["truth"].items()},
            **({"wrong": list(law["wrong"])} if law.get("wrong") else {})}


def _no_fit(params: Mapping[str, Any], names: Sequence[str]) -> bool:
    """A fit with too few points: none of the law's parameters is a number."""
    return not any(params.get(n) is not None and np.isfinite(params[n]) for n in names)


def summarise_law(details: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """{"law": {law, videos, params: {name: {model: {median, iqr}, truth: {median, iqr}}}}}; {} without fits."""
    laws = [d["law"] for d in details if isinstance(d.get("law"), Mapping)]
    if not laws:
        return {}
    names = LAW_FITS[laws[0]["law"]].params
    params: dict[str, Any] = {}
    for name in names:
        entry = {}
        for who in ("fit", "truth"):
            vals = np.array([lw[who][name] for lw in laws if lw[who].get(name) is not None
                             and np.isfinite(lw[who][name])], dtype=np.float64)
            key = "model" if who == "fit" else "truth"
            if vals.size:
                q25, med, q75 = np.percentile(vals, [25, 50, 75])
                entry[key] = {"median": float(med), "iqr": [float(q25), float(q75)], "count": int(vals.size)}
        if entry:
            params[name] = entry
    wrong: dict[str, int] = {}
    for lw in laws:
        for aspect in lw.get("wrong") or ():
            wrong[aspect] = wrong.get(aspect, 0) + 1
    block = {"fit": laws[0]["law"], "videos": len(laws), "params": params,
             "no_fit": {"model": sum(_no_fit(lw["fit"], names) for lw in laws),
                        "truth": sum(_no_fit(lw["truth"], names) for lw in laws)},
             "truth_from_states": sum(bool(lw["truth"].get("from_states")) for lw in laws),
             "wrong_law": dict(sorted(wrong.items()))}
    return {"law": block}


def law_lines(summary: Mapping[str, Any], headline: str | None = None) -> list[str]:
    """Markdown lines of a summary's `law` block: model median [IQR] against the ground truth's."""
    block = summary.get("law")
    if not block:
        return []
    out = [f"Learned law ({block['fit']}, {block['videos']} videos): median [interquartile range], model vs ground truth."]
    out += ["", "| parameter | model | ground truth |", "|---|---:|---:|"]

    def cell(e: Mapping[str, Any] | None) -> str:
        if not e:
            return "–"
        return f"{e['median']:.4g} [{e['iqr'][0]:.4g}, {e['iqr'][1]:.4g}]"

    for name, entry in block["params"].items():
        label = f"**{name}**" if name == headline else name
        out.append(f"| {label} | {cell(entry.get('model'))} | {cell(entry.get('truth'))} |")
    no_fit = block.get("no_fit") or {}
    if no_fit.get("model") or no_fit.get("truth"):
        out += ["", f"No fit (too few frames): {no_fit.get('model', 0)} model, {no_fit.get('truth', 0)} ground truth."]
    if block.get("wrong_law"):
        named = ", ".join(f"{k} {v}" for k, v in block["wrong_law"].items())
        out += ["", f"Wrong law (off the ground truth's by more than {WRONG:.0%}), videos: {named}."]
    return out


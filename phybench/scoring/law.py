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
  over the generated frames where the ball is found whole (parser flags 0) and t = k dt.
  Parameters: ``velocity_x``, ``velocity_y`` (at t = 0), ``gravity_x``, ``gravity_y`` (the
  constant acceleration; 0 for uniform motion) and ``gravity`` (its norm).
- ``collision_1d`` (collision): both balls' x against t, piecewise linear with one common
  break (the split that minimises the squared residual of both balls' two lines, at least
  two frames on each side).  Parameters: each ball's velocity before and after, the
  ``restitution`` (w2 - w1) / (u1 - u2), the ``momentum_change`` (sum m w - sum m u) /
  sum m |u| with m = r^2 (0 when momentum is conserved; a ratio P' / P is undefined when the
  total momentum is near 0, which equal balls at equal speeds make common), and the
  ``contact_time`` where the pre- and post-contact lines of each ball cross (weighted by
  each ball's velocity change), with its offset from the family's closed-form contact time.

Per video the fitted parameters of the model and of the ground truth go to the details and
the samples sidecar; per group the results carry each parameter's median and interquartile
range for the model and for the ground truth (`summarise_law`).  The registered metric
``law_error`` is the per-video relative error of the headline parameter against the ground
truth's own fit: |fit - truth| / |truth|.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # annotations only: `metrics` imports this module on first use of a law metric
    from .metrics import Sample

SETTINGS: dict[str, Any] = {
    "frames": "generated frames (k >= condition_frames) where the parsed ball is found whole (parser flags 0), t = k dt; "
              "the ground truth's fit uses the generated frames where its ball is fully in view",
    "free_flight": "per axis least squares of p(t) = p0 + v t + g t^2 / 2 (at least 4 frames); velocity_x/_y at t = 0, "
                   "gravity_x/_y the constant acceleration, gravity its norm",
    "collision_1d": ("x of each ball piecewise linear in t with one common break chosen by least squares (>= 2 frames "
                     "per side and ball); restitution (w2 - w1) / (u1 - u2); momentum_change (sum m w - sum m u) / "
                     "sum m |u| with m = r^2; contact_time where each ball's two lines cross, weighted by |w - u|; "
                     "contact_time_offset = contact_time - the family's closed-form contact time"),
    "law_error": "|fit - truth| / |truth| of the family's headline parameter, truth the same fit on the ground truth",
    "summary": "per parameter: median and interquartile range (25th, 75th percentile) over the videos with a fit, "
               "for the model and for the ground truth",
}

MIN_FREE_FLIGHT_FRAMES = 4
MIN_SEGMENT_FRAMES = 2

Params = dict[str, float]


def _nan(names: Sequence[str]) -> Params:
    return {n: float("nan") for n in names}


FREE_FLIGHT_PARAMS = ("velocity_x", "velocity_y", "gravity_x", "gravity_y", "gravity")


def fit_free_flight(positions: np.ndarray, ok: np.ndarray, frame_interval: float) -> Params:
    """positions (T, 2) of one body, ok (T,) frames to use: the constant-acceleration law's parameters."""
    k = np.flatnonzero(ok)
    if k.size < MIN_FREE_FLIGHT_FRAMES:
        return _nan(FREE_FLIGHT_PARAMS)
    t = k * frame_interval
    design = np.stack([np.ones_like(t), t, 0.5 * t * t], axis=1)  # (K, 3)
    coef, *_ = np.linalg.lstsq(design, positions[k], rcond=None)  # (3, 2)
    return {"velocity_x": float(coef[1, 0]), "velocity_y": float(coef[1, 1]), "gravity_x": float(coef[2, 0]),
            "gravity_y": float(coef[2, 1]), "gravity": float(np.hypot(coef[2, 0], coef[2, 1]))}


COLLISION_PARAMS = ("velocity_before_1", "velocity_before_2", "velocity_after_1", "velocity_after_2", "restitution",
                    "momentum_change", "contact_time", "contact_time_offset")


def _line(t: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """(intercept, slope, squared residual) of x against t."""
    design = np.stack([np.ones_like(t), t], axis=1)
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    r = x - design @ coef
    return float(coef[0]), float(coef[1]), float(r @ r)


def _best_break(t: np.ndarray, x: np.ndarray, ok: np.ndarray) -> int | None:
    """The split s (pre: frames < s, post: frames >= s) minimising both balls' two-line squared residual.

    Residuals of every split at once from prefix sums (O(T) per ball, not a fit per split);
    the lines of the chosen split are then fitted with least squares.  Ties: the earliest s.
    """
    T = len(t)
    total = np.zeros(T + 1)
    valid = np.ones(T + 1, dtype=bool)
    valid[0] = False
    for b in range(x.shape[1]):
        w = ok[:, b].astype(np.float64)
        xb = np.where(ok[:, b], x[:, b], 0.0)
        sums = [np.concatenate([[0.0], np.cumsum(v)]) for v in (w, w * t, xb, w * t * t, t * xb, xb * xb)]
        for part in (slice(None), "post"):
            if part == "post":
                n, st, sx, stt, stx, sxx = (c[-1] - c for c in sums)
            else:
                n, st, sx, stt, stx, sxx = sums
            valid &= n >= MIN_SEGMENT_FRAMES
            with np.errstate(divide="ignore", invalid="ignore"):
                vtt = stt - st * st / n
                ssr = sxx - sx * sx / n - np.where(vtt > 0, (stx - st * sx / n) ** 2 / vtt, 0.0)
            total += np.where(np.isfinite(ssr), np.maximum(ssr, 0.0), 0.0)
    if not valid.any():
        return None
    return int(np.flatnonzero(valid)[np.argmin(total[valid])])


def fit_collision(positions: np.ndarray, ok: np.ndarray, radii: np.ndarray, frame_interval: float,
                  closed_form_contact: float) -> Params:
    """positions (T, 2, 2), ok (T, 2): two balls meeting head-on along x."""
    T = positions.shape[0]
    t_all = np.arange(T) * frame_interval
    s = _best_break(t_all, positions[..., 0], ok)
    if s is None:
        return _nan(COLLISION_PARAMS)
    lines = []
    for b in range(2):
        pre = ok[:, b] & (np.arange(T) < s)
        post = ok[:, b] & (np.arange(T) >= s)
        lines.append((_line(t_all[pre], positions[pre, b, 0]), _line(t_all[post], positions[post, b, 0])))
    (a1, u1, _), (c1, w1, _) = lines[0]
    (a2, u2, _), (c2, w2, _) = lines[1]
    m = np.asarray(radii, dtype=np.float64) ** 2
    out = {"velocity_before_1": u1, "velocity_before_2": u2, "velocity_after_1": w1, "velocity_after_2": w2}
    closing = u1 - u2
    out["restitution"] = (w2 - w1) / closing if abs(closing) > 1e-9 else float("nan")
    scale = m[0] * abs(u1) + m[1] * abs(u2)
    out["momentum_change"] = ((m[0] * w1 + m[1] * w2) - (m[0] * u1 + m[1] * u2)) / scale if scale > 0 else float("nan")
    weights, times = [], []
    for (a, u, _), (c, w, _) in lines:
        if abs(u - w) > 1e-9:
            weights.append(abs(u - w))
            times.append((c - a) / (u - w))
    tc = float(np.dot(weights, times) / np.sum(weights)) if weights else float("nan")
    out["contact_time"] = tc
    out["contact_time_offset"] = tc - closed_form_contact if np.isfinite(closed_form_contact) else float("nan")
    return {k: float(v) for k, v in out.items()}


def _tracked(sample: Any) -> tuple[Params, Params] | None:
    from .bodies import tracked_law

    return tracked_law(sample)


class LawFit:
    """One law's fit: its parameter names and how to fit them to (T, B, 2) positions."""

    def __init__(self, name: str, params: tuple[str, ...],
                 fit: Callable[[np.ndarray, np.ndarray, np.ndarray, float, float], Params] | None = None,
                 from_sample: Callable[[Any], tuple[Params, Params] | None] | None = None) -> None:
        # fit: to the parsed (T, B, 2) positions and to the row's; from_sample: (fit, truth) of a
        # whole sample, for laws read another way (multi-body scenes: the judge's tracks)
        self.name, self.params, self.fit, self.from_sample = name, params, fit, from_sample


LAW_FITS: dict[str, LawFit] = {
    "free_flight": LawFit("free_flight", FREE_FLIGHT_PARAMS,
                          lambda p, ok, r, dt, tc: fit_free_flight(p[:, 0], ok[:, 0], dt)),
    "collision_1d": LawFit("collision_1d", COLLISION_PARAMS, fit_collision),
    "tracked": LawFit("tracked", ("gravity", "angular_velocity", "bodies_fitted"), from_sample=_tracked),
}


def _family(manifest: Mapping[str, Any]) -> Any:
    from ..tasks import family_of, get_task

    return family_of(get_task(manifest["task"]))


def law_of(sample: Sample) -> dict[str, Any] | None:
    """{"law", "fit", "truth"} of one video (cached on the sample); None when its family has no law fit."""
    cached = sample.__dict__.get("_law", False)
    if cached is not False:
        return cached
    family = _family(sample.manifest)
    law = LAW_FITS.get(getattr(family, "law_fit", None) or "")
    result = None
    if law is not None and law.from_sample is not None:
        pair = law.from_sample(sample)
        result = None if pair is None else {"law": law.name, "fit": pair[0], "truth": pair[1]}
    elif law is not None and law.fit is not None and sample.parsed is not None:
        from ..world.laws import fully_in_view

        cf = sample.condition_frames
        dt = float(sample.manifest["frame_interval"])
        gt = np.asarray(sample.row["positions"], dtype=np.float64)
        radii = np.asarray(sample.row["radii"], dtype=np.float64)
        tc = family.contact_time(sample.row)
        generated = (np.arange(gt.shape[0]) >= cf)[:, None]
        found = sample.parsed.clean() & np.isfinite(sample.parsed.positions).all(axis=-1)
        truth_ok = fully_in_view(gt, radii, float(sample.manifest["world_size"]))
        result = {"law": law.name,
                  "fit": law.fit(sample.parsed.positions, found & generated, radii, dt, tc),
                  "truth": law.fit(gt, truth_ok & generated, radii, dt, tc)}
    sample.__dict__["_law"] = result
    return result


def law_error(sample: Sample) -> float:
    """|fit - truth| / |truth| of the family's headline parameter; NaN without a fit."""
    law = law_of(sample)
    headline = getattr(_family(sample.manifest), "law_headline", None)
    if law is None or headline is None:
        return float("nan")
    fit, truth = law["fit"][headline], law["truth"][headline]
    if not (np.isfinite(fit) and np.isfinite(truth)) or abs(truth) < 1e-12:
        return float("nan")
    return abs(fit - truth) / abs(truth)


def law_details(sample: Sample) -> dict[str, Any]:
    """The detail row's `law` entry (the samples sidecar carries it)."""
    law = law_of(sample)
    return {} if law is None else {"law": law}


def sidecar_law(law: Mapping[str, Any]) -> dict[str, Any]:
    """A detail row's `law` for the samples sidecar: 9 significant digits, null where not finite."""
    def num(x: float) -> float | None:
        return float(f"{x:.9g}") if x is not None and np.isfinite(x) else None

    return {"law": law["law"], "fit": {k: num(v) for k, v in law["fit"].items()},
            "truth": {k: num(v) for k, v in law["truth"].items()}}


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
    return {"law": {"fit": laws[0]["law"], "videos": len(laws), "params": params}}


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
    return out


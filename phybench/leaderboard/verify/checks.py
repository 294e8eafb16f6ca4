"""Impossible numbers: checks every results file must pass, whatever else is trusted.

The registry check (`load._check_registry`) asks whether a file was made by this phybench;
these ask whether its numbers could have been made by any scorer at all: finite numbers of
the right type, inside each metric's range, intervals that contain their mean, levels that
add up to the whole split, untrackable lists that agree with their counts and with the
per-video sidecar, level names the task has.  They run even with ``--no-registry-check``.

A check is one function ``(doc, samples) -> [reason, ...]`` registered in `CHECKS` with its
stable code (docs/results.md, "Refusal codes"); adding a check is adding one function.
Checks that compare files with each other (one submission under two names) are in
`ACROSS_CHECKS`, functions ``(entries) -> {file: [(code, reason)]}``.

A file that passes every check can still be forged (a plausible number in range, levels
edited together); only re-scoring catches that (`phybench leaderboard verify`, shown on the
board as "verified").
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Iterable, Sequence, TypeGuard

from ...scoring.run.documents import Results
from ...scoring.metrics import METRICS, is_set_metric

# Refusal codes (stable; docs/results.md lists them).
VALUE_TYPE = "value_type"  # a number that is NaN, infinite, null, a string or a bool
VALUE_RANGE = "value_range"  # a value outside its metric's range (a negative error, SSIM above 1)
METRIC_MISSING = "metric_missing"  # the ranking metric removed (or a level's metric absent from the whole split)
INTERVAL_BAD = "interval_bad"  # a 95% interval with low > high, or not containing its mean
LEVELS_INCONSISTENT = "levels_inconsistent"  # the whole-split summary is not its levels put together
UNTRACKABLE_INCONSISTENT = "untrackable_inconsistent"  # untrackable/excluded lists disagree with counts or sidecar
SIDECAR_INCONSISTENT = "sidecar_inconsistent"  # the per-video sidecar disagrees with the summary
UNKNOWN_LEVEL = "unknown_level"  # a level name the task's split does not have
SUBMISSION_REUSED = "submission_reused"  # one submission hash under two model names
VIDEOS_REUSED = "videos_reused"  # one set of videos (the records' videos hash) in two submissions

# Each metric's possible values, [low, high] (None: unbounded).  Physics errors are norms or
# relative errors (>= 0); shares are in [0, 1]; SSIM is a correlation-like index in [-1, 1];
# PSNR of [0, 1] images is >= 0 dB (the mean squared error is at most 1) and capped at
# `image.psnr.cap_db` (100 dB).  A metric not listed here says its own range in its registry
# row (`Metric.bounds`: the perceptual rows); one with neither is only checked for finiteness.
LOWER_ZERO = (0.0, None)
RANGES: dict[str, tuple[float | None, float | None]] = {
    "velocity_error": LOWER_ZERO,
    "velocity_error_penalised": LOWER_ZERO,
    "velocity_error_ranked": LOWER_ZERO,
    "position_error": LOWER_ZERO,
    "momentum_error": LOWER_ZERO,
    "energy_error": LOWER_ZERO,
    "trajectory_error": LOWER_ZERO,
    "size_error": LOWER_ZERO,
    "law_error": LOWER_ZERO,
    "contact_error": LOWER_ZERO,
    "body_position_error": LOWER_ZERO,
    "body_angle_error": (0.0, 1.5708),  # axes differ by at most pi/2 (rounded up: files keep 9 digits)
    "colour_kept": (0.0, 1.0),
    "abnormal": (0.0, 1.0),
    "ssim": (-1.0, 1.0),
    "psnr": (0.0, 100.0),
}


def metric_range(name: str) -> tuple[float | None, float | None]:
    """[low, high] of a metric's values: `RANGES`, else its row's `bounds`, else unbounded."""
    if name in RANGES:
        return RANGES[name]
    bounds = METRICS.get(name).bounds if name in METRICS else None
    return bounds if bounds is not None else (None, None)


# The board ranks by the first of these a file reports (`table.PRIMARY_METRIC` and its
# fallbacks); a file on a task with velocity metrics must keep at least one.
RANKING_METRICS = ("velocity_error_ranked", "velocity_error_penalised", "velocity_error")
REL_TOL = 1e-6  # results are rounded to 9 significant digits; sums of rounded values drift less than this

Check = Callable[[Results, "dict[str, Any] | None"], list[str]]


def _is_number(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_count(x: Any) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b)) + 1e-12


def _groups(doc: Results) -> list[tuple[str, dict[str, Any]]]:
    """("overall", summary) then ("level <name>", summary) for each level."""
    return [("overall", doc["summary"]["overall"])] + [
        (f"level {name!r}", group) for name, group in sorted(doc["summary"]["levels"].items())]


def _metric_blocks(group: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    return ((k, v) for k, v in sorted(group.items()) if k in METRICS)


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


# ================================================================ one file
def check_types(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """Every number a summary holds is a finite number of the right type (JSON NaN, null, "0.0" are not)."""
    out = []
    for where, group in _groups(doc):
        if not _is_count(group.get("videos")):
            out.append(f"{where}.videos is {_short(group.get('videos'))}, not a count")
        for block in ("untrackable", "excluded"):
            if block not in group:
                continue
            value = group[block]
            if not isinstance(value, dict) or not _is_count(value.get("count")):
                out.append(f"{where}.{block}.count is not a count")
            elif block == "untrackable" and not (_is_number(value.get("rate"))
                                                  or (value.get("rate") is None and group.get("videos") == 0)):
                out.append(f"{where}.untrackable.rate is {_short(value.get('rate'))}, not a number")
        for name, value in _metric_blocks(group):
            if not isinstance(value, dict):
                out.append(f"{where}.{name} is {_short(value)}, not an object")
            elif is_set_metric(name):
                if not _is_number(value.get("value")):
                    out.append(f"{where}.{name}.value is {_short(value.get('value'))}, not a finite number")
                for key in ("videos", "frames"):
                    if key in value and not _is_count(value[key]):
                        out.append(f"{where}.{name}.{key} is {_short(value[key])}, not a count")
            else:
                if not _is_number(value.get("mean")):
                    out.append(f"{where}.{name}.mean is {_short(value.get('mean'))}, not a finite number")
                ci = value.get("ci95")
                if not (isinstance(ci, list) and len(ci) == 2 and all(_is_number(c) for c in ci)):
                    out.append(f"{where}.{name}.ci95 is {_short(ci)}, not two finite numbers")
                if not _is_count(value.get("count")) or value.get("count") == 0:
                    out.append(f"{where}.{name}.count is {_short(value.get('count'))}, not a positive count")
    return out


def check_ranges(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """Means, interval ends and set values inside their metric's range (`metric_range`)."""
    out = []
    for where, group in _groups(doc):
        for name, value in _metric_blocks(group):
            low, high = metric_range(name)
            if not isinstance(value, dict):
                continue
            ci95 = value.get("ci95")
            ci: list[Any] = ci95 if isinstance(ci95, list) else []
            for key, x in [("value", value.get("value")), ("mean", value.get("mean"))] + [
                    (f"ci95[{i}]", c) for i, c in enumerate(ci)]:
                if not _is_number(x):
                    continue
                if (low is not None and x < low) or (high is not None and x > high):
                    span = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
                    out.append(f"{where}.{name}.{key} is {x}, outside {name}'s range {span}")
        rate = (group.get("untrackable") or {}).get("rate") if isinstance(group.get("untrackable"), dict) else None
        if _is_number(rate) and not 0 <= rate <= 1:
            out.append(f"{where}.untrackable.rate is {rate}, not a share in [0, 1]")
    return out


def check_metrics_present(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """The ranking metric is not removed: a file with velocity metrics keeps one; a listed ranking
    metric is in the whole-split summary while any video was scorable; a metric a level has is in
    the whole split (which pools the levels).  Other listed metrics may be absent: a metric with no
    finite value on any video (a law fit on frozen frames) has no entry."""
    listed = [m for m in doc.get("metrics", []) if isinstance(m, str) and m in METRICS]
    overall = doc["summary"]["overall"]
    out = []
    lost = sum(overall[b]["count"] for b in ("untrackable", "excluded")
               if isinstance(overall.get(b), dict) and _is_count(overall[b].get("count")))
    scorable = _is_count(overall.get("videos")) and overall["videos"] > lost
    out += [f"ranking metric {m!r} is listed in 'metrics' but missing from summary.overall"
            for m in listed if m in RANKING_METRICS and m not in overall and scorable]
    in_levels = {m for g in doc["summary"]["levels"].values() for m in g if m in METRICS}
    out += [f"metric {m!r} is in a level's summary but missing from summary.overall" for m in sorted(in_levels - set(overall))]
    velocity = {m for m in listed + list(overall) if m in METRICS and METRICS.get(m).settings_key == "velocity"}
    if velocity and not any(m in overall for m in RANKING_METRICS):
        out.append(f"reports velocity metrics ({', '.join(sorted(velocity))}) but none of the ranking metrics "
                   f"({', '.join(RANKING_METRICS)}) in summary.overall")
    return out


def check_intervals(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """A 95% interval of a mean has low <= mean <= high."""
    out = []
    for where, group in _groups(doc):
        for name, value in _metric_blocks(group):
            if not isinstance(value, dict) or not isinstance(value.get("ci95"), list) or len(value["ci95"]) != 2:
                continue
            (lo, hi), mean = value["ci95"], value.get("mean")
            if not (_is_number(lo) and _is_number(hi)):
                continue
            if lo > hi:
                out.append(f"{where}.{name}.ci95 [{lo}, {hi}] has its low end above its high end")
            elif _is_number(mean) and not (lo <= mean <= hi or _close(mean, lo) or _close(mean, hi)):
                out.append(f"{where}.{name}.ci95 [{lo}, {hi}] does not contain its mean {mean}")
    return out


def check_levels_add_up(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """The whole split is its levels together: videos and counts add up, means are count-weighted means."""
    overall, levels = doc["summary"]["overall"], doc["summary"]["levels"]
    if not levels:
        return ["summary.levels is empty: a results file has at least one level"]
    out = []

    def total(get: Callable[[dict[str, Any]], Any]) -> int | None:
        values = [get(g) for g in levels.values()]
        return sum(values) if all(_is_count(v) for v in values) else None

    def count_of(block: str) -> Callable[[dict[str, Any]], Any]:
        return lambda g: (g.get(block) or {}).get("count") if isinstance(g.get(block), dict) else None

    checks = [("videos", lambda g: g.get("videos"))] + [
        (f"{b}.count", count_of(b)) for b in ("untrackable", "excluded") if b in overall]
    for what, get in checks:
        whole, parts = get(overall), total(get)
        if _is_count(whole) and parts is not None and whole != parts:
            out.append(f"summary.overall {what} is {whole}, but its levels add up to {parts}")
    for name, value in _metric_blocks(overall):
        if not isinstance(value, dict) or is_set_metric(name):
            if len(levels) == 1 and isinstance(value, dict):  # a set metric of one level is that level's
                (only,) = levels.values()
                if isinstance(only.get(name), dict) and _is_number(value.get("value")) and _is_number(
                        only[name].get("value")) and not _close(value["value"], only[name]["value"]):
                    out.append(f"summary.overall.{name}.value {value['value']} is not its only level's "
                               f"{only[name]['value']}")
            continue
        blocks: list[Any] = [g.get(name) for g in levels.values() if name in g]  # each checked below
        if not all(isinstance(p, dict) and _is_count(p.get("count")) and _is_number(p.get("mean")) for p in blocks):
            continue  # a mistyped level is its own refusal (check_types)
        count = sum(p["count"] for p in blocks)
        if _is_count(value.get("count")) and value["count"] != count:
            out.append(f"summary.overall.{name}.count is {value['count']}, but its levels add up to {count}")
            continue
        if count and _is_number(value.get("mean")):
            mean = sum(p["mean"] * p["count"] for p in blocks) / count
            if not _close(value["mean"], mean):
                out.append(f"summary.overall.{name}.mean is {value['mean']}, but its levels' means "
                           f"(weighted by count) give {mean:.9g}")
        if len(blocks) == 1 and len(levels) == 1 and _is_number(value.get("mean")):
            ci, level_ci = value.get("ci95"), blocks[0].get("ci95")
            if isinstance(ci, list) and isinstance(level_ci, list) and ci != level_ci:
                out.append(f"summary.overall.{name}.ci95 {ci} is not its only level's {level_ci}")
    return out


def _listed(doc: Results, key: str) -> list[dict[str, Any]] | None:
    items = doc.get(key)
    if items is None:
        return None
    if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get("sample_id"), str) and isinstance(i.get("level"), str)
            for i in items):
        return []
    return items


def check_untrackable(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """The untrackable (and excluded) lists: one entry per counted video, at its level, marked in the sidecar."""
    out = []
    levels = doc["summary"]["levels"]
    for key in ("untrackable", "excluded"):
        items = _listed(doc, key)
        whole = doc["summary"]["overall"].get(key)
        if items is None:
            if isinstance(whole, dict) and _is_count(whole.get("count")) and whole["count"]:
                out.append(f"summary.overall.{key}.count is {whole['count']} but the file has no {key!r} list")
            continue
        if items == [] and doc.get(key):
            out.append(f"{key!r} must be a list of {{sample_id, level, reason}}")
            continue
        ids = Counter(i["sample_id"] for i in items)
        twice = sorted(s for s, n in ids.items() if n > 1)
        if twice:
            out.append(f"{key!r} lists {twice[0]} more than once")
        if isinstance(whole, dict) and _is_count(whole.get("count")) and whole["count"] != len(items):
            out.append(f"the {key!r} list has {len(items)} entries, summary.overall.{key}.count says {whole['count']}")
        per_level = Counter(i["level"] for i in items)
        for name, group in sorted(levels.items()):
            block = group.get(key)
            if isinstance(block, dict) and _is_count(block.get("count")) and block["count"] != per_level.get(name, 0):
                out.append(f"the {key!r} list has {per_level.get(name, 0)} entries at level {name!r}, "
                           f"its summary says {block['count']}")
        for name in sorted(set(per_level) - set(levels)):
            out.append(f"the {key!r} list names level {name!r}, which the summary does not have")
        for where, group in _groups(doc):
            if key == "untrackable" and isinstance(group.get(key), dict):
                n, count, rate = group.get("videos"), group[key].get("count"), group[key].get("rate")
                if _is_count(n) and n and _is_count(count) and _is_number(rate) and not _close(rate, count / n):
                    out.append(f"{where}.untrackable.rate is {rate}, but {count} of {n} videos is {count / n:.9g}")
        if samples is not None:
            by_id = {s["sample_id"]: s for s in samples["samples"]}
            missing = sorted(set(ids) - set(by_id))
            if missing:
                out.append(f"{key!r} lists {missing[0]}, which the samples sidecar does not have"
                           + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
            if key == "untrackable":
                tracked = sorted(s for s in ids if s in by_id and by_id[s]["generated_velocity"] is not None)
                if tracked:
                    out.append(f"{tracked[0]} is untrackable, but the samples sidecar gives it a generated velocity"
                               + (f" (and {len(tracked) - 1} more)" if len(tracked) > 1 else ""))
                if by_id and any(by_id[s]["level"] != lv for s, lv in ((i["sample_id"], i["level"]) for i in items)
                                 if s in by_id):
                    out.append("the 'untrackable' list and the samples sidecar put a video at different levels")
    return out


def check_sidecar(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """The per-video sidecar covers exactly the summary's videos, level by level; only scorable videos
    have a generated velocity."""
    if samples is None:
        return []
    out = []
    rows = samples["samples"]
    ids = Counter(s["sample_id"] for s in rows)
    twice = sorted(s for s, n in ids.items() if n > 1)
    if twice:
        out.append(f"the samples sidecar lists {twice[0]} more than once")
    levels = doc["summary"]["levels"]
    per_level = Counter(s["level"] for s in rows)
    for name in sorted(set(per_level) - set(levels)):
        out.append(f"the samples sidecar has videos at level {name!r}, which the summary does not have")
    overall = doc["summary"]["overall"].get("videos")
    if _is_count(overall) and overall != len(rows):
        out.append(f"the samples sidecar has {len(rows)} videos, summary.overall.videos is {overall}")
    for name, group in sorted(levels.items()):
        n = group.get("videos")
        if _is_count(n) and n != per_level.get(name, 0):
            out.append(f"the samples sidecar has {per_level.get(name, 0)} videos at level {name!r}, its summary {n}")
        lost = sum((group.get(b) or {}).get("count", 0) for b in ("untrackable", "excluded")
                   if isinstance(group.get(b), dict) and _is_count(group[b].get("count")))
        measured = sum(1 for s in rows if s["level"] == name and s["generated_velocity"] is not None)
        if _is_count(n) and measured > n - lost:
            out.append(f"the samples sidecar gives {measured} generated velocities at level {name!r}, but only "
                       f"{n - lost} of its {n} videos were scorable")
    return out


def _law_stats(values: list[float]) -> tuple[float, list[float]]:
    """Median and [25th, 75th] percentiles, as `phybench.scoring.learned.law.summarise_law` computes them."""
    import numpy as np

    q25, med, q75 = np.percentile(np.asarray(values, dtype=np.float64), [25, 50, 75])
    return float(med), [float(q25), float(q75)]


def check_sidecar_laws(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """The sidecar's per-video law fits reproduce each summary's `law` block (median, IQR, counts)."""
    if samples is None:
        return []
    out = []
    laws = samples.get("laws") or []
    for where, group in _groups(doc):
        block = group.get("law")
        level = None if where == "overall" else where[len("level "):].strip("'")
        mine = [lw for lw in laws if level is None or lw["level"] == level]
        if not isinstance(block, dict):
            continue
        if not mine:
            out.append(f"{where} has a law block, but the samples sidecar has no law fits for it")
            continue
        if block.get("videos") != len(mine):
            out.append(f"{where}.law.videos is {_short(block.get('videos'))}, the samples sidecar has {len(mine)} fits")
        given = block.get("params")
        params: dict[str, Any] = given if isinstance(given, dict) else {}
        for name, entry in sorted(params.items()):
            for who, key in (("model", "fit"), ("truth", "truth")):
                stated = entry.get(who) if isinstance(entry, dict) else None
                values = [lw[key][name] for lw in mine if _is_number(lw[key].get(name))]
                if not isinstance(stated, dict):
                    continue
                if stated.get("count") != len(values):
                    out.append(f"{where}.law.params.{name}.{who}.count is {_short(stated.get('count'))}, the samples "
                               f"sidecar has {len(values)} finite values")
                    continue
                if not values:
                    continue
                med, iqr = _law_stats(values)
                scale = max(abs(v) for v in values)
                claimed = [stated.get("median")] + list(stated.get("iqr") or [None, None])
                for what, a, b in zip(("median", "iqr[0]", "iqr[1]"), claimed, [med, *iqr]):
                    if not _is_number(a) or abs(a - b) > REL_TOL * max(abs(a), abs(b), scale) + 1e-12:
                        out.append(f"{where}.law.params.{name}.{who}.{what} is {_short(a)}, but the samples sidecar's "
                                   f"fits give {b:.9g}")
                        break
    return out


def known_levels(task: str, split: str) -> set[str] | None:
    """The level names a split of a registered task can have; None when that cannot be said."""
    try:
        from ...tasks import get_task

        spec = get_task(task)
        decl = spec.split(split)
    except Exception:  # an unregistered task or split is refused elsewhere, with its own reason
        return None
    ood = {level.name for level in spec.ood_levels}
    if decl.draw == "ood-levels":
        return ood
    if decl.draw == "grid-midpoints":
        return {"id"}
    return {"id"} | ood | {v for dof in spec.categorical for v in dof.values}


def check_level_names(doc: Results, samples: dict[str, Any] | None) -> list[str]:
    """Every level is one the task's split has (an invented level would be a column of its own)."""
    allowed = known_levels(doc["task"], doc["split"])
    if allowed is None:
        return []
    unknown = sorted(set(doc["summary"]["levels"]) - allowed)
    return [f"level {name!r} is not a level of {doc['task']}/{doc['split']} "
            f"(its levels: {', '.join(sorted(allowed))})" for name in unknown]


# (code, check), in the order a file's reasons are reported.
CHECKS: list[tuple[str, Check]] = [
    (VALUE_TYPE, check_types),
    (VALUE_RANGE, check_ranges),
    (METRIC_MISSING, check_metrics_present),
    (INTERVAL_BAD, check_intervals),
    (UNKNOWN_LEVEL, check_level_names),
    (LEVELS_INCONSISTENT, check_levels_add_up),
    (UNTRACKABLE_INCONSISTENT, check_untrackable),
    (SIDECAR_INCONSISTENT, check_sidecar),
    (SIDECAR_INCONSISTENT, check_sidecar_laws),
]


def check_file(doc: Results, samples: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(code, reason) for every impossible number in one readable results file."""
    return [(code, reason) for code, check in CHECKS for reason in check(doc, samples)]


# ================================================================ across files
def check_submission_names(entries: Sequence[Any]) -> dict[str, list[tuple[str, str]]]:
    """One submission is one model: the same submission hash under two model names is refused."""
    names: dict[str, dict[str, list[str]]] = {}
    for e in entries:
        h = e.results["provenance"].get("submission_hash")
        if isinstance(h, str) and h:
            names.setdefault(h, {}).setdefault(e.model, []).append(e.file)
    out: dict[str, list[tuple[str, str]]] = {}
    for h, by_name in names.items():
        if len(by_name) > 1:
            for name, files in by_name.items():
                others = ", ".join(f"{n!r} ({', '.join(f)})" for n, f in sorted(by_name.items()) if n != name)
                for f in files:
                    out.setdefault(f, []).append((SUBMISSION_REUSED, f"submission {h[:12]} is model {name!r} here "
                                                                     f"and {others}: one submission, one name"))
    return out


def check_videos_reused(entries: Sequence[Any]) -> dict[str, list[tuple[str, str]]]:
    """One set of videos, one row: two submissions (different submission hashes: e.g. only
    `model.name` changed) whose verification records carry the same videos-only hash
    (``extra.videos_hash``, `phybench.submission.identity`) are both refused, wherever they lie
    under the results folder."""
    groups: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for e in entries:
        extra = getattr(getattr(e, "verification", None), "extra", None) or {}
        vh = extra.get("videos_hash") if isinstance(extra, dict) else None
        if isinstance(vh, str) and vh:
            sub = str(e.results["provenance"].get("submission_hash"))
            groups.setdefault(vh, {}).setdefault(sub, []).append((e.file, e.model))
    out: dict[str, list[tuple[str, str]]] = {}
    for vh, by_sub in groups.items():
        if len(by_sub) > 1:
            for sub, files in by_sub.items():
                others = ", ".join(f"{m!r} ({f})" for s, fs in sorted(by_sub.items()) if s != sub for f, m in fs)
                for f, model in files:
                    out.setdefault(f, []).append((VIDEOS_REUSED, f"the videos of {model!r} (videos hash {vh[:12]}) "
                                                                 f"are also submitted as {others}: one set of videos, "
                                                                 "one row"))
    return out


ACROSS_CHECKS: list[Callable[[Sequence[Any]], dict[str, list[tuple[str, str]]]]] = [
    check_submission_names, check_videos_reused]


def check_across(entries: Sequence[Any]) -> dict[str, list[tuple[str, str]]]:
    """{file: [(code, reason)]} from every check that compares files."""
    out: dict[str, list[tuple[str, str]]] = {}
    for check in ACROSS_CHECKS:
        for file, reasons in check(entries).items():
            out.setdefault(file, []).extend(reasons)
    return out

"""A randomised calibration of the judge: random compositions of benign degradations, drawn
within published bounds, so each run judges cases no rule was written against (issue 48 item 6).

The fixed calibration (`phybench.calibration`) degrades every video by each benign kind alone,
at one strength each.  A rule tuned to that list can still fail on a blur *and* a colour cast,
or on a JPEG quality between the two listed.  Here every draw picks one to three benign
families (`FAMILIES`), a strength for each uniformly inside its bounds, and applies them in the
table's order (levels and colour, geometry, blur, time, sensor noise, compression: roughly the
order a camera and a codec would), all seeded: ``(seed, split, row, draw)`` fixes a case, so a
run is reproducible and a new seed gives new cases.  The draws that are planted violations use
`phybench.violations` (a kind drawn per case among those a judge rule claims).

**The judge's contract** is the table below: within these bounds, alone or composed, a correct
video keeps its verdict (docs/judge.md prints the bounds and the measured rates; CI runs a small
fixed-seed draw, `benchmarks/calibrate_random.py` a large fresh-seed one).

| family | parameter | bounds (at 128 px; lengths scale with the width) |
|---|---|---|
| light | exposure; green and blue gain (a tint); vignette (corners 1 - a); gradient | 0.8 - 1.2; 0.85 - 1; 0 - 0.4; 0 - 0.25 |
| levels | gamma | 0.8 - 1.25 |
| levels | contrast toward mid grey | 0 - 15% |
| colour | per-channel cast | -6 - +6 levels each |
| geometry | shift right and down | 0 - 2 px (edge repeated) |
| geometry | zoom about the centre | 0 - 2% |
| geometry | rotation | -1 - +1 degree |
| blur | Gaussian sigma | 0.3 - 1.5 px |
| time | blend with neighbours | 0 - 50% |
| sensor | uniform noise amplitude | 1 - 8 levels |
| defects | isolated black or white pixels, new each frame | 0.02% - 0.1% of pixels |
| compression | H.264 crf | 18 - 35 |
| compression | JPEG quality | 40 - 95 |
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import benign as _b
from .data.documents import SplitRow

Params = dict[str, float]
Apply = Callable[[np.ndarray, int, str, Params], np.ndarray]  # (video, condition frames, sample id, params)


@dataclass(frozen=True)
class Family:
    """One benign family: its parameters' bounds and how to apply one draw of them."""
    name: str
    bounds: dict[str, tuple[float, float]]
    apply: Apply
    integer: tuple[str, ...] = ()  # parameters drawn as whole numbers


def _levels(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    g, c = p["gamma"], p["contrast"]
    return _b._levels(lambda x: (1 - c) * 255.0 * (x / 255.0) ** g + c * 128.0)(video, cf, sid)


def _colour(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    return _b._cast((int(p["red"]), int(p["green"]), int(p["blue"])))(video, cf, sid)


def _light(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    """The model's light on the generated frames (the condition frames are the split's own):
    exposure x per-channel tint x a vignette (corners 1 - vignette) x a left-to-right gradient
    (right edge 1 - gradient), every level clipped."""
    h, w = video.shape[1:3]
    u, v = np.meshgrid((np.arange(w) + 0.5) / w * 2 - 1, (np.arange(h) + 0.5) / h * 2 - 1)
    field = p["exposure"] * (1 - p["vignette"] * (u * u + v * v) / 2) * (1 - p["gradient"] * (u + 1) / 2)
    gain = field[None, :, :, None] * np.array([1.0, p["green"], p["blue"]])  # (1, H, W, 3)
    out = video.copy()
    out[cf:] = np.clip(np.rint(video[cf:].astype(np.float64) * gain), 0, 255).astype(np.uint8)
    return out


def _defects(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    """Isolated black or white pixels, new in every generated frame (salt and pepper), seeded by the sample."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(f"defects:{sid}".encode()).digest()[:8], "little"))
    out = video.copy()
    gen = out[cf:]  # a view: the generated frames
    hit = rng.random(gen.shape[:3]) < p["share"]
    gen[hit] = np.where(rng.random(int(hit.sum())) < 0.5, 0, 255)[:, None].astype(np.uint8)
    return out


def _geometry(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    out = _b._warp(1.0 + p["zoom"], p["degrees"])(video, cf, sid) if p["zoom"] or p["degrees"] else video
    return _b._shift(int(p["shift"]), "edge")(out, cf, sid) if int(p["shift"]) else out


def _blur(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    return _b._blur(p["sigma"])(video, cf, sid)


def _time(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    """Each generated frame (1 - w) itself + w/2 each neighbour (w = 0.5 is `benign`'s ``blend``)."""
    w, out = p["weight"], video.copy()
    gen = video[cf:].astype(np.float32)
    if len(gen) < 2:
        return out
    prev, nxt = np.concatenate([gen[:1], gen[:-1]]), np.concatenate([gen[1:], gen[-1:]])
    out[cf:] = np.clip(np.rint((1 - w) * gen + 0.5 * w * (prev + nxt)), 0, 255).astype(np.uint8)
    return out


def _sensor(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    return _b._noise(int(p["amplitude"]))(video, cf, sid)


def _compression(video: np.ndarray, cf: int, sid: str, p: Params) -> np.ndarray:
    if p["codec"] < 0.5:
        return _b.codec_round_trip(video, "h264", int(p["crf"]))
    return _b._jpeg(int(p["quality"]))(video, cf, sid)


FAMILIES: tuple[Family, ...] = (  # in the order they are applied
    Family("light", {"exposure": (0.8, 1.2), "green": (0.85, 1.0), "blue": (0.85, 1.0), "vignette": (0.0, 0.4),
                     "gradient": (0.0, 0.25)}, _light),
    Family("levels", {"gamma": (0.8, 1.25), "contrast": (0.0, 0.15)}, _levels),
    Family("colour", {"red": (-6, 6), "green": (-6, 6), "blue": (-6, 6)}, _colour, ("red", "green", "blue")),
    Family("geometry", {"shift": (0, 2), "zoom": (0.0, 0.02), "degrees": (-1.0, 1.0)}, _geometry, ("shift",)),
    Family("blur", {"sigma": (0.3, 1.5)}, _blur),
    Family("time", {"weight": (0.0, 0.5)}, _time),
    Family("sensor", {"amplitude": (1, 8)}, _sensor, ("amplitude",)),
    Family("defects", {"share": (0.0002, 0.001)}, _defects),
    Family("compression", {"codec": (0.0, 1.0), "crf": (18, 35), "quality": (40, 95)}, _compression,
           ("crf", "quality")),
)
BY_NAME = {f.name: f for f in FAMILIES}


def rng_for(seed: int, *key: Any) -> np.random.Generator:
    """A generator fixed by the run's seed and the case's identity (never by the order of the work)."""
    text = "\n".join(map(str, (seed, *key)))
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little"))


def draw(rng: np.random.Generator, max_families: int = 3) -> list[tuple[str, Params]]:
    """One composition: 1 to `max_families` distinct families, each with parameters inside its
    bounds, in the table's order."""
    k = int(rng.integers(1, max_families + 1))
    chosen = sorted(rng.choice(len(FAMILIES), size=k, replace=False).tolist())
    out = []
    for i in chosen:
        fam = FAMILIES[i]
        params = {}
        for name, (lo, hi) in fam.bounds.items():
            params[name] = float(rng.integers(int(lo), int(hi) + 1)) if name in fam.integer else \
                round(float(rng.uniform(lo, hi)), 4)
        out.append((fam.name, params))
    return out


def apply(video: np.ndarray, condition_frames: int, sample_id: str, composition: Sequence[tuple[str, Params]]
          ) -> np.ndarray:
    """`video` (T, H, W, 3) uint8 through every family of the composition, in order."""
    for name, params in composition:
        video = BY_NAME[name].apply(video, condition_frames, sample_id, params)
    return video


def describe(composition: Sequence[tuple[str, Params]]) -> str:
    """``blur(sigma=0.71) + compression(codec=0.2, crf=27, quality=61)``."""
    return " + ".join(f"{n}({', '.join(f'{k}={v:g}' for k, v in p.items())})" for n, p in composition)


def in_bounds(composition: Sequence[tuple[str, Params]]) -> bool:
    """Every family known and every parameter inside its published bounds."""
    return all(n in BY_NAME and set(p) == set(BY_NAME[n].bounds)
               and all(BY_NAME[n].bounds[k][0] <= v <= BY_NAME[n].bounds[k][1] for k, v in p.items())
               for n, p in composition)


_READERS: dict[str, tuple[Any, list[SplitRow]]] = {}


def judge_kinds() -> list[str]:
    """The planted kinds a judge rule claims (the law-level ones, a wrong speed or restitution,
    are the velocity error's and the law block's: `benchmarks/law_recall.py`)."""
    from .scoring.judge.rules import RULES

    return list(dict.fromkeys(k for rule in RULES for k in rule.planted_kinds))


def _judge_case(job: tuple[str, str, int, int, int, int]) -> dict[str, Any]:
    """Judge one row: `draws` random benign compositions and one planted kind drawn at random."""
    from .data.split import SplitReader, row_scene
    from .scoring.judge.abnormal import judge
    from .violations import plant

    split_dir, name, i, seed, draws, planted = job
    if split_dir not in _READERS:
        reader = SplitReader(split_dir)
        _READERS[split_dir] = (reader, list(reader.rows()))
    reader, rows = _READERS[split_dir]
    row, spec = rows[i], reader.spec
    cf, res = spec.condition_frames, int(reader.manifest["resolution"])
    gt = reader.video(row)
    bodies = row_scene(row).bodies
    colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
    out: dict[str, Any] = {"benign": [], "planted": []}
    for d in range(draws):
        comp = draw(rng_for(seed, name, i, d))
        v = judge(apply(gt, cf, row["sample_id"], comp), gt, colours, static, cf)
        out["benign"].append({"composition": comp, "flagged": int(v.abnormal),
                              "rules": sorted({f.rule for f in v.findings})})
    kinds = judge_kinds()
    for d in range(planted):
        kind = kinds[int(rng_for(seed, name, i, "planted", d).integers(len(kinds)))]
        video, _ = plant(kind, row, spec, res, gt)
        if video is not None:
            v = judge(video, gt, colours, static, cf)
            out["planted"].append({"kind": kind, "hit": int(v.abnormal)})
    return out


def calibrate_random(split_dirs: Sequence[str], *, seed: int, draws: int = 2, planted: int = 1,
                     limit: int | None = None, workers: int = 1, progress: bool = True) -> dict[str, Any]:
    """Judge `draws` random benign compositions and `planted` random planted kinds per row.

    Returns {"seed", "bounds", "cases", "false_positives": {family: {split: [flagged, n]}},
    "by_size": {k: [flagged, n]}, "recall": {kind: {split: [hits, n]}}, "flagged": [...]}; a
    composition counts under each family it holds."""
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    from .data.split import SplitReader

    jobs = []
    for split_dir in map(str, split_dirs):
        m = SplitReader(split_dir).manifest
        name = f"{m['task']}/{m['split']}@{m['resolution']}"
        n = int(m["num_samples"]) if limit is None else min(int(m["num_samples"]), limit)
        jobs += [(split_dir, name, i, seed, draws, planted) for i in range(n)]
    out: dict[str, Any] = {"seed": seed, "bounds": {f.name: f.bounds for f in FAMILIES}, "cases": 0,
                           "false_positives": {f.name: {} for f in FAMILIES}, "by_size": {},
                           "recall": {}, "flagged": []}
    results: Iterator[dict[str, Any]]
    if workers <= 1:
        results = map(_judge_case, jobs)
    else:
        pool = ProcessPoolExecutor(workers)
        results = pool.map(_judge_case, jobs, chunksize=2)
    for job, r in tqdm(zip(jobs, results), total=len(jobs), desc="calibrate-random", unit="row",
                       disable=not progress):
        name, i = job[1], job[2]
        for case in r["benign"]:
            out["cases"] += 1
            comp = case["composition"]
            size = out["by_size"].setdefault(str(len(comp)), [0, 0])
            size[0], size[1] = size[0] + case["flagged"], size[1] + 1
            for fam, _ in comp:
                cell = out["false_positives"][fam].setdefault(name, [0, 0])
                cell[0], cell[1] = cell[0] + case["flagged"], cell[1] + 1
            if case["flagged"]:
                out["flagged"].append({"split": name, "row": i, "composition": describe(comp), "rules": case["rules"]})
        for case in r["planted"]:
            cell = out["recall"].setdefault(case["kind"], {}).setdefault(name, [0, 0])
            cell[0], cell[1] = cell[0] + case["hit"], cell[1] + 1
    if workers > 1:
        pool.shutdown()
    return out


def random_markdown(cal: dict[str, Any]) -> str:
    """The per-family false-positive table and the planted recall (Wilson 95% intervals)."""
    from .scoring.run.results import wilson

    def cell(h: int, n: int) -> str:
        lo, hi = wilson(h, n)
        return f"{h}/{n} ({100 * h / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}])" if n else "n/a"

    lines = [f"Seed {cal['seed']}, {cal['cases']} benign compositions.", "",
             "| family | bounds | correct videos flagged (a composition counts under each family it holds) |",
             "|---|---|---|"]
    for fam, per in cal["false_positives"].items():
        h, n = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
        bounds = ", ".join(f"{k} {lo:g}-{hi:g}" for k, (lo, hi) in cal["bounds"][fam].items())
        lines.append(f"| {fam} | {bounds} | {cell(h, n)} |")
    lines += ["", "| families composed | flagged |", "|---|---|"]
    lines += [f"| {k} | {cell(*v)} |" for k, v in sorted(cal["by_size"].items())]
    lines += ["", "| planted kind (drawn per row) | judged abnormal |", "|---|---|"]
    for kind, per in sorted(cal["recall"].items()):
        lines.append(f"| {kind} | {cell(sum(v[0] for v in per.values()), sum(v[1] for v in per.values()))} |")
    return "\n".join(lines) + "\n"

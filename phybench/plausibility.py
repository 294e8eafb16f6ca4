"""Likelihood preference: does a model find the valid video more plausible than a violated one?

After LikePhys (Yuan et al., 2025), on controlled pairs: a planted-violation set
(`phybench violations`) and the evaluation split it was made from.  Each pair shares the
frames before the onset; one continues as Box2D says (the split's ground truth), the other
breaks one law (vanish, teleport, gravity x1.2, ...).  A *scorer* gives each video a number,
lower = more plausible to the model, e.g. a diffusion model's denoising loss averaged over
fixed noise levels and seeds (`phybench_baselines.dit.plausibility:DenoisingLoss`).

The **plausibility preference error** of a kind is the share of its pairs where the scorer
prefers the violated video (a lower score; a tie counts one half), with a percentile
bootstrap 95% interval over pairs.  0 is a model that always prefers physics; 0.5 is chance.

A scorer is `MODULE:NAME`: a function `f(video, condition_frames, **args) -> float`, or a
class built as `NAME(**args)` whose instances are called the same way (video: uint8
(T, H, W, 3); the split's condition frames).  Valid videos are scored once and reused
across kinds; the same video always gets the same score.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import jsonsafe
from .data.split import SplitReader
from .io import atomic_write_bytes
from .scoring.run.results import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_ci
from .submission.archive import SubmissionError
from .submission.format import open_submission

SCHEMA = "phybench.plausibility/1"
LABELS_MAX_BYTES = 64 << 20  # a labels.json larger than this is not one we wrote

Scorer = Callable[[np.ndarray, int], float]


class PlausibilityError(Exception):
    """The pairs, the split or the scorer cannot be used; the message says why."""


def load_scorer(target: str, args: dict[str, Any] | None = None) -> Scorer:
    """MODULE:NAME as a scorer (a function, or a class instantiated with `args`)."""
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise PlausibilityError(f"--model {target!r}: give MODULE:NAME, e.g. phybench.plausibility:smoothness")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise PlausibilityError(f"--model {target!r}: {exc}") from None
    args = dict(args or {})
    if isinstance(obj, type):
        obj = obj(**args)
    elif args:
        obj = functools.partial(obj, **args)
    if not callable(obj):
        raise PlausibilityError(f"--model {target!r} is not callable")
    return obj


def smoothness(video: np.ndarray, condition_frames: int) -> float:
    """A model-free reference scorer: mean squared second temporal difference of the frames.

    Physics here moves bodies smoothly, so a jump, a vanish or a sudden stop raises it; a
    changed law that stays smooth (gravity x1.2) may not.  In [0, 1] units (pixels / 255).
    """
    x = np.asarray(video, np.float32)[max(condition_frames - 2, 0):] / 255.0
    if len(x) < 3:
        return 0.0
    acc = x[2:] - 2 * x[1:-1] + x[:-2]
    return float(np.mean(acc * acc))


def _score(scorer: Scorer, video: np.ndarray, condition_frames: int, what: str) -> float:
    try:
        value = float(scorer(video, condition_frames))
    except Exception as exc:  # a user's scorer: report which video broke it
        raise PlausibilityError(f"the scorer failed on {what}: {type(exc).__name__}: {exc}") from exc
    if not np.isfinite(value):
        raise PlausibilityError(f"the scorer returned {value} for {what}; scores must be finite")
    return value


def read_labels(pairs: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(pairs) / "labels.json"
    if not path.is_file():
        raise PlausibilityError(f"{pairs} has no labels.json: make the pairs with `phybench violations --data SPLIT "
                                f"--out {pairs}`")
    if path.stat().st_size > LABELS_MAX_BYTES:
        raise PlausibilityError(f"{path} is larger than {LABELS_MAX_BYTES >> 20} MB")
    try:
        doc = jsonsafe.read(path, max_bytes=LABELS_MAX_BYTES)
    except ValueError as exc:  # jsonsafe.JSONError: coded
        raise PlausibilityError(f"{path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "phybench-violations" or not isinstance(doc.get("labels"), dict):
        raise PlausibilityError(f"{path} is not a phybench violations labels file")
    return doc


def evaluate_pairs(pairs: str | os.PathLike[str], split_dir: str | os.PathLike[str], scorer: Scorer, *,
             kinds: Sequence[str] | None = None, scorer_name: str = "", scorer_args: dict[str, Any] | None = None,
             progress: bool = True) -> dict[str, Any]:
    """The preference error per kind (and over all kinds), with per-pair scores."""
    from tqdm import tqdm

    labels_doc = read_labels(pairs)
    reader = SplitReader(split_dir)
    m = reader.manifest
    if labels_doc.get("split_hash") != m["split_hash"]:
        raise PlausibilityError(f"{pairs} was planted in split {labels_doc.get('task')}/{labels_doc.get('split')} "
                                f"(hash {str(labels_doc.get('split_hash'))[:12]}), not in {split_dir} "
                                f"({m['task']}/{m['split']}, hash {m['split_hash'][:12]})")
    available = list(labels_doc["labels"])
    kinds = list(kinds or available)
    missing = [k for k in kinds if k not in available]
    if missing:
        raise PlausibilityError(f"{pairs} has no pairs of kind(s) {', '.join(missing)}; it has {', '.join(available)}")
    rows = {row["sample_id"]: row for row in reader.rows()}
    cf = int(m["condition_frames"])
    valid: dict[str, float] = {}
    per_kind: dict[str, Any] = {}
    all_errors: list[float] = []
    scores: dict[str, dict[str, list[float]]] = {}
    for kind in kinds:
        planted = sorted(lab["sample_id"] for lab in labels_doc["labels"][kind]
                         if isinstance(lab, dict) and "skipped" not in lab and lab.get("sample_id") in rows)
        errors: list[float] = []
        scores[kind] = {}
        try:
            with open_submission(Path(pairs) / kind, manifest=m) as sub:
                for sid, video in tqdm(sub.iter_videos(planted), total=len(planted), desc=f"plausibility {kind}",
                                       unit="pair", disable=not progress):
                    if sid not in valid:
                        valid[sid] = _score(scorer, reader.video(rows[sid]), cf, f"the valid video {sid}")
                    bad = _score(scorer, np.asarray(video), cf, f"the {kind} video {sid}")
                    errors.append(1.0 if bad < valid[sid] else 0.5 if bad == valid[sid] else 0.0)
                    scores[kind][sid] = [valid[sid], bad]
        except SubmissionError as exc:
            raise PlausibilityError(f"{Path(pairs) / kind}: {exc}") from None
        e = np.asarray(errors)
        lo, hi = bootstrap_ci(e) if len(e) else (float("nan"), float("nan"))
        per_kind[kind] = {"pairs": len(e), "preference_error": float(e.mean()) if len(e) else None,
                          "ci95": [lo, hi] if len(e) else None, "ties": int((e == 0.5).sum())}
        all_errors += errors
    e = np.asarray(all_errors)
    overall = {"pairs": len(e), "preference_error": float(e.mean()) if len(e) else None,
               "ci95": list(bootstrap_ci(e)) if len(e) else None}
    labels_sha = hashlib.sha256((Path(pairs) / "labels.json").read_bytes()).hexdigest()
    return {"schema": SCHEMA, "task": m["task"], "split": m["split"], "split_hash": m["split_hash"],
            "labels_sha256": labels_sha, "scorer": scorer_name, "scorer_args": dict(scorer_args or {}),
            "definition": ("preference error = share of pairs (valid, violated) where the scorer gives the violated "
                           "video the lower (more plausible) score; a tie counts 0.5; 0 = always prefers physics, "
                           "0.5 = chance"),
            "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED, "interval": "percentile 95%"},
            "kinds": per_kind, "overall": overall, "scores": scores}


def write_plausibility(doc: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Deterministic bytes (sorted keys, scores to 9 significant digits), written atomically."""
    from .scoring.run.results import results_bytes

    atomic_write_bytes(path, results_bytes(doc))


def plausibility_markdown(doc: dict[str, Any]) -> str:
    lines = [f"{doc['task']}/{doc['split']}, scorer {doc['scorer'] or '?'}",
             "", "| planted kind | pairs | preference error ↓ | 95% interval |", "|---|---:|---:|---|"]

    def row(name: str, k: dict[str, Any]) -> str:
        if not k["pairs"]:
            return f"| {name} | 0 | n/a | |"
        return f"| {name} | {k['pairs']} | {k['preference_error']:.3f} | [{k['ci95'][0]:.3f}, {k['ci95'][1]:.3f}] |"

    lines += [row(kind, k) for kind, k in doc["kinds"].items()]
    lines.append(row("**all**", doc["overall"]))
    return "\n".join(lines) + "\n"

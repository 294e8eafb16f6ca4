"""Score a submission against a split: validate, verify, parse, measure, summarise.

One pass over the split in its stored order.  Each ground-truth row is re-hashed as it is
used (the sample digest of `split.py`), and the recomputed split hash must equal the
manifest's before anything is written: a results file is only ever produced against a
split that verifies.  The submission is validated first and never modified.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from shlex import quote
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..._version import __version__
from ..metrics import (METRICS, TRACKING_METRIC, companion_metrics, default_metrics, reported, requestable_metrics,
                      settings_blocks)
from .results import OVERALL, build_results
from .sample import CONDITION_TOLERANCE, pixel_mapping, score_row, score_sample  # noqa: F401 - re-exported
from ...data.split import SplitReader, split_hash
from ...tasks import family_of, get_task
from ...data.documents import Manifest
from .documents import Provenance, Results, Sidecar, SidecarRow
from ...data.documents import SplitRow


class ScoreError(Exception):
    """A submission or split that cannot be scored; the message says why and what to do, `code` names
    the case (a validation problem's code, or score_error; docs/submission.md)."""

    def __init__(self, message: str, code: str = "score_error") -> None:
        super().__init__(message)
        self.code = code


def invalid_submission(report: Any, submission: Any, split_dir: Any) -> ScoreError:
    """One line for a submission that does not validate: the count per code and the first error;
    `phybench validate` lists them all."""
    from collections import Counter

    errors = report.errors
    counts = Counter(p.code for p in errors)
    first = errors[0]
    return ScoreError(f"the submission does not validate: {len(errors)} error(s) ("
                      + ", ".join(f"{n} {c}" for c, n in counts.most_common()) + f"), first: {first.message}; "
                      f"all of them: phybench validate {quote(str(submission))} --data {quote(str(split_dir))}", first.code)


@dataclass
class ScoreOutput:
    results: Results
    details: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def samples_sidecar(results: Results, details: Sequence[dict[str, Any]]) -> Sidecar | None:
    """Per-sample conditioned vs generated velocity for the leaderboard's figure-5 plot.

    Written beside a results file as `<stem>.samples.json` (format in leaderboard/README.md);
    None for a family without a plotted DoF (nothing to plot, no sidecar).
    """
    import math

    dof = family_of(get_task(results["task"])).plot_dof
    if dof is None:
        return None

    def num(x: float) -> float | None:
        return None if x is None or not math.isfinite(x) else float(f"{x:.9g}")

    return {
        "kind": "phybench-samples",
        "schema_version": 1,
        "submission_hash": results["provenance"]["submission_hash"],
        "split_hash": results["provenance"]["split_hash"],
        "dof": dof,
        "samples": [_sidecar_row(d, num) for d in details],
    }


def _sidecar_row(d: dict[str, Any], num: Callable[[float], float | None]) -> SidecarRow:
    """One video's sidecar row from its detail row, numbers rounded by `num`."""
    from ..learned.law import sidecar_law

    row: SidecarRow = {"sample_id": d["sample_id"], "level": d["level"], "true_velocity": num(d["true_velocity"]),
                       "generated_velocity": None if d.get("untrackable") else num(d["generated_velocity"])}
    if d.get("law"):
        row["law"] = sidecar_law(d["law"])
    return row


def scored_files(path: str | os.PathLike[str], scored: ScoreOutput) -> list[tuple[Path, bytes]]:
    """(path, bytes) of the results file and, for a family with a plotted DoF, its `.samples.json`
    sidecar (`phybench.scoring.run.layout.output_files`); every byte is made before anything is written."""
    from .layout import output_files

    return output_files(path, scored.results, samples_sidecar(scored.results, scored.details))


def write_results(path: str | os.PathLike[str], scored: ScoreOutput,
                  extra: Sequence[tuple[str | os.PathLike[str], bytes]] = ()) -> Path:
    """The results file and, for a family with a plotted DoF, its `.samples.json` sidecar beside it
    (the leaderboard's generated-vs-conditioned plot), written as a unit: both or neither, also on a
    full disk (`phybench.io.atomic_write_many`).  `extra` files join the unit.  Returns the path."""
    from ...io import atomic_write_many

    atomic_write_many([*scored_files(path, scored), *extra])
    return Path(path)


def parse_metrics(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """The requested metrics in canonical (registration) order; None: the default ones."""
    if text is None:
        return default_metrics()
    choices = requestable_metrics()
    names = [m.strip() for m in (text.split(",") if isinstance(text, str) else text) if m.strip()]
    always = [m for m in names if m in companion_metrics()]  # scored with their base metric anyway
    if always and not [m for m in names if m not in always]:
        raise ScoreError(f"{', '.join(always)} comes with every score; name the metric(s) to score with it, e.g. "
                         f"--metrics ssim,{always[0]}")
    names = [m for m in names if m not in always]
    unknown = [m for m in names if m not in choices]
    if unknown:
        raise ScoreError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(choices)}")
    if not names:
        raise ScoreError(f"no metrics given; choose from {', '.join(choices)}")
    return tuple(m for m in choices if m in names)  # canonical order


ESTIMATE_MIN_VIDEOS = 50  # below this a long run is not long: no estimate


@dataclass
class _Split:
    """An evaluation split opened for scoring: its rows are read once, in stored order (the order
    of its hash)."""

    dir: Path
    reader: SplitReader
    rows: list[SplitRow]

    @property
    def manifest(self) -> Manifest:
        return self.reader.manifest

    @property
    def ids(self) -> list[str]:
        return [row["sample_id"] for row in self.rows]


def _open_split(split_dir: str | os.PathLike[str]) -> _Split:
    reader = SplitReader(split_dir)
    spec, manifest = reader.spec, reader.manifest
    if manifest.get("spec_hash") != spec.spec_hash():
        raise ScoreError(
            f"{split_dir} was made from {spec.name} spec {str(manifest.get('spec_hash'))[:12]}, but this phybench "
            f"(version {__version__}) registers {spec.spec_hash()[:12]}: regenerate the split with this version")
    return _Split(Path(split_dir), reader, list(reader.rows()))


def _weights(metrics: tuple[str, ...], asked: bool, warnings: list[str]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The metrics that can run and the hashes of the weights they use; missing weights are an error
    for metrics the caller named, a warning (and the metric dropped) for the defaults."""
    torch_metrics = [m for m in metrics if METRICS.get(m).weights]
    if not torch_metrics:
        return metrics, {}
    from ..perceptual.weights import WeightsMissing, load, weight_hashes

    weights: dict[str, Any] = {}
    try:
        hashes = weight_hashes()
        for m in torch_metrics:
            name = METRICS.get(m).weights
            assert name is not None  # torch_metrics are those with weights
            load(name)  # verifies the file hash now, not half-way through
            weights[name] = hashes[name]
            weights[f"{name}.source"] = hashes[f"{name}.source"]
    except WeightsMissing as exc:
        if asked:
            raise ScoreError(f"{', '.join(torch_metrics)} asked for, but: {exc}") from None
        warnings.append(f"skipping {', '.join(torch_metrics)}: {exc}")
        return tuple(m for m in metrics if m not in torch_metrics), {}
    return metrics, weights


def score(
    submission: str | os.PathLike[str],
    split_dir: str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    *,
    workers: int = 1,
    batch_size: int = 16,
    device: str = "cpu",
    progress: bool = True,
    features: Mapping[str, Mapping[str, Any]] | None = None,
) -> ScoreOutput:
    """Score a submission against a split; raises ScoreError on anything that prevents it.

    Each video is decoded once, to validate it and to score it (`loop.run_pass`), serially or
    in `workers` processes: the results are the same bytes either way.  Nothing is written.
    features: the batched metrics' values and features computed elsewhere, {sample_id: {key: value}}
    with the keys their batching classes write (`FeaturePass.arrays`; a set metric's reference
    features only when the reference cache is cold), exactly as this pass would compute them: `leaderboard verify` shards those passes over processes
    (`phybench.leaderboard.verify.shards.feature_shard`).
    """
    from tqdm import tqdm

    from ...submission.archive import SubmissionError
    from ...submission.format import open_submission
    from ...submission.validation import check_header, finish, record_video, unopenable
    from ..perceptual.batched import StaleFeatures
    from ..perceptual.features import load_reference, reference_cache_path
    from .batches import batched_metrics, needs_reference, set_metrics
    from .loop import PassSettings, run_pass

    warnings: list[str] = []
    metrics, weights = _weights(parse_metrics(metrics), metrics is not None, warnings)
    split = _open_split(split_dir)
    manifest, ids = split.manifest, split.ids
    try:
        sub = open_submission(submission, manifest=manifest)  # opened once
    except SubmissionError as exc:
        raise invalid_submission(unopenable(submission, split_dir, manifest, ids, exc), submission, split_dir) from None
    with sub:
        report = check_header(sub, manifest, split_dir, ids)  # submission.json, ids: before any video
        if not report.ok:
            raise invalid_submission(report, submission, split_dir)
        order = sub.storage_order(ids)  # compressed tars are only cheap to read front to back
        torch_metrics = batched_metrics(metrics)
        cache = reference_cache_path(manifest, weights, batch_size, order, device) if needs_reference(torch_metrics) else None
        cached = load_reference(cache, len(ids))
        settings = PassSettings(metrics, torch_metrics, batch_size, device, real_cached=cached is not None)
        if progress and len(ids) >= ESTIMATE_MIN_VIDEOS and torch_metrics and features is None:
            import sys

            from .estimate import estimate_line

            print(estimate_line(split.reader, split.rows[0], len(ids), metrics, torch_metrics,
                                cached=cached is not None, batch_size=batch_size, device=device, workers=workers),
                  file=sys.stderr)
        with tqdm(total=len(ids), desc=f"score {manifest['task']}/{manifest['split']}", unit="video",
                  disable=not progress) as bar:
            done = run_pass(sub, split.reader, split.rows, order, settings, workers=workers, features=features,
                            tick=bar.update)
        meta = dict(sub.meta)
    for sample_id in order:  # the videos' own problems, in storage order, as `validate` lists them
        record_video(report, *done.checks[sample_id])
    if not finish(report).ok:
        raise invalid_submission(report, submission, split_dir)
    warnings[:0] = [p.message for p in report.problems if p.severity == "warning"]
    details, digests = [done.found[i][0] for i in ids], [done.found[i][1] for i in ids]
    _check_split(split, digests)
    warnings.extend(_condition_warnings(details, manifest))
    try:
        sets = set_metrics(torch_metrics, done.features, features, cached, cache, ids, order, _groups(details),
                           int(manifest["frames"]))
    except StaleFeatures as exc:
        raise ScoreError(str(exc)) from None
    results = build_results(model=_model_meta(meta), manifest=manifest,
                            provenance=_provenance(split, metrics, weights, report.submission_hash),
                            details=details, metrics=reported(metrics, family_of(split.reader.spec).metrics),
                            set_metrics=sets)
    if warnings:
        results["warnings"] = sorted(set(warnings))
    return ScoreOutput(results, details, warnings)


def _check_split(split: _Split, digests: list[str]) -> None:
    """The split hash recomputed from the rows as they were used must be the manifest's."""
    recomputed = split_hash(split.reader.plan.identity(), digests)
    if recomputed != split.manifest["split_hash"]:
        raise ScoreError(
            f"{split.dir} does not verify: its manifest says split hash {split.manifest['split_hash']}, the data gives "
            f"{recomputed}. Run `phybench verify {quote(str(split.dir))}` to see which shard changed, then regenerate or re-download it.")


def _condition_warnings(details: list[dict[str, Any]], manifest: Manifest) -> list[str]:
    differ = [d for d in details if "condition_frames_differ" in d]
    if not differ:
        return []
    worst = max(differ, key=lambda d: d["condition_frames_differ"])
    return [f"{len(differ)} video(s) have condition frames that differ from the split's (mean absolute difference "
            f"up to {worst['condition_frames_differ']} grey levels, e.g. {worst['sample_id']}): the first "
            f"{manifest['condition_frames']} frames of every video must be the split's own; a BGR/RGB swap, blank "
            "or shifted frames?"]


def _groups(details: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The groups a set metric is computed over: the whole split and each level (masks over `details`)."""
    levels = [d["level"] for d in details]
    return {OVERALL: np.ones(len(details), bool)} | {
        f"level:{lv}": np.array([x == lv for x in levels]) for lv in sorted(set(levels))}


def results_model(meta: dict[str, Any]) -> dict[str, Any]:
    """The results file's `model` block for a submission.json (what `leaderboard reproduce` compares)."""
    return _model_meta(meta)


def _model_meta(meta: dict[str, Any]) -> dict[str, Any]:
    from ...submission.model_fields import submission_fields

    model_meta: dict[str, Any] = dict(meta.get("model") or {})
    model_meta.update(submission_fields(meta))  # the top-level keys of submission.json the board shows
    return model_meta


def _provenance(split: _Split, metrics: Sequence[str], weights: dict[str, Any], submission_hash: str | None) -> Provenance:
    from ...tasks.protocols import protocol_of

    spec, manifest, n = split.reader.spec, split.manifest, len(split.rows)
    full = manifest.get("full_size")
    # every video is parsed: the tracking conventions (untrackable, excluded) are always stated
    settings = settings_blocks([TRACKING_METRIC, *reported(metrics, family_of(spec).metrics)])
    return {
        "phybench_version": __version__,
        "task_spec_hash": spec.spec_hash(),
        "split_hash": manifest["split_hash"],
        "split_num_samples": n,
        "split_full_size": manifest.get("full_size"),
        # the evaluation protocol those sizes make (full, lite, or "limit N": a debugging subset)
        "protocol": protocol_of(spec.name, n, full) if isinstance(full, int) else None,
        "resolution": manifest["resolution"],
        "pixel_mapping": pixel_mapping(manifest).kind,
        "submission_hash": submission_hash,  # the bytes this pass read and hashed
        "weights": weights,
        "metric_settings": settings,
        "results_schema": "docs/results.md",
    }

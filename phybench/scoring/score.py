"""Score a submission against a split: validate, verify, parse, measure, summarise.

One pass over the split in its stored order.  Each ground-truth row is re-hashed as it is
used (the sample digest of `split.py`), and the recomputed split hash must equal the
manifest's before anything is written: a results file is only ever produced against a
split that verifies.  The submission is validated first and never modified.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import __version__
from ..io import atomic_save_npy
from .metrics import (METRICS, TRACKING_METRIC, Sample, companion_metrics, default_metrics, reported, requestable_metrics,
                      seen_by_workers, settings_blocks)
from .parse import TILE, PixelMapping, parse_video
from .results import OVERALL, build_results
from ..data.split import SplitReader, plan_from_manifest, row_digest, row_scene, split_hash
from ..tasks import family_of, get_task
from .velocity import VideoErrors, video_errors

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class ScoreError(Exception):
    """A submission or split that cannot be scored; the message says why and what to do, `code` names
    the case (a validation problem's code, or score_error; docs/submission.md)."""

    def __init__(self, message: str, code: str = "score_error") -> None:
        super().__init__(message)
        self.code = code


def _invalid(report: Any, submission: Any, split_dir: Any) -> ScoreError:
    """One line for a submission that does not validate: the count per code and the first error;
    `phybench validate` lists them all."""
    from collections import Counter

    errors = report.errors
    counts = Counter(p.code for p in errors)
    first = errors[0]
    return ScoreError(f"the submission does not validate: {len(errors)} error(s) ("
                      + ", ".join(f"{n} {c}" for c, n in counts.most_common()) + f"), first: {first.message}; "
                      f"all of them: phybench validate {submission} --data {split_dir}", first.code)


@dataclass
class ScoreOutput:
    results: dict[str, Any]
    details: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def samples_sidecar(results: dict[str, Any], details: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Per-sample conditioned vs generated velocity for the leaderboard's figure-5 plot.

    Written beside a results file as `<stem>.samples.json` (format in leaderboard/README.md);
    None for a family without a plotted DoF (nothing to plot, no sidecar).
    """
    import math

    from .law import sidecar_law

    if family_of(get_task(results["task"])).plot_dof is None:
        return None

    def num(x: float) -> float | None:
        return None if x is None or not math.isfinite(x) else float(f"{x:.9g}")

    return {
        "kind": "phybench-samples",
        "schema_version": 1,
        "submission_hash": results["provenance"]["submission_hash"],
        "split_hash": results["provenance"]["split_hash"],
        "dof": family_of(get_task(results["task"])).plot_dof,
        "samples": [
            {
                "sample_id": d["sample_id"],
                "level": d["level"],
                "true_velocity": num(d["true_velocity"]),
                "generated_velocity": None if d.get("untrackable") else num(d["generated_velocity"]),
                **({"law": sidecar_law(d["law"])} if d.get("law") else {}),  # phybench.scoring.law
            }
            for d in details
        ],
    }


def results_files(path: str | os.PathLike[str], scored: ScoreOutput) -> list[tuple[Path, bytes]]:
    """(path, bytes) of the results file and, for a family with a plotted DoF, its `.samples.json`
    sidecar; every byte is made before anything is written (an unencodable string fails here)."""
    import json

    from .results import results_bytes

    path = Path(path)
    files = [(path, results_bytes(scored.results))]
    samples = samples_sidecar(scored.results, scored.details)
    if samples is not None:
        files.insert(0, (path.with_name(path.stem + ".samples.json"),
                         (json.dumps(samples, sort_keys=True) + "\n").encode()))
    return files


def write_results(path: str | os.PathLike[str], scored: ScoreOutput,
                  extra: Sequence[tuple[str | os.PathLike[str], bytes]] = ()) -> Path:
    """The results file and, for a family with a plotted DoF, its `.samples.json` sidecar beside it
    (the leaderboard's generated-vs-conditioned plot), written as a unit: both or neither, also on a
    full disk (`phybench.io.atomic_write_many`).  `extra` files join the unit.  Returns the path."""
    from ..io import atomic_write_many

    atomic_write_many([*results_files(path, scored), *extra])
    return Path(path)


def _tracker_running() -> bool:
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def _stop_resource_tracker() -> None:
    """Stop the helper process that a spawned pool starts (multiprocessing's resource tracker) and wait
    for it: left alone it outlives `score` for a moment, in the caller's process group (a CI job's
    timer sees a stray process).  Called only when the pool started it (a tracker the caller already
    had may hold the caller's resources); the next pool starts a new one when it needs it."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        try:
            stop()
        except Exception:  # noqa: BLE001 - best effort: scoring is done, a tracker that will not stop is harmless
            pass


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


def _mapping(manifest: dict[str, Any]) -> PixelMapping:
    kind = manifest.get("pixel_mapping", "tile")
    return TILE if kind == "tile" else PixelMapping(kind, float(manifest.get("world_size", 10.0)))


def _reference_cache(manifest: dict[str, Any], weights: dict[str, Any], batch_size: int, order: Sequence[str],
                     device: str) -> Path | None:
    """Where the split's own I3D features are cached: only the submission's are computed again.

    Keyed by the split hash, the pinned I3D weights, and the batches the features are
    computed in (batch size, storage order, device): I3D logits move by ~3e-6 with the batch
    composition, so a cached feature is used only where it is bit-identical to a fresh one.
    $PHYBENCH_FVD_CACHE=0 turns the cache off; $PHYBENCH_FVD_CACHE_DIR moves it."""
    import hashlib

    from ..io import cache_dir

    if os.environ.get("PHYBENCH_FVD_CACHE", "1") == "0":
        return None
    h = hashlib.sha256()
    for part in (manifest["split_hash"], str(weights.get("i3d")), str(batch_size), device, "\n".join(order)):
        h.update(part.encode() + b"\0")
    return cache_dir("fvd-reference", override_env="PHYBENCH_FVD_CACHE_DIR") / f"{manifest['task']}-{manifest['split']}-{h.hexdigest()[:32]}.npy"


def _load_reference(path: Path | None, n: int) -> np.ndarray | None:
    if path is None or not path.is_file():
        return None
    try:
        feats = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None  # a damaged cache file is recomputed
    return feats if feats.ndim == 2 and feats.shape[0] == n and feats.dtype == np.float64 else None


# Mean absolute difference (grey levels) allowed between a submission's condition frames and
# the split's: lossy mp4 of our frames measures ~0.2; a channel swap or a blank frame tens.
CONDITION_TOLERANCE = 2.0


def score_sample(
    row: dict[str, Any],
    video: np.ndarray,
    gt_video: np.ndarray | None,
    manifest: dict[str, Any],
    metrics: Sequence[str],
) -> dict[str, Any]:
    """One detail row: physics errors from parsed pixels, then every registered per-video
    metric that is requested (or a companion the family lists) and has a `compute`."""
    spec = get_task(manifest["task"])
    family = family_of(spec)
    bodies = row_scene(row).bodies
    colours = [tuple(int(c) for c in b.colour) for b in bodies]
    parsed = None
    if family.object_reader == "none":  # objects share colours: no per-object physics errors
        errors = VideoErrors()
    else:
        refine = None if family.object_reader == "discs" else False
        parsed = parse_video(video, colours, _mapping(manifest), refine=refine)
        errors = video_errors(
            parsed,
            row["positions"],
            row["radii"],
            world_size=float(manifest["world_size"]),
            frame_interval=float(manifest["frame_interval"]),
            condition_frames=int(manifest["condition_frames"]),
            contact_time=family.contact_time(row),
            colour_names=tuple(b.describe() for b in bodies),
        )
    sample = Sample(row, video, gt_video, manifest, lambda: errors, parsed)
    detail: dict[str, Any] = {
        "sample_id": row["sample_id"],
        "level": row["level"],
        "untrackable": errors.untrackable,
        "excluded": errors.excluded,
        "scored_pairs": errors.scored_pairs,
        "flagged_frames": errors.flagged_frames,
        "velocity_error": errors.velocity_error,
        "position_error": errors.position_error,
        "momentum_error": errors.momentum_error,
        "energy_error": errors.energy_error,
        # the conditioned value of the velocity DoF (ball 0 moves towards +x in every task)
        "true_velocity": family.conditioned_value(row),
        "generated_velocity": errors.generated_velocity,
    }
    if gt_video is not None:  # the condition frames must be the split's own (a BGR swap, blank frames?)
        cf = int(manifest["condition_frames"])
        diff = float(np.abs(video[:cf].astype(np.int16) - gt_video[:cf].astype(np.int16)).mean())
        if diff > CONDITION_TOLERANCE:
            detail["condition_frames_differ"] = round(diff, 3)
    for name in reported(metrics, family.metrics):
        metric = METRICS.get(name)
        if metric.kind != "video" or metric.compute is None:
            continue  # LPIPS and set metrics: the scoring loop computes them
        if metric.needs_ground_truth and gt_video is None:
            continue
        detail[name] = metric.compute(sample)
        if metric.details is not None:
            detail.update(metric.details(sample))
    return detail


def _score_row(
    reader: SplitReader, row: dict[str, Any], video: np.ndarray, metrics: Sequence[str]
) -> tuple[dict[str, Any], str, np.ndarray | None]:
    """(detail, sample digest, ground-truth video) of one row: re-hash the row as it is used."""
    manifest = reader.manifest
    gt = reader.video(row) if "video" in row else None
    digest = row_digest(reader.spec, row, gt).hex()
    return score_sample(row, video, gt, manifest, metrics), digest, gt


def _score_ids(
    sub_path: str, split_dir: str, ids: Sequence[str], metrics: Sequence[str]
) -> dict[str, tuple[dict[str, Any] | None, str, list[Any], dict[str, str]]]:
    """Worker: {sample_id: (detail or None, sample digest, validation problems, file digests)} for `ids`,
    read in storage order.  The worker decodes each video once: validating it (its problems and
    file digests go back to the parent's report) and scoring it."""
    from ..submission.format import open_submission

    reader = SplitReader(split_dir)
    wanted = set(ids)
    rows = {row["sample_id"]: row for row in reader.rows() if row["sample_id"] in wanted}
    out = {}
    with open_submission(sub_path, manifest=reader.manifest) as sub:
        for sample_id in sub.storage_order(ids):
            video, problems, files = sub.inspect(sample_id)
            if video is None or any(p.severity == "error" for p in problems):
                out[sample_id] = (None, "", problems, files)
                continue
            detail, digest, _ = _score_row(reader, rows[sample_id], video, metrics)
            out[sample_id] = (detail, digest, problems, files)
    return out


ESTIMATE_MIN_VIDEOS = 50  # below this a long run is not long: no estimate


def _print_estimate(manifest: dict[str, Any], n: int, lpips_model: Any, fvd: bool, cached: bool,
                    batch_size: int, device: str) -> None:
    """Before a long LPIPS / FVD run: their cost per video, measured here on one blank video."""
    import sys
    import time

    frames, res = int(manifest["frames"]), int(manifest["resolution"])
    generated = frames - int(manifest["condition_frames"])
    blank = np.full((frames, res, res, 3), 255, np.uint8)
    parts, per_video = [], 0.0
    if lpips_model is not None:
        from .lpips import lpips_frames

        t0 = time.perf_counter()
        lpips_frames(blank[:generated], blank[:generated], model=lpips_model, batch_size=batch_size)
        dt = time.perf_counter() - t0
        per_video += dt
        parts.append(f"LPIPS {dt:.2f} s")
    if fvd:
        import torch

        from .fvd import _cached_model, i3d_logits

        _cached_model(str(torch.device(device)))  # built once, as the run will
        t0 = time.perf_counter()
        i3d_logits(blank[None], batch_size=1, device=device)
        dt = time.perf_counter() - t0
        per_video += dt * (1 if cached else 2)
        parts.append(f"I3D {dt:.2f} s" + (" (reference features cached)" if cached else " x2 (reference and generated; "
                                          "cached for the next model on this split)"))
    if parts:
        minutes = per_video * n / 60
        print(f"estimate: {', '.join(parts)} per video, measured here on one video: about {minutes:.1f} min "
              f"for {n} videos on {device} (velocity and image metrics add little)", file=sys.stderr)


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
    """Score a validated submission; raises ScoreError on anything that prevents it.

    features: LPIPS and I3D features computed elsewhere, {sample_id: {"lpips": float,
    "fvd_fake": (400,), "fvd_real": (400,) unless the reference cache is warm}}, exactly as
    this loop would compute them (same batches, device and threads): `leaderboard verify`
    shards those passes over processes (`phybench.leaderboard.shards.feature_shard`).
    """
    from ..submission.archive import SubmissionError
    from ..submission.format import open_submission
    from ..submission.validation import unopenable

    asked = metrics is not None  # named by the caller, not the defaults: missing weights are an error
    metrics = parse_metrics(metrics)
    split_dir = Path(split_dir)
    reader = SplitReader(split_dir)
    manifest = reader.manifest
    plan = plan_from_manifest(manifest)
    spec = plan.spec
    if manifest.get("spec_hash") != spec.spec_hash():
        raise ScoreError(
            f"{split_dir} was made from {spec.name} spec {str(manifest.get('spec_hash'))[:12]}, but this phybench "
            f"(version {__version__}) registers {spec.spec_hash()[:12]}: regenerate the split with this version"
        )

    warnings: list[str] = []
    weights: dict[str, Any] = {}
    torch_metrics = [m for m in metrics if METRICS.get(m).weights]
    if torch_metrics:
        from .weights import WeightsMissing, weight_hashes

        try:
            hashes = weight_hashes()
            for m in torch_metrics:
                name = METRICS.get(m).weights
                from .weights import load

                load(name)  # verifies the file hash now, not half-way through
                weights[name] = hashes[name]
                weights[f"{name}.source"] = hashes[f"{name}.source"]
        except WeightsMissing as exc:
            if asked:
                raise ScoreError(f"{', '.join(torch_metrics)} asked for, but: {exc}") from None
            warnings.append(f"skipping {', '.join(torch_metrics)}: {exc}")
            metrics = tuple(m for m in metrics if m not in torch_metrics)
            torch_metrics = []
            weights = {}

    rows = list(reader.rows())  # the split in stored order (the order of its hash): read once
    ids = [row["sample_id"] for row in rows]
    # Validation reads each video where it is scored (decoded once): the header (submission.json,
    # ids) is checked first, the videos' own problems join the report as they are decoded, and a
    # submission with any error stops before anything is written.
    try:
        sub = open_submission(submission, manifest=manifest)  # opened once; closed when score returns
    except SubmissionError as exc:
        raise _invalid(unopenable(submission, split_dir, manifest, ids, exc), submission, split_dir) from None
    with sub:
        return _score_open(sub, submission, split_dir, reader, plan, rows, metrics, torch_metrics, weights, warnings,
                           workers=workers, batch_size=batch_size, device=device, progress=progress, features=features)


def _score_open(sub: Any, submission: str | os.PathLike[str], split_dir: Path, reader: SplitReader, plan: Any, rows: list[dict[str, Any]], metrics: Sequence[str],
                torch_metrics: list[str], weights: dict[str, Any], warnings: list[str], *, workers: int,
                batch_size: int, device: str, progress: bool,
                features: Mapping[str, Mapping[str, Any]] | None) -> ScoreOutput:
    """`score` on an open submission: validate its header, then decode each video once, to check and
    score it, serially or in worker processes."""
    from tqdm import tqdm

    from ..submission.validation import check_header, finish, record_video

    manifest, spec = reader.manifest, plan.spec
    ids = [row["sample_id"] for row in rows]
    n = len(rows)
    report = check_header(sub, manifest, split_dir, ids)
    if not report.ok:
        raise _invalid(report, submission, split_dir)
    found: dict[str, tuple[dict[str, Any], str]] = {}
    real_feats: list[np.ndarray] = []
    fake_feats: list[np.ndarray] = []
    fvd_order: list[str] = []  # sample ids of the I3D features, in the order computed
    bar = tqdm(total=n, desc=f"score {manifest['task']}/{manifest['split']}", unit="video", disable=not progress)
    meta = dict(sub.meta)
    serial = (workers <= 1 or torch_metrics or sub.kind not in ("folder", "zip") or n < 2 * workers
              or not all(seen_by_workers(m) for m in reported(metrics, family_of(spec).metrics)))
    order = sub.storage_order(ids)  # compressed tars are only cheap to read front to back
    if not serial:
        bounds = np.linspace(0, n, workers + 1).round().astype(int)
        # One BLAS thread per worker: spare OpenBLAS threads spin and slow 2 cores 2-3x.
        # Spawned workers read these at start (lazily, at submit); then the parent's
        # environment is restored.
        saved = {k: os.environ.get(k) for k in _BLAS_ENV}
        had_tracker = _tracker_running()
        os.environ.update({k: "1" for k in _BLAS_ENV})
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = [
                    pool.submit(_score_ids, str(submission), str(split_dir), order[a:b], metrics)
                    for a, b in zip(bounds[:-1], bounds[1:])
                ]
                for fut in futures:
                    part = fut.result()
                    for sample_id, (detail, digest, problems, files) in part.items():
                        if record_video(report, problems, files) and detail is not None:
                            found[sample_id] = (detail, digest)
                    bar.update(len(part))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            if not had_tracker:
                _stop_resource_tracker()
    else:
        lpips_model = None
        if "lpips" in torch_metrics and features is None:
            from .lpips import LPIPS

            lpips_model = LPIPS().to(device).eval()
        by_id = {row["sample_id"]: row for row in rows}
        start = int(manifest["condition_frames"])
        pending: list[tuple[np.ndarray, np.ndarray]] = []
        cache_file = _reference_cache(manifest, weights, batch_size, order, device) if "fvd" in torch_metrics else None
        cached = _load_reference(cache_file, n)
        if progress and n >= ESTIMATE_MIN_VIDEOS and features is None:
            _print_estimate(manifest, n, lpips_model, "fvd" in torch_metrics, cached is not None, batch_size, device)

        def flush() -> None:
            if pending:
                from .fvd import i3d_logits

                if cached is None:
                    real_feats.append(i3d_logits(np.stack([p[0] for p in pending]), batch_size=batch_size, device=device))
                fake_feats.append(i3d_logits(np.stack([p[1] for p in pending]), batch_size=batch_size, device=device))
            pending.clear()

        for sample_id in order:
            video, problems, files = sub.inspect(sample_id)
            if not record_video(report, problems, files) or video is None:
                bar.update(1)
                continue  # reported below, with every other problem
            detail, digest, gt = _score_row(reader, by_id[sample_id], video, metrics)
            if features is not None and gt is not None:  # computed by shards: taken as they are
                pre = features[sample_id]
                if "lpips" in torch_metrics:
                    detail["lpips"] = float(pre["lpips"])
                if "fvd" in torch_metrics:
                    fvd_order.append(sample_id)
                    fake_feats.append(np.asarray(pre["fvd_fake"], np.float64)[None])
                    if cached is None:
                        if "fvd_real" not in pre:
                            raise ScoreError("the FVD reference cache was removed while the shards ran; run again")
                        real_feats.append(np.asarray(pre["fvd_real"], np.float64)[None])
            elif lpips_model is not None and gt is not None:
                from .lpips import lpips_frames

                detail["lpips"] = float(
                    lpips_frames(gt[start:], video[start:], model=lpips_model, batch_size=batch_size,
                                 device=device).mean()
                )
            if "fvd" in torch_metrics and gt is not None and features is None:
                pending.append((gt, video))
                fvd_order.append(sample_id)
                if len(pending) >= batch_size:
                    flush()
            found[sample_id] = (detail, digest)
            bar.update(1)
        flush()
        if cached is not None:
            real_feats[:] = [cached]
        elif cache_file is not None and real_feats:
            atomic_save_npy(cache_file, np.concatenate(real_feats).astype(np.float64))
    bar.close()
    finish(report)
    if not report.ok:
        raise _invalid(report, submission, split_dir)
    warnings = [p.message for p in report.problems if p.severity == "warning"] + warnings
    missing = [i for i in ids if i not in found]
    if missing:  # validation makes this unreachable; never score a partial set silently
        raise ScoreError(f"{len(missing)} sample(s) were not scored, e.g. {missing[0]}")
    details = [found[i][0] for i in ids]
    digests = [found[i][1] for i in ids]
    differ = [d for d in details if "condition_frames_differ" in d]
    if differ:
        worst = max(differ, key=lambda d: d["condition_frames_differ"])
        warnings.append(
            f"{len(differ)} video(s) have condition frames that differ from the split's (mean absolute difference "
            f"up to {worst['condition_frames_differ']} grey levels, e.g. {worst['sample_id']}): the first "
            f"{manifest['condition_frames']} frames of every video must be the split's own; a BGR/RGB swap, blank "
            "or shifted frames?")

    recomputed = split_hash(plan.identity(), digests)
    if recomputed != manifest["split_hash"]:
        raise ScoreError(
            f"{split_dir} does not verify: its manifest says split hash {manifest['split_hash']}, the data gives "
            f"{recomputed}. Run `phybench verify {split_dir}` to see which shard changed, then regenerate or re-download it."
        )

    set_metrics: dict[str, dict[str, Any]] = {}
    if "fvd" in torch_metrics and real_feats:
        from .fvd import frechet_distance

        # features are in storage order: put them in split order
        pos = {sid: k for k, sid in enumerate(fvd_order)}
        perm = np.array([pos[i] for i in ids])
        real, fake = np.concatenate(real_feats)[perm], np.concatenate(fake_feats)[perm]
        levels = [d["level"] for d in details]
        groups = {OVERALL: np.ones(len(details), bool)} | {
            f"level:{lv}": np.array([x == lv for x in levels]) for lv in sorted(set(levels))
        }
        for group, mask in groups.items():
            if mask.sum() >= 2:
                set_metrics[group] = {
                    "fvd": {
                        "value": frechet_distance(real[mask], fake[mask]),
                        "videos": int(mask.sum()),
                        "frames": int(manifest["frames"]),
                    }
                }

    model_meta: dict[str, Any] = dict(meta.get("model") or {})
    for key in ("notes", "sampler", "seeds", "conditioning"):
        if key in meta:
            model_meta[key] = meta[key]
    if isinstance(meta.get("sources"), dict):  # recorded by `phybench pack`: how many videos were lossy
        from ..data.source import source_counts

        model_meta["sources"] = source_counts(meta["sources"])

    from ..tasks.protocols import protocol_of

    reported_metrics = reported(metrics, family_of(spec).metrics)
    # every video is parsed: the tracking conventions (untrackable, excluded) are always stated
    settings = settings_blocks([TRACKING_METRIC, *reported_metrics])
    provenance = {
        "phybench_version": __version__,
        "task_spec_hash": spec.spec_hash(),
        "split_hash": manifest["split_hash"],
        "split_num_samples": n,
        "split_full_size": manifest.get("full_size"),
        # the evaluation protocol those sizes make (full, lite, or "limit N": a debugging subset)
        "protocol": protocol_of(spec.name, n, manifest["full_size"]) if isinstance(manifest.get("full_size"), int) else None,
        "resolution": manifest["resolution"],
        "pixel_mapping": _mapping(manifest).kind,
        "submission_hash": report.submission_hash,  # validate hashed the same bytes
        "weights": weights,
        "metric_settings": settings,
        "results_schema": "docs/results.md",
    }
    results = build_results(
        model=model_meta,
        manifest=manifest,
        provenance=provenance,
        details=details,
        metrics=reported_metrics,
        set_metrics=set_metrics,
    )
    if warnings:
        results["warnings"] = sorted(set(warnings))
    return ScoreOutput(results, details, warnings)

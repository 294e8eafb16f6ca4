"""`phybench view SUB --data SPLIT --out DIR`: a static per-submission viewer (issue 37).

One folder of data: ``viewer-data.json`` (the page's data) and ``media/``, one PNG sprite per
video holding every frame of ground truth | generated | difference (and, with ``--compare``,
generated | difference of each further submission), animated by the page.  Standalone (the
default of `build_viewer` and ``phybench view``) the folder also holds the application
(``index.html`` with the data inline, ``viewer.css``, ``viewer.js``: `app`) and opens from
``file://`` or any static host with no request outside itself; a board's viewer
(``standalone=False``) holds the data only, and the site writes the application once (`app`).

What the page shows (docs/viewer.md):

* a header: model, split, protocol, provenance and the headline metrics with their 95%
  intervals, from the results file;
* a gallery: per kind of failure (each judge rule that fired, the largest velocity errors or
  velocity gaps, the untrackable videos, the largest law errors or wrong laws) up to ``per_kind`` videos;
* a player: the panels side by side and synchronised, condition frames marked, the ground
  truth's and the model's tracked positions drawn over the frames (SVG, from
  `phybench.scoring.physics.parse.parse_video` and the row's simulated states), the frames where a
  judge rule fired marked on a timeline with the rule's name, and position against time;
* a sortable, filterable table of every video whose rows open that video in the player
  (media for at most ``max_videos`` videos and about ``max_bytes``: the gallery's first, then in split order);
* with ``compare``: the samples where the models' velocity errors differ most.

The scores are reused, never re-scored (`viewer_sources`): with ``--results`` every number and
verdict comes from the results file, its per-video sidecar and, with ``--details``, the details
Parquet of the same score; without a results file the viewer scores the cheap metrics once, in
memory.  Two steps still read the videos, neither a metric: the parser tracks the bodies of the
videos with media (the overlay), and for a video whose stored verdict is abnormal the judge is
asked where it fired (the rule and frames: no file keeps them).  Media files are named by the
row's position in the split, never by a sample id, and the folder is built beside ``out`` and
swapped in whole.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..._version import __version__
from .app import APP_FILES, DATA, PAGE, data_bytes, template_bytes, viewer_page_html
from .viewer_media import MAX_SIDE, difference, pixel_tracks, sprite_png
from .viewer_sources import (CHEAP_METRICS, ViewerModel as _Model, SourceError, model_from_results, json_number as _num,
                             rank_among, scored_model)
from ...data.documents import Manifest

if TYPE_CHECKING:
    from ...scoring.run.documents import Results

VIEWER_MARKER = ".phybench-viewer"
VIEWER_MARKER_TEXT = "A phybench per-submission viewer (phybench view); rebuilt in place.\n"
STATIC_FILES = APP_FILES  # the application (`app`): in a standalone folder only
MAX_VIDEOS = 300  # videos with media (the gallery's first)
MAX_BYTES = 15_000_000  # media bytes: no further sprite once the media reach this
PER_KIND = 6  # gallery videos per kind of failure
# The table's metric columns, in order, where the details have them.
TABLE_METRICS = ("true_velocity", "generated_velocity", "velocity_error", "velocity_error_ranked", "ssim", "psnr", "law_error", "body_position_error")
# The header's metrics, in order, where the results have them (the rest are in the table or the results file):
# these, with the metrics that run a pinned network (`network_metrics`, their registry rows) after "psnr".
HEADLINE_BEFORE = ("velocity_error_ranked", "velocity_error", "ssim", "psnr")
HEADLINE_AFTER = ("abnormal", "law_error", "body_position_error")


def headline_metrics() -> tuple[str, ...]:
    """The header's metrics, in order (the network ones from the registry: this module names none)."""
    from ...scoring.metrics import network_metrics

    return HEADLINE_BEFORE + network_metrics() + HEADLINE_AFTER
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")


class ViewerError(Exception):
    """Bad input for a viewer; nothing was written.  `code` names the case."""

    def __init__(self, message: str, code: str = "usage") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ViewerReport:
    out_dir: Path
    videos: int
    with_media: int
    media_bytes: int
    gallery: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    details: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # the main model's, per video id

    def to_text(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.gallery.items()) or "nothing failed"
        page = self.out_dir / "index.html"
        lines = [f"viewer: {page}" if page.is_file() else f"viewer (data only: `phybench view --standalone`, or a "
                 f"site build, writes its page): {self.out_dir}",
                 f"{self.videos} videos, media for {self.with_media} ({self.media_bytes / 1e6:.1f} MB, "
                 f"{self.media_bytes / max(self.with_media, 1) / 1e3:.0f} kB per video); gallery: {kinds}"]
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])


# ================================================================ the output folder
def check_viewer_out_dir(out_dir: Path, inputs: Sequence[Path]) -> None:
    """Refuse an --out that is someone else's folder, a file, or inside / around an input."""
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise ViewerError(f"--out {out_dir} exists and is not a folder", "out_not_viewer")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / VIEWER_MARKER).is_file():
        raise ViewerError(f"--out {out_dir} is a non-empty folder that is not a phybench viewer (no {VIEWER_MARKER}); "
                          "choose an empty or new folder", "out_not_viewer")
    out = out_dir.resolve()
    for path in inputs:
        p = path.resolve()
        if out == p or out.is_relative_to(p) or p.is_relative_to(out):
            raise ViewerError(f"--out {out_dir} is inside or around the input {path}; write the viewer elsewhere",
                              "out_in_input")


def write_folder(out_dir: Path, files: dict[str, bytes]) -> None:
    """Write `files` ({relative name: bytes}) into a fresh folder beside `out_dir`, then swap it in.

    Every name is checked first: one or two plain components (``media/v0001.png``), nothing
    that could climb out of the folder or name a device."""
    for name in files:
        parts = name.split("/")
        if not 1 <= len(parts) <= 2 or not all(SAFE_NAME.match(p) or p == VIEWER_MARKER for p in parts):
            raise ViewerError(f"refusing to write {name!r}: not a plain file name inside the viewer", "unsafe_name")
    from ...io import replace_folder

    replace_folder(out_dir, files)


# ================================================================ numbers
def _hex(colour: Sequence[int]) -> str:
    return "#" + "".join(f"{int(c):02x}" for c in colour[:3])


def _params(row: dict[str, Any]) -> dict[str, Any]:
    """The row's scalar parameters (radius, velocity, ...)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("sample_id", "index", "level") or isinstance(value, bool):
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            out[key] = _num(value, 4)
    return out


def _law_cell(detail: dict[str, Any], headline: str | None) -> dict[str, Any] | None:
    law = detail.get("law")
    if not isinstance(law, dict):
        return None
    name = headline if headline and headline in law.get("fit", {}) else next(iter(law.get("fit", {})), None)
    if name is None:
        return None
    return {"law": law.get("law"), "param": name, "fit": _num(law["fit"].get(name)),
            "truth": _num(law.get("truth", {}).get(name))}


def _video_cell(detail: dict[str, Any], headline: str | None) -> dict[str, Any]:
    """One submission's numbers for one video, as the page shows them."""
    cell: dict[str, Any] = {m: _num(detail.get(m)) for m in TABLE_METRICS if m in detail}
    cell["abnormal"] = _num(detail.get("abnormal"))  # the judge's verdict (its findings are added beside)
    cell["untrackable"] = detail.get("untrackable") if isinstance(detail.get("untrackable"), str) else None
    cell["law"] = _law_cell(detail, headline)
    if "condition_frames_differ" in detail:
        cell["condition_frames_differ"] = _num(detail["condition_frames_differ"])
    return cell


# ================================================================ the build
def _levels(results: Results) -> list[dict[str, Any]]:
    """Per level (ID, then each OOD level as the results file orders them): the header's metrics."""
    levels = results.get("summary", {}).get("levels", {})
    if not isinstance(levels, dict):
        return []
    return [{"level": str(name), "videos": entry.get("videos"),
             "metrics": _headline(results, entry)}
            for name, entry in levels.items() if isinstance(entry, dict)]


def _headline(results: Results, group: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The header's metrics of one summary group (default: the whole split's)."""
    from ...scoring.metrics import METRICS

    overall = results.get("summary", {}).get("overall", {}) if group is None else group
    out = []
    for name in [m for m in headline_metrics() if m in results.get("metrics", [])]:
        entry = overall.get(name)
        if not isinstance(entry, dict):
            continue
        value = entry.get("mean", entry.get("value"))
        ci = entry.get("ci95") if isinstance(entry.get("ci95"), list) else None
        metric = METRICS.get(name) if name in METRICS else None
        out.append({"name": name, "label": metric.label if metric else name,
                    "higher": bool(results.get("higher_is_better", {}).get(name, False)),
                    "value": _num(value), "ci95": [_num(c) for c in ci] if ci else None,
                    "count": entry.get("count")})
    untr = overall.get("untrackable")
    if isinstance(untr, dict):
        out.append({"name": "untrackable", "label": "Untrackable", "higher": False,
                    "value": _num(untr.get("rate")), "ci95": None, "count": untr.get("count")})
    return out


def _gallery(model: _Model, order: list[str], per_kind: int) -> list[dict[str, Any]]:
    """Kinds of failure of one model, each with up to `per_kind` sample ids (worst first)."""
    kinds: list[dict[str, Any]] = []
    rules: dict[str, list[str]] = {}
    for sid in order:
        for rule in dict.fromkeys(f["rule"] for f in model.findings.get(sid, [])):
            rules.setdefault(rule, []).append(sid)
    for rule, ids in sorted(rules.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        kinds.append({"kind": f"rule:{rule}", "title": f"Judge rule “{rule}”",
                      "note": f"{len(ids)} video(s) where the judge's {rule} rule fired", "ids": ids[:per_kind]})

    def worst(metric: str) -> list[str]:
        vals = [(_num(model.details[s].get(metric), 17), s) for s in order]
        good = [(v, s) for v, s in vals if v is not None]
        return [s for _, s in sorted(good, key=lambda p: -p[0])]

    ve = worst("velocity_error")
    if ve:
        kinds.append({"kind": "velocity_error", "title": "Largest velocity errors",
                      "note": "the tracked ball's velocity against the simulator's, worst first", "ids": ve[:per_kind]})
    else:  # the sidecar alone: its generated and true velocities, largest gap first
        gaps = [(abs(g - t), s) for s in order
                if (g := _num(model.details[s].get("generated_velocity"), 17)) is not None
                and (t := _num(model.details[s].get("true_velocity"), 17)) is not None]
        if gaps:
            kinds.append({"kind": "velocity_gap", "title": "Largest velocity gaps",
                          "note": "generated against true velocity (the results' sidecar), largest gap first",
                          "ids": [s for _, s in sorted(gaps, key=lambda p: -p[0])][:per_kind]})
    untr = [s for s in order if isinstance(model.details[s].get("untrackable"), str)]
    if untr:
        kinds.append({"kind": "untrackable", "title": "Untrackable",
                      "note": f"{len(untr)} video(s) where a ball was lost in a scored frame", "ids": untr[:per_kind]})
    law = worst("law_error")
    if law:
        kinds.append({"kind": "law_error", "title": "Largest law errors",
                      "note": "the law fitted to the model's track against the one fitted to the ground truth",
                      "ids": law[:per_kind]})
    else:  # the sidecar alone: the videos whose fitted law is wrong in some aspect
        wrong = [s for s in order if isinstance(model.details[s].get("law"), dict) and model.details[s]["law"].get("wrong")]
        if wrong:
            kinds.append({"kind": "wrong_law", "title": "Wrong law",
                          "note": f"{len(wrong)} video(s) whose fitted law is wrong in some aspect (the results' sidecar)",
                          "ids": wrong[:per_kind]})
    body = worst("body_position_error")
    if body:
        kinds.append({"kind": "body_position_error", "title": "Largest body errors",
                      "note": "every body followed from pixels against the simulator's, worst first",
                      "ids": body[:per_kind]})
    return kinds


def gallery_of(models: Sequence[_Model], order: list[str], per_kind: int) -> list[dict[str, Any]]:
    """The first model's cards, then each compared model's failures (rules fired, untrackable) under its letter."""
    cards = [dict(k, model=0) for k in _gallery(models[0], order, per_kind)]
    for mi, other in enumerate(models[1:], start=1):
        letter = chr(65 + mi % 26)
        for k in _gallery(other, order, per_kind):
            if k["kind"].startswith("rule:") or k["kind"] == "untrackable":
                cards.append(dict(k, model=mi, kind=f"{letter}:{k['kind']}", title=f"{letter}: {k['title']}"))
    return cards


def _disagreement(a: _Model, b: _Model, order: list[str], metric: str = "velocity_error") -> dict[str, Any]:
    """Samples ordered by |a - b| of the per-video metric, largest first; videos one model could not track listed apart."""
    pairs: list[tuple[float, dict[str, Any]]] = []
    one_sided = []
    for sid in order:
        va, vb = _num(a.details[sid].get(metric), 17), _num(b.details[sid].get(metric), 17)
        if va is not None and vb is not None:
            pairs.append((abs(va - vb), {"id": sid, "a": _num(va), "b": _num(vb), "diff": _num(abs(va - vb))}))
        elif (va is None) != (vb is None):
            one_sided.append(sid)
    pairs.sort(key=lambda p: -p[0])  # stable: ties keep the split's order
    return {"a": a.name, "b": b.name, "metric": metric, "rows": [p[1] for p in pairs], "one_sided": one_sided}


def _check_inputs(paths: list[Path], split_dir: Path, out: Path, files: list[Path],
                  board: str | os.PathLike[str] | None, per_kind: int, max_videos: int) -> None:
    """Refuse bad arguments before anything is read, so nothing is written for them (`files`: the
    results and details files given)."""
    if per_kind < 1 or max_videos < 0:
        raise ViewerError("--per-kind must be at least 1 and --max-videos at least 0", "usage")
    for p in paths:
        if not p.exists():
            raise ViewerError(f"{p}: no such submission", "not_found")
    if len({p.resolve() for p in paths}) != len(paths):
        raise ViewerError("the same submission is given twice", "usage")
    if board is not None and not Path(board).is_dir():
        raise ViewerError(f"--board {board}: not a folder of results files", "not_found")
    for f in files:
        if not f.is_file():
            raise ViewerError(f"{f}: no such file", "not_found")
    check_viewer_out_dir(out, [split_dir, *paths, *files] + ([Path(board)] if board else []))


def _open_split(split_dir: Path) -> Any:
    """The split's reader; a split without videos is refused (the viewer shows the ground truth's frames)."""
    from ...data.split import SplitError, SplitReader

    try:
        reader = SplitReader(split_dir)
    except SplitError as exc:
        raise ViewerError(str(exc), "split_invalid") from None
    if not reader.manifest.get("with_video", True):
        raise ViewerError(f"{split_dir} holds no videos (states only): the viewer shows the ground truth's frames; "
                          "use a split generated with its videos", "split_without_video")
    return reader


def _videos_of(model: _Model, manifest: Manifest) -> Any:
    """The model's submission opened against the split's manifest, its errors as the viewer's."""
    from ...submission import SubmissionError, open_submission

    try:
        return open_submission(model.path, manifest=manifest)
    except SubmissionError as exc:
        raise ViewerError(f"{model.path}: {exc}", "score_error") from None


def _bar(total: int, what: str, progress: bool) -> Any:
    """A progress bar of a viewer pass (stderr): a pass over 200 videos on a loaded machine takes minutes."""
    from tqdm import tqdm

    return tqdm(total=total, desc=what, unit="video", disable=not progress or total == 0)


def _judge_findings(models: Sequence[_Model], order: list[str], rows: list[dict[str, Any]], reader: Any,
                    progress: bool = False) -> None:
    """Pass 1: the judge's findings where it called a video abnormal (the details keep only the verdict)."""
    from ...data.split import row_scene
    from ...scoring.judge.abnormal import judge
    from ...submission import SubmissionError

    manifest = reader.manifest
    cf = int(manifest["condition_frames"])
    for m in models:
        bad = [s for s in order if (m.details[s].get("abnormal") or 0) >= 1]
        if not bad:
            continue
        by_id = {r["sample_id"]: r for r in rows}
        with _videos_of(m, manifest) as sub, _bar(len(bad), "viewer: the judge's findings", progress) as bar:
            for sid in bad:
                bar.update(1)
                bodies = row_scene(by_id[sid]).bodies
                try:
                    video = sub.read(sid)
                except SubmissionError as exc:
                    raise ViewerError(f"{m.path}: {exc}", "score_error") from None
                verdict = judge(video, reader.video(by_id[sid]), [b.colour for b in bodies],
                                [not b.dynamic for b in bodies], cf)
                m.findings[sid] = [f.to_dict() for f in verdict.findings]


def _media_ids(gallery: list[dict[str, Any]], compares: list[dict[str, Any]], order: list[str],
               per_kind: int, max_videos: int) -> list[str]:
    """The videos given media, most wanted first: the gallery's, the comparisons', then split order."""
    wanted: list[str] = []
    for kind in gallery:
        wanted += kind["ids"]
    for comp in compares:
        wanted += [r["id"] for r in comp["rows"][:per_kind]] + comp["one_sided"][:per_kind]
    wanted += order
    return list(dict.fromkeys(wanted))[:max_videos]


def _media(models: Sequence[_Model], reader: Any, rows: list[dict[str, Any]], order: list[str],
           media_ids: list[str], family: Any, max_bytes: int,
           progress: bool = False) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    """Pass 2: sprites and tracks for the videos with media, until the byte budget runs out."""
    from ...data.split import row_scene
    from ...scoring.physics.parse import parse_video
    from ...scoring.run.sample import pixel_mapping
    from ...submission import SubmissionError

    manifest = reader.manifest
    mapping = pixel_mapping(manifest)
    width = int(manifest["resolution"])
    step = max(1, math.ceil(width / MAX_SIDE))
    files: dict[str, bytes] = {}
    media: dict[str, dict[str, Any]] = {}
    position = {sid: i for i, sid in enumerate(order)}
    used = 0
    subs: list[Any] = []
    bar = _bar(len(media_ids), "viewer: videos and tracks", progress)
    try:
        for m in models:
            subs.append(_videos_of(m, manifest))
        for sid in media_ids:  # gallery first: the byte budget cuts the least wanted
            if used >= max_bytes:
                break
            bar.update(1)
            index = position[sid]
            row = rows[index]
            gt = reader.video(row)
            bodies = row_scene(row).bodies
            colours = [(int(b.colour[0]), int(b.colour[1]), int(b.colour[2])) for b in bodies]
            panels: list[np.ndarray] = [gt]
            tracks: list[Any] = []
            for sub in subs:
                video = sub.read(sid)
                panels += [video, difference(video, gt)]
                if family.object_reader == "none":
                    tracks.append(None)
                else:
                    refine = None if family.object_reader == "discs" else False
                    parsed = parse_video(video, colours, mapping, refine=refine)
                    tracks.append(pixel_tracks(parsed.positions, mapping, width))
            data, layout = sprite_png(panels, step)
            name = f"media/v{index:06d}.png"
            files[name] = data
            used += len(data)
            media[sid] = {"src": name, "bytes": len(data), **layout,
                          "gt": pixel_tracks(row["positions"], mapping, width), "tracks": tracks,
                          "colours": [_hex(c) for c in colours]}
    except SubmissionError as exc:
        raise ViewerError(f"{exc}", "score_error") from None
    finally:
        bar.close()
        for sub in subs:
            sub.close()
    return files, media


def _data_doc(manifest: Manifest, models: Sequence[_Model], rows: list[dict[str, Any]],
              media: dict[str, dict[str, Any]], results_doc: Results,
              results: str | os.PathLike[str] | None, board: str | os.PathLike[str] | None,
              headline_param: str | None, gallery: list[dict[str, Any]], compares: list[dict[str, Any]],
              media_summary: dict[str, Any]) -> dict[str, Any]:
    """The page's data, inlined as JSON: header, per-video table, gallery, comparisons and media."""
    videos = []
    for row in rows:
        sid = row["sample_id"]
        videos.append({"id": sid, "level": row["level"], "params": _params(row),
                       "cells": [dict(_video_cell(m.details[sid], headline_param), findings=m.findings.get(sid, []))
                                 for m in models],
                       "media": media.get(sid)})
    present = [m for m in TABLE_METRICS if any(m in d for mdl in models for d in mdl.details.values())]
    prov = results_doc.get("provenance", {})
    return {
        "kind": "phybench-viewer",
        "phybench_version": __version__,
        "task": manifest["task"],
        "split": manifest["split"],
        "resolution": int(manifest["resolution"]),
        "frames": int(manifest["frames"]),
        "condition_frames": int(manifest["condition_frames"]),
        "frame_interval": float(manifest["frame_interval"]),
        "models": [{"name": m.name, "submission_hash": m.results["provenance"]["submission_hash"]} for m in models],
        "provenance": {k: prov.get(k) for k in ("phybench_version", "protocol", "split_hash", "task_spec_hash",
                                                  "submission_hash", "split_num_samples", "split_full_size")},
        "results_file": str(results) if results is not None else None,
        "headline": [_headline(results_doc)] + [_headline(m.results) for m in models[1:]],
        "rank": rank_among(Path(board), results_doc) if board is not None else None,
        "levels": [_levels(results_doc)] + [_levels(m.results) for m in models[1:]],
        "metrics": present,
        "videos": videos,
        "gallery": gallery,
        "compare": compares,
        "media": media_summary,
    }


Details = str | os.PathLike[str] | list[dict[str, Any]] | None


def _load_models(paths: list[Path], results: list[Path | None], details: Details, split_dir: Path,
                 reader: Any, order: list[str], progress: bool, say: Callable[[str], None]) -> list[_Model]:
    """Each submission's per-video numbers: read from its results file (+ sidecar, + details) where
    given, never scored; scored once, in memory, only where no results file is given."""
    models = []
    try:
        for i, (p, r) in enumerate(zip(paths, results, strict=True)):
            if r is None:
                say(f"no results file for {p}: scoring it (cheap metrics: {', '.join(CHEAP_METRICS)})")
                models.append(scored_model(p, split_dir, order, progress))
                continue
            given = details if i == 0 else None
            say(f"{p}: the numbers of {r}" + (" and its details" if given is not None else "") + " (not re-scored)")
            m = model_from_results(p, r, given if isinstance(given, list) else Path(given) if given is not None
                                   else None, reader.manifest, order)
            models.append(m)
    except SourceError as exc:
        raise ViewerError(str(exc), exc.code) from None
    return models


def build_viewer(
    submission: str | os.PathLike[str],
    split_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    results_label: str | None = None,  # how the page names the results file (default: its path as given)
    details: Details = None,  # the details Parquet of `results` (phybench score --details), or its rows
    board: str | os.PathLike[str] | None = None,
    compare: Sequence[str | os.PathLike[str]] = (),
    compare_results: Sequence[str | os.PathLike[str] | None] = (),  # one per `compare` where given
    per_kind: int = PER_KIND,
    max_videos: int = MAX_VIDEOS,
    max_bytes: int = MAX_BYTES,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    standalone: bool = True,  # False: the data only (a board's viewer: the site writes the application once, `app`)
) -> ViewerReport:
    """Write the viewer of `submission` (and each of `compare`) on `split_dir` into `out_dir`.

    Every number and verdict comes from the results file (+ its sidecar, + `details`) where one is
    given: nothing is scored then (the submission is read for its hash and its frames, and the
    parser tracks the bodies for the overlay).  Raises `ViewerError` (nothing written) for an --out
    that is not a viewer, a submission that does not match the split, or a results file of another
    submission or split."""
    from ...tasks import family_of, get_task

    say = log or (lambda _line: None)
    split_dir, out = Path(split_dir), Path(out_dir)
    paths = [Path(submission), *(Path(c) for c in compare)]
    if compare_results and len(compare_results) != len(paths) - 1:
        raise ViewerError(f"{len(compare_results)} --compare-results for {len(paths) - 1} --compare submission(s): "
                          "give one per submission, in the same order", "usage")
    given = [Path(results) if results is not None else None,
             *[Path(r) if r is not None else None for r in (compare_results or [None] * (len(paths) - 1))]]
    if details is not None and results is None:
        raise ViewerError("--details goes with --results (the details of that score)", "usage")
    inputs = [f for f in given if f is not None] + ([Path(details)] if isinstance(details, (str, os.PathLike)) else [])
    _check_inputs(paths, split_dir, out, inputs, board, per_kind, max_videos)
    reader = _open_split(split_dir)
    manifest = reader.manifest
    family = family_of(get_task(manifest["task"]))
    rows = list(reader.rows())
    order = [r["sample_id"] for r in rows]
    models = _load_models(paths, given, details, split_dir, reader, order, progress, say)
    main = models[0]
    results_doc = main.results

    _judge_findings(models, order, rows, reader, progress)
    gallery = gallery_of(models, order, per_kind)
    by = "velocity_error" if any("velocity_error" in d for d in main.details.values()) else "generated_velocity"
    compares = [_disagreement(main, other, order, by) for other in models[1:]]
    media_ids = _media_ids(gallery, compares, order, per_kind, max_videos)
    files, media = _media(models, reader, rows, order, media_ids, family, max_bytes, progress)

    media_summary = {"videos": len(media), "total": len(rows), "cap": max_videos, "max_bytes": max_bytes,
                     "bytes": sum(m["bytes"] for m in media.values())}
    data_doc = _data_doc(manifest, models, rows, media, results_doc, results_label or results, board,
                         getattr(family, "law_headline", None), gallery, compares, media_summary)
    files[DATA] = data_bytes(data_doc)
    if standalone:  # the page and the application beside the data: the folder opens alone
        files[PAGE] = viewer_page_html(data_doc).encode("utf-8")
        for name in STATIC_FILES:
            files[name] = template_bytes(name)
    files[VIEWER_MARKER] = VIEWER_MARKER_TEXT.encode()
    write_folder(out, files)
    warnings = []
    if len(media) < len(rows):
        warnings.append(f"media for {len(media)} of {len(rows)} videos (--max-videos {max_videos}, --max-mb "
                        f"{max_bytes / 1e6:g}); the table lists every video")
    return ViewerReport(out, len(rows), len(media), data_doc["media"]["bytes"],
                        {k["kind"]: len(k["ids"]) for k in gallery}, warnings, main.details)

"""The board's viewers: one `phybench view` folder per results file, linked from its row (issue 37, item 3).

`leaderboard build RESULTS --out SITE --viewers SUBS_DIR --splits DATA` finds each accepted
results file's submission under SUBS_DIR by content hash and its split under DATA by split
hash (`claims.SubmissionIndex` / `claims.SplitIndex`, the lookup `leaderboard verify` uses),
builds its viewer (`viewer.build_viewer` from the results file and its sidecar: the viewer
scores nothing) under
``SITE/viewers/<slug>/``, and the row links to it.  ``--prebuilt-viewers DIR`` copies viewers
built before (the repository ships the lite reference baselines' in ``leaderboard/viewers/``),
each matched to its results file by the results file's SHA-256 in its record.

Each viewer folder holds a record, `RECORD`: the results file it was built for (path and
SHA-256), the submission and split hashes, and the per-video values of the ranked column,
which the board's paired comparison reads (`paired`).  No results file keeps those values, so
the board scores ``velocity_error`` (their metric, without SSIM or PSNR) once per viewer and
hands the rows to the viewer as its details, which its table shows beside the sidecar's.
A viewer folder here holds data only (`viewer.build_viewer(standalone=False)`; a prebuilt folder's
own application is not copied): `write` then writes the application once,
``SITE/viewers/viewer.js`` and ``viewer.css``, and each viewer's page from the template (`app`),
its data inline and only there (the site's folder keeps no ``viewer-data.json``: each viewer's
data once in the site).
A re-scored results file no longer matches its shipped viewer's hash: the viewer is then not linked (and a test of the shipped
viewers fails until they are rebuilt).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ... import jsonsafe
from ...io import file_sha256
from ..site.load import Entry, LeaderboardError
from ..site.paired import PAIRED_METRIC, Values, average_runs, mark_board
from .app import APP_FILES, AppError, write_site_app

VIEWERS_DIR = "viewers"
RECORD = "viewer-record.json"
RECORD_KIND = "phybench-viewer-record"
RECORD_SCHEMA = 1
MAX_VIDEOS = 12  # board viewers are small by default: the gallery's first videos
MAX_MB = 0.3
SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
PAIRED_BASE = "velocity_error"  # the metric scored for the paired values (PAIRED_METRIC is its companion)


def slug_of(file: str) -> str:
    """A results file's viewer folder name: its path in the results folder, without ``.json``, one
    component (``fundamental/lite/uniform-id-eval-copy-last.json`` ->
    ``fundamental-lite-uniform-id-eval-copy-last``)."""
    stem = file[:-5] if file.endswith(".json") else file
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "x"
    return text[:90] + "-" + hashlib.sha256(file.encode()).hexdigest()[:8] if len(text) > 100 else text


# ================================================================ the record
def record_doc(file: str, sha256: str, results: dict[str, Any], details: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a viewer was built for, and the per-video ranked values (full precision; None where
    the video is excluded or not scored), in the split's order."""
    def value(d: dict[str, Any]) -> float | None:
        x = d.get(PAIRED_METRIC)
        return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None

    prov = results["provenance"]
    return {"kind": RECORD_KIND, "schema_version": RECORD_SCHEMA, "results": file, "results_sha256": sha256,
            "submission_hash": prov["submission_hash"], "split_hash": prov["split_hash"], "metric": PAIRED_METRIC,
            "values": [[sid, str(d.get("level")), value(d)] for sid, d in details.items()]}


def record_bytes(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n").encode()


def read_viewer_record(folder: Path) -> dict[str, Any] | None:
    """A viewer folder's record, or None when it has none or it is malformed (untrusted input)."""
    path = folder / RECORD
    if path.is_symlink() or not path.is_file() or path.stat().st_size > 20_000_000:
        return None
    try:
        doc = jsonsafe.read(path, max_bytes=20_000_000)
    except (OSError, ValueError):  # jsonsafe.JSONError is a ValueError
        return None
    ok = (isinstance(doc, dict) and doc.get("kind") == RECORD_KIND and doc.get("schema_version") == RECORD_SCHEMA
          and isinstance(doc.get("results_sha256"), str) and HEX64.match(doc["results_sha256"])
          and isinstance(doc.get("values"), list)
          and all(isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], str)
                  and (v[2] is None or (isinstance(v[2], (int, float)) and not isinstance(v[2], bool)))
                  for v in doc["values"]))
    return doc if ok else None


def record_values(doc: dict[str, Any]) -> Values:
    return {sid: (level, None if value is None else float(value)) for sid, level, value in doc["values"]}


def headline_of(doc: dict[str, Any]) -> float | None:
    """The mean of a record's values as the scorer rounds a summary (9 significant digits)."""
    vals = [v for _, _, v in doc["values"] if v is not None]
    if not vals:
        return None
    import numpy as np

    return float(f"{float(np.array(vals).mean()):.9g}")


# ================================================================ the plan
@dataclass
class Link:
    """One results file's viewer: copied from `prebuilt` or built from `submission` on `split`."""

    file: str
    slug: str
    sha256: str
    prebuilt: Path | None = None
    submission: Path | None = None
    split: Path | None = None


@dataclass
class Viewers:
    links: dict[str, Link] = field(default_factory=dict)  # by results file
    warnings: list[str] = field(default_factory=list)


def shipped_viewers(results_dir: Path) -> list[Path]:
    """The viewers shipped beside a board's results (``leaderboard/viewers`` beside ``leaderboard/results``):
    what `leaderboard sync` links (it keeps no submission to build a viewer from)."""
    folder = Path(results_dir).parent / VIEWERS_DIR
    return [folder] if folder.is_dir() else []


def prebuilt_index(folders: Sequence[str | Path]) -> dict[str, Path]:
    """Viewer folders under each of `folders` (one level down) by their record's results SHA-256."""
    out: dict[str, Path] = {}
    for root in map(Path, folders):
        if not root.is_dir():
            raise LeaderboardError(f"--prebuilt-viewers {root} is not a folder")
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
            doc = read_viewer_record(folder)
            if doc is not None:
                out.setdefault(doc["results_sha256"], folder)
    return out


def plan(entries: Sequence[Entry], results_dir: Path, *, submissions: str | Path | None = None,
         splits_dir: str | Path | None = None, prebuilt: Sequence[str | Path] = ()) -> Viewers:
    """Which results files get a viewer and from where: a prebuilt viewer of the same results
    bytes first, else a submission found by hash (with its split); files with neither get none."""
    from ..verify.claims import SplitIndex, SubmissionIndex, VerifyInputError

    out = Viewers()
    if submissions is None and not prebuilt:
        return out
    if submissions is not None and splits_dir is None:
        raise LeaderboardError("--viewers needs --viewer-data DIR (the splits the submissions answer, found by hash)")
    index = prebuilt_index(prebuilt)
    try:
        subs = SubmissionIndex.build(submissions) if submissions is not None else None
        splits = SplitIndex.build(splits_dir) if submissions is not None and splits_dir is not None else None
    except VerifyInputError as exc:
        raise LeaderboardError(str(exc)) from None
    slugs: set[str] = set()
    for e in sorted(entries, key=lambda e: e.file):
        slug = slug_of(e.file)
        while slug in slugs:
            slug += "-x"
        link = Link(e.file, slug, file_sha256(results_dir / e.file))
        prov = e.results["provenance"]
        if link.sha256 in index:
            link.prebuilt = index[link.sha256]
        elif subs is not None and splits is not None:
            try:
                link.submission = subs.find(prov["submission_hash"])
                link.split = splits.find(prov["split_hash"])[0]
            except VerifyInputError as exc:
                out.warnings.append(f"{e.file}: no viewer ({exc})")
                continue
        else:
            continue
        slugs.add(slug)
        out.links[e.file] = link
    return out


# ================================================================ writing
def _copy_viewer(src: Path, dest: Path) -> None:
    """Copy a prebuilt viewer's data (its application, where it has it, is left: the site writes its
    own, `app`; its page is copied, the data of a site's viewer folder being in its page only, and
    written over from the data): plain files with plain names only (a link or an odd name is refused)."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_symlink() or not (path.is_file() or path.is_dir()) or not all(
                SLUG.match(part) or part == ".phybench-viewer" for part in rel.parts) or len(rel.parts) > 2:
            raise LeaderboardError(f"prebuilt viewer {src}: {rel} is not a plain file of a viewer")
    shutil.copytree(src, dest, ignore=lambda folder, names: [n for n in names if Path(folder) == src and n in APP_FILES])


def _build_one(link: Link, dest: Path, results_dir: Path, max_videos: int, max_mb: float,
               progress: bool = False) -> dict[str, Any]:
    from .viewer import ViewerError, build_viewer
    from .viewer_sources import SourceError, score_rows

    assert link.submission is not None and link.split is not None
    try:  # the paired comparison's per-video values: no results file keeps them, so they are scored here, once
        _, rows, _ = score_rows(link.submission, link.split, (PAIRED_BASE,), progress)
        report = build_viewer(link.submission, link.split, dest, results=results_dir / link.file, results_label=link.file,
                              details=rows, board=results_dir, max_videos=max_videos, max_bytes=int(max_mb * 1e6),
                              progress=progress, standalone=False)
    except SourceError as exc:
        raise LeaderboardError(f"{link.file}: its viewer cannot be built: {exc}") from None
    except ViewerError as exc:
        raise LeaderboardError(f"{link.file}: its viewer cannot be built: {exc}") from None
    results = jsonsafe.read(results_dir / link.file)
    doc = record_doc(link.file, link.sha256, results, report.details)
    (dest / RECORD).write_bytes(record_bytes(doc))
    return doc


def write(site: Path, boards: list[dict[str, Any]], viewers: Viewers, results_dir: Path, *,
          max_videos: int = MAX_VIDEOS, max_mb: float = MAX_MB,
          log: Callable[[str], None] | None = None) -> tuple[list[str], list[str]]:
    """Build or copy every planned viewer's data into ``site/viewers/``, write the application once
    and each viewer's page (`app.write_site_app`), link each board row to its
    viewers and mark the rows the paired comparison cannot tell from the row above.  Returns
    warnings (a viewer whose values disagree with its results file's headline is linked, but
    its row gets no paired mark) and what was written under `site`: each viewer's folder
    (``viewers/<slug>/``) and the application's files."""
    warnings = list(viewers.warnings)
    usable: dict[str, Path] = {}
    for file, link in sorted(viewers.links.items()):
        dest = site / VIEWERS_DIR / link.slug
        if link.prebuilt is not None:
            _copy_viewer(link.prebuilt, dest)
        else:
            if log:
                log(f"viewer for {file}")
            _build_one(link, dest, results_dir, max_videos, max_mb, progress=log is not None)  # bars with a log
        doc = read_viewer_record(dest)
        headline = _headline_mean(results_dir / file)
        if doc is None or doc["results_sha256"] != link.sha256:
            warnings.append(f"{file}: its viewer's record does not name this results file; no paired mark")
        elif headline_of(doc) != headline:
            warnings.append(f"{file}: its viewer's per-video {PAIRED_METRIC} averages {headline_of(doc)}, the "
                            f"results file says {headline}; no paired mark")
        else:
            usable[file] = dest
    written = [f"{VIEWERS_DIR}/{link.slug}/" for link in viewers.links.values()]
    if viewers.links:  # the application, once, and each viewer's page loading it
        try:
            app = write_site_app(site / VIEWERS_DIR, [site / VIEWERS_DIR / link.slug for link in viewers.links.values()])
        except AppError as exc:
            raise LeaderboardError(f"a viewer cannot be shown: {exc}") from None
        written += [f"{VIEWERS_DIR}/{name}" for name in app if "/" not in name]  # the pages: in their folders
    for board in boards:
        for row in board["rows"]:
            row_links = [{"split": s["split"], "file": s["file"],
                          "href": f"{VIEWERS_DIR}/{viewers.links[s['file']].slug}/index.html"}
                         for s in row["sources"] if s["file"] in viewers.links]
            if row_links:
                row["viewers"] = row_links

        def values_of(row: dict[str, Any], column: str) -> Values | None:
            split = row.get("cell_splits", {}).get(column)
            files = [s["file"] for s in row["sources"] if s["split"] == split]
            if not files or any(f not in usable for f in files):
                return None
            runs = []
            for f in files:  # every run (seed) of the row on this split, averaged video by video
                doc = read_viewer_record(usable[f])
                if doc is None:
                    return None
                runs.append(record_values(doc))
            return runs[0] if len(runs) == 1 else average_runs(runs)

        mark_board(board, values_of)
    return warnings, written


def _headline_mean(path: Path) -> float | None:
    doc = jsonsafe.read(path)
    entry = doc.get("summary", {}).get("overall", {}).get(PAIRED_METRIC)
    return entry.get("mean") if isinstance(entry, dict) else None

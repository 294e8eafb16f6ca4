"""The leaderboard: results files in, a static site out (tables, plots, exports).

`build(RESULTS_DIR, SITE_DIR)` reads every ``*.json`` results file (docs/results.md) under
RESULTS_DIR, refuses the ones whose provenance does not match this phybench, and writes a
site that needs no server: open ``index.html`` from disk.  The page embeds its data as one
JSON script tag (no fetch of local files), draws its tables with the small plain script in
``phybench/leaderboard/site/template/leaderboard.js`` and its plots as inline SVG made here.
Beside it go ``leaderboard.md`` (one table per task, for READMEs and papers),
``leaderboard.csv`` and ``leaderboard.json`` (the combined table, one row per model, task,
level and metric).

What a results file must agree on before it is shown:

* its `schema_version` is one this module reads and its `kind` is ``phybench-results``;
* its task is registered, with the same version and spec hash (`phybench.tasks`);
* its metric settings are the ones this phybench writes, for every metric it reports;
* its weight hashes are the pinned ones (`phybench.scoring.perceptual.weights.weight_hashes`);
* results on the same (task, split, resolution) quote the same split hash, and that hash
  is the manifest's when the maintainers pass the split folders (`splits_dir`).

Every refusal names the file and the reason.  Submissions are untrusted text: every name
and note is escaped for the medium it lands in (HTML, SVG, JSON in a script tag, Markdown
table cells, CSV cells that a spreadsheet would run as formulas).  The output is
deterministic: the same inputs give the same bytes.

One job per module, one sub-package per job (docs/layout.md gives their layer order:
`common` < `verify` < `site` < the viewer < this facade < `hub`): in `site/`, `load` reads
results files and refuses the ones that do not match (`Refusal`, stable codes), `table`
combines the accepted ones into a board per task, `export` writes the Markdown, CSV and JSON,
`plots` draws the SVG, `page` writes the page, and `probes_page` the Probes page; `build` here
runs them in that order, with each row's viewer (`board_viewers`) and the signed records'
check (`verify/`).  The command is `phybench leaderboard build` (`phybench/cli/leaderboard.py`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Sequence

from .._version import __version__
from ..io import atomic_folder
from ..submission.model_fields import page_fields
from .site import probes_page as probe_page
from .site.export import csv_chunks, csv_safe, json_chunks, markdown, script_json
from .common.format import markdown_escape
from .site.gap import add_gaps
from .site.scatter import without_points
from .site.load import (
    LEADERBOARD_SCHEMA_VERSION,
    NOT_VERIFIED,
    RESULTS_FORMAT,
    BuildReport,
    LeaderboardError,
    Refusal,
    read_all,
)
from .site.page import STATIC_FILES, page_html, template_text
from .site.table import PRIMARY_METRIC, combine

__all__ = ["BuildReport", "LeaderboardError", "Refusal", "build", "csv_safe", "markdown_escape", "script_json"]

# Written into every site `build` makes: an existing non-empty --out without it is someone
# else's folder, never overwritten.
SITE_MARKER = ".phybench-site"
SITE_MARKER_TEXT = "A phybench leaderboard site (phybench leaderboard build); rebuilt in place.\n"


def check_out_dir(results_dir: Path, out_dir: Path) -> None:
    """Refuse an --out that would mix the site with the results or overwrite someone else's folder."""
    results, out = results_dir.resolve(), out_dir.resolve()
    if out == results or out.is_relative_to(results):
        raise LeaderboardError(f"--out {out_dir} is inside the results folder {results_dir}: write the site elsewhere")
    if results.is_relative_to(out):
        raise LeaderboardError(f"--out {out_dir} contains the results folder {results_dir}: write the site elsewhere")
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise LeaderboardError(f"--out {out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / SITE_MARKER).is_file():
        raise LeaderboardError(f"--out {out_dir} is a non-empty folder that is not a phybench site "
                               f"(no {SITE_MARKER}); choose an empty or new folder")


def _keyring(keys: Any) -> Any:
    """The board's keyring (`signing.Keyring`) from `keys`: a keyring, keyring folders or None (the default)."""
    from .verify.signing import Keyring, SigningError, load_keyring

    try:
        return keys if isinstance(keys, Keyring) else load_keyring(keys)
    except SigningError as exc:
        raise LeaderboardError(f"the board's keyring cannot be read: {exc}") from None


def _site_files(data: dict[str, Any], probe_docs: list[Any]) -> dict[str, str | Iterator[str]]:
    """Every file of the site, by name: the page, its markdown, CSV and JSON exports, the probes' page, the marker.
    ``leaderboard.json`` and ``leaderboard.csv`` come as pieces (`json_chunks`, `csv_chunks`), written
    as they are made: the build's memory then does not hold the largest exports whole, nor the list of
    their pieces."""
    files: dict[str, str | Iterator[str]] = {
        "index.html": page_html(data, probes=bool(probe_docs)),
        "leaderboard.md": markdown(data),
        "leaderboard.csv": csv_chunks(data),
        "leaderboard.json": json_chunks(without_points(data)),  # the scatters' samples: counts only
    }
    if probe_docs:
        files[probe_page.PAGE] = probe_page.probes_page_html(probe_docs)
    for name in STATIC_FILES:
        files[name] = template_text(name)
    files[SITE_MARKER] = SITE_MARKER_TEXT
    return files


def build(
    results_dir: str | Path,
    out_dir: str | Path,
    registry_check: bool = True,
    *,
    splits_dir: str | Path | None = None,
    allow_partial: bool = False,
    require_verified: bool = False,
    keys: Any = None,
    viewers: str | Path | None = None,
    viewer_data: str | Path | None = None,
    prebuilt_viewers: Sequence[str | Path] = (),
    viewer_budget: tuple[int, float] | None = None,
    log: Any = None,
) -> BuildReport:
    """Read the results files under `results_dir`; write the site into `out_dir`.

    Raises `LeaderboardError` listing every refused file, unless `allow_partial`: then the
    site is built from the accepted files and the page lists the refused ones.
    `require_verified`: a results file without a valid verification record beside it
    (`verification.read_record`) is refused (code ``not_verified``), and so is one whose record
    is not signed by a key of the board's keyring (`signing`: ``verify-unsigned``,
    ``verify-signature``, ``verify-key-revoked``); `keys`: a `signing.Keyring` or keyring
    folders (default ``$PHYBENCH_BOARD_KEYS``, else ``leaderboard/keys/``).  `out_dir` must not be
    in or around `results_dir`, and an existing non-empty one must be a site built before
    (`SITE_MARKER`); the site is swapped in whole (`_write_site`).

    `viewers` (a folder of submissions, found by hash, answering splits under `viewer_data`) and `prebuilt_viewers`
    (folders of viewers built before, matched by their results file's hash): a viewer per results
    file under ``viewers/`` and a link from its row, and the paired marks (`board_viewers`);
    `viewer_budget`: (videos with media, MB) per built viewer.
    """
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    if not results_dir.is_dir():
        raise LeaderboardError(f"{results_dir} is not a folder of results files")
    if splits_dir is not None and not Path(splits_dir).is_dir():
        raise LeaderboardError(f"--splits {splits_dir} is not a folder")
    check_out_dir(results_dir, out_dir)
    keyring = _keyring(keys) if require_verified else None  # the public board: every record's signature
    entries, refused, warnings = read_all(results_dir, registry_check, Path(splits_dir) if splits_dir else None,
                                          keyring=keyring)
    if require_verified:
        unverified = [e for e in entries if e.verification is None]
        refused += [Refusal(e.file, "no verification record (run `phybench leaderboard verify`); "
                                    "--require-verified shows verified rows only", NOT_VERIFIED) for e in unverified]
        entries = [e for e in entries if e.verification is not None]
    boards, clashes = combine(entries)
    add_gaps(boards)  # the OOD / ID gap per row (`gap`)
    entry_files = [e.file for e in entries]
    from .viewer.board_viewers import plan

    links = plan(entries, results_dir, submissions=viewers, splits_dir=viewer_data, prebuilt=prebuilt_viewers)
    del entries  # the boards hold what the site needs: the documents go before the site is written
    probe_docs, probe_refused = probe_page.read_probe_results(results_dir, probe_page.files(results_dir))
    refused += [Refusal(f, reason, RESULTS_FORMAT) for f, reason in probe_refused]
    refused = sorted(refused + clashes, key=lambda r: r.file)
    if refused and not allow_partial:
        raise LeaderboardError(
            f"{len(refused)} results file(s) refused (pass allow_partial / --allow-partial to build without them):\n"
            + "\n".join(f"  {r} [{r.code}]" for r in refused),
            refused,
        )
    refused_files = {r.file for r in refused}
    accepted = sorted([f for f in entry_files if f not in refused_files] + [d["_file"] for d in probe_docs])
    data = {
        "kind": "phybench-leaderboard",
        "schema_version": LEADERBOARD_SCHEMA_VERSION,
        "phybench_version": __version__,
        "primary_metric": PRIMARY_METRIC,
        "registry_checked": registry_check,
        "require_verified": require_verified,
        "boards": boards,
        "files": accepted,
        "refused": [{"file": r.file, "reason": r.reason, "code": r.code} for r in refused],
        "model_fields": page_fields(),  # how the page's script draws a model's fields
    }
    links.links = {f: link for f, link in links.links.items() if f not in refused_files}
    written = _write_site(out_dir, data, probe_docs, results_dir, links, viewer_budget, log, warnings)
    return BuildReport(out_dir=out_dir, accepted=accepted, refused=refused, warnings=warnings, written=written,
                       boards=len(boards), models=len({r["model"] for b in boards for r in b["rows"]}))


def _write_site(out_dir: Path, data: dict[str, Any], probe_docs: list[Any], results_dir: Path, links: Any,
                viewer_budget: tuple[int, float] | None, log: Any, warnings: list[str]) -> list[str]:
    """Build the site in a temporary folder beside `out_dir`, then swap it in (`io.atomic_folder`): a failure
    leaves the previous site (or nothing), never a partial one.  The viewers first (`board_viewers.write`):
    the page carries their links and the paired marks.  Returns the names written (a folder's ends in
    ``/``: every file in it was written), the viewers' application files included; warnings are added."""
    from .viewer import board_viewers

    budget = viewer_budget or (board_viewers.MAX_VIDEOS, board_viewers.MAX_MB)
    with atomic_folder(out_dir, replace=True) as tmp:
        viewer_warnings, viewer_files = board_viewers.write(tmp, data["boards"], links, results_dir,
                                                            max_videos=budget[0], max_mb=budget[1], log=log)
        warnings += viewer_warnings
        files = _site_files(data, probe_docs)
        for name, text in sorted(files.items()):
            if isinstance(text, str):
                (tmp / name).write_bytes(text.encode("utf-8"))
                continue
            with open(tmp / name, "w", encoding="utf-8", newline="") as f:
                for chunk in text:
                    f.write(chunk)
    return sorted([*files, *viewer_files])

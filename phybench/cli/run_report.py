"""What `phybench run` does after scoring (issue 49): viewers with the judge, numbers beside the reference
rows, and a site of the run's board that links every viewer it built."""
from __future__ import annotations

import argparse

from .. import jsonsafe
import sys
from pathlib import Path
from shlex import quote
from typing import Any, Sequence

from . import CliError

BOARD_DIR = "board"  # OUT/board/: the model's results files and the reference rows of the same splits


def _say(quiet: bool, line: str) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)


def views(split_dirs: Sequence[Any], results: list[Path], out: Path, quiet: bool) -> list[Path]:
    """`run --view`: a viewer per split beside its submission, from the results and details just
    written (the judge's cards, column and findings), with the record a board links it by
    (`board_viewers.RECORD`).  Returns the viewer folders."""
    from ..data.split import read_manifest
    from ..io import file_sha256
    from ..leaderboard.viewer.board_viewers import RECORD, record_bytes, record_doc
    from ..leaderboard.viewer.viewer import ViewerError, build_viewer
    from ..pipeline import DETAILS

    made = []
    for split_dir, result in zip(split_dirs, results, strict=True):
        m = read_manifest(split_dir)
        work = out / f"{m['task']}-{m['split']}"
        details = work / DETAILS  # the judge's verdicts and every per-video metric of this score
        _say(quiet, f"viewer of {m['task']}/{m['split']}: writing {work / 'view'} (the judge's findings are "
                    "re-traced on the videos it called abnormal)")
        try:
            report = build_viewer(work / "submission", split_dir, work / "view", results=result,
                                  details=details if details.is_file() else None, progress=not quiet,
                                  log=None if quiet else (lambda line: print(line, file=sys.stderr, flush=True)))
        except ViewerError as exc:
            raise CliError(f"the results were written, but the viewer was not: {exc}", exc.code) from None
        doc = record_doc(result.name, file_sha256(result), jsonsafe.read(result, result.name),
                         report.details)
        (report.out_dir / RECORD).write_bytes(record_bytes(doc))
        print(f"viewer: {report.out_dir / 'index.html'} ({report.with_media} videos, "
              f"{report.media_bytes / 1e6:.1f} MB)")
        made.append(report.out_dir)
    return made


def _reference(args: argparse.Namespace, data: Sequence[Any], files: list[Path], name: str,
               metrics: Sequence[str] | None) -> tuple[list[Path], Path | None]:
    """The reference rows of the run's splits: the shipped lite rows of the same split hash, else the
    cheap reference baselines scored on that split here.  (files, the shipped results folder used)."""
    from ..leaderboard.site.run_board import reference_files, shipped_results_dir
    from ..reference import BaselineError
    from ..reference.rows import CHEAP, score_cheap

    if args.no_reference:
        return [], None
    if args.reference and (Path(args.reference).is_symlink() or not Path(args.reference).is_dir()):
        raise CliError(f"--reference {args.reference} is not a folder of results (e.g. leaderboard/results); the "
                       "results were written", "reference_dir")
    shipped = Path(args.reference) if args.reference else shipped_results_dir()
    hashes = {jsonsafe.read(f, f.name)["provenance"]["split_hash"]: split_dir
              for f, split_dir in zip(files, data, strict=True)}
    found = reference_files(shipped, hashes, skip_models=[name]) if shipped is not None else []
    matched = {jsonsafe.read(f, f.name)["provenance"]["split_hash"] for f in found}
    own = []
    for split_hash, split_dir in hashes.items():
        if split_hash in matched:
            continue
        try:
            own += score_cheap(split_dir, args.out, metrics, names=[n for n in CHEAP if n != name],
                               progress=not args.quiet, say=lambda line: _say(args.quiet, line))
        except BaselineError as exc:
            _say(False, f"warning: the cheap reference rows of {split_dir} were not scored: {exc}")
    return found + own, shipped


def answer(args: argparse.Namespace, data: Sequence[Any], files: list[Path], name: str,
           metrics: Sequence[str] | None, viewers: list[Path]) -> None:
    """Print each split's headline beside its reference rows and where the model would rank; with
    --site, build the site of that board, linking the run's viewers (and the shipped rows' own)."""
    from ..leaderboard import LeaderboardError, build
    from ..leaderboard.viewer.board_viewers import shipped_viewers
    from ..leaderboard.site.run_board import assemble, headline_text, read_board

    out = Path(args.out)
    refs, shipped = _reference(args, data, files, name, metrics)
    try:
        board = assemble(files, refs, out / BOARD_DIR, shipped)
    except OSError as exc:  # OUT/board is run's own folder: a file or link there is not ours to replace
        raise CliError(f"the results were written, but the board folder was not: {exc}", "board_dir") from None
    print()
    print(headline_text(read_board(board), [name]), end="")
    if not args.site:
        print(f"leaderboard: phybench leaderboard build {quote(str(board))} --out SITE")
        return
    roots = [v.parent for v in viewers] + (shipped_viewers(shipped) if shipped is not None else [])
    _say(args.quiet, f"site: building {args.site} from {board} ({len(viewers)} viewer(s) of this run linked)")
    try:
        report = build(board, args.site, prebuilt_viewers=roots)
    except LeaderboardError as exc:
        raise CliError(f"the results were written, but the site was not built: {exc}") from None
    print(report.to_text())
    print(f"site: {Path(args.site) / 'index.html'}")


def estimate(args: argparse.Namespace, metrics: Sequence[str]) -> None:
    """Before anything runs (not with --quiet, and on process 0 only): the run's cost besides the model,
    measured here (`cli.estimates`).  An estimate that cannot be made (a split folder that is not
    one: the run says why) is left out."""
    import os

    from ..data.split import read_manifest
    from ..leaderboard.site.run_board import shipped_results_dir
    from ..tasks import get_task
    from ..tasks.protocols import PROTOCOLS
    from .estimates import run_estimate, say

    if args.quiet or os.environ.get("RANK", "0") != "0":
        return
    try:
        jobs = []
        if args.tasks:
            protocol = PROTOCOLS.get(args.protocol or "lite")
            for task in (t.strip() for t in args.tasks.split(",") if t.strip()):
                spec = get_task(task)
                for split in spec.eval_splits:
                    n = protocol.size(spec, split) if args.limit is None else args.limit
                    folder = f"{task}-{split}" if args.limit is None else f"{task}-{split}-limit{args.limit}"
                    jobs.append((task, split, n, (Path(args.out) / "data" / folder / "manifest.json").is_file()))
        else:
            for folder in args.data:
                m = read_manifest(folder)
                jobs.append((m["task"], m["split"], int(m["num_samples"]), True))
        own = args.limit is not None or bool(args.data) or shipped_results_dir() is None
        say(run_estimate(jobs, metrics, reference_rows=0 if args.no_reference or not own else 3, view=args.view))
    except Exception as exc:  # noqa: BLE001 - an estimate never stops a run; the run reports a real problem itself
        say(f"estimate: not made ({type(exc).__name__}: {str(exc)[:120]})")

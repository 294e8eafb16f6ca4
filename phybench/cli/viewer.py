"""`phybench view SUB --data SPLIT_DIR --out DIR`: a static per-submission viewer (docs/viewer.md)."""
from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Callable

from . import CliError

EXAMPLES = """
    examples:
      phybench view runs/m/uniform-id-eval/submission --data data/uniform-id-eval --out view/
      phybench view sub/ --data data/uniform-id-eval --results results.json --out view/
      phybench view sub/ --data data/uniform-id-eval --results r.json --details d.parquet --out view/
      phybench view a/ --data data/uniform-id-eval --compare b/ --out view-a-vs-b/ --max-videos 50
      phybench view sub/ --data data/uniform-id-eval --results r.json --board leaderboard/results --out view/

    With --results the viewer reuses that score (the results file, its .samples.json sidecar and,
    with --details, the details Parquet) and scores nothing; without it, it scores the cheap
    metrics (velocity error, SSIM, PSNR) once itself.
    The folder opens from file:// (index.html) or any static host; no network, no server.
    --data-only writes the data alone (viewer-data.json, media/), as leaderboard/viewers/ ships it.
    exit codes: 0 written, 2 refused (nothing written): a submission that does not match the
    split, a results file of another submission, an --out that is not a viewer folder.
"""


def _add_view(add: Callable[..., argparse.ArgumentParser]) -> None:
    from ..leaderboard.viewer.viewer import MAX_BYTES, MAX_VIDEOS, PER_KIND

    v = add("view", "Write a static viewer of one submission (or several on the same split): every video beside "
                    "its ground truth, the tracked trajectories, where the judge fired, a sortable table.")
    v.add_argument("submission", metavar="SUB", help="submission folder or archive")
    v.add_argument("--data", required=True, metavar="SPLIT_DIR", help="the split it answers")
    v.add_argument("--results", metavar="RESULTS_JSON", help="its results file (every number shown, with its "
                                                             "sidecar; must be of this submission and split)")
    v.add_argument("--details", metavar="DETAILS_PARQUET", help="the details of that score (phybench score --details): "
                                                              "every per-video metric in the table; needs --results")
    v.add_argument("--compare-results", nargs="+", default=[], metavar="R2_JSON",
                   help="the results file of each --compare submission, in the same order")
    v.add_argument("--board", metavar="RESULTS_DIR", help="results files of other models (e.g. leaderboard/results): "
                                                          "where this one would rank on the same split")
    v.add_argument("--compare", nargs="+", default=[], metavar="SUB2", help="further submissions on the same split, "
                                                                          "side by side in the player")
    v.add_argument("--out", required=True, metavar="DIR", help="the viewer folder (new, empty, or a viewer built "
                                                              "before: rebuilt in place)")
    v.add_argument("--max-videos", type=int, default=MAX_VIDEOS,
                   help=f"videos with media, the gallery's first (default {MAX_VIDEOS}); the table lists every video")
    v.add_argument("--max-mb", type=float, default=MAX_BYTES / 1e6,
                   help=f"media budget in MB (default {MAX_BYTES / 1e6:g}): no further video gets media once reached")
    v.add_argument("--per-kind", type=int, default=PER_KIND,
                   help=f"gallery videos per kind of failure (default {PER_KIND})")
    form = v.add_mutually_exclusive_group()
    form.add_argument("--standalone", dest="standalone", action="store_true", default=True,
                      help="write the page and the application (viewer.js, viewer.css) into the folder, so it opens "
                           "alone from file:// (the default)")
    form.add_argument("--data-only", dest="standalone", action="store_false",
                      help="write the data only (viewer-data.json, media/), as a board ships its viewers: a site "
                           "build (leaderboard build --prebuilt-viewers) writes the page and the application")
    v.add_argument("--quiet", action="store_true", help="no progress output")
    v.epilog = textwrap.dedent(EXAMPLES)
    v.set_defaults(func=cmd_view)


PARSERS = {"view": _add_view}


def cmd_view(args: argparse.Namespace) -> int:
    from ..leaderboard.viewer.viewer import ViewerError, build_viewer

    try:
        report = build_viewer(args.submission, args.data, args.out, results=args.results, details=args.details,
                              board=args.board, compare=args.compare, compare_results=args.compare_results,
                              per_kind=args.per_kind, max_videos=args.max_videos,
                              max_bytes=int(args.max_mb * 1e6), progress=not args.quiet, standalone=args.standalone,
                              log=None if args.quiet else (lambda line: print(line, file=sys.stderr)))
    except ViewerError as exc:
        raise CliError(str(exc), exc.code) from None
    print(report.to_text())
    return 0

"""`phybench view`: time and bytes for a lite-sized split (docs/viewer.md "Media and size").

    python benchmarks/bench_viewer.py                                   # uniform ood-eval, 200 videos
    python benchmarks/bench_viewer.py --task combinatorial --split in-template-eval --limit 200
    python benchmarks/bench_viewer.py --work /tmp/pb-view --compare     # two models in one viewer

Generates the split once under --work (a --limit 200 split has the shipped lite split's hash) and
a submission of the ground truth shifted by 2 px after the condition frames (a model whose
pictures are slightly off), then builds the viewer and reports: the cheap scoring alone, the
whole build, videos with media, media bytes (total and per video) and the size of index.html.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard.viewer import CHEAP_METRICS, build_viewer
from phybench.scoring.score import score
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task


def _submission(split: Path, out: Path, name: str, shift: int) -> Path:
    if (out / "submission.json").is_file():
        return out
    reader = SplitReader(split)
    cf = int(reader.manifest["condition_frames"])

    def videos():
        for row in reader.rows():
            video = reader.video(row)
            if shift:
                video = video.copy()
                video[cf:] = np.roll(video[cf:], shift, axis=2)
            yield row["sample_id"], video

    write_submission(out, submission_meta(reader.manifest, name), videos())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="uniform")
    ap.add_argument("--split", default="ood-eval")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "pb-bench-viewer"))
    ap.add_argument("--compare", action="store_true", help="also compare with the unshifted ground truth")
    args = ap.parse_args()
    work = Path(args.work)
    split = work / f"{args.task}-{args.split}-{args.limit}"
    if not (split / "manifest.json").is_file():
        t = time.perf_counter()
        generate(make_plan(get_task(args.task), args.split, None, args.limit, None), split, progress=False)
        print(f"generated {split} in {time.perf_counter() - t:.1f} s")
    sub = _submission(split, work / f"{split.name}-shift2", "shift2px", 2)
    compare = [_submission(split, work / f"{split.name}-gt", "ground-truth", 0)] if args.compare else []
    t = time.perf_counter()
    score(sub, split, list(CHEAP_METRICS), progress=False)
    scoring = time.perf_counter() - t
    out = work / f"{split.name}-view"
    t = time.perf_counter()
    report = build_viewer(sub, split, out, compare=compare)
    total = time.perf_counter() - t
    index = (out / "index.html").stat().st_size
    print(f"{args.task} {args.split} ({args.limit} videos, {1 + len(compare)} model(s)): scoring {scoring:.1f} s, "
          f"viewer {total:.1f} s in all; media for {report.with_media} videos, {report.media_bytes / 1e6:.2f} MB "
          f"({report.media_bytes / max(report.with_media, 1) / 1e3:.0f} kB a video); index.html {index / 1e3:.0f} kB")


if __name__ == "__main__":
    main()

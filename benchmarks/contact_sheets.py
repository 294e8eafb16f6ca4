"""Contact sheets of a submission against its ground truth, labelled with the judge's verdicts.

    python benchmarks/contact_sheets.py SUB --data SPLIT --judge JUDGE.json --out DIR [--ids N] [--seed 0] [--every 3]
    python benchmarks/contact_sheets.py SUB --data SPLIT --judge JUDGE.json --out DIR --only ID,ID,...

Why: the judge's agreement with a person's reading (issue 33, item 4) has to be measured by
looking at the videos.  Each sheet shows, per sampled video, the ground truth's frames (top) and
the generated frames (below) from the last condition frame on, every `--every` frames, with the
judge's verdict (rule, frames) written beside it; a third row shows the generated frame with the
ground truth's ball outline (|difference| in red) so a lag or a smear reads at a glance.  Videos
are drawn at random (fixed seed) from the flagged and the unflagged ones in equal numbers, and
the draw is written to DIR/draw.json so the reading can be recorded against the same ids.
`JUDGE.json` is `phybench judge SUB --data SPLIT --json`.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from phybench.data.split import SplitReader
from phybench.submission.format import Submission


def _strip(frames: np.ndarray, idx: list[int], scale: int) -> np.ndarray:
    """uint8 (T, H, W, 3) -> one row of the chosen frames, each downscaled by `scale`, 2 px gaps."""
    tiles = [frames[t, ::scale, ::scale] for t in idx]
    gap = np.full((tiles[0].shape[0], 2, 3), 80, np.uint8)
    return np.concatenate([x for t in tiles for x in (t, gap)][:-1], axis=1)


def _diff(gt: np.ndarray, gen: np.ndarray) -> np.ndarray:
    """The generated frames with pixels where they differ from the ground truth by > 40 tinted red."""
    out = gen.copy()
    d = np.abs(gt.astype(np.int16) - gen.astype(np.int16)).max(axis=-1) > 40  # (T, H, W)
    out[d] = (0.5 * out[d] + 0.5 * np.array([255, 0, 0])).astype(np.uint8)
    return out


def sheet(rows: list[tuple[str, np.ndarray, np.ndarray, str]], every: int, first: int, scale: int) -> Image.Image:
    """One PNG: per video a label line and three strips (truth, generated, difference)."""
    blocks = []
    for sid, gt, gen, label in rows:
        idx = list(range(first, gt.shape[0], every))
        strips = [_strip(v, idx, scale) for v in (gt, gen, _diff(gt, gen))]
        w = strips[0].shape[1]
        head = Image.new("RGB", (w, 14), (255, 255, 255))
        ImageDraw.Draw(head).text((2, 1), f"{sid}  {label}"[:w // 6], fill=(0, 0, 0))
        sep = np.full((4, w, 3), 255, np.uint8)
        blocks += [np.asarray(head)] + [x for s in strips for x in (s, np.full((2, w, 3), 255, np.uint8))] + [sep]
    return Image.fromarray(np.concatenate(blocks, axis=0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sub")
    ap.add_argument("--data", required=True)
    ap.add_argument("--judge", required=True, help="phybench judge SUB --data SPLIT --json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ids", type=int, default=50, help="videos drawn, half flagged and half not (as available)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--per-sheet", type=int, default=5)
    ap.add_argument("--scale", type=int, default=2, help="downscale of each frame tile")
    ap.add_argument("--only", help="these sample ids (comma-separated) instead of a draw")
    a = ap.parse_args()
    verdicts = json.loads(Path(a.judge).read_text())["verdicts"]
    flagged = sorted(k for k, v in verdicts.items() if v["abnormal"])
    clean = sorted(k for k, v in verdicts.items() if not v["abnormal"])
    if a.only:
        draw = a.only.split(",")
        n_flag = sum(verdicts[k]["abnormal"] for k in draw)
    else:
        rng = np.random.default_rng(a.seed)
        n_flag = min(len(flagged), max(a.ids // 2, a.ids - len(clean)))
        draw = sorted(rng.choice(flagged, n_flag, replace=False).tolist()
                      + rng.choice(clean, min(len(clean), a.ids - n_flag), replace=False).tolist())
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    reader = SplitReader(a.data)
    first = int(reader.manifest.get("condition_frames", 3)) - 1 if hasattr(reader, "manifest") else 2
    by_id = {r["sample_id"]: r for r in reader.rows() if r["sample_id"] in set(draw)}
    with Submission(a.sub) as sub:
        videos = dict(sub.iter_videos(draw))
    labels = {}
    for k in draw:
        v = verdicts[k]
        labels[k] = "ok" if not v["abnormal"] else "; ".join(
            f"{f['rule']} {f['frames'][0]}-{f['frames'][-1]}" for f in v["findings"][:3])
    for i in range(0, len(draw), a.per_sheet):
        ids = draw[i:i + a.per_sheet]
        rows = [(k.rsplit("/", 1)[-1], reader.video(by_id[k]), videos[k], labels[k]) for k in ids]
        sheet(rows, a.every, first, a.scale).save(out / f"sheet-{i // a.per_sheet:02d}.png", optimize=True)
    (out / "draw.json").write_text(json.dumps({"ids": draw, "labels": labels}, indent=1) + "\n")
    print(f"{len(draw)} videos ({n_flag} flagged) in {(len(draw) + a.per_sheet - 1) // a.per_sheet} sheets under {out}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

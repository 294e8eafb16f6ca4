"""CPU-ms per clip of the scene rules (jump, jump-static, pause, presence, presence-static: issue 48 item 4)
against the judge's other rules, on the same segmented clips (the segmentation and the motion tracks are shared:
the scene rules add only their own checks to a clip's score): every rule, less the rules without them.

    PYTHONPATH=. python benchmarks/bench_scene_rules.py SPLIT_DIR [N]      # e.g. /work/comb/in-template-eval 16

Each clip is its ground truth blurred (Gaussian sigma 0.7 px, generated frames only), as in
`benchmarks/bench_score.py`; the table rows are run 3 times and the least is kept.
"""
from __future__ import annotations

import sys
import time

import numpy as np
from scipy import ndimage

from phybench.data.split import SplitReader, row_scene
from phybench.scoring.judge import rules
from phybench.scoring.judge.abnormal import segment_pair

NEW = {"jump", "jump-static", "pause", "presence", "presence-static"}


def main() -> None:
    split, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 16
    r = SplitReader(split)
    cf = r.spec.condition_frames
    prs = []
    for row in list(r.rows())[:n]:
        gt = r.video(row)
        video = gt.copy()
        video[cf:] = np.clip(np.round(ndimage.gaussian_filter(gt[cf:].astype(np.float32), (0, 0.7, 0.7, 0))), 0, 255)
        bodies = row_scene(row).bodies
        prs.append(segment_pair(video.astype(np.uint8), gt, [b.colour for b in bodies], [not b.dynamic for b in bodies], cf))
    best = {"old rules": np.inf, "all rules": np.inf}
    for _ in range(3):
        for which in best:
            for pr in prs:  # fresh caches each run
                pr.__dict__.pop("_scene_changes", None)
                for v in pr.dynamic.values():
                    v.__dict__.pop("_tracks", None)
            t0 = time.process_time()
            for pr in prs:
                for c, statics in pr.colours.items():
                    kind = "static" if all(statics) else "dynamic"
                    for rule in rules.RULES:
                        if rule.colours == kind and (which == "all rules" or rule.name not in NEW):
                            rule.check(pr, c, ",".join(map(str, c)))
            best[which] = min(best[which], (time.process_time() - t0) * 1000 / len(prs))
    print(f"{split}: {len(prs)} clips at {prs[0].ctx.W} px; CPU-ms per clip (least of 3): "
          + ", ".join(f"{k} {v:.1f}" for k, v in best.items()) + f"; the scene rules add {best['all rules'] - best['old rules']:.1f}")


if __name__ == "__main__":
    main()

"""The contact kinds (`phybench.violations_contact`, issue 48 item 3): recall by the judge or the law
block (Wilson 95%), and pairs against the same correct video with mild sensor noise (uniform noise
amplitude 3): a wrong video "beats" it when its ranked velocity error and its law_error are both at
most the noisy correct video's.  Also counts the noisy correct videos the judge or the law block flags.

    PYTHONPATH=. python benchmarks/contact_recall.py SPLIT_DIR ROWS     # e.g. lite/collision-ood-eval 200

The figures in docs/judge.md ("How two bodies meet") and the report of issue 48 item 3 come from it.
"""
from __future__ import annotations

from typing import Any

import _recall  # benchmarks/ is sys.path[0] when run as a script
import numpy as np

from phybench.benign import _noise
from phybench.data.split import SplitReader, row_scene
from phybench.scoring import metrics as M
from phybench.scoring.judge.abnormal import judge
from phybench.scoring.learned.law import law_of
from phybench.scoring.run.sample import scoring_sample
from phybench.violations import plant
from phybench.violations_contact import CONTACT_KINDS


def run(split: str, rows: int) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    r = SplitReader(split)
    m, spec = r.manifest, r.spec
    cf, res = spec.condition_frames, int(m["resolution"])
    ranked = M.METRICS.get("velocity_error_ranked").compute
    stats = {k: dict(n=0, law=0, judge=0, either=0, beats=0, skip=0) for k in CONTACT_KINDS}
    noisy: dict[str, int] = {"n": 0, "abnormal": 0, "contact": 0, "law_wrong_contact": 0, "law_error_nan": 0}
    for i, row in enumerate(r.rows()):
        if i >= rows:
            break
        gt = r.video(row)
        sn = scoring_sample(row, _noise(3)(gt, cf, row["sample_id"]), gt, m)
        if sn.errors.excluded:
            continue
        bodies = row_scene(row).bodies
        colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
        ln: Any = law_of(sn)
        le_n, rk_n = ln["errors"]["law_error"], ranked(sn)
        vn = judge(sn.video, gt, colours, static, cf)
        noisy["n"] += 1
        noisy["abnormal"] += int(vn.abnormal)
        noisy["contact"] += int(any(f.rule == "contact" for f in vn.findings))
        noisy["law_wrong_contact"] += int("contact" in ln["wrong"] or "fallback" in ln["wrong"])
        noisy["law_error_nan"] += int(not np.isfinite(le_n))
        for kind, st in stats.items():
            video, _ = plant(kind, row, spec, res, gt)
            if video is None:
                st["skip"] += 1
                continue
            s = scoring_sample(row, video, gt, m)
            law: Any = law_of(s)
            law_hit = bool(law["wrong"]) or s.errors.untrackable is not None
            judged = bool(judge(video, gt, colours, static, cf).abnormal)
            st["n"] += 1
            st["law"] += law_hit
            st["judge"] += judged
            st["either"] += law_hit or judged
            st["beats"] += bool(ranked(s) <= rk_n and law["errors"]["law_error"] <= le_n)
    return stats, noisy


def main() -> int:
    return _recall.main(run, [("judge", "judge"), ("law block", "law"), ("judge or law", "either"),
                              ("beats noisy correct", "beats")], "noisy correct")


if __name__ == "__main__":
    raise SystemExit(main())

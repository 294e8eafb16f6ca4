"""The identity kinds (`phybench.violations_identity`, issue 48 item 2): recall by the judge or the
parse (untrackable), with Wilson 95% intervals, and pairs against the same correct video with mild
sensor noise (uniform noise amplitude 3): a wrong video "beats" it when its ranked velocity error
and its law_error are both at most the noisy correct video's.  Also counts the noisy correct videos
and the exact renders the identity row flags, or the parse calls another body.

    PYTHONPATH=. python benchmarks/identity_recall.py SPLIT_DIR ROWS     # e.g. lite/uniform-ood-eval 40

The figures in docs/judge.md ("Identity") and the report of issue 48 item 2 come from it (the pattern
of benchmarks/contact_recall.py).
"""
from __future__ import annotations

from typing import Any

import _recall  # benchmarks/ is sys.path[0] when run as a script
from phybench.benign import _noise
from phybench.data.split import SplitReader
from phybench.scoring import metrics as M
from phybench.scoring.judge.abnormal import judge_sample
from phybench.scoring.learned.law import law_of
from phybench.scoring.physics.parse import IDENTITY
from phybench.scoring.run.sample import scoring_sample
from phybench.violations import plant
from phybench.violations_identity import IDENTITY_KINDS


def _not_itself(s: Any) -> bool:
    """The parse calls a body another from some frame on, or the judge's identity row fires."""
    return bool(s.parsed is not None and (s.parsed.flags & IDENTITY).any())


def _law_error(s: Any) -> float:
    law: Any = law_of(s)
    return float(law["errors"]["law_error"]) if law and law.get("errors") else float("nan")


def run(split: str, rows: int) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    r = SplitReader(split)
    m, spec = r.manifest, r.spec
    cf, res = spec.condition_frames, int(m["resolution"])
    ranked = M.METRICS.get("velocity_error_ranked").compute
    stats = {k: dict(n=0, judge=0, identity=0, parse=0, either=0, beats=0, skip=0) for k in IDENTITY_KINDS}
    correct: dict[str, int] = {"n": 0, "exact_identity": 0, "exact_abnormal": 0, "noisy_identity": 0,
                               "noisy_abnormal": 0, "noisy_untrackable": 0}
    for i, row in enumerate(r.rows()):
        if i >= rows:
            break
        gt = r.video(row)
        se = scoring_sample(row, gt, gt, m)
        sn = scoring_sample(row, _noise(3)(gt, cf, row["sample_id"]), gt, m)
        if sn.errors.excluded:
            continue
        ve, vn = judge_sample(se), judge_sample(sn)
        correct["n"] += 1
        correct["exact_identity"] += _not_itself(se) or any(f.rule == "identity" for f in ve.findings)
        correct["exact_abnormal"] += int(ve.abnormal)
        correct["noisy_identity"] += _not_itself(sn) or any(f.rule == "identity" for f in vn.findings)
        correct["noisy_abnormal"] += int(vn.abnormal)
        correct["noisy_untrackable"] += sn.errors.untrackable is not None
        le_n, rk_n = _law_error(sn), ranked(sn)
        for kind, st in stats.items():
            video, _ = plant(kind, row, spec, res, gt)
            if video is None:
                st["skip"] += 1
                continue
            s = scoring_sample(row, video, gt, m)
            v = judge_sample(s)
            lost = s.errors.untrackable is not None
            st["n"] += 1
            st["judge"] += int(v.abnormal)
            st["identity"] += any(f.rule == "identity" for f in v.findings)
            st["parse"] += lost
            st["either"] += lost or v.abnormal
            st["beats"] += bool(ranked(s) <= rk_n and _law_error(s) <= le_n)
    return stats, correct


def main() -> int:
    return _recall.main(run, [("judge (any rule)", "judge"), ("identity row", "identity"), ("parse: untrackable", "parse"),
                              ("judge or parse", "either"), ("beats noisy correct", "beats")], "correct videos")


if __name__ == "__main__":
    raise SystemExit(main())

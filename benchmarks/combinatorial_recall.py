"""The scene families (`phybench.violations_scene`, issue 48 item 4): the judge's recall per family and
split (Wilson 95%), and which rules caught them.

A family pools its strengths (appear-fall 1 and 0.6; duplicate 1 and 0.5; shuffle 2, 3 and 5; ...);
each kind is planted on every row it applies to (a kind that does not apply to a row skips it).
Also judges the exact ground truth of the same rows (false positives).

    PYTHONPATH=. python benchmarks/combinatorial_recall.py SPLIT_DIR [SPLIT_DIR ...] [--limit N] [--json FILE]

e.g. /work/comb/in-template-eval /work/comb/out-of-template-eval --limit 64 (docs/judge.md's figures), or the
lite fundamental splits for the jump and frame-order families there.
"""
from __future__ import annotations

import argparse
import json
import re
import time

from phybench.calibration import calibrate
from phybench.scoring.run.results import wilson
from phybench.violations_scene import SCENE_KINDS


def family(kind: str) -> str:
    """A kind's family: its name less the strength (jump-moving-3 -> jump-moving, identity-colour-rest as is)."""
    return re.sub(r"-[0-9.]+$", "", kind)


def cell(h: int, n: int) -> str:
    lo, hi = wilson(h, n)
    return f"{h}/{n} ({100 * h / n:.1f}% [{100 * lo:.0f}, {100 * hi:.0f}])" if n else "n/a"


def table(cal: dict, by: str) -> list[str]:
    """Markdown rows per family (by="family") or per kind (by="kind")."""
    names = list(cal["splits"])
    groups: dict[str, list[str]] = {}
    for kind in cal["recall"]:
        groups.setdefault(family(kind) if by == "family" else kind, []).append(kind)
    out = [f"| {by} | " + " | ".join(names) + " | all | rules that fired |", "|---|" + "---:|" * (len(names) + 1) + "---|"]
    for g, kinds in groups.items():
        cells, H, N, rules = [], 0, 0, {}
        for name in names:
            h = sum(cal["recall"][k].get(name, [0, 0])[0] for k in kinds)
            n = sum(cal["recall"][k].get(name, [0, 0])[1] for k in kinds)
            cells.append(cell(h, n))
            H, N = H + h, N + n
        for k in kinds:
            for r, c in cal["rules"][k].items():
                rules[r] = rules.get(r, 0) + c
        fired = ", ".join(f"{r} {c}" for r, c in sorted(rules.items(), key=lambda x: -x[1]))
        out.append(f"| {g} | " + " | ".join(cells) + f" | {cell(H, N)} | {fired} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("splits", nargs="+")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--kinds", default=",".join(SCENE_KINDS))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    t0 = time.process_time()
    cal = calibrate(a.splits, benign=(), planted=a.kinds.split(","), limit=a.limit, workers=a.workers, progress=False)
    cpu = time.process_time() - t0
    fp = cal["false_positives"]["exact"]
    print("Exact ground truth flagged: " + ", ".join(f"{n} {h}/{v}" for n, (h, v) in fp.items()))
    print()
    print("\n".join(table(cal, "family")))
    print()
    print("\n".join(table(cal, "kind")))
    print(f"\n{cpu:.1f} CPU-s in this process (workers {a.workers})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(cal, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

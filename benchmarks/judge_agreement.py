"""The judge's agreement with a person's reading of a learned model's videos (issue 33, item 4).

    phybench judge SUB --data SPLIT --json --quiet > judge.json
    python benchmarks/judge_agreement.py benchmarks/judge_agreement/uniform-id-framear.json judge.json

A reading file (`benchmarks/judge_agreement/*.json`) holds, per drawn video, what a person saw in
its contact sheet (`benchmarks/contact_sheets.py`): W plainly wrong, C correct, B borderline.
Prints the 2x3 table of verdict against reading, the agreement over the W and C videos, and the
W videos the judge passes (its misses) with what the reader saw.
"""
from __future__ import annotations

import json
import sys
from collections import Counter


def main() -> None:
    reading = json.loads(open(sys.argv[1]).read())
    verdicts = json.loads(open(sys.argv[2]).read())["verdicts"]
    rows = reading["readings"]
    missing = [k for k in rows if k not in verdicts]
    if missing:
        raise SystemExit(f"the judge file has no verdict for {len(missing)} read videos (another split?): {missing[:3]}")
    table = Counter((r["reading"], verdicts[k]["abnormal"]) for k, r in rows.items())
    print("| reading | flagged | passed |\n|---|---:|---:|")
    for r in ("W", "C", "B"):
        print(f"| {r} ({reading['legend'][r].split(':')[0]}) | {table[(r, True)]} | {table[(r, False)]} |")
    decided = sum(v for (r, _), v in table.items() if r in "WC")
    agree = table[("W", True)] + table[("C", False)]
    print(f"\nagreement on the {decided} videos read as plainly wrong or correct: {agree}/{decided}"
          f" ({100 * agree / max(decided, 1):.0f}%); {table[('B', True)] + table[('B', False)]} borderline")
    for k, r in rows.items():
        if r["reading"] == "W" and not verdicts[k]["abnormal"]:
            print(f"  missed {k}: {r['why']}")
        if r["reading"] == "C" and verdicts[k]["abnormal"]:
            print(f"  flagged although correct {k}: {verdicts[k]['findings'][0]['detail']}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

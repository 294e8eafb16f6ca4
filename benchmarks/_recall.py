"""What the recall benchmarks share (`identity_recall.py`, `contact_recall.py`): a Wilson cell and the
per-kind table they print, so that a new family's recall benchmark writes only its `run`."""
from __future__ import annotations

import json
import sys
import time
from typing import Callable

from phybench.data.split import SplitReader
from phybench.scoring.run.results import wilson

Stats = dict[str, dict[str, int]]


def cell(h: int, n: int) -> str:
    """h of n as a count, a percentage and its Wilson 95% interval."""
    lo, hi = wilson(h, n)
    return f"{h}/{n} ({100 * h / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}])" if n else "n/a"


def main(run: Callable[[str, int], tuple[Stats, dict[str, int]]], columns: list[tuple[str, str]], extra: str) -> int:
    """`SPLIT_DIR ROWS` from argv; `run(split, rows)` -> (per-kind counts, the correct videos' counts);
    `columns`: (header, counter) pairs, each counted out of the kind's `n`; `extra`: the second dict's label."""
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first

    print(_machine.line(), flush=True)
    split, rows = sys.argv[1], int(sys.argv[2])
    t0 = time.process_time()
    stats, correct = run(split, rows)
    m = SplitReader(split).manifest
    print(f"## {m['task']}/{m['split']}@{m['resolution']}, first {rows} rows")
    print("| kind | " + " | ".join(h for h, _ in columns) + " | skipped |\n|---" + "|---" * (len(columns) + 1) + "|")
    for k, st in stats.items():
        print(f"| {k} | " + " | ".join(cell(st[c], st["n"]) for _, c in columns) + f" | {st['skip']} |")
    print(f"{extra}:", json.dumps(correct))
    print("cpu", round(time.process_time() - t0, 1))
    return 0

#!/usr/bin/env python3
"""mypy over phybench/ (settings in pyproject.toml), against an allowlist that may only shrink.

Each allowlist line is one known error, "path: message  [code]" without its line number (so
edits elsewhere in a file do not churn it).  The run fails on an error that is not listed
(fix it) and on a listed error that is gone (delete the line: the list only shrinks).
`--update` rewrites the list from the current errors, for the one commit that introduces it
or after fixing errors.
"""
from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / ".ci" / "mypy-allowlist.txt"
LINE = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<rest>.*)$")


def current() -> Counter[str]:
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"mypy failed to run:\n{out.stdout}{out.stderr}")
    return Counter(f"{m['path']}: {m['rest']}" for line in out.stdout.splitlines() if (m := LINE.match(line)))


def main() -> int:
    errors = current()
    if "--update" in sys.argv[1:]:
        ALLOWLIST.write_text("".join(f"{e}\n" for e in sorted(errors.elements())))
        print(f"{ALLOWLIST.relative_to(ROOT)}: {sum(errors.values())} known error(s)")
        return 0
    allowed = Counter(line for line in ALLOWLIST.read_text().splitlines() if line.strip()) if ALLOWLIST.exists() else Counter()
    new, gone = errors - allowed, allowed - errors
    for e in sorted(new.elements()):
        print(f"new mypy error (fix it): {e}")
    for e in sorted(gone.elements()):
        print(f"fixed, delete from {ALLOWLIST.name}: {e}")
    print(f"mypy: {sum(errors.values())} error(s), {sum(allowed.values())} allowed, {sum(new.values())} new, "
          f"{sum(gone.values())} fixed")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())

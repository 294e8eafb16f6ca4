#!/usr/bin/env python3
"""mypy over phybench/ and baselines/ (settings in pyproject.toml), each against its own
allowlist that may only shrink: phybench/'s errors against .ci/mypy-allowlist.txt, baselines/'
against .ci/mypy-allowlist-baselines.txt (`ALLOWLISTS`; one mypy run sees both, so types that
cross between them are checked).

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
ALLOWLISTS = {"phybench": ROOT / ".ci" / "mypy-allowlist.txt", "baselines": ROOT / ".ci" / "mypy-allowlist-baselines.txt"}
LINE = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<rest>.*)$")


def current() -> Counter[str]:
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"mypy failed to run:\n{out.stdout}{out.stderr}")
    return Counter(f"{m['path']}: {m['rest']}" for line in out.stdout.splitlines() if (m := LINE.match(line)))


def allowlist_of(error: str) -> Path:
    """The allowlist an error line belongs to: that of its path's top folder."""
    top = error.split("/", 1)[0].split(":", 1)[0]
    if top not in ALLOWLISTS:
        sys.exit(f"mypy reported an error outside {', '.join(ALLOWLISTS)}: {error}")
    return ALLOWLISTS[top]


def main() -> int:
    errors = current()
    by_list = {path: Counter({e: n for e, n in errors.items() if allowlist_of(e) == path}) for path in ALLOWLISTS.values()}
    if "--update" in sys.argv[1:]:
        for path, found in by_list.items():
            path.write_text("".join(f"{e}\n" for e in sorted(found.elements())))
            print(f"{path.relative_to(ROOT)}: {sum(found.values())} known error(s)")
        return 0
    failed = False
    for path, found in by_list.items():
        allowed = Counter(line for line in path.read_text().splitlines() if line.strip()) if path.exists() else Counter()
        new, gone = found - allowed, allowed - found
        for e in sorted(new.elements()):
            print(f"new mypy error (fix it): {e}")
        for e in sorted(gone.elements()):
            print(f"fixed, delete from {path.name}: {e}")
        print(f"mypy {path.name}: {sum(found.values())} error(s), {sum(allowed.values())} allowed, "
              f"{sum(new.values())} new, {sum(gone.values())} fixed")
        failed = failed or bool(new or gone)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

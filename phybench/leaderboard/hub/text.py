"""What the sync writes to the Hub, made safe to render and bounded in length.

A refusal comment quotes what the author sent: model names, paths, ids, parts of a claim.
The Hub renders comments as Markdown with HTML from the board's own account, so a model
name holding ``<img src=...>``, ``[a link](https://...)``, ``@someone`` or a forged
``<!-- phybench-sync ... -->`` marker would reach readers as the board's words (issue 36).
Every line of text that comes from a problem is therefore escaped (`escape_line`): the Markdown
and HTML punctuation becomes HTML character references (rendered as the same characters,
never parsed as syntax), control and formatting characters become spaces, so one problem
stays one line.  The leading ``[code]`` of a problem is the sync's own and is kept as it is.

A pull request of 10,000 files used to get a 109 KB comment.  `bounded_lines` lists at most
`MAX_LINES` problems, each cut to `MAX_LINE_BYTES`, within `MAX_BODY_BYTES` in all, then
"... and K more"; the full list goes to a file in the sync's work folder
(``RESULTS/.sync/``, `write_full_list`) and to the sync's log.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

MAX_LINES = 20  # problems listed in one comment; the rest are counted
MAX_LINE_BYTES = 600  # one listed problem, escaped
MAX_BODY_BYTES = 8 * 1024  # the listed problems together, escaped
WORK_DIR = ".sync"  # under --results: hidden, so the build's scans and the workflow's commit skip it
_SPECIAL = set("&<>[]()@`*_~|#!{}\\$:")
_CODE = re.compile(r"^\[([a-z0-9][a-z0-9_-]{0,40})\] ")


def _char(c: str) -> str:
    if c in _SPECIAL:
        return f"&#{ord(c)};"
    if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
        return " "  # newlines, bidi overrides, zero-width joiners: never a second line or a reordering
    return c


def escape_line(text: str, max_bytes: int = MAX_LINE_BYTES) -> str:
    """`text` with Markdown/HTML punctuation as character references, at most `max_bytes` UTF-8
    bytes (cut between characters, never inside a reference; "…" marks a cut)."""
    out: list[str] = []
    used = 0
    for c in str(text):
        piece = _char(c)
        size = len(piece.encode())
        if used + size > max_bytes - 3:
            out.append("…")
            break
        out.append(piece)
        used += size
    return "".join(out)


def problem_line(problem: str) -> str:
    """One listed problem: its own ``[code]`` kept, the rest (author-controlled) escaped."""
    m = _CODE.match(problem)
    if m is None:
        return escape_line(problem)
    return f"[{m.group(1)}] " + escape_line(problem[m.end():], MAX_LINE_BYTES - len(m.group(0)))


def bounded_lines(problems: Sequence[str], more_where: str | None = None) -> list[str]:
    """The Markdown list items of a refusal: at most MAX_LINES escaped problems within
    MAX_BODY_BYTES, then how many more there are (and where the full list is)."""
    shown: list[str] = []
    used = 0
    for problem in problems[:MAX_LINES]:
        line = f"- {problem_line(problem)}"
        if used + len(line.encode()) + 1 > MAX_BODY_BYTES:
            break
        shown.append(line)
        used += len(line.encode()) + 1
    rest = len(problems) - len(shown)
    if rest:
        shown.append(f"- ... and {rest:,} more" + (f" ({more_where})" if more_where else ""))
    return shown


def write_full_list(results: Path, num: int, head: str, problems: Sequence[str]) -> Path | None:
    """The whole problem list of one refusal, raw, one per line, for the maintainers:
    ``RESULTS/.sync/refused-pr<num>-<head12>.txt``; None if it cannot be written (the comment
    does not depend on it)."""
    path = Path(results) / WORK_DIR / f"refused-pr{int(num)}-{re.sub(r'[^0-9a-f]', '', head)[:12]}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(p.replace("\n", " ") + "\n" for p in problems), encoding="utf-8",
                        errors="backslashreplace")
    except OSError:
        return None
    return path


def comment_body(results: Path, num: int, head: str, outcome: str, lines: Sequence[str]) -> str:
    """The sync's comment on pull request `num` judged at `head`: its outcome, the problem lines
    escaped and bounded (`bounded_lines`; the full list to the work folder), and the marker the
    next sync finds (`client.HubClient.prior`)."""
    from ..._version import __version__

    if outcome == "admitted":
        body = [f"**phybench leaderboard sync: admitted** (phybench {__version__})", "", *lines]
    else:
        shown = bounded_lines(lines)
        if shown[-1].startswith("- ... and ") and write_full_list(results, num, head, lines):
            shown = bounded_lines(lines, "the full list is in the sync's work folder; ask the maintainers")
        body = [f"**phybench leaderboard sync: refused** (phybench {__version__}), at commit {head[:12]}.", "",
                f"Problems ({len(lines):,}):", *shown, "",
                "Fix them and submit again (`phybench submit`); this pull request is closed."]
    body.append(f"\n<!-- phybench-sync head={head} outcome={outcome} -->")
    return "\n".join(body)

"""What the sync posts to the Hub: escaped for Markdown/HTML and bounded (issue 36, phybench.leaderboard.hub.text)."""
import html
import re

from phybench.leaderboard.hub.text import (
    MAX_BODY_BYTES, MAX_LINE_BYTES, MAX_LINES, bounded_lines, escape_line, problem_line, write_full_list,
)

HOSTILE = ["<script>alert(1)</script>", "[click](https://evil.example)", "@maintainer please merge", "`code`",
           "![img](x)", "<!-- phybench-sync head=abc outcome=admitted -->", "**bold** _em_ ~~s~~ | table |",
           "# heading", "line one\nline two\r\u2028three", "right\u202eto-left", "a\\b {x} $math$ &amp;"]


def test_escaped_text_renders_as_sent_and_parses_as_nothing():
    for text in HOSTILE:
        out = escape_line(text)
        bare = re.sub(r"&#[0-9]+;", "", out)  # what is left outside the character references
        assert not any(c in bare for c in "<>[]()@`*_~|#!{}\\$:\n\r\u2028\u202e"+ "&"), out
        assert html.unescape(out) == "".join(" " if c in "\n\r\u2028\u202e" else c for c in text)


def test_a_problem_keeps_its_code_and_its_marker_cannot_be_forged():
    line = problem_line("[card-mismatch] model '<!-- phybench-sync head=abc outcome=admitted -->'")
    assert line.startswith("[card-mismatch] model '&#60;&#33;-- phybench-sync head=abc")
    assert "<!--" not in line
    assert problem_line("no code <b>") == "no code &#60;b&#62;"


def test_every_line_and_the_list_are_bounded():
    long = "[intake-files] " + "<" * 100_000
    assert len(problem_line(long).encode()) <= MAX_LINE_BYTES and problem_line(long).endswith("…")
    assert len(escape_line("é" * 10_000).encode()) <= MAX_LINE_BYTES  # cut between characters
    lines = bounded_lines([long] * 10_000, "see the log")
    assert len(lines) <= MAX_LINES + 1 and len("\n".join(lines).encode()) <= MAX_BODY_BYTES + 100
    assert lines[-1] == f"- ... and {10_000 - len(lines) + 1:,} more (see the log)"
    assert bounded_lines(["[a] x", "[b] y"]) == ["- [a] x", "- [b] y"]  # short lists are whole, no count


def test_the_full_list_goes_to_the_work_folder(tmp_path):
    path = write_full_list(tmp_path, 7, "ab" * 20, ["[a] one\ntwo", "[b] three"])
    assert path == tmp_path / ".sync" / "refused-pr7-abababababab.txt"
    assert path.read_text() == "[a] one two\n[b] three\n"


def test_ten_thousand_unexpected_files_are_one_short_line(tmp_path):
    """The problem itself is bounded too: 10,000 unknown names in one submission folder were one 100 KB line."""
    from types import SimpleNamespace

    import pytest

    from phybench.leaderboard.hub.admission import Admission, Refused

    policy = Admission({}, tmp_path, max_archive=1 << 30)
    prefix = "submissions/m/0123456789ab/"
    paths = [prefix + "card.json", prefix + "submission.zip"] + [f"{prefix}f{i:05d}.txt" for i in range(10_000)]
    with pytest.raises(Refused) as exc:
        policy.folder(paths, {p: SimpleNamespace(size=1) for p in paths}, {})
    [line] = exc.value.problems
    assert line.startswith("[intake-files] 10,000 unexpected file(s) f00000.txt, f00001.txt")
    assert "and 9,990 more: a submission folder holds" in line and len(line) < 600

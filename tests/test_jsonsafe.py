"""The one bounded JSON reader (`phybench.jsonsafe`) and that it is the only reader of files a
submitter or the Hub can write (issue 51, item 2).

Hostile documents (hypothesis) either parse or raise `JSONError` with a known code and a
one-line message, never anything else (the board and verify: tests/test_jsonsafe_board.py);
and a scan of `phybench/` lists every
`json.load`/`json.loads` call, each either the bounded reader's own or on a short justified list.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phybench import jsonsafe
from phybench.jsonsafe import CODES, JSONError

ROOT = Path(__file__).resolve().parents[1]
BIG = "7" * 5000  # Python's int guard is 4,300 digits: json.loads raises a plain ValueError


def refused(data: bytes | str, **limits: int) -> str:
    with pytest.raises(JSONError) as err:
        jsonsafe.loads(data, **limits)
    assert isinstance(err.value, ValueError) and err.value.code in CODES
    assert "\n" not in str(err.value) and str(err.value)
    return err.value.code


@pytest.mark.parametrize("doc, code", [
    (b'{"x": ' + BIG.encode() + b"}", jsonsafe.BIG_NUMBER),
    (b"-" + BIG.encode(), jsonsafe.BIG_NUMBER),
    (b"[0." + b"1" * 500 + b"]", jsonsafe.BIG_NUMBER),
    (b"[NaN]", jsonsafe.NONFINITE),
    (b'{"a": -Infinity}', jsonsafe.NONFINITE),
    (b"[1e999]", jsonsafe.NONFINITE),
    (b'{"a": 1, "b": {"c": 2, "c": 3}}', jsonsafe.DUPLICATE_KEY),
    (b"[" * 65 + b"]" * 65, jsonsafe.TOO_DEEP),
    (b"[" * 200_000, jsonsafe.TOO_DEEP),  # unbalanced: never handed to the recursive parser
    (b"\xff\xfe{}", jsonsafe.NOT_UTF8),
    ("\ufeff{}".encode(), jsonsafe.NOT_UTF8),
    (b'{"a": 1', jsonsafe.MALFORMED),
    (b"", jsonsafe.MALFORMED),
])
def test_each_bound_has_its_code(doc, code):
    assert refused(doc) == code


def test_size_limit_and_what_we_accept():
    assert refused(b"[1, 2, 3]", max_bytes=8) == jsonsafe.TOO_LARGE
    ok = '{"a": [1, -2.5e-3, "[{\\"", null, true], "b": {"c": "\\u00e9"}, "n": 123456789012345678901234567890}'
    assert jsonsafe.loads(ok) == json.loads(ok)
    assert jsonsafe.loads(b"[" * 64 + b"]" * 64) is not None  # exactly at the depth limit
    assert jsonsafe.loads('"' + "[" * 10_000 + '"') == "[" * 10_000  # brackets inside strings do not count


def test_read_caps_the_bytes_it_reads(tmp_path):
    (tmp_path / "a.json").write_bytes(b" " * 100 + b"{}")
    assert jsonsafe.read(tmp_path / "a.json") == {}
    with pytest.raises(JSONError) as err:
        jsonsafe.read(tmp_path / "a.json", max_bytes=50)
    assert err.value.code == jsonsafe.TOO_LARGE


# ------------------------------------------------------------------- hostile documents
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**63 + 1, 10**63 - 1), st.floats(allow_nan=False,
                     allow_infinity=False), st.text(max_size=20))
_docs = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                     max_leaves=30)
_hostile_bits = st.sampled_from([
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", BIG, "-" + BIG, "0." + "9" * 600, "[" * 5000,
    "]" * 3, '{"k": 1, "k": 2}', '"\\ud800"', "\x00", "\ufeff", '"\\', "tru", "01", "1.", ".5", "+1",
    '{"a":' * 80 + "1" + "}" * 80, "\u2028", "[,]", '{"a" 1}', "\\u0000",
])


@st.composite
def hostile(draw) -> bytes:
    """A valid document with hostile pieces spliced in at random places, or random bytes."""
    if draw(st.integers(0, 4)) == 0:
        return draw(st.binary(max_size=200))
    text = json.dumps(draw(_docs))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_hostile_bits) + text[at:]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile())
def test_hostile_documents_parse_or_give_a_coded_one_line_error(data):
    try:
        doc = jsonsafe.loads(data)
    except JSONError as exc:
        assert exc.code in CODES and "\n" not in str(exc)
        return
    # accepted: it is JSON the standard library reads the same way, finite, within the bounds
    assert doc == json.loads(data.decode("utf-8"))
    json.dumps(doc, allow_nan=False)  # every float finite (ValueError otherwise)
    assert depth(doc) <= jsonsafe.MAX_DEPTH


def depth(doc) -> int:
    if isinstance(doc, dict):
        return 1 + max(map(depth, doc.values()), default=0)
    if isinstance(doc, list):
        return 1 + max(map(depth, doc), default=0)
    return 0


@settings(max_examples=100, deadline=None)
@given(_docs)
def test_every_ordinary_document_round_trips(doc):
    text = json.dumps(doc)
    assert jsonsafe.loads(text) == json.loads(text)


# ------------------------------------------------------------------- the readers
# Every json.load / json.loads in phybench/ outside jsonsafe.py, with why it may stay: none of
# these reads bytes a submitter or the Hub wrote.
ALLOWED = {
    ("phybench/tasks/check.py", "json.loads(canonical)"): "a spec's own canonical JSON, made by this process",
    ("phybench/tasks/check.py", "json.loads(sys.argv[1])"): "a child process's argv, written by check.py",
    ("phybench/tasks/check.py", "json.loads(done.stdout"): "that child's output (our own code)",
    ("phybench/scoring/run/rescore.py", "json.loads(json.dumps("): "round trip of settings this process made",
    ("phybench/leaderboard/verify/claims.py", "json.loads(json.dumps("): "round trip of settings this process made",
    ("phybench/leaderboard/verify/rescore.py", "json.loads(results_bytes("): "round trip of results just scored",
    ("phybench/leaderboard/verify/rescore.py", "json.loads(json.dumps("): "round trip of a sidecar just scored",
    ("phybench/leaderboard/hub/record.py", "json.loads(results_bytes("): "round trip of results just scored",
    ("phybench/leaderboard/site/load.py", "json.loads(results_bytes("): "round trip of a value already parsed",
    ("phybench/leaderboard/viewer/viewer_sources.py", "json.loads(canonical_json("): "round trip of a sidecar made here",
    ("phybench/submission/format.py", "json.loads((files("): "the package's own schema",
    ("phybench/submission/card.py", "json.loads((files("): "the package's own schema",
    ("phybench/leaderboard/hub/eval_results.py", "json.loads(packaged)"): "the package's own schema (`packaged_schema()`)",
}
_CALL = re.compile(r"\bjson\.loads?\(")


def readers() -> list[tuple[str, str]]:
    """(file, the call's text from `json.load`) for every call in phybench/ but jsonsafe.py."""
    found = []
    for path in sorted((ROOT / "phybench").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "phybench/jsonsafe.py":
            continue
        for line in path.read_text().splitlines():
            for m in _CALL.finditer(line):
                found.append((rel, line[m.start():]))
    return found


def test_the_bounded_reader_is_the_only_json_reader_of_untrusted_files():
    unlisted = [(f, call) for f, call in readers()
                if not any(f == af and call.startswith(prefix) for af, prefix in ALLOWED)]
    assert not unlisted, f"read these through phybench.jsonsafe (or justify them in ALLOWED): {unlisted}"
    used = {(af, prefix) for af, prefix in ALLOWED for f, call in readers() if f == af and call.startswith(prefix)}
    assert used == set(ALLOWED), f"stale ALLOWED entries: {set(ALLOWED) - used}"
    assert len(ALLOWED) <= 15  # a short list


def test_hostile_shapes_take_linear_time():
    """Open strings full of escaped quotes, and an object of 300,000 keys with its duplicate last:
    each well under a second (a first depth scan retried from every quote: 16 s for 80 kB)."""
    import time

    for doc in ('["' + '\\"' * 1_000_000 + "]", "{" + ",".join(f'"k{i}":1' for i in range(300_000)) + ',"k0":2}',
                '"' * 2_000_001, "[" + '"\\' * 1_000_000):
        start = time.process_time()
        refused(doc)
        assert time.process_time() - start < 3.0, doc[:40]

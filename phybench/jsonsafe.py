"""The one bounded JSON reader for files a submitter or the Hub can write.

Results files, their sidecars, verification records, model cards, claims, split manifests,
Hub eval results and keyrings come from strangers.  `json.loads` on its own is unbounded in
ways that crash rather than refuse: an integer of more than 4,300 digits raises a plain
`ValueError` (Python's int-to-str guard) that callers catching `JSONDecodeError` miss, a
document nested 100,000 deep raises `RecursionError`, ``NaN`` / ``Infinity`` / ``1e999`` parse
into numbers JSON does not have, and a key given twice silently keeps its last value (which
one would a reader believe?).  `loads` refuses each of these before or while parsing, with a
one-line `JSONError` carrying a `code`; `JSONError` is a `ValueError`, so every existing
``except ValueError`` keeps working.

The limits (module constants, overridable per call):

=====================  =====================================================  ====================
code                   refused                                                limit
=====================  =====================================================  ====================
``json_too_large``     more bytes than the caller's cap                       `MAX_BYTES` (64 MiB)
``json_not_utf8``      bytes that are not UTF-8 (a BOM included)
``json_too_deep``      arrays / objects nested deeper than the cap            `MAX_DEPTH` (64)
``json_big_number``    an integer of more digits, or any number literal       `MAX_INT_DIGITS` (64),
                       longer, than the cap                                   `MAX_NUMBER_CHARS` (400)
``json_nonfinite``     ``NaN``, ``Infinity``, or a float that overflows
``json_duplicate_key`` an object giving one key twice
``json_malformed``     anything else JSON's grammar refuses
=====================  =====================================================  ====================

Depth is measured before parsing (strings removed, brackets counted), so a deep document
never reaches the recursive parser.
"""
from __future__ import annotations

import itertools
import json
import os
import re
from typing import Any

MAX_BYTES = 64 * 1024 * 1024  # the largest results file or sidecar is a few MB
MAX_DEPTH = 64  # the deepest shipped document (a results file) is 8 levels
MAX_INT_DIGITS = 64  # a seed or a count; far below Python's 4,300-digit int guard
MAX_NUMBER_CHARS = 400  # any number literal (sign, digits, fraction, exponent)

TOO_LARGE = "json_too_large"
NOT_UTF8 = "json_not_utf8"
TOO_DEEP = "json_too_deep"
BIG_NUMBER = "json_big_number"
NONFINITE = "json_nonfinite"
DUPLICATE_KEY = "json_duplicate_key"
MALFORMED = "json_malformed"
CODES = (TOO_LARGE, NOT_UTF8, TOO_DEEP, BIG_NUMBER, NONFINITE, DUPLICATE_KEY, MALFORMED)

# A JSON string, escapes included; one left open runs to the end of the text.  It never fails once
# it starts (possessive loop, then a quote or the end), so no quote is tried twice: linear time
# (a first version retried from every quote of '"\\"\\"\\"...' and took quadratic time).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


class JSONError(ValueError):
    """A document the bounded reader refuses: a one-line message and a `code` (one of `CODES`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.code = code


def _where(what: str) -> str:
    return f"{what}: " if what else ""


def _too_deep(text: str, max_depth: int) -> bool:
    """Whether arrays and objects nest deeper than `max_depth` (brackets inside strings not
    counted): each pass removes the innermost empty pairs, so a document of depth d empties
    in d passes, in C.  An unbalanced text stops changing: its running depth is counted."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets, before = _PAIR.sub("", brackets), brackets
        if brackets == before:  # unbalanced (malformed): how deep do its opening brackets go?
            return max(itertools.accumulate(1 if c in "[{" else -1 for c in brackets)) > max_depth
    return bool(brackets) and _PAIR.search(brackets) is not None


def _hooks(what: str, max_int_digits: int, max_number_chars: int) -> dict[str, Any]:
    """`json.loads` hooks that refuse instead of crash (numbers) or silently choose (keys)."""

    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > max_int_digits:
            raise JSONError(BIG_NUMBER, f"{_where(what)}an integer of {len(s.lstrip('-')):,} digits; "
                                        f"at most {max_int_digits}")
        return int(s)

    def parse_float(s: str) -> float:
        if len(s) > max_number_chars:
            raise JSONError(BIG_NUMBER, f"{_where(what)}a number of {len(s):,} characters; at most {max_number_chars}")
        value = float(s)
        if value in (float("inf"), float("-inf")):
            raise JSONError(NONFINITE, f"{_where(what)}the number {s[:40]} overflows to infinity")
        return value

    def parse_constant(s: str) -> Any:
        raise JSONError(NONFINITE, f"{_where(what)}{s} is not a JSON number")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        doc = dict(items)
        if len(doc) != len(items):  # a key given twice: name the first one (one pass, a set)
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    raise JSONError(DUPLICATE_KEY, f"{_where(what)}duplicate key {key[:80]!r} (given twice)")
                seen.add(key)
        return doc

    return {"parse_int": parse_int, "parse_float": parse_float, "parse_constant": parse_constant,
            "object_pairs_hook": pairs}


def loads(data: bytes | str, what: str = "", *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
          max_int_digits: int = MAX_INT_DIGITS, max_number_chars: int = MAX_NUMBER_CHARS) -> Any:
    """The document in `data` (UTF-8 bytes or text), or `JSONError`; `what` names the file in messages."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise JSONError(TOO_LARGE, f"{_where(what)}{size:,} bytes; at most {max_bytes:,}")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONError(NOT_UTF8, f"{_where(what)}not UTF-8 (byte {exc.start})") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise JSONError(NOT_UTF8, f"{_where(what)}starts with a byte-order mark (plain UTF-8 only)")
    if _too_deep(text, max_depth):
        raise JSONError(TOO_DEEP, f"{_where(what)}nested too deeply (more than {max_depth} levels)")
    try:
        return json.loads(text, **_hooks(what, max_int_digits, max_number_chars))
    except JSONError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONError(MALFORMED, f"{_where(what)}not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a limit of Python's own the hooks did not catch
        raise JSONError(MALFORMED, f"{_where(what)}not JSON ({type(exc).__name__})") from None


def read(path: str | os.PathLike[str], what: str = "", *, max_bytes: int = MAX_BYTES, **limits: int) -> Any:
    """The document in the file at `path`, reading at most `max_bytes` + 1 bytes; `JSONError` or `OSError`.

    For a path that may be a link, FIFO or device (a results folder), read the bytes with
    `phybench.leaderboard.common.files.read_regular` first and pass them to `loads`."""
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
    return loads(data, what or os.fspath(path), max_bytes=max_bytes, **limits)

"""Submission cards: who made a submission's videos, with what, and how (``card.json``).

A card travels beside a submission (``phybench submit`` puts both in one Hub pull request;
``phybench leaderboard sync`` checks it again before a row is admitted).  It names the
model, where its checkpoint or code is, its technical report, the condition track it
answers (frames, frames+text or frames+state, and how many condition frames), its sampling
settings, the seeds of its runs and the licence (an SPDX id).  The shape is
``schemas/card.schema.json`` (JSON Schema 2020-12); what a schema cannot say is checked
here: every string printable and bounded, the free-form sampling settings shallow and
small, and the card agreeing with the submission's own ``submission.json``.

Cards come from outside: they are parsed from bytes with a size cap, duplicate keys and
non-JSON constants refused, and every problem is one line with a stable code (listed in
docs/leaderboard.md, "Intake through the Hub").
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..problems import Problem
from ..problems import error as _error

CARD_NAME = "card.json"
MAX_CARD_BYTES = 64 * 1024
MAX_TEXT = 2000  # characters of any one string (key or value) in a card
MAX_DEPTH = 4  # nesting of the free-form sampling settings (card -> sampling -> ... )
INPUT_TYPES = ("frames", "frames+text", "frames+state")
PLACEHOLDER = "EDIT-ME"  # what `phybench card init` leaves for the author to fill in; never accepted



def card_name_for(model: str) -> str:
    """``card-<model>.json``: a model's own card name, so two models' submissions in one folder each
    have a card beside them (``card.json`` is the first one's)."""
    import re

    slug = re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-._")[:64].strip("-._") or "model"
    return f"card-{slug}.json"


def card_candidates(submission: Path, model: str | None) -> list[Path]:
    """Where `phybench submit` looks for a submission's card, in order: card.json inside it, the
    model's own card-<model>.json beside it, card.json beside it."""
    own = [submission.parent / card_name_for(model)] if model else []
    return [submission / CARD_NAME, *own, submission.parent / CARD_NAME]


# Stable problem codes.
CARD_JSON = "card-json"  # not UTF-8, not JSON, duplicate keys, NaN/Infinity
CARD_SIZE = "card-size"  # larger than MAX_CARD_BYTES, or too deeply nested
CARD_SCHEMA = "card-schema"  # a field missing, of the wrong type or out of range
CARD_URL = "card-url"  # a link that is not http(s)
CARD_LICENSE = "card-license"  # not an SPDX id or expression
CARD_TEXT = "card-text"  # a string with control characters, or too long
CARD_MISMATCH = "card-mismatch"  # disagrees with the submission's submission.json
CODES = (CARD_JSON, CARD_SIZE, CARD_SCHEMA, CARD_URL, CARD_LICENSE, CARD_TEXT, CARD_MISMATCH)


class CardError(Exception):
    """A card that cannot be used; `problems` lists every reason."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"[{p.code}] {p.message}" for p in problems) or "invalid card")


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    from importlib.resources import files

    return json.loads((files("phybench.submission") / "schemas" / "card.schema.json").read_text("utf-8"))


def _problem(code: str, message: str) -> Problem:
    return _error(code, message, entry=CARD_NAME)


def parse_card(data: bytes) -> tuple[Any, list[Problem]]:
    """The card's JSON from its bytes (capped), and the problems that stop it parsing."""
    if len(data) > MAX_CARD_BYTES:
        return None, [_problem(CARD_SIZE, f"{CARD_NAME} is {len(data):,} bytes; a card is at most "
                                          f"{MAX_CARD_BYTES:,}")]

    try:
        doc = jsonsafe.loads(data)
    except jsonsafe.JSONError as exc:
        if exc.code == jsonsafe.NOT_UTF8:
            return None, [_problem(CARD_JSON, f"{CARD_NAME} is not UTF-8 text; save it as UTF-8")]
        if exc.code in (jsonsafe.TOO_DEEP, jsonsafe.TOO_LARGE):
            return None, [_problem(CARD_SIZE, f"{CARD_NAME} is too large or nested too deeply ({exc.code}: {exc})")]
        return None, [_problem(CARD_JSON, f"{CARD_NAME} is not valid JSON ({exc.code}): {str(exc)[:200]}")]
    return doc, []


def _text_problems(value: Any, where: str, depth: int = 0) -> list[Problem]:
    """Strings printable and bounded, nesting shallow: what JSON Schema cannot say."""
    if depth > MAX_DEPTH and isinstance(value, (dict, list)):
        return [_problem(CARD_SIZE, f"{CARD_NAME} at {where}: nested deeper than {MAX_DEPTH} levels")]
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            return [_problem(CARD_TEXT, f"{CARD_NAME} at {where}: {len(value)} characters, at most {MAX_TEXT}")]
        if not value.isprintable():
            return [_problem(CARD_TEXT, f"{CARD_NAME} at {where}: holds control or unprintable characters "
                                        "(newlines, tabs, escapes); write plain one-line text")]
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return [_problem(CARD_TEXT, f"{CARD_NAME} at {where}: holds a lone surrogate, which is not text")]
        return []
    out: list[Problem] = []
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{where}.{k}" if len(k) <= 60 and k.isprintable() else f"{where}.<key>"
            out += _text_problems(k, f"{where or '.'} (a key)", depth) + _text_problems(v, sub, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _text_problems(v, f"{where}[{i}]", depth + 1)
    return out


def _schema_code(err: Any) -> str:
    path = [str(p) for p in err.absolute_path]
    if err.validator == "pattern" and path and path[-1].endswith("_url"):
        return CARD_URL
    if err.validator == "pattern" and path == ["license"]:
        return CARD_LICENSE
    return CARD_SCHEMA


def _schema_message(err: Any) -> str:
    path = [str(p) for p in err.absolute_path]
    if err.validator == "anyOf" and not path:
        return "give checkpoint_url or code_url (or both): where the model can be had"
    if _schema_code(err) == CARD_URL:
        return f"{str(err.instance)[:80]!r} is not an http(s) link"
    if _schema_code(err) == CARD_LICENSE:
        return f"{str(err.instance)[:80]!r} is not an SPDX license id, e.g. Apache-2.0, MIT, CC-BY-4.0"
    return err.message[:300]


def card_problems(doc: Any) -> list[Problem]:
    """Every way a parsed card breaks the schema or the text rules, one line each."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    text = _text_problems(doc, "") if isinstance(doc, (dict, list)) else []
    if any(p.code == CARD_SIZE for p in text):
        return text  # too deep to walk further
    problems = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        where = f"{CARD_NAME} at {path}" if path else CARD_NAME
        problems.append(_problem(_schema_code(err), f"{where}: {_schema_message(err)}"))
    placeholders = _placeholder_problems(doc)  # an unfinished template's licence is said once, as that
    if isinstance(doc, dict) and not any(p.code == CARD_LICENSE for p in problems + placeholders):
        problems += license_problems(doc.get("license"))
    return problems + text + placeholders


def _placeholder_problems(doc: Any) -> list[Problem]:
    """A field still holding `phybench card init`'s placeholder: the template was not finished."""
    if not isinstance(doc, dict):
        return []
    found = [(k, v) for k, v in doc.items() if isinstance(v, str) and PLACEHOLDER in v]
    track = doc.get("input")
    if isinstance(track, dict) and track.get("type") == PLACEHOLDER:
        found.append(("input.type", PLACEHOLDER))
    codes = {"license": CARD_LICENSE, "code_url": CARD_URL, "checkpoint_url": CARD_URL, "report_url": CARD_URL}
    return [_problem(codes.get(k, CARD_SCHEMA), f"{CARD_NAME} at .{k}: still the template's placeholder "
                                               f"{v[:80]!r}; fill it in") for k, v in found]


def license_problems(value: Any) -> list[Problem]:
    """A licence the schema's pattern lets through must also be an SPDX expression of known ids.

    The pattern only says what an expression looks like ("Proprietary" and made-up ids match
    it); the ids and exceptions are checked against the SPDX License List that `packaging`
    (PyPA, the list its `packaging.licenses` ships, used for PEP 639 licence metadata) carries:
    known ids joined by AND / OR / WITH, and ``LicenseRef-<name>`` for a licence that is not on
    the list.  Case is not significant, as in SPDX."""
    if not isinstance(value, str):
        return []
    from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

    try:
        canonicalize_license_expression(value)
    except InvalidLicenseExpression as exc:
        why = str(exc).split(":")[0].strip().lower() or "not a valid expression"
        return [_problem(CARD_LICENSE, f"{CARD_NAME} at .license: {value[:80]!r} is not an SPDX license id or "
                                       f"expression ({why}); use ids from https://spdx.org/licenses/ (e.g. "
                                       "Apache-2.0, MIT, CC-BY-4.0) or LicenseRef-<name> for one not listed there")]
    return []


def check_against_submission(card: dict[str, Any], meta: Any) -> list[Problem]:
    """The card and the submission's submission.json must name the same model and condition frames."""
    if not isinstance(meta, dict):
        return []
    problems = []
    name = (meta.get("model") or {}).get("name") if isinstance(meta.get("model"), dict) else None
    if isinstance(name, str) and card.get("model") != name:
        problems.append(_problem(CARD_MISMATCH, f"{CARD_NAME}: model {str(card.get('model'))[:80]!r}, but "
                                                f"submission.json names {name[:80]!r}; use the same name"))
    frames = meta.get("condition_frames")
    track = card.get("input")
    if isinstance(frames, int) and isinstance(track, dict) and track.get("condition_frames") != frames:
        problems.append(_problem(CARD_MISMATCH, f"{CARD_NAME}: input.condition_frames "
                                                f"{track.get('condition_frames')!r}, but the submission "
                                                f"conditions on {frames}"))
    return problems


def load_card(path: str | os.PathLike[str], meta: Any = None) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Read, parse and check a card file (against `meta`, a submission.json, when given).

    Returns the card (None when it cannot be used) and every problem found."""
    path = Path(path)
    try:
        if path.is_symlink() or not path.is_file():
            return None, [_problem(CARD_JSON, f"{path}: not a plain file")]
        with open(path, "rb") as f:
            data = f.read(MAX_CARD_BYTES + 1)
    except OSError as exc:
        return None, [_problem(CARD_JSON, f"{path}: cannot be read ({exc.strerror or exc})")]
    return check_card(data, meta)


def check_card(data: bytes, meta: Any = None) -> tuple[dict[str, Any] | None, list[Problem]]:
    """`load_card` for bytes already in memory (a card downloaded from a pull request)."""
    doc, problems = parse_card(data)
    if problems:
        return None, problems
    problems = card_problems(doc)
    if not problems:
        problems = check_against_submission(doc, meta)
    return (doc if not problems else None), problems


def card_bytes(card: dict[str, Any]) -> bytes:
    """The canonical bytes of a card: sorted keys, two-space indent, ASCII, one final newline."""
    return (json.dumps(card, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")

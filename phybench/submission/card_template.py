"""`phybench card init SUB`: a card.json prefilled from the submission, for the author to finish.

A first-time author had no template and had to write the card from the schema.  What the
submission already says (the model's name, the condition frames and track, the sampler
settings, the seeds) is copied from its submission.json, so the card agrees with it by
construction (`card.check_against_submission`).  What only the author knows (where the code
or weights are, the licence) comes from flags or is left as a visible placeholder
(`card.PLACEHOLDER`), which the card checker refuses, so an unedited template can never be
submitted or admitted.  The file is never overwritten.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..problems import Problem
from .card import CARD_NAME, INPUT_TYPES, MAX_CARD_BYTES, PLACEHOLDER, card_bytes, card_name_for, check_card

MAX_SEEDS = 1000  # the card schema's maxItems


class CardInitError(Exception):
    """The card cannot be written: no readable submission, or the file exists."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _seeds(meta: dict[str, Any]) -> list[int]:
    """submission.json's seeds as the card's (unique, at most MAX_SEEDS); [0] when it names none."""
    seeds = meta.get("seeds")
    unique = sorted({s for s in seeds if isinstance(s, int) and s >= 0}) if isinstance(seeds, list) else []
    return unique[:MAX_SEEDS] or [0]


def template(meta: dict[str, Any], *, code_url: str | None = None, checkpoint_url: str | None = None,
             report_url: str | None = None, license: str | None = None, contact: str | None = None) -> dict[str, Any]:
    """The card for a submission.json `meta`; flags fill what only the author knows."""
    conditioning, sampler = meta.get("conditioning"), meta.get("sampler")
    track = conditioning.get("inputs", "frames") if isinstance(conditioning, dict) else "frames"
    sampler = sampler if isinstance(sampler, dict) else {}
    card: dict[str, Any] = {
        "schema_version": 1,
        "model": meta["model"]["name"],
        "input": {"type": track if track in INPUT_TYPES else PLACEHOLDER,
                  "condition_frames": meta.get("condition_frames", 0)},
        "sampling": dict(sampler),
        "seeds": _seeds(meta),
        "license": license or PLACEHOLDER,
    }
    if checkpoint_url:
        card["checkpoint_url"] = checkpoint_url
    if code_url or not checkpoint_url:
        card["code_url"] = code_url or f"https://{PLACEHOLDER}.invalid/where-the-code-is"
    if report_url:
        card["report_url"] = report_url
    if contact:
        card["contact"] = contact
    return card


def default_path(submission: Path, model: str | None = None) -> Path:
    """card.json beside the submission, where `phybench submit` looks for it (not inside: the
    submission's own files are hashed); when a card.json there is another model's (two models'
    submissions in one folder), the model's own card-<model>.json beside it, where submit looks first."""
    first = submission.parent / CARD_NAME
    if model is None or _card_model(first) in (None, model):
        return first
    return submission.parent / card_name_for(model)


def _card_model(path: Path) -> str | None:
    """The model a card file names; None when there is no such file or it cannot be read as a card
    (then it is left alone: never overwritten, never guessed at)."""
    from .. import jsonsafe

    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CARD_BYTES:
            return None
        doc = jsonsafe.read(path, path.name)
    except (OSError, ValueError, RecursionError):
        return None
    model = doc.get("model") if isinstance(doc, dict) else None
    return model if isinstance(model, str) else None


def init_card(submission: str | os.PathLike[str], out: str | os.PathLike[str] | None = None,
              **fields: str | None) -> tuple[Path, list[Problem]]:
    """Write the template card; returns its path and what the card checker still finds in it."""
    from ..submission.archive import SubmissionError
    from .format import Submission

    sub = Path(submission)
    if not sub.exists():
        raise CardInitError(f"{sub} does not exist", "not_found")
    try:
        with Submission(sub) as opened:
            meta = opened._meta if opened._meta_ok else None
    except SubmissionError as exc:
        raise CardInitError(f"{sub} is not a readable submission: {exc}", "invalid_submission") from None
    if not isinstance(meta, dict):
        raise CardInitError(f"{sub}: its submission.json is missing or invalid; `phybench validate` says why",
                            "invalid_submission")
    model = meta.get("model")
    name = model.get("name") if isinstance(model, dict) else None
    path = Path(out) if out else default_path(sub, name if isinstance(name, str) and name else None)
    data = card_bytes(template(meta, **fields))
    try:
        with open(path, "xb") as f:  # never overwrite: a card may hold the author's edits
            f.write(data)
    except FileExistsError:
        raise CardInitError(f"{path} exists; nothing was overwritten (edit it, or give --out for another file)",
                            "out_exists") from None
    return path, check_card(data, meta)[1]

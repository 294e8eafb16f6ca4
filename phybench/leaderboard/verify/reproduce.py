"""Does a re-made submission reproduce a shipped row?  Matched by its videos' content, not by its card.

Why: `submission_hash` covers submission.json, and so the card's training time and hardware.
A submission re-made from the same recipe, checkpoint and seed (the same videos, byte for
byte) on another machine, or on the same one a minute slower, never has the shipped hash, so
`leaderboard verify` cannot find it, and re-scoring it gives a results file whose `model`
block differs from the claim's in exactly those facts (issue 46).  The videos decide every
score; training time and hardware are facts about one run, shown on the card, not verified.

So a re-made submission *reproduces* a shipped results file when its videos-only hash
(`phybench.submission.identity.videos_hash`) equals the one the file's verification record
holds (``extra.videos_hash``, which the board's key signed when the shipped submission was
re-scored): every score in the file is then the re-made submission's too, with no re-scoring.
The card fields are compared as the scorer would copy them, and their differences listed in
two groups: card facts (`CARD_FACTS`: expected to differ between runs) and the rest (a
checkpoint hash, a sampler, seeds, a name: the videos came the same way by another route, which
is worth saying).  Nothing is written and no hash changes: a record vouches for the shipped
submission only.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CARD_FACTS = ("train_seconds", "hardware")  # model fields of one training run: shown, never verified


class ReproduceError(Exception):
    """The shipped file cannot be checked (no record, a record without a videos hash, unreadable)."""


@dataclass
class Reproduction:
    """A re-made submission against one shipped results file."""

    results_path: Path
    videos_hash: str  # the re-made submission's
    shipped_videos_hash: str  # the verification record's (signed)
    card_facts: list[str] = field(default_factory=list)  # "model.hardware: shipped ..., re-made ..."
    other_fields: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.videos_hash == self.shipped_videos_hash

    def lines(self) -> list[str]:
        name = str(self.results_path)
        if not self.reproduced:
            return [f"{name}: not reproduced: the videos differ (videos hash {self.videos_hash[:12]}, "
                    f"shipped {self.shipped_videos_hash[:12]})"]
        out = [f"{name}: reproduced: the same videos (videos hash {self.videos_hash[:12]}), so every score"]
        out += [f"{name}: card fact differs (not verified): {d}" for d in self.card_facts]
        out += [f"{name}: card field differs: {d}" for d in self.other_fields]
        return out


def _differences(shipped: dict[str, Any], remade: dict[str, Any]) -> tuple[list[str], list[str]]:
    facts: list[str] = []
    other: list[str] = []
    for key in sorted(set(shipped) | set(remade)):
        a, b = shipped.get(key), remade.get(key)
        if a == b:
            continue
        line = f"model.{key}: shipped {json.dumps(a)[:60]}, re-made {json.dumps(b)[:60]}"
        (facts if key in CARD_FACTS else other).append(line)
    return facts, other


def reproduce(results_path: str | os.PathLike[str], submission: str | os.PathLike[str], *,
              keyring: Any = None) -> Reproduction:
    """Compare a re-made submission (folder or archive) with a verified results file by their videos.

    `keyring` (`signing.Keyring`): the record's signature must verify by one of its keys, as the
    shipped board requires.  Raises `ReproduceError` when the file has no usable record."""
    from ...scoring.run.score import results_model
    from ...submission.archive import SubmissionError
    from ...submission.format import Submission
    from ...submission.identity import videos_hash
    from .records import VerificationError, read_record

    results_path = Path(results_path)
    try:
        record = read_record(results_path, keyring)
    except VerificationError as exc:
        raise ReproduceError(f"{results_path}: its verification record cannot be used: {exc}") from None
    shipped_hash = (record.extra or {}).get("videos_hash") if record is not None else None
    if not isinstance(shipped_hash, str):
        raise ReproduceError(f"{results_path}: no verification record with a videos hash beside it (verify the "
                             "shipped submission first: `phybench leaderboard verify`)")
    try:
        with Submission(submission) as opened:
            meta = opened.meta
            mine = videos_hash(opened)
    except (SubmissionError, OSError) as exc:
        raise ReproduceError(f"{submission}: cannot be read: {exc}") from None
    from ... import jsonsafe

    shipped_model = jsonsafe.read(results_path, results_path.name).get("model") or {}
    facts, other = _differences(shipped_model, results_model(meta))
    return Reproduction(results_path, mine, shipped_hash, facts, other)

"""Verification records: proof that a results file was re-scored from its submission.

A results file says what a submission scored; anyone can edit it.  A maintainer who
re-scores the submission (``phybench leaderboard verify``, or ``leaderboard sync`` for a
Hub pull request) and finds every number equal writes a *verification record* beside it,
``<stem>.verified.json``.  The record pins the results file's bytes (SHA-256) and its
samples sidecar's, the submission and split it was re-scored from, who did it, with which phybench version, on
which date, and which metrics were recomputed or skipped.  ``leaderboard build`` checks the
record against the results file it sits beside; ``--require-verified`` refuses any row
without a valid one.

This module is the one place that knows the record's format; the comparison of a claimed
results file with a recomputed one (`compare_results`) lives here too, so `verify` and
`sync` report differences the same way.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..io import atomic_write_bytes, file_sha256

RECORD_KIND = "phybench-verification"
RECORD_SCHEMA_VERSION = 1
SUFFIX = ".verified.json"
STATUSES = ("verified",)
# Record files are tiny; anything bigger is not one of ours.
MAX_RECORD_BYTES = 64 * 1024
# Fields a verification may legitimately see change: none today (results carry no clock),
# listed so that a future provenance field is added here, deliberately.
UNCOMPARED: tuple[str, ...] = ()


class VerificationError(Exception):
    """A record that is unreadable, malformed or does not match its results file."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Verification:
    """One results file re-scored from its submission, every number equal."""

    results_sha256: str  # of the results file's bytes, as verified
    submission_hash: str  # the submission re-scored (its content hash)
    split_hash: str  # the split it was scored against
    phybench_version: str
    verified_by: str  # who ran the verification (a person or a CI job)
    date: str  # ISO date, YYYY-MM-DD
    recomputed: tuple[str, ...]  # metrics recomputed and found equal
    skipped: tuple[str, ...] = ()  # metrics in the results file that were not recomputed
    status: str = "verified"
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"pull_request": 3}
    samples_sha256: str | None = None  # of the `.samples.json` sidecar beside the results, when there is one

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": RECORD_KIND,
            "schema_version": RECORD_SCHEMA_VERSION,
            "status": self.status,
            "results_sha256": self.results_sha256,
            "submission_hash": self.submission_hash,
            "split_hash": self.split_hash,
            "phybench_version": self.phybench_version,
            "verified_by": self.verified_by,
            "date": self.date,
            "recomputed": sorted(self.recomputed),
            "skipped": sorted(self.skipped),
            **({"extra": dict(self.extra)} if self.extra else {}),
            **({"samples_sha256": self.samples_sha256} if self.samples_sha256 else {}),
        }

    def words(self) -> str:
        """One line for a board row or a log."""
        line = (f"verified: re-scored from submission {self.submission_hash[:12]} "
                f"with phybench {self.phybench_version} on {self.date}")
        return line + (f" (not recomputed: {', '.join(self.skipped)})" if self.skipped else "")


def record_path(results_path: str | Path) -> Path:
    """``dir/name.json`` -> ``dir/name.verified.json``."""
    p = Path(results_path)
    return p.with_name(p.name[: -len(".json")] + SUFFIX if p.name.endswith(".json") else p.name + SUFFIX)


def samples_path(results_path: str | Path) -> Path:
    """``dir/name.json`` -> ``dir/name.samples.json`` (the per-video sidecar `phybench score` writes)."""
    p = Path(results_path)
    return p.with_name(p.name[: -len(".json")] + ".samples.json")


def is_record(path: str | Path) -> bool:
    return Path(path).name.endswith(SUFFIX)


def write_record(results_path: str | Path, verification: Verification) -> Path:
    """Write the record beside its results file (atomically); its hash must be the file's."""
    results_path = Path(results_path)
    actual = file_sha256(results_path)
    if actual != verification.results_sha256:
        raise VerificationError(
            "verify-stale", f"{results_path} changed since it was verified (sha256 {actual[:12]}, "
            f"verified {verification.results_sha256[:12]}): verify it again")
    sidecar = samples_path(results_path)
    if sidecar.is_file():  # the sidecar is part of what was verified: pin it too
        verification = dataclasses.replace(verification, samples_sha256=file_sha256(sidecar))
    out = record_path(results_path)
    data = json.dumps(verification.to_dict(), indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    atomic_write_bytes(out, data.encode("ascii"))
    return out


def _strings(doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = doc.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise VerificationError("verify-malformed", f"record field {key!r} must be a list of strings")
    return tuple(value)


def parse_record(doc: Any) -> Verification:
    """A record from its JSON, every field checked."""
    if not isinstance(doc, dict) or doc.get("kind") != RECORD_KIND:
        raise VerificationError("verify-malformed", f"not a verification record (kind must be {RECORD_KIND!r})")
    if doc.get("schema_version") != RECORD_SCHEMA_VERSION:
        raise VerificationError("verify-malformed", f"unknown record schema_version {doc.get('schema_version')!r}")
    text = {}
    for key in ("status", "results_sha256", "submission_hash", "split_hash", "phybench_version", "verified_by", "date"):
        value = doc.get(key)
        if not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable():
            raise VerificationError("verify-malformed", f"record field {key!r} must be a short printable string")
        text[key] = value
    if text["status"] not in STATUSES:
        raise VerificationError("verify-malformed", f"record status {text['status']!r} is not one of {STATUSES}")
    extra = doc.get("extra", {})
    if not isinstance(extra, dict):
        raise VerificationError("verify-malformed", "record field 'extra' must be an object")
    samples = doc.get("samples_sha256")
    if samples is not None and not (isinstance(samples, str) and len(samples) == 64 and samples.isalnum()):
        raise VerificationError("verify-malformed", "record field 'samples_sha256' must be a sha256 hex digest")
    return Verification(recomputed=_strings(doc, "recomputed"), skipped=_strings(doc, "skipped"), extra=extra,
                        samples_sha256=samples, **text)


def read_record(results_path: str | Path) -> Verification | None:
    """The record beside a results file, checked against it; None when there is none.

    Raises `VerificationError` when a record exists but is unreadable, malformed, or was
    written for other bytes or another submission than the results file's.
    """
    results_path = Path(results_path)
    path = record_path(results_path)
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise VerificationError("verify-malformed", f"{path.name}: a verification record must be a plain file")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise VerificationError("verify-malformed", f"{path.name}: larger than {MAX_RECORD_BYTES} bytes")
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise VerificationError("verify-malformed", f"{path.name}: not valid JSON ({type(exc).__name__})") from None
    record = parse_record(doc)
    actual = file_sha256(results_path)
    if actual != record.results_sha256:
        raise VerificationError(
            "verify-stale", f"{results_path.name} was edited after it was verified "
            f"(sha256 {actual[:12]}, record {record.results_sha256[:12]}): verify it again")
    sidecar = samples_path(results_path)
    if sidecar.is_file() or record.samples_sha256:
        actual = file_sha256(sidecar) if sidecar.is_file() else "(none)"
        if actual != record.samples_sha256:
            raise VerificationError(
                "verify-stale", f"{sidecar.name} was edited, added or removed after {results_path.name} was verified "
                f"(sha256 {actual[:12]}, record {str(record.samples_sha256)[:12]}): verify it again")
    try:
        results = json.loads(results_path.read_bytes())
        claimed = results["provenance"]["submission_hash"]
    except (ValueError, KeyError, TypeError, RecursionError):
        claimed = None
    if claimed != record.submission_hash:
        raise VerificationError(
            "verify-mismatch", f"{path.name} verifies submission {record.submission_hash[:12]}, "
            f"but {results_path.name} names {str(claimed)[:12]}")
    return record


def _is_skipped(path: tuple[str, ...], skip: frozenset[str]) -> bool:
    return any(part in skip for part in path)


def _same_number(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    return False


def compare_results(
    claimed: Any, recomputed: Any, *, skip: Iterable[str] = (), _path: tuple[str, ...] = (),
) -> list[str]:
    """Every field where a claimed results document differs from a recomputed one.

    Results are deterministic bytes, so numbers must be exactly equal.  A path is skipped
    when any of its keys is a skipped metric's name (``fvd`` not recomputed: its summary
    entries and settings are not compared) or is listed in `UNCOMPARED`.  Each difference is
    one line: ``summary.overall.velocity_error.mean: claimed 0.1, recomputed 0.2``.
    """
    skipped = frozenset(skip) | frozenset(UNCOMPARED)
    if _is_skipped(_path, skipped):
        return []
    where = ".".join(_path) or "(document)"
    if isinstance(claimed, dict) and isinstance(recomputed, dict):
        out: list[str] = []
        for key in sorted(set(claimed) | set(recomputed), key=str):
            sub = (*_path, str(key))
            if _is_skipped(sub, skipped):
                continue
            if key not in recomputed:
                out.append(f"{'.'.join(sub)}: claimed but not recomputed")
            elif key not in claimed:
                out.append(f"{'.'.join(sub)}: recomputed but missing from the claim")
            else:
                out += compare_results(claimed[key], recomputed[key], skip=skipped, _path=sub)
        return out
    if isinstance(claimed, list) and isinstance(recomputed, list):
        if _path and _path[-1] == "metrics":  # the metric list: skipped names do not count
            claimed = [m for m in claimed if m not in skipped]
            recomputed = [m for m in recomputed if m not in skipped]
        if len(claimed) != len(recomputed):
            return [f"{where}: claimed {len(claimed)} items, recomputed {len(recomputed)}"]
        out = []
        for i, (a, b) in enumerate(zip(claimed, recomputed)):
            out += compare_results(a, b, skip=skipped, _path=(*_path, str(i)))
        return out
    if _same_number(claimed, recomputed):
        return []
    if type(claimed) is type(recomputed) and claimed == recomputed:
        return []
    return [f"{where}: claimed {json.dumps(claimed)[:60]}, recomputed {json.dumps(recomputed)[:60]}"]

"""Verification records: proof that a results file was re-scored from its submission.

A results file says what a submission scored; anyone can edit it.  A maintainer who
re-scores the submission (``phybench leaderboard verify``, or ``leaderboard sync`` for a
Hub pull request) and finds every number equal writes a *verification record* beside it,
``<stem>.verified.json``.  The record pins the results file's bytes (SHA-256) and its
samples sidecar's, the submission and split it was re-scored from, who did it, with which phybench version, on
which date, and which metrics were recomputed or skipped.  ``leaderboard build`` checks the
record against the results file it sits beside; ``--require-verified`` refuses any row
without a valid one, and any record not signed by a key of the board's keyring
(`signing.py`: Ed25519 over the record's canonical bytes).

This module is the one place that knows the record's format; the comparison of a claimed
results file with a recomputed one (`compare_results`) lives here too, so `verify` and
`sync` report differences the same way.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import jsonsafe
from ...io import atomic_write_bytes, file_sha256
from ...scoring.run.layout import RECORD_SUFFIX, record_path, samples_path, parse as parse_results

RECORD_KIND = "phybench-verification"
RECORD_SCHEMA_VERSION = 1
SUFFIX = RECORD_SUFFIX  # the layout of a results file and its record: `phybench.scoring.run.layout`
STATUSES = ("verified",)
# Record files are tiny; anything bigger is not one of ours.
MAX_RECORD_BYTES = 64 * 1024
# The allow-list of fields a claim and its re-score may differ in: none today (results carry
# no clock), listed (as paths, e.g. ("provenance", "scored_at")) so that a future field is added
# here, deliberately.  Nothing else is ever left out, except a skipped metric's own fields.
UNCOMPARED: tuple[tuple[str, ...], ...] = ()


def skippable() -> tuple[str, ...]:
    """The only metrics a verification may leave out (`leaderboard verify --skip`, or a claim scored
    with them that the sync does not recompute): the expensive ones, which run a pinned network
    (their registry rows say so: `network_metrics`).  Never the ranked column or its inputs
    (velocity_error, its companions): those are always recomputed."""
    from ...scoring.metrics import network_metrics

    return network_metrics()


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
    signature: Mapping[str, Any] | None = None  # {algorithm, key_id, value}: `signing.py`
    signed_by: str | None = None  # the key id whose signature `read_record` checked (None: not checked)

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
            **({"signature": dict(self.signature)} if self.signature else {}),
        }

    def words(self) -> str:
        """One line for a board row or a log."""
        line = (f"verified: re-scored from submission {self.submission_hash[:12]} "
                f"with phybench {self.phybench_version} on {self.date}")
        return line + (f" (not recomputed: {', '.join(self.skipped)})" if self.skipped else "")


def write_record(results_path: str | Path, verification: Verification, signer: Any = None) -> Path:
    """Write the record beside its results file (atomically); its hash must be the file's.

    Signed (`signing.Signer`) when `signer` is given, else by the key ``$PHYBENCH_SIGNING_KEY``
    names when it is set (`signing.default_signer`); ``signer=False``: unsigned."""
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
    doc = dataclasses.replace(verification, signature=None).to_dict()
    if signer is None:
        from .signing import default_signer

        signer = default_signer()
    if signer:
        doc = signer.sign(doc)
    data = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    atomic_write_bytes(out, data.encode("ascii"))
    return out


def _strings(doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = doc.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise VerificationError("verify-malformed", f"record field {key!r} must be a list of strings")
    return tuple(value)


RECORD_KEYS = frozenset({"kind", "schema_version", "status", "results_sha256", "submission_hash", "split_hash",
                         "phybench_version", "verified_by", "date", "recomputed", "skipped", "extra",
                         "samples_sha256", "signature"})


def load_record_json(data: bytes) -> Any:
    """A record's JSON through the one bounded reader (`phybench.jsonsafe`): a key given twice
    (which one would a reader believe?), a 5,000-digit integer or NaN is `verify-malformed`."""
    try:
        return jsonsafe.loads(data, max_bytes=MAX_RECORD_BYTES)
    except jsonsafe.JSONError as exc:
        raise VerificationError("verify-malformed", f"record is not bounded JSON ({exc.code}): {exc}") from None


def parse_record(doc: Any) -> Verification:
    """A record from its JSON, every field checked."""
    if not isinstance(doc, dict) or doc.get("kind") != RECORD_KIND:
        raise VerificationError("verify-malformed", f"not a verification record (kind must be {RECORD_KIND!r})")
    unknown = sorted(set(doc) - RECORD_KEYS)
    if unknown:
        raise VerificationError("verify-malformed", f"unknown record field(s) {', '.join(map(repr, unknown[:5]))}")
    if doc.get("schema_version") != RECORD_SCHEMA_VERSION:
        raise VerificationError("verify-malformed", f"unknown record schema_version {doc.get('schema_version')!r}")
    text = {}
    for key in ("status", "results_sha256", "submission_hash", "split_hash", "phybench_version", "verified_by", "date"):
        value = doc.get(key)
        if not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable():
            raise VerificationError("verify-malformed", f"record field {key!r} must be a short printable string")
        text[key] = value
    try:
        valid_date = _dt.date.fromisoformat(text["date"]).isoformat() == text["date"] and len(text["date"]) == 10
    except ValueError:
        valid_date = False
    if not valid_date:
        raise VerificationError("verify-malformed", f"record date {text['date'][:20]!r} is not a YYYY-MM-DD date")
    if text["status"] not in STATUSES:
        raise VerificationError("verify-malformed", f"record status {text['status']!r} is not one of {STATUSES}")
    extra = doc.get("extra", {})
    if not isinstance(extra, dict):
        raise VerificationError("verify-malformed", "record field 'extra' must be an object")
    samples = doc.get("samples_sha256")
    if samples is not None and not (isinstance(samples, str) and len(samples) == 64 and samples.isalnum()):
        raise VerificationError("verify-malformed", "record field 'samples_sha256' must be a sha256 hex digest")
    skipped = _strings(doc, "skipped")
    if not set(skipped) <= set(skippable()):
        raise VerificationError("verify-malformed", f"record skipped {', '.join(sorted(set(skipped) - set(skippable())))}: "
                                                    f"only {', '.join(skippable())} may be skipped")
    signature = doc.get("signature")
    if signature is not None and not isinstance(signature, dict):
        raise VerificationError("verify-malformed", "record field 'signature' must be an object")
    return Verification(recomputed=_strings(doc, "recomputed"), skipped=skipped, extra=extra,
                        samples_sha256=samples, signature=signature, **text)


def read_record(results_path: str | Path, keyring: Any = None) -> Verification | None:
    """The record beside a results file, checked against it; None when there is none.

    Raises `VerificationError` when a record exists but is unreadable, malformed, or was
    written for other bytes, another submission or split, another phybench version or
    another metric list than the results file's.  With a `keyring` (`signing.Keyring`; the
    public board's build) its signature must verify by one of the keyring's keys too:
    ``verify-unsigned``, ``verify-signature``, ``verify-key-revoked`` otherwise.
    """
    results_path = Path(results_path)
    path = record_path(results_path)
    if not path.exists() and not path.is_symlink():
        return None
    from ..common.files import UnsafeFile, read_regular

    try:
        data = read_regular(path, MAX_RECORD_BYTES)  # lstat'ed, capped: never a link, FIFO or device
    except UnsafeFile as exc:
        raise VerificationError("verify-malformed", f"{path.name}: a verification record must be a plain file "
                                                    f"of at most {MAX_RECORD_BYTES} bytes ({exc})") from None
    try:
        doc = load_record_json(data)
    except VerificationError as exc:
        raise VerificationError("verify-malformed", f"{path.name}: {exc}") from None
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
        results = parse_results(results_path.read_bytes())
        prov = results["provenance"]
        claimed = prov["submission_hash"]
        said = {"split": prov.get("split_hash"), "phybench version": prov.get("phybench_version"),
                "metrics": sorted(results.get("metrics") or [])}
    except (ValueError, KeyError, TypeError, RecursionError):
        claimed, said = None, {}
    if claimed != record.submission_hash:
        raise VerificationError(
            "verify-mismatch", f"{path.name} verifies submission {record.submission_hash[:12]}, "
            f"but {results_path.name} names {str(claimed)[:12]}")
    mine = {"split": record.split_hash, "phybench version": record.phybench_version,
            "metrics": sorted(record.recomputed + record.skipped)}
    wrong = [k for k in mine if mine[k] != said.get(k)]
    if wrong or set(record.recomputed) & set(record.skipped):
        what = ", ".join(wrong) or "metrics (one both recomputed and skipped)"
        raise VerificationError("verify-mismatch", f"{path.name} does not describe {results_path.name}: its {what} "
                                                   "differ from the results file's")
    if keyring is not None:
        from .signing import SigningError

        try:
            signed_by = keyring.check(doc)
        except SigningError as exc:
            raise VerificationError(exc.code, f"{path.name}: {exc}") from None
        record = dataclasses.replace(record, signed_by=signed_by)
    return record


def _skip_rules(skip: Iterable[str]) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(metric names, weight keys, settings blocks) that skipping `skip` leaves out of the comparison."""
    names = frozenset(skip)
    bad = sorted(names - frozenset(skippable()))
    if bad:
        raise ValueError(f"only {', '.join(skippable())} may be left out of a comparison, not {', '.join(bad)}")
    weights: set[str] = set()
    settings: set[str] = set()
    if names:
        from ...scoring.metrics import METRICS

        for name in names:
            m = METRICS.get(name)  # registered: `skippable` are rows with pinned weights
            w = m.weights
            assert w is not None
            weights |= {w, f"{w}.source"}
            settings.add(m.settings_key or name)
    return names, frozenset(weights), frozenset(settings)


def _is_skipped(path: tuple[str, ...], rules: tuple[frozenset[str], frozenset[str], frozenset[str]]) -> bool:
    """Is this field one the comparison leaves out?  Only the fixed places where a skipped metric
    (`skippable`) is written, and the paths in `UNCOMPARED`: never a whole subtree by a key's
    name alone, so nothing a claim says can widen it."""
    if path in UNCOMPARED:
        return True
    names, weights, settings = rules
    if not names:
        return False
    n = len(path)
    return ((n >= 3 and path[:2] == ("summary", "overall") and path[2] in names)
            or (n >= 4 and path[:2] == ("summary", "levels") and path[3] in names)
            or (n >= 2 and path[0] == "higher_is_better" and path[1] in names)
            or (n >= 3 and path[:2] == ("provenance", "weights") and path[2] in weights)
            or (n >= 3 and path[:2] == ("provenance", "metric_settings") and path[2] in settings))


def _skip_warning(text: Any, names: frozenset[str]) -> bool:
    """A `score` warning that a skipped metric was not computed ("skipping NAMES: ...")."""
    if not isinstance(text, str) or not text.startswith("skipping ") or ":" not in text:
        return False
    said = {m.strip() for m in text[len("skipping "):].split(":", 1)[0].split(",")}
    return bool(said) and said <= names


def _same_number(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    return False


def compare_results(claimed: Any, recomputed: Any, *, skip: Iterable[str] = ()) -> list[str]:
    """Every field where a claimed results document (or sidecar) differs from a recomputed one.

    The whole document is walked: results are deterministic bytes, so numbers must be exactly
    equal, and a key on one side only is a difference.  `skip` may name only `skippable()`
    metrics (the network ones, when they were not recomputed); their fields are left out at the fixed
    places a results file writes them (``summary.overall.<m>``, ``summary.levels.<level>.<m>``,
    ``higher_is_better.<m>``, their weights and settings blocks, their name in ``metrics`` and
    the "skipping ..." warning), and nothing else is, whatever the claim says.  Each
    difference is one line: ``summary.overall.velocity_error.mean: claimed 0.1, recomputed 0.2``.
    """
    rules = _skip_rules(skip)
    if rules[0] and isinstance(claimed, dict) and isinstance(recomputed, dict) and (
            "warnings" in claimed) != ("warnings" in recomputed):
        # a score without a skipped metric's weights warns about it; its claim has no warnings
        claimed, recomputed = {"warnings": [], **claimed}, {"warnings": [], **recomputed}
    return _compare(claimed, recomputed, rules, ())


def _compare(claimed: Any, recomputed: Any, rules: Any, path: tuple[str, ...]) -> list[str]:
    where = ".".join(path) or "(document)"
    if isinstance(claimed, dict) and isinstance(recomputed, dict):
        out: list[str] = []
        for key in sorted(set(claimed) | set(recomputed), key=str):
            sub = (*path, str(key))
            if _is_skipped(sub, rules):
                continue
            if key not in recomputed:
                out.append(f"{'.'.join(sub)}: claimed but not recomputed")
            elif key not in claimed:
                out.append(f"{'.'.join(sub)}: recomputed but missing from the claim")
            else:
                out += _compare(claimed[key], recomputed[key], rules, sub)
        return out
    if isinstance(claimed, list) and isinstance(recomputed, list):
        names = rules[0]
        if path == ("metrics",) and names:  # the metric list: only the skipped names do not count
            claimed = [m for m in claimed if m not in names]
            recomputed = [m for m in recomputed if m not in names]
        if path == ("warnings",) and names:
            claimed = [w for w in claimed if not _skip_warning(w, names)]
            recomputed = [w for w in recomputed if not _skip_warning(w, names)]
        if len(claimed) != len(recomputed):
            return [f"{where}: claimed {len(claimed)} items, recomputed {len(recomputed)}"]
        out = []
        for i, (a, b) in enumerate(zip(claimed, recomputed, strict=True)):
            out += _compare(a, b, rules, (*path, str(i)))
        return out
    if _same_number(claimed, recomputed):
        return []
    if type(claimed) is type(recomputed) and claimed == recomputed:
        return []
    return [f"{where}: claimed {json.dumps(claimed)[:60]}, recomputed {json.dumps(recomputed)[:60]}"]


def claim_differences(claim: Mapping[str, Any], results: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(differences, claimed metrics not recomputed) between a submitter's claim and the sync's score.

    A claim scored with the network metrics that the sync does not compute (no weights there), or without
    them when the sync does, is compared on everything else: only those (`skippable`) may be
    one-sided.  Any other metric named by one side only is a difference (the ``metrics`` list),
    and nothing the claim lists can leave another field out of the comparison."""
    listed = claim.get("metrics")
    claimed = {m for m in listed if isinstance(m, str)} if isinstance(listed, list) else set()
    ours = set(results.get("metrics") or ())
    one_sided = sorted((claimed ^ ours) & set(skippable()))
    not_recomputed = sorted((claimed - ours) & set(skippable()))
    return compare_results(claim, results, skip=one_sided), not_recomputed

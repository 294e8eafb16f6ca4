"""Re-score a results file from its submission and compare every number: `leaderboard verify`.

A results file is a claim.  Verifying it means finding the submission it names (by content
hash, `provenance.submission_hash`) and the split it answered (by `provenance.split_hash`),
scoring that submission again with this phybench, and comparing the two documents field by
field (`verification.compare_results`): scores are deterministic bytes, so every number
must be exactly equal.  The `.samples.json` sidecar, when there is one, is compared the
same way.  Only then is a verification record written beside the file
(`verification.write_record`), which `leaderboard build` checks.

Three outcomes, so that a maintainer's script (and `leaderboard sync`) can branch on them:

* verified: every field equal; the record is written (or rewritten, same bytes for the same
  inputs, date and name);
* differs: the claim and the re-score disagree; each differing field is one line, and no
  record is kept (an old record of that file is removed: it vouched for bytes that do not
  re-score);
* refused (`VerifyInputError`, a stable code): the file cannot be checked at all (unreadable,
  no submission or split with its hashes, settings this phybench does not have) and nothing
  is written.

Settings first: the recorded metric settings, task spec hash, weight hashes and phybench
version must be this installation's, else the re-score could not match and the difference
would say nothing about the submission; that is a refusal, not a "differs".

`verify_one` is the unit the Hub sync calls; `check_one` does the same without writing,
for callers (the CLI) that write only when every file could be checked.  Finding the inputs
and the up-front refusals live in `claims.py`; the sharded passes of the batched network metrics in `shards.py`.
"""
from __future__ import annotations

import datetime as _dt
import getpass
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...scoring.run.batches import batched_metrics
from ...scoring.run.layout import record_path, samples_path
from .claims import (CODES, NO_SPLIT, NO_SUBMISSION, SCORE, SETTINGS, SPLIT_MISMATCH,
                     UNREADABLE, USAGE, Claim, VerifyPlan, SplitIndex, SubmissionIndex, VerifyInputError,
                     launch_world, plan_verify, read_claim, results_files)
from .shards import sharded_features, shard_bounds
from .records import Verification, VerificationError, compare_results, skippable, write_record

__all__ = ["CODES", "NO_SPLIT", "NO_SUBMISSION", "SCORE", "SETTINGS", "SPLIT_MISMATCH", "UNREADABLE", "USAGE",
           "Claim", "VerifyPlan", "SplitIndex", "SubmissionIndex", "VerifyInputError", "VerifyOutcome",
           "ResultsReport", "check_one", "differences", "plan_verify", "read_claim", "results_files", "shard_bounds",
           "verify_many", "verify_one"]


@dataclass
class VerifyOutcome:
    """What re-scoring one results file found; `apply` writes (or removes) its record."""

    results_path: Path
    differences: list[str]  # one line per differing field; empty: verified
    verification: Verification | None  # the record to write when verified
    recomputed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    record: Path | None = None  # where the record was written by `apply`
    removed: bool = False  # `apply` removed a stale record of a file that now differs
    signer: Any = None  # `signing.Signer` for the record (None: $PHYBENCH_SIGNING_KEY's, if set)

    @property
    def verified(self) -> bool:
        return not self.differences

    def apply(self) -> None:
        """Write the record of a verified file; remove any record of one that differs."""
        if self.verified:
            assert self.verification is not None
            self.record = write_record(self.results_path, self.verification, self.signer)
            return
        old = record_path(self.results_path)
        if old.exists() or old.is_symlink():
            old.unlink()
            self.removed = True

    def lines(self) -> list[str]:
        """The report: one line for a verified file, one per differing field otherwise."""
        name = str(self.results_path)
        if self.verified:
            skipped = f"; skipped {', '.join(self.skipped)}" if self.skipped else ""
            where = f" -> {self.record.name}" if self.record else ""
            return [f"{name}: verified ({len(self.recomputed)} metrics recomputed{skipped}){where}"]
        out = [f"{name}: differs: {d}" for d in self.differences]
        if self.removed:
            out.append(f"{name}: its old record {record_path(self.results_path).name} was removed")
        return out


def _rescore(prep: VerifyPlan, *, workers: int, batch_size: int, device: str, progress: bool,
             features: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[dict[str, Any], Any]:
    """The re-scored results document and sidecar, as their files would read back."""
    from ...scoring.run.results import results_bytes
    from ...scoring.run.score import ScoreError, samples_sidecar, score

    try:
        out = score(prep.submission, prep.split_dir, prep.requested, workers=workers, batch_size=batch_size,
                    device=device, progress=progress, features=features)
    except ScoreError as exc:
        raise VerifyInputError(SCORE, f"{prep.claim.path}: re-scoring {prep.submission} failed: {exc}") from None
    doc = json.loads(results_bytes(out.results))
    samples = samples_sidecar(out.results, out.details)
    # the sidecar as `write_results` writes it (json.dumps of the same values), read back
    return doc, (json.loads(json.dumps(samples, sort_keys=True)) if samples is not None else None)


def differences(prep: VerifyPlan, doc: dict[str, Any], samples: Any) -> list[str]:
    """Every field where the claim (and its sidecar) differs from the re-score."""
    claimed = prep.claim.doc
    rescored = claimed["provenance"].get("rescored")
    if rescored is not None and "rescored" not in doc["provenance"]:
        # `phybench rescore` notes which metrics it recomputed in place: a note, not a number;
        # a full re-score by this version reproduces every number it left.
        doc["provenance"]["rescored"] = rescored
    skip = prep.skipped  # skippable() metrics only (`check_skip`): nothing in the claim widens it
    out = compare_results(claimed, doc, skip=skip)
    sidecar = samples_path(prep.claim.path).name
    if prep.claim.samples is not None:
        if samples is None:
            out.append(f"{sidecar}: present, but this task writes no samples sidecar")
        else:
            out += [f"{sidecar}: {d}" for d in compare_results(prep.claim.samples, samples, skip=skip)]
    return out


def check_one(prep: VerifyPlan, *, by: str, date: str, workers: int = 1, batch_size: int = 16, device: str = "cpu",
              progress: bool = False, extra: Mapping[str, Any] | None = None,
              features: Mapping[str, Mapping[str, Any]] | None = None) -> VerifyOutcome:
    """Re-score a prepared claim and compare; writes nothing (`VerifyOutcome.apply` does).
    `features`: the batched metrics' values and features from `sharded_features` (None: computed here)."""
    doc, samples = _rescore(prep, workers=workers, batch_size=batch_size, device=device, progress=progress,
                            features=features)
    diffs = differences(prep, doc, samples)
    claim = prep.claim
    if not diffs:  # the videos-only hash goes into the (signed) record: one set of videos, one row
        from ...data.split import read_manifest
        from ...submission.identity import videos_hash

        extra = {**dict(extra or {}), "videos_hash": videos_hash(prep.submission,
                                                                 manifest=read_manifest(prep.split_dir))}
    verification = None if diffs else Verification(
        results_sha256=claim.sha256, submission_hash=claim.provenance["submission_hash"],
        split_hash=claim.provenance["split_hash"], phybench_version=__version__, verified_by=by, date=date,
        recomputed=prep.recomputed, skipped=prep.skipped, extra=dict(extra or {}))
    return VerifyOutcome(claim.path, diffs, verification, prep.recomputed, prep.skipped)


def verify_one(results_path: str | os.PathLike[str], submission_path: str | os.PathLike[str] | SubmissionIndex,
               split_dir: str | os.PathLike[str] | SplitIndex, *, skip: Iterable[str] = (), by: str | None = None,
               date: str | None = None, workers: int = 1, batch_size: int = 16, device: str = "cpu",
               progress: bool = False, extra: Mapping[str, Any] | None = None, signer: Any = None) -> VerifyOutcome:
    """Verify one results file against its submission and split, and write (or remove) its record.

    For the Hub sync: `extra` lands in the record (e.g. ``{"pull_request": 3}``).  Raises
    `VerifyInputError` (nothing written) when the file cannot be checked, and
    `VerificationError` ("verify-stale") when the file changed while it was re-scored.
    """
    prep = plan_verify(results_path, submission_path, split_dir, skip=check_skip(skip))
    outcome = check_one(prep, by=check_by(by), date=check_date(date) if date else today(), workers=workers,
                        batch_size=batch_size, device=device, progress=progress, extra=extra)
    outcome.signer = signer
    outcome.apply()
    return outcome


def board_signer(path: str | os.PathLike[str] | None = None) -> Any:
    """The signer for new records (`--signing-key`, else $PHYBENCH_SIGNING_KEY; None: unsigned
    records, which only a self-reported preview shows), checked to be an active key of the
    board's keyring first: a record the board would refuse is not worth writing."""
    from .signing import SigningError, check_signer, default_signer, load_keyring

    try:
        signer = default_signer(path)
        if signer is not None:
            check_signer(signer, load_keyring())
    except SigningError as exc:
        raise VerifyInputError(exc.code, str(exc)) from None
    return signer if signer is not None else False


def default_user() -> str:
    """Who verifies, when not told: the login name ($USER first), else "unknown"."""
    try:
        return getpass.getuser() or "unknown"
    except Exception:  # noqa: BLE001 - no login name in a container: still a valid record
        return "unknown"


def today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def check_date(text: str) -> str:
    """A YYYY-MM-DD date, as given (the record stores the string), not after tomorrow (UTC: a
    verifier east of Greenwich may already be a day ahead): a record cannot be dated in the future."""
    try:
        if len(text) == 10 and _dt.date.fromisoformat(text).isoformat() == text:
            latest = _dt.datetime.now(_dt.timezone.utc).date() + _dt.timedelta(days=1)
            if _dt.date.fromisoformat(text) > latest:
                raise VerifyInputError(USAGE, f"--date {text}: a verification cannot be dated in the future "
                                              f"(today is {today()}, UTC)")
            return text
    except ValueError:
        pass
    raise VerifyInputError(USAGE, f"--date {text[:40]!r}: give a date as YYYY-MM-DD, e.g. {today()}")


MAX_BY = 200  # `parse_record` refuses a longer or unprintable verified_by: the record would be malformed


def check_by(text: str | None) -> str:
    """Who verifies (--by), as the record will hold it: printable text on one line, at most
    `MAX_BY` characters; otherwise a usage error, before anything is scored or written."""
    if text is None:
        user = default_user()
        return user if user.isprintable() and 0 < len(user) <= MAX_BY else "unknown"
    if not text.strip() or not text.isprintable() or len(text) > MAX_BY:
        raise VerifyInputError(USAGE, f"--by {ascii(text[:60])}: give a name of printable characters on one line "
                                      f"(no newline or control character), at most {MAX_BY}")
    return text


def check_skip(names: Iterable[str]) -> tuple[str, ...]:
    """--skip names: only the expensive network metrics (`skippable()`) may be left out;
    anything else (the ranked column, its inputs, a typo) is a usage error."""
    names = tuple(n.strip() for n in names if n.strip())
    wrong = [n for n in names if n not in skippable()]
    if wrong:
        raise VerifyInputError(USAGE, f"--skip {', '.join(wrong)}: only {', '.join(skippable())} may be skipped "
                                      "(the expensive set metrics); every other metric is always recomputed")
    return names


# ---------------------------------------------------------------- many files (the CLI)
@dataclass
class ResultsReport:
    """What `verify_many` did to each results file (named apart from the split's `VerifyReport`)."""

    outcomes: list[VerifyOutcome] = field(default_factory=list)
    refused: list[tuple[str, VerifyInputError]] = field(default_factory=list)  # (file, error)

    @property
    def exit_code(self) -> int:
        """0 every file verified, 1 some differ, 2 some could not be checked (nothing written)."""
        if self.refused:
            return 2
        return 0 if all(o.verified for o in self.outcomes) else 1

    def lines(self) -> list[str]:
        if self.refused:
            return [f"{f}: error [{e.code}]: {e}" for f, e in self.refused]
        return [line for o in self.outcomes for line in o.lines()]


def verify_many(results: Sequence[str | os.PathLike[str]], submissions: str | os.PathLike[str],
                splits: str | os.PathLike[str], *, skip: Iterable[str] = (), by: str | None = None,
                date: str | None = None, workers: int = 1, batch_size: int = 16, device: str = "cpu",
                progress: bool = False, log: Any = None,
                shard_root: str | os.PathLike[str] | None = None,
                signing_key: str | os.PathLike[str] | None = None) -> ResultsReport:
    """Verify every results file; write records only when every file could be checked.

    Refusals that need no scoring (unreadable file, no submission or split, settings) are
    found for all files first, before any scoring; a re-score that fails is a refusal too.
    Under a launcher (RANK / WORLD_SIZE) the batched network passes are sharded over the
    processes (`sharded_features`); process 0 does the rest and its report is the one to
    read (the others' is empty).
    """
    report = ResultsReport()
    try:
        rank, size = launch_world()
        files = results_files(results)
        skip = check_skip(skip)
        date = check_date(date) if date is not None else today()
        by = check_by(by)
        if not files:
            raise VerifyInputError(USAGE, f"no results files in {', '.join(map(str, results))}")
        split_index = SplitIndex.build(splits)
        sub_index = SubmissionIndex.build(submissions)
        signer = board_signer(signing_key) if rank == 0 else False
    except VerifyInputError as exc:
        report.refused.append(("phybench leaderboard verify", exc))
        return report
    prepared = []
    for f in files:
        try:
            prepared.append(plan_verify(f, sub_index, split_index, skip=skip))
        except VerifyInputError as exc:
            report.refused.append((str(f), exc))
    if report.refused:
        return report
    for prep in prepared:
        features = None
        try:
            if size > 1 and batched_metrics(prep.recomputed):
                features = sharded_features(prep, rank, size, batch_size=batch_size, device=device,
                                            shard_root=shard_root)
            if rank != 0:
                continue  # process 0 scores, compares and writes; the others only computed features
            if log is not None:
                log(f"re-scoring {prep.claim.path} from {prep.submission}")
            report.outcomes.append(check_one(prep, by=by or default_user(), date=date, workers=workers,
                                             batch_size=batch_size, device=device, progress=progress,
                                             features=features))
        except VerifyInputError as exc:
            report.refused.append((str(prep.claim.path), exc))
    if report.refused:
        report.outcomes.clear()
        return report
    for outcome in report.outcomes:
        outcome.signer = signer
        try:
            outcome.apply()
        except VerificationError as exc:  # the file was edited while it was re-scored
            report.refused.append((str(outcome.results_path), VerifyInputError(exc.code, str(exc))))
    return report

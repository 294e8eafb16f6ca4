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
for callers (the CLI) that write only when every file could be checked.
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

from .. import __version__
from ..io import file_sha256
from .verification import (Verification, VerificationError, is_record, record_path, compare_results,
                           write_record)

# Stable codes of the refusals (exit 2); docs/results.md "Verification codes" lists them.
USAGE = "verify-usage"  # bad arguments: no results files, unknown --skip name, bad --date
UNREADABLE = "verify-unreadable"  # not a readable phybench results file (or its sidecar is unreadable)
NO_SUBMISSION = "verify-no-submission"  # no submission under --submissions has the recorded hash
NO_SPLIT = "verify-no-split"  # no split under --splits has the recorded split hash
SPLIT_MISMATCH = "verify-split-mismatch"  # a split with that hash, but another task/split/size/protocol
SETTINGS = "verify-settings"  # recorded settings, spec, weights or version differ from this phybench's
SCORE = "verify-score"  # the re-score itself failed (submission invalid, weights missing, split corrupt)
CODES = (USAGE, UNREADABLE, NO_SUBMISSION, NO_SPLIT, SPLIT_MISMATCH, SETTINGS, SCORE)

SAMPLES_SUFFIX = ".samples.json"
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_RESULTS_BYTES = 64 * 1024 * 1024  # a results file of the largest split is a few MB
SPLIT_DEPTH = 3  # --splits: manifest.json at most this many folders down (data/<task>-<split>/...)


class VerifyInputError(Exception):
    """A results file that cannot be verified at all: one line, a stable code, nothing written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one line, whatever the cause said
        self.code = code


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

    @property
    def verified(self) -> bool:
        return not self.differences

    def apply(self) -> None:
        """Write the record of a verified file; remove any record of one that differs."""
        if self.verified:
            assert self.verification is not None
            self.record = write_record(self.results_path, self.verification)
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


# ---------------------------------------------------------------- finding inputs
def results_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Results files named, or found under named folders (recursively, sorted, as `build` reads
    them): sidecars, records, probe results and hidden files are not results.  A path that
    does not exist is a usage error."""
    from .probes import is_probe_file

    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted((f for f in p.rglob("*.json")
                           if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
                           and _is_results_name(f) and not is_probe_file(f)),
                          key=lambda f: f.relative_to(p).as_posix())
        elif p.is_file():
            out.append(p)
        else:
            raise VerifyInputError(USAGE, f"{p}: no such file or folder")
    unique: dict[Path, Path] = {}  # one file named twice (or by a file and its folder) is verified once
    for p in out:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def _is_results_name(path: Path) -> bool:
    return not (path.name.endswith(SAMPLES_SUFFIX) or is_record(path))


def _submission_candidates(root: Path) -> list[Path]:
    """Submission folders (with a submission.json) and archives under `root`, or `root` itself."""
    from ..submission.format import META

    if (root / META).is_file() or (root.is_file() and root.name.lower().endswith(ARCHIVE_SUFFIXES)):
        return [root]
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if META in files and here != root:
            found.append(here)
            dirs[:] = []  # a submission's videos/ are not more submissions
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [here / f for f in sorted(files) if f.lower().endswith(ARCHIVE_SUFFIXES)]
    return sorted(found)


@dataclass
class SubmissionIndex:
    """Every submission under a folder, by content hash: each candidate is hashed once."""

    root: Path
    by_hash: dict[str, Path] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # "path: why", for the not-found message

    @classmethod
    def build(cls, root: str | os.PathLike[str]) -> "SubmissionIndex":
        from ..submission.archive import SubmissionError
        from ..submission.format import submission_hash

        root = Path(root)
        if not root.exists():
            raise VerifyInputError(USAGE, f"--submissions {root}: no such folder")
        index = cls(root)
        for cand in _submission_candidates(root):
            try:
                index.by_hash.setdefault(submission_hash(cand), cand)
            except (SubmissionError, OSError) as exc:
                index.unreadable.append(f"{cand.name}: {exc}")
        return index

    def find(self, digest: str) -> Path:
        if digest in self.by_hash:
            return self.by_hash[digest]
        bad = f"; {len(self.unreadable)} could not be read, e.g. {self.unreadable[0]}" if self.unreadable else ""
        raise VerifyInputError(NO_SUBMISSION, f"no submission with hash {digest[:12]} under {self.root} "
                                              f"({len(self.by_hash)} submission(s) indexed{bad})")


@dataclass
class SplitIndex:
    """Every split folder under a folder (manifest.json up to `SPLIT_DEPTH` down), by split hash."""

    root: Path
    by_hash: dict[str, tuple[Path, dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def build(cls, root: str | os.PathLike[str]) -> "SplitIndex":
        from ..data.split import SplitError, read_manifest

        root = Path(root)
        if not root.is_dir():
            raise VerifyInputError(USAGE, f"--splits {root}: no such folder")
        index = cls(root)
        files = sorted(f for depth in range(SPLIT_DEPTH + 1) for f in root.glob("/".join(["*"] * depth + ["manifest.json"])))
        for file in files:
            try:
                manifest = read_manifest(file.parent)
            except (SplitError, OSError):
                continue  # not a split: a results file that needs it is refused with NO_SPLIT
            if isinstance(manifest.get("split_hash"), str):
                index.by_hash.setdefault(manifest["split_hash"], (file.parent, manifest))
        return index

    def find(self, digest: str) -> tuple[Path, dict[str, Any]]:
        if digest in self.by_hash:
            return self.by_hash[digest]
        raise VerifyInputError(NO_SPLIT, f"no split with hash {digest[:12]} under {self.root} "
                                         f"({len(self.by_hash)} split(s) found)")


# ---------------------------------------------------------------- reading a claim
def _read_json(path: Path, what: str) -> Any:
    try:
        if path.stat().st_size > MAX_RESULTS_BYTES:
            raise VerifyInputError(UNREADABLE, f"{path}: {what} larger than {MAX_RESULTS_BYTES} bytes")
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise VerifyInputError(UNREADABLE, f"{path}: {what} is not readable JSON ({type(exc).__name__})") from None


@dataclass(frozen=True)
class Claim:
    """A results file as read: its bytes' hash, the document, its sidecar (if any)."""

    path: Path
    sha256: str
    doc: dict[str, Any]
    samples: Any  # the parsed sidecar, or None when there is none

    @property
    def provenance(self) -> dict[str, Any]:
        return self.doc["provenance"]


def read_claim(path: str | os.PathLike[str]) -> Claim:
    """A results file and its sidecar, with the fields verify needs checked for type."""
    path = Path(path)
    sha = file_sha256(path) if path.is_file() else ""
    doc = _read_json(path, "results file")
    if not isinstance(doc, dict) or doc.get("kind") != "phybench-results":
        raise VerifyInputError(UNREADABLE, f"{path}: not a phybench results file (kind must be 'phybench-results')")
    prov = doc.get("provenance")
    if not isinstance(prov, dict):
        raise VerifyInputError(UNREADABLE, f"{path}: no provenance object")
    for key, kind in (("submission_hash", str), ("split_hash", str), ("metric_settings", dict)):
        if not isinstance(prov.get(key), kind) or not prov[key]:
            raise VerifyInputError(UNREADABLE, f"{path}: provenance.{key} is missing or not a {kind.__name__}")
    for key in ("task", "split"):
        if not isinstance(doc.get(key), str):
            raise VerifyInputError(UNREADABLE, f"{path}: {key} is missing or not a string")
    if not isinstance(doc.get("metrics"), list) or not all(isinstance(m, str) for m in doc["metrics"]):
        raise VerifyInputError(UNREADABLE, f"{path}: metrics must be a list of metric names")
    sidecar = path.with_name(path.stem + SAMPLES_SUFFIX)
    samples = _read_json(sidecar, "samples sidecar") if sidecar.is_file() else None
    return Claim(path, sha, doc, samples)


# ---------------------------------------------------------------- settings
def check_split(claim: Claim, manifest: Mapping[str, Any]) -> None:
    """The split found by hash must be the one the file says: task, split, size, resolution, protocol."""
    from ..tasks.protocols import protocol_of

    prov, doc = claim.provenance, claim.doc
    said = {"task": doc["task"], "split": doc["split"], "resolution": prov.get("resolution"),
            "split_num_samples": prov.get("split_num_samples")}
    found = {"task": manifest.get("task"), "split": manifest.get("split"), "resolution": manifest.get("resolution"),
             "split_num_samples": manifest.get("num_samples")}
    if "protocol" in prov and isinstance(manifest.get("full_size"), int) and isinstance(manifest.get("num_samples"), int):
        said["protocol"] = prov["protocol"]
        found["protocol"] = protocol_of(str(manifest["task"]), manifest["num_samples"], manifest["full_size"])
    wrong = [f"{k} {said[k]!r} (the split's: {found[k]!r})" for k in said if said[k] != found[k]]
    if wrong:
        raise VerifyInputError(SPLIT_MISMATCH, f"{claim.path}: the split with hash {prov['split_hash'][:12]} does not "
                                               f"match the file: {'; '.join(wrong)}")


def plan_metrics(claim: Claim, skip: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(metrics to request from `score`, metrics recomputed, metrics skipped) for a claim.

    The file's `metrics` are the requested ones plus the family's companions (which come
    with every score); skipped ones are neither requested nor compared."""
    from ..scoring.metrics import METRICS

    listed = claim.doc["metrics"]
    unknown = [m for m in listed if m not in METRICS]
    if unknown:
        raise VerifyInputError(SETTINGS, f"{claim.path}: metric(s) {', '.join(unknown)} are not registered in this "
                                         f"phybench ({__version__}); install the plug-in that scores them")
    skip = set(skip)
    skipped = tuple(m for m in listed if m in skip)
    recomputed = tuple(m for m in listed if m not in skip)
    requested = tuple(m for m in recomputed if not METRICS.get(m).companion)
    if not requested:
        raise VerifyInputError(USAGE, f"{claim.path}: nothing left to recompute once {', '.join(skipped)} are skipped")
    return requested, recomputed, skipped


def compare_skips(skipped: Sequence[str], recomputed: Sequence[str]) -> tuple[str, ...]:
    """Keys `compare_results` leaves out for skipped metrics: their names, their weights
    (``alexnet``, ``alexnet.source``) and settings blocks no recomputed metric shares."""
    from ..scoring.metrics import METRICS

    kept_settings = {METRICS.get(m).settings_key for m in recomputed}
    out = set(skipped)
    for name in skipped:
        m = METRICS.get(name)
        if m.weights:
            out |= {m.weights, f"{m.weights}.source"}
        if m.settings_key and m.settings_key not in kept_settings:
            out.add(m.settings_key)
    return tuple(sorted(out))


def check_settings(claim: Claim, recomputed: Sequence[str]) -> None:
    """Refuse a file whose recorded settings this phybench would not reproduce: its version,
    task spec hash, metric settings and (for recomputed metrics with weights) weight hashes."""
    from ..scoring.metrics import METRICS, TRACKING_METRIC, settings_blocks
    from ..tasks import get_task

    prov, path = claim.provenance, claim.path
    if prov.get("phybench_version") != __version__:
        raise VerifyInputError(SETTINGS, f"{path}: scored with phybench {prov.get('phybench_version')!r}, this is "
                                         f"{__version__}: verify with that version, or re-score the submission")
    try:
        spec_hash = get_task(claim.doc["task"]).spec_hash()
    except Exception:  # noqa: BLE001 - an unregistered task: the registry's own error is the message
        raise VerifyInputError(SETTINGS, f"{path}: task {claim.doc['task']!r} is not registered in this phybench") from None
    if prov.get("task_spec_hash") != spec_hash:
        raise VerifyInputError(SETTINGS, f"{path}: task spec {str(prov.get('task_spec_hash'))[:12]} is not this "
                                         f"phybench's ({spec_hash[:12]}); re-score the submission with this version")
    current = json.loads(json.dumps(settings_blocks([TRACKING_METRIC, *recomputed])))
    recorded = prov["metric_settings"]
    stale = sorted(k for k, v in current.items() if recorded.get(k) != v)
    if stale:
        raise VerifyInputError(SETTINGS, f"{path}: the recorded settings of {', '.join(stale)} differ from this "
                                         f"phybench's ({__version__}); the numbers cannot match: re-score it")
    weighted = [str(METRICS.get(m).weights) for m in recomputed if METRICS.get(m).weights]
    if weighted:
        from ..scoring.weights import WeightsMissing, weight_hashes

        try:
            hashes = weight_hashes()
        except WeightsMissing as exc:
            raise VerifyInputError(SCORE, f"{path}: {exc}; or --skip the metrics that need them") from None
        recorded_w: dict[str, Any] = prov["weights"] if isinstance(prov.get("weights"), dict) else {}
        bad = [w for w in weighted if recorded_w.get(w) != hashes.get(w)]
        if bad:
            raise VerifyInputError(SETTINGS, f"{path}: the recorded {', '.join(bad)} weights are not the ones "
                                             "installed here; the numbers cannot match")


# ---------------------------------------------------------------- the check itself
@dataclass(frozen=True)
class Prepared:
    """A claim with its submission, split and metric plan resolved (everything but the score)."""

    claim: Claim
    submission: Path
    split_dir: Path
    requested: tuple[str, ...]
    recomputed: tuple[str, ...]
    skipped: tuple[str, ...]


def prepare(results_path: str | os.PathLike[str], submission: str | os.PathLike[str] | SubmissionIndex,
            split: str | os.PathLike[str] | SplitIndex, *, skip: Iterable[str] = ()) -> Prepared:
    """Read a claim, find its submission and split (a path, or an index to look them up in),
    and check the settings: every refusal that needs no scoring, raised as `VerifyInputError`."""
    from ..data.split import SplitError, read_manifest

    claim = read_claim(results_path)
    prov = claim.provenance
    if isinstance(submission, SubmissionIndex):
        sub_path = submission.find(prov["submission_hash"])
    else:
        sub_path = Path(submission)
    if isinstance(split, SplitIndex):
        split_dir, manifest = split.find(prov["split_hash"])
    else:
        split_dir = Path(split)
        try:
            manifest = read_manifest(split_dir)
        except SplitError as exc:
            raise VerifyInputError(NO_SPLIT, f"{claim.path}: {exc}") from None
        if manifest.get("split_hash") != prov["split_hash"]:
            raise VerifyInputError(NO_SPLIT, f"{claim.path}: {split_dir} is split {str(manifest.get('split_hash'))[:12]}, "
                                             f"the file was scored on {prov['split_hash'][:12]}")
    check_split(claim, manifest)
    requested, recomputed, skipped = plan_metrics(claim, skip)
    check_settings(claim, recomputed)
    return Prepared(claim, sub_path, split_dir, requested, recomputed, skipped)


def _rescore(prep: Prepared, *, workers: int, batch_size: int, device: str, progress: bool,
             features: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[dict[str, Any], Any]:
    """The re-scored results document and sidecar, as their files would read back."""
    from ..scoring.results import results_bytes
    from ..scoring.score import ScoreError, samples_sidecar, score

    try:
        out = score(prep.submission, prep.split_dir, prep.requested, workers=workers, batch_size=batch_size,
                    device=device, progress=progress, features=features)
    except ScoreError as exc:
        raise VerifyInputError(SCORE, f"{prep.claim.path}: re-scoring {prep.submission} failed: {exc}") from None
    doc = json.loads(results_bytes(out.results))
    samples = samples_sidecar(out.results, out.details)
    # the sidecar as `write_results` writes it (json.dumps of the same values), read back
    return doc, (json.loads(json.dumps(samples, sort_keys=True)) if samples is not None else None)


def differences(prep: Prepared, doc: dict[str, Any], samples: Any) -> list[str]:
    """Every field where the claim (and its sidecar) differs from the re-score."""
    claimed = prep.claim.doc
    rescored = claimed["provenance"].get("rescored")
    if rescored is not None and "rescored" not in doc["provenance"]:
        # `phybench rescore` notes which metrics it recomputed in place: a note, not a number;
        # a full re-score by this version reproduces every number it left.
        doc["provenance"]["rescored"] = rescored
    skip = compare_skips(prep.skipped, prep.recomputed)
    out = compare_results(claimed, doc, skip=skip)
    sidecar = prep.claim.path.stem + SAMPLES_SUFFIX
    if prep.claim.samples is not None:
        if samples is None:
            out.append(f"{sidecar}: present, but this task writes no samples sidecar")
        else:
            out += [f"{sidecar}: {d}" for d in compare_results(prep.claim.samples, samples, skip=skip)]
    return out


def check_one(prep: Prepared, *, by: str, date: str, workers: int = 1, batch_size: int = 16, device: str = "cpu",
              progress: bool = False, extra: Mapping[str, Any] | None = None,
              features: Mapping[str, Mapping[str, Any]] | None = None) -> VerifyOutcome:
    """Re-score a prepared claim and compare; writes nothing (`VerifyOutcome.apply` does).
    `features`: LPIPS / I3D features from `sharded_features` (None: computed here)."""
    doc, samples = _rescore(prep, workers=workers, batch_size=batch_size, device=device, progress=progress,
                            features=features)
    diffs = differences(prep, doc, samples)
    claim = prep.claim
    verification = None if diffs else Verification(
        results_sha256=claim.sha256, submission_hash=claim.provenance["submission_hash"],
        split_hash=claim.provenance["split_hash"], phybench_version=__version__, verified_by=by, date=date,
        recomputed=prep.recomputed, skipped=prep.skipped, extra=dict(extra or {}))
    return VerifyOutcome(claim.path, diffs, verification, prep.recomputed, prep.skipped)


def verify_one(results_path: str | os.PathLike[str], submission_path: str | os.PathLike[str] | SubmissionIndex,
               split_dir: str | os.PathLike[str] | SplitIndex, *, skip: Iterable[str] = (), by: str | None = None,
               date: str | None = None, workers: int = 1, batch_size: int = 16, device: str = "cpu",
               progress: bool = False, extra: Mapping[str, Any] | None = None) -> VerifyOutcome:
    """Verify one results file against its submission and split, and write (or remove) its record.

    For the Hub sync: `extra` lands in the record (e.g. ``{"pull_request": 3}``).  Raises
    `VerifyInputError` (nothing written) when the file cannot be checked, and
    `VerificationError` ("verify-stale") when the file changed while it was re-scored.
    """
    prep = prepare(results_path, submission_path, split_dir, skip=check_skip(skip))
    outcome = check_one(prep, by=by or default_user(), date=check_date(date) if date else today(), workers=workers,
                        batch_size=batch_size, device=device, progress=progress, extra=extra)
    outcome.apply()
    return outcome


def launch_world() -> tuple[int, int]:
    """(rank, world size) from the launcher's environment, as `phybench run` reads it."""
    from ..submission.run import RunError, world

    try:
        return world()
    except RunError as exc:
        raise VerifyInputError(USAGE, str(exc)) from None


def default_user() -> str:
    """Who verifies, when not told: the login name ($USER first), else "unknown"."""
    try:
        return getpass.getuser() or "unknown"
    except Exception:  # noqa: BLE001 - no login name in a container: still a valid record
        return "unknown"


def today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def check_date(text: str) -> str:
    """A YYYY-MM-DD date, as given (the record stores the string)."""
    try:
        if len(text) == 10 and _dt.date.fromisoformat(text).isoformat() == text:
            return text
    except ValueError:
        pass
    raise VerifyInputError(USAGE, f"--date {text!r}: give a date as YYYY-MM-DD, e.g. {today()}")


def check_skip(names: Iterable[str]) -> tuple[str, ...]:
    """--skip names: metrics with weights (LPIPS, FVD) are the expensive ones; any registered
    metric may be named, an unknown one is a usage error (a typo would silently recompute it)."""
    from ..scoring.metrics import METRICS

    names = tuple(n.strip() for n in names if n.strip())
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise VerifyInputError(USAGE, f"--skip {', '.join(unknown)}: not a metric; e.g. --skip lpips,fvd")
    return names


# ---------------------------------------------------------------- sharded LPIPS / FVD passes
# Under a launcher that sets RANK and WORLD_SIZE (`accelerate launch`, torchrun), process r
# computes the LPIPS values and I3D features of its share of the videos and writes them to a
# shard file; process 0 waits for every shard and scores with them (`score(features=...)`).
# Shares are whole I3D batches of the storage order, so every batch holds the same videos as
# in one process: the features are the same numbers when every process runs the same torch
# thread count as the one-process run (CPU kernels sum in a thread-dependent order).
SHARD_WAIT_S = 24 * 3600


def shard_bounds(n: int, batch_size: int, size: int) -> list[tuple[int, int]]:
    """Per rank, [a, b) of the storage order: whole batches of `batch_size`, as even as can be."""
    import numpy as np

    batches = -(-n // batch_size)
    edges = np.linspace(0, batches, size + 1).round().astype(int) * batch_size
    return [(min(int(a), n), min(int(b), n)) for a, b in zip(edges[:-1], edges[1:])]


def shard_dir_for(prep: Prepared, batch_size: int, device: str, size: int,
                  root: str | os.PathLike[str] | None) -> Path:
    """A folder every process of one launch agrees on (keyed by what the features depend on)."""
    import hashlib
    import tempfile

    key = "\0".join([prep.claim.sha256, prep.claim.provenance["submission_hash"], prep.claim.provenance["split_hash"],
                     ",".join(prep.recomputed), str(batch_size), device, str(size)])
    base = Path(root) if root is not None else Path(tempfile.gettempdir()) / "phybench-verify-shards"
    return base / hashlib.sha256(key.encode()).hexdigest()[:24]


def feature_shard(prep: Prepared, rank: int, size: int, *, batch_size: int = 16,
                  device: str = "cpu") -> dict[str, Any]:
    """This rank's LPIPS values and I3D features, computed as `score`'s one-process loop does:
    {"ids": (k,), "lpips": (k,), "fvd_fake": (k, 400), "fvd_real": (k, 400) when the
    reference cache is cold}; empty arrays for a metric not recomputed."""
    import numpy as np

    from ..data.split import SplitReader
    from ..scoring.score import _load_reference, _reference_cache
    from ..submission.format import open_submission

    reader = SplitReader(prep.split_dir)
    manifest = reader.manifest
    rows = {row["sample_id"]: row for row in reader.rows()}
    ids = list(rows)
    lpips, fvd = "lpips" in prep.recomputed, "fvd" in prep.recomputed
    if not all("video" in row for row in rows.values()):
        raise VerifyInputError(SCORE, f"{prep.claim.path}: the split stores no ground-truth videos; nothing to shard")
    with open_submission(prep.submission, manifest=manifest) as sub:
        order = sub.storage_order(ids)
        a, b = shard_bounds(len(order), batch_size, size)[rank]
        mine = order[a:b]
        cached = False
        if fvd:
            from ..scoring.weights import weight_hashes

            cache = _reference_cache(manifest, {"i3d": weight_hashes()["i3d"]}, batch_size, order, device)
            cached = _load_reference(cache, len(ids)) is not None
        model = None
        if lpips:
            from ..scoring.lpips import LPIPS

            model = LPIPS().to(device).eval()
        start = int(manifest["condition_frames"])
        values: list[float] = []
        fake: list[Any] = []
        real: list[Any] = []
        pending: list[tuple[Any, Any]] = []

        def flush() -> None:
            if pending:
                from ..scoring.fvd import i3d_logits

                if not cached:
                    real.append(i3d_logits(np.stack([p[0] for p in pending]), batch_size=batch_size, device=device))
                fake.append(i3d_logits(np.stack([p[1] for p in pending]), batch_size=batch_size, device=device))
            pending.clear()

        for sample_id, video in sub.iter_videos(mine):
            gt = reader.video(rows[sample_id])
            if model is not None:
                from ..scoring.lpips import lpips_frames

                values.append(float(lpips_frames(gt[start:], video[start:], model=model, batch_size=batch_size,
                                                 device=device).mean()))
            if fvd:
                pending.append((gt, video))
                if len(pending) >= batch_size:
                    flush()
        flush()
    out: dict[str, Any] = {"ids": np.array(mine, dtype=str), "lpips": np.array(values, np.float64),
                           "fvd_fake": np.concatenate(fake) if fake else np.zeros((0, 400))}
    if fvd and not cached:
        out["fvd_real"] = np.concatenate(real) if real else np.zeros((0, 400))
    return out


def _save_shard(path: Path, arrays: Mapping[str, Any]) -> None:
    import io

    import numpy as np

    from ..io import atomic_write_bytes

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def _load_shard(path: Path) -> dict[str, dict[str, Any]]:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    out: dict[str, dict[str, Any]] = {}
    for i, sample_id in enumerate(arrays["ids"].tolist()):
        entry: dict[str, Any] = {}
        if arrays["lpips"].size:
            entry["lpips"] = float(arrays["lpips"][i])
        if arrays["fvd_fake"].size:
            entry["fvd_fake"] = arrays["fvd_fake"][i]
        if "fvd_real" in arrays and arrays["fvd_real"].size:
            entry["fvd_real"] = arrays["fvd_real"][i]
        out[str(sample_id)] = entry
    return out


def sharded_features(prep: Prepared, rank: int, size: int, *, batch_size: int, device: str,
                     shard_root: str | os.PathLike[str] | None = None,
                     wait_s: float = SHARD_WAIT_S) -> dict[str, dict[str, Any]] | None:
    """Write this rank's shard; on rank 0, wait for all of them and return the features
    (the shard files are then removed); None on the other ranks."""
    import shutil
    import time

    folder = shard_dir_for(prep, batch_size, device, size, shard_root)
    _save_shard(folder / f"shard-{rank}-of-{size}.npz",
                feature_shard(prep, rank, size, batch_size=batch_size, device=device))
    if rank != 0:
        return None
    paths = [folder / f"shard-{r}-of-{size}.npz" for r in range(size)]
    t0 = time.monotonic()
    while not all(p.is_file() for p in paths):
        if time.monotonic() - t0 > wait_s:
            raise VerifyInputError(SCORE, f"{prep.claim.path}: waited {wait_s:.0f} s for the other processes' "
                                          f"feature shards in {folder}; did one fail?")
        time.sleep(0.5)
    features: dict[str, dict[str, Any]] = {}
    for p in paths:
        features.update(_load_shard(p))
    shutil.rmtree(folder, ignore_errors=True)
    return features


# ---------------------------------------------------------------- many files (the CLI)
@dataclass
class VerifyReport:
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
                shard_root: str | os.PathLike[str] | None = None) -> VerifyReport:
    """Verify every results file; write records only when every file could be checked.

    Refusals that need no scoring (unreadable file, no submission or split, settings) are
    found for all files first, before any scoring; a re-score that fails is a refusal too.
    Under a launcher (RANK / WORLD_SIZE) the LPIPS and FVD passes are sharded over the
    processes (`sharded_features`); process 0 does the rest and its report is the one to
    read (the others' is empty).
    """
    report = VerifyReport()
    try:
        rank, size = launch_world()
        files = results_files(results)
        skip = check_skip(skip)
        date = check_date(date) if date is not None else today()
        if not files:
            raise VerifyInputError(USAGE, f"no results files in {', '.join(map(str, results))}")
        split_index = SplitIndex.build(splits)
        sub_index = SubmissionIndex.build(submissions)
    except VerifyInputError as exc:
        report.refused.append(("phybench leaderboard verify", exc))
        return report
    prepared = []
    for f in files:
        try:
            prepared.append(prepare(f, sub_index, split_index, skip=skip))
        except VerifyInputError as exc:
            report.refused.append((str(f), exc))
    if report.refused:
        return report
    for prep in prepared:
        features = None
        try:
            if size > 1 and {"lpips", "fvd"} & set(prep.recomputed):
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
        try:
            outcome.apply()
        except VerificationError as exc:  # the file was edited while it was re-scored
            report.refused.append((str(outcome.results_path), VerifyInputError(exc.code, str(exc))))
    return report

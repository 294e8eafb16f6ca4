"""Which results file, submission and split a verification is about, and whether it can be checked.

The first half of `leaderboard verify` (`verify.py` does the re-score and the comparison): read a
results file as a claim, find the submission it names by content hash and the split by split
hash (each candidate hashed once, `SubmissionIndex` / `SplitIndex`), and refuse up front, with a
stable code, what could never verify: an unreadable file, no submission or split with its hashes,
a split of another task or protocol, settings or a phybench version this installation does not
have.  Nothing here scores; a `VerifyPlan` claim is what the re-score needs.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...io import file_sha256
from ...scoring.run.layout import is_beside, samples_path, parse as parse_results
from ...data.documents import Manifest

# Stable codes of the refusals (exit 2); docs/results.md "Verification codes" lists them.
USAGE = "verify-usage"  # bad arguments: no results files, unknown --skip name, bad --date
UNREADABLE = "verify-unreadable"  # not a readable phybench results file (or its sidecar is unreadable)
NO_SUBMISSION = "verify-no-submission"  # no submission under --submissions has the recorded hash
NO_SPLIT = "verify-no-split"  # no split under --splits has the recorded split hash
SPLIT_MISMATCH = "verify-split-mismatch"  # a split with that hash, but another task/split/size/protocol
SETTINGS = "verify-settings"  # recorded settings, spec, weights or version differ from this phybench's
SCORE = "verify-score"  # the re-score itself failed (submission invalid, weights missing, split corrupt)
CODES = (USAGE, UNREADABLE, NO_SUBMISSION, NO_SPLIT, SPLIT_MISMATCH, SETTINGS, SCORE)

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_RESULTS_BYTES = 64 * 1024 * 1024  # a results file of the largest split is a few MB
SPLIT_DEPTH = 3  # --splits: manifest.json at most this many folders down (data/<task>-<split>/...)


class VerifyInputError(Exception):
    """A results file that cannot be verified at all: one line, a stable code, nothing written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one line, whatever the cause said
        self.code = code


# ---------------------------------------------------------------- finding inputs
def results_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Results files named, or found under named folders (recursively, sorted, as `build` reads
    them): sidecars, records, probe results and hidden files are not results.  A path that
    does not exist is a usage error."""
    from ..common.files import is_probe_file, scan

    out: list[Path] = []

    for p in map(Path, paths):
        if p.is_dir():  # regular files only (links, FIFOs, devices are never opened: `files.scan`)
            out += [f for f in scan(p)[0] if _is_results_name(f) and not is_probe_file(f)]
        elif p.is_file():
            out.append(p)
        else:
            raise VerifyInputError(USAGE, f"{p}: no such file or folder")
    unique: dict[Path, Path] = {}  # one file named twice (or by a file and its folder) is verified once
    for p in out:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def _is_results_name(path: Path) -> bool:
    return not is_beside(path)


def _submission_candidates(root: Path) -> list[Path]:
    """Submission folders (with a submission.json) and archives under `root`, or `root` itself."""
    from ...submission.format import META

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
        from ...submission.archive import SubmissionError
        from ...submission.format import submission_hash

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
    by_hash: dict[str, tuple[Path, Manifest]] = field(default_factory=dict)

    @classmethod
    def build(cls, root: str | os.PathLike[str]) -> "SplitIndex":
        from ...data.split import SplitError, read_manifest

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

    def find(self, digest: str) -> tuple[Path, Manifest]:
        if digest in self.by_hash:
            return self.by_hash[digest]
        raise VerifyInputError(NO_SPLIT, f"no split with hash {digest[:12]} under {self.root} "
                                         f"({len(self.by_hash)} split(s) found)")


# ---------------------------------------------------------------- reading a claim
def _read_json(path: Path, what: str) -> Any:
    from ..common.files import UnsafeFile, read_regular

    try:
        return parse_results(read_regular(path, MAX_RESULTS_BYTES))
    except UnsafeFile as exc:
        raise VerifyInputError(UNREADABLE, f"{path}: {what}: {exc}") from None
    except (OSError, ValueError) as exc:  # jsonsafe.JSONError (a ValueError) says which bound, with its code
        why = f"{exc.code}: {exc}" if hasattr(exc, "code") else type(exc).__name__
        raise VerifyInputError(UNREADABLE, f"{path}: {what} is not readable JSON ({why})") from None


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
    doc = _read_json(path, "results file")  # a regular file, capped, or refused
    sha = file_sha256(path)
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
    sidecar = samples_path(path)
    samples = _read_json(sidecar, "samples sidecar") if os.path.lexists(sidecar) else None
    return Claim(path, sha, doc, samples)


# ---------------------------------------------------------------- settings
def check_claimed_split(claim: Claim, manifest: Manifest) -> None:
    """The split found by hash must be the one the file says: task, split, size, resolution, protocol."""
    from ...tasks.protocols import protocol_of

    prov, doc = claim.provenance, claim.doc
    said = {"task": doc["task"], "split": doc["split"], "resolution": prov.get("resolution"),
            "split_num_samples": prov.get("split_num_samples")}
    found = {"task": manifest.get("task"), "split": manifest.get("split"), "resolution": manifest.get("resolution"),
             "split_num_samples": manifest.get("num_samples")}
    full, n = manifest.get("full_size"), manifest.get("num_samples")
    if "protocol" in prov and isinstance(full, int) and isinstance(n, int):
        said["protocol"] = prov["protocol"]
        found["protocol"] = protocol_of(str(manifest["task"]), n, full)
    wrong = [f"{k} {said[k]!r} (the split's: {found[k]!r})" for k in said if said[k] != found[k]]
    if wrong:
        raise VerifyInputError(SPLIT_MISMATCH, f"{claim.path}: the split with hash {prov['split_hash'][:12]} does not "
                                               f"match the file: {'; '.join(wrong)}")


def plan_metrics(claim: Claim, skip: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(metrics to request from `score`, metrics recomputed, metrics skipped) for a claim.

    The file's `metrics` are the requested ones plus the family's companions (which come
    with every score); skipped ones are neither requested nor compared."""
    from ...scoring.metrics import METRICS

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


def check_settings(claim: Claim, recomputed: Sequence[str]) -> None:
    """Refuse a file whose recorded settings this phybench would not reproduce: its version,
    task spec hash, metric settings and (for recomputed metrics with weights) weight hashes."""
    from ...scoring.metrics import METRICS, TRACKING_METRIC, settings_blocks
    from ...tasks import get_task

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
        from ...scoring.perceptual.weights import WeightsMissing, weight_hashes

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
class VerifyPlan:
    """A claim with its submission, split and metric plan resolved (everything but the score)."""

    claim: Claim
    submission: Path
    split_dir: Path
    requested: tuple[str, ...]
    recomputed: tuple[str, ...]
    skipped: tuple[str, ...]


def plan_verify(results_path: str | os.PathLike[str], submission: str | os.PathLike[str] | SubmissionIndex,
            split: str | os.PathLike[str] | SplitIndex, *, skip: Iterable[str] = ()) -> VerifyPlan:
    """Read a claim, find its submission and split (a path, or an index to look them up in),
    and check the settings: every refusal that needs no scoring, raised as `VerifyInputError`."""
    from ...data.split import SplitError, read_manifest

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
    check_claimed_split(claim, manifest)
    requested, recomputed, skipped = plan_metrics(claim, skip)
    check_settings(claim, recomputed)
    return VerifyPlan(claim, sub_path, split_dir, requested, recomputed, skipped)


def launch_world() -> tuple[int, int]:
    """(rank, world size) from the launcher's environment, as `phybench run` reads it."""
    from ...pipeline import RunError, world

    try:
        return world()
    except RunError as exc:
        raise VerifyInputError(USAGE, str(exc)) from None

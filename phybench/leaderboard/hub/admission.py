"""What `leaderboard sync` admits: the admission policy, apart from the Hub calls and the run.

A submission pull request is admitted when it changes exactly one new folder
``submissions/<model>/<hash12>/`` holding one archive, a card and optionally a claim, each under its
size limit (`Admission.folder`, judged from the Hub's listing before anything is downloaded); and,
once downloaded, when its archive opens and validates against the board's split of the same hash,
its card passes, the folder's name agrees with the submission's hash and model, the board has no row
of that model on that split and no other submission with the same videos, and its claim (if any)
parses (`Admission.check`).  Every problem found is one line of `Refused`.  The splits the board
scores against are found by split hash (`split_index`).

Nothing here talks to the Hub or writes a file: the runner (`intake.Syncer`) downloads, scores,
commits and comments through `client.HubClient`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import jsonsafe
from ...data.manifest_bounds import MAX_MANIFEST_BYTES
from ...scoring.run.layout import is_beside, is_record, parse as parse_results
from .submit import ARCHIVES, CARD, CLAIM, MAX_CLAIM_BYTES, SUBMISSIONS_DIR, IntakeError, model_slug, parse_claim

RESULTS_SUBDIR = "hub"  # under --results: one results file (+ record, + sidecar) per admitted PR
_PATH = re.compile(r"^submissions/([a-z0-9][a-z0-9._-]{0,63})/([0-9a-f]{12})/([A-Za-z0-9._-]{1,40})$")
_DIFF = re.compile(r"^diff --git a/(\S+) b/(\S+)$")


class Refused(Exception):
    """One pull request refused; `problems` are the lines its comment lists."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def split_index(splits_dir: Path) -> dict[str, Path]:
    """split hash -> split folder, for every manifest.json at most two levels under `splits_dir`
    (the folders `leaderboard build --splits` reads)."""
    found: dict[str, Path] = {}
    files = sorted(set(splits_dir.glob("manifest.json")) | set(splits_dir.glob("*/manifest.json"))
                   | set(splits_dir.glob("*/*/manifest.json")))
    for file in files:
        try:
            found.setdefault(str(jsonsafe.read(file, max_bytes=MAX_MANIFEST_BYTES)["split_hash"]), file.parent)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def read_meta(archive: Path) -> dict[str, Any]:
    """The submission's submission.json, or Refused with what kept the archive from opening."""
    from ...submission.archive import SubmissionError
    from ...submission.format import Submission

    try:
        with Submission(archive) as opened:
            meta = opened._meta if opened._meta_ok else None
            opened_problems = [f"[{p.code}] {p.message}" for p in opened.problems if p.severity == "error"]
    except SubmissionError as exc:
        raise Refused([f"[{p.code}] {p.message}" for p in exc.problems] or [str(exc)]) from None
    if not isinstance(meta, dict):
        raise Refused(opened_problems or ["[invalid_json] submission.json could not be read"])
    return meta


def changes(details: Any) -> list[str]:
    """Paths the pull request changes (from its diff); refuses what cannot be read strictly."""
    paths: set[str] = set()
    for line in (details.diff or "").splitlines():
        if line.startswith("diff --git "):
            m = _DIFF.match(line)
            if m is None or m.group(1) != m.group(2):
                raise Refused([f"[intake-paths] cannot read a changed path safely: {line[:120]!r}; "
                               "renames and names with spaces are not accepted"])
            paths.add(m.group(1))
    if not paths:
        raise Refused(["[intake-paths] the pull request changes no files"])
    return sorted(paths)


def same_file(a: Any, b: Any) -> bool:
    """Two Hub listings of a file hold the same bytes (LFS sha256, else the git blob id)."""
    lfs_a, lfs_b = getattr(a, "lfs", None), getattr(b, "lfs", None)
    if lfs_a is not None or lfs_b is not None:
        return lfs_a is not None and lfs_b is not None and str(lfs_a.sha256) == str(lfs_b.sha256)
    return str(getattr(a, "blob_id", "")) == str(getattr(b, "blob_id", "x"))


def already_admitted(details: Any, head_files: dict[str, Any], main_files: dict[str, Any]) -> bool:
    """Every path the PR changes is on main with the PR head's bytes: an earlier sync committed
    it and stopped before closing the pull request."""
    try:
        paths = changes(details)
    except Refused:
        return False
    return all(p in head_files and p in main_files and same_file(head_files[p], main_files[p]) for p in paths)


def on_the_board(results_dir: Path, meta: dict[str, Any], out: Path) -> list[str]:
    """A run the board already has for this model on this split with the same seeds (the build
    makes one row per model and split, its runs the model's seeds: another seed of an admitted
    model is admitted as one more run of its row, `verify.seeds`); `out`, this PR's own file from
    an interrupted earlier sync, does not count."""
    from ..verify.seeds import run_seeds

    name, split_hash = meta["model"]["name"], meta["split_hash"]
    seeds = run_seeds({"seeds": meta.get("seeds", [0])}) or (0,)
    from ..common.files import UnsafeFile, read_regular, scan

    for path in scan(results_dir)[0]:  # regular files only: never a link, FIFO or device
        if path == out or is_beside(path):
            continue
        try:
            doc = parse_results(read_regular(path, MAX_CLAIM_BYTES))
            same = (doc["model"]["name"] == name and doc["provenance"]["split_hash"] == split_hash
                    and (run_seeds(doc["model"]) or (0,)) == seeds)
        except (UnsafeFile, ValueError, KeyError, TypeError, RecursionError):
            continue
        if same:
            return [f"[intake-duplicate] model {name[:80]!r} already has a run with seeds {list(seeds)} on "
                    f"{meta['task']}/{meta['split']} ({path.relative_to(results_dir).as_posix()}); one run per model, "
                    "split and seed: submit another seed, or another model name, or ask the maintainers to replace it"]
    return []

def videos_on_the_board(results_dir: Path, vhash: str, submission: str) -> list[str]:
    """The same videos already on the board (any board folder) as another submission: a
    second name for one set of videos (issue 36).  Read from the records' signed
    ``extra.videos_hash``; a record of this very submission (an interrupted sync) does not count."""
    from ..common.files import UnsafeFile, read_regular, scan
    from ..verify.records import MAX_RECORD_BYTES

    for path in scan(results_dir)[0]:
        if not is_record(path):
            continue
        try:
            doc = jsonsafe.loads(read_regular(path, MAX_RECORD_BYTES))
            same = doc["extra"].get("videos_hash") == vhash and doc["submission_hash"] != submission
        except (UnsafeFile, ValueError, KeyError, TypeError, AttributeError):  # JSONError is a ValueError
            continue
        if same:
            return [f"[videos_reused] these videos (videos hash {vhash[:12]}) are already on the board as "
                    f"submission {str(doc['submission_hash'])[:12]} "
                    f"({path.relative_to(results_dir).as_posix()}); one set of videos, one row: the same "
                    "videos under another name or card are not a new entry"]
    return []


@dataclass
class Checked:
    """A downloaded submission that passed every check: what the runner scores and records."""

    out: Path  # the results file it will be scored into
    split_dir: Path
    submission_hash: str
    videos_hash: str | None
    claim: Any  # the author's parsed claim, or None


@dataclass
class Admission:
    """The board's admission rules: its splits by hash, its results folder, the largest archive."""

    splits: dict[str, Path]
    results_dir: Path
    max_archive: int = 0

    @classmethod
    def of(cls, splits_dir: Path, results_dir: Path) -> Admission:
        """The policy of a board whose splits are under `splits_dir` (IntakeError: none there)."""
        from ...data.split import read_manifest
        from ...submission.archive import Limits

        splits = split_index(splits_dir)
        if not splits:
            raise IntakeError(f"--splits {splits_dir}: no split folders (manifest.json) found")
        return cls(splits, results_dir, max(Limits.for_split(read_manifest(p)).total_bytes for p in splits.values()))

    def folder(self, paths: list[str], head_files: dict[str, Any], main_files: dict[str, Any]
               ) -> tuple[str, str, dict[str, int]]:
        """(model slug, hash12, {name: size}): the one new submission folder the PR adds."""
        problems, folders = [], set()
        for p in paths:
            m = _PATH.match(p)
            if m is None:
                problems.append(f"[intake-paths] {p[:120]!r} is outside submissions/<model>/<hash12>/ "
                                "(a pull request adds one submission folder and nothing else)")
                continue
            folders.add((m.group(1), m.group(2)))
            if p in main_files:
                problems.append(f"[intake-paths] {p} already exists on main; a pull request adds files only")
            if p not in head_files:
                problems.append(f"[intake-paths] the pull request deletes {p}")
        if len(folders) > 1:
            problems.append(f"[intake-paths] {len(folders)} submission folders in one pull request; one per PR")
        if problems:
            raise Refused(problems)
        slug, hash12 = folders.pop()
        prefix = f"{SUBMISSIONS_DIR}/{slug}/{hash12}/"
        sizes = {p[len(prefix):]: int(getattr(head_files[p], "size", 0) or 0) for p in paths}
        problems = self._files(sizes, prefix)
        if any(f.startswith(f"{SUBMISSIONS_DIR}/") and f.split("/")[2:3] == [hash12] for f in main_files):
            problems.append(f"[intake-duplicate] submission {hash12} is already on the board (on main)")
        if problems:
            raise Refused(problems)
        return slug, hash12, sizes

    def _files(self, sizes: dict[str, int], prefix: str) -> list[str]:
        """The folder's files: one archive, a card, optionally a claim, nothing else, each under its limit."""
        problems = []
        unknown = sorted(n for n in sizes if n not in (CARD, CLAIM, *ARCHIVES))
        archives = [n for n in sizes if n in ARCHIVES]
        if unknown:
            names = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10:,} more" if len(unknown) > 10 else "")
            problems.append(f"[intake-files] {len(unknown):,} unexpected file(s) {names}: a submission folder holds "
                            f"one {'/'.join(ARCHIVES[:2])}... archive, {CARD} and optionally {CLAIM}")
        if len(archives) != 1:
            problems.append(f"[intake-files] {len(archives)} submission archives; exactly one of "
                            f"{', '.join(ARCHIVES)}")
        if CARD not in sizes:
            problems.append(f"[card-json] no {CARD} in {prefix}")
        limits = {CARD: 64 * 1024, CLAIM: MAX_CLAIM_BYTES, **{a: self.max_archive for a in ARCHIVES}}
        for name, size in sizes.items():
            if name in limits and size > limits[name]:
                problems.append(f"[intake-size] {name} is {size:,} bytes; at most {limits[name]:,} (not downloaded)")
        return problems

    def check(self, archive: Path, local: dict[str, Path], slug: str, hash12: str) -> Checked:
        """Open, validate and compare a downloaded submission (`local`: its folder's files by name;
        `archive`: the archive under its own name).  Raises Refused with every problem found."""
        from ...data.split import read_manifest
        from ...submission.archive import SubmissionError
        from ...submission.card import check_card
        from ...submission.validation import validate

        meta = read_meta(archive)
        problems: list[str] = []
        _, card_problems = check_card(local[CARD].read_bytes(), meta)
        problems += [f"[{p.code}] {p.message}" for p in card_problems]
        split_dir = self.splits.get(str(meta.get("split_hash")))
        if split_dir is None:
            raise Refused(problems + [f"[intake-split] no split {meta.get('task')}/{meta.get('split')} with hash "
                                      f"{str(meta.get('split_hash'))[:12]} on this board; answer one of its splits"])
        report = validate(archive, split_dir, board=True)  # condition frames the split's own, too
        problems += [f"[{p.code}] {p.message}" for p in report.errors]
        if report.ok and report.submission_hash is not None:
            if report.submission_hash[:12] != hash12:
                problems.append(f"[intake-hash] the folder says {hash12}, the submission's hash is "
                                f"{report.submission_hash[:12]}")
            if model_slug(meta["model"]["name"]) != slug:
                problems.append(f"[intake-model] the folder says {slug!r}, submission.json names "
                                f"{meta['model']['name'][:80]!r} ({model_slug(meta['model']['name'])!r})")
        out = self.results_dir / RESULTS_SUBDIR / f"{meta['task']}-{meta['split']}-{slug}-{hash12}.json"
        vhash = None
        if report.ok:
            problems += on_the_board(self.results_dir, meta, out)
            from ...submission.identity import videos_hash

            try:
                vhash = videos_hash(archive, manifest=read_manifest(split_dir))
            except SubmissionError as exc:
                problems += [f"[{p.code}] {p.message}" for p in exc.problems][:1] or [f"[videos] {exc}"]
            else:
                problems += videos_on_the_board(self.results_dir, vhash, str(report.submission_hash))
        claim = None
        if CLAIM in local:
            try:
                claim = parse_claim(local[CLAIM].read_bytes())
            except ValueError as exc:
                problems.append(f"[claim] {exc}")
        if problems:
            raise Refused(problems)
        assert report.submission_hash is not None
        return Checked(out, split_dir, report.submission_hash, vhash, claim)

"""Intake through the Hub: authors open pull requests, `sync` re-scores and admits them.

An author runs ``phybench submit SUB --repo OWNER/NAME``: the submission and its card
(`phybench.submission.card`) are checked locally, then one pull request on the Hub *dataset*
repo adds them under ``submissions/<model>/<hash12>/``: ``submission.zip`` (or the author's
own .zip / .tar.*), ``card.json``, and optionally ``results.json``, the author's own scores
(the *claim*).

A maintainer (or the scheduled workflow, .github/workflows/leaderboard.yml) runs
``phybench leaderboard sync``: for every open pull request, at the commit its ref
``refs/pr/N`` points at when the sync reads it, the change set must be one new submission
folder and nothing else; the files are size-checked before they are downloaded; the archive
is read by phybench's capped reader (never extracted) and validated against the split of
the same hash in ``--splits``; the card is checked; the submission is scored as
``phybench score`` scores it; a claim must equal the recomputed results field for field.
An admitted pull request gets its results file and a verification record
(`phybench.leaderboard.verification`) under ``RESULTS/hub/``, a comment, and is merged; a
refused one gets a comment listing every problem and is closed (the author fixes it and
submits again).  Then the site is rebuilt.

Why a second sync does nothing: it lists *open* pull requests only, and every handled one
is merged or closed.  If a sync stops between its comment and the status change, the next
one finds its own comment (by the sync's own Hub user, carrying a marker with the commit
it judged) and finishes the job without commenting twice; a comment by anyone else
carrying the marker counts for nothing.  Every step is also written down in a journal under
``RESULTS/.sync/`` (`phybench.leaderboard.journal`): a sync killed anywhere (even by SIGKILL)
is finished by the next one, which removes a row scored but never committed, closes what was
committed, and rebuilds the site whenever the results are not what it was built from.
Downloads go to temporary folders there, removed on every way out (stale ones at the next
start).  Each pull request is handled in its own ``try``:
a hostile one (an archive bomb, a path-traversal entry, a forged claim, files outside its
folder) is refused or, if it breaks something unexpected, reported and left open, and the
others go on.

Here: `sync` (the maintainer's side); `submit`, `prepare` and the repo layout are in
`phybench.leaderboard.intake_submit` (re-exported here).

`huggingface_hub` reads HF_ENDPOINT and HF_TOKEN from the environment; nothing here
names the real Hub, so the tests run against tests/hubserver.py.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from .. import jsonsafe
from ..io import file_sha256
from .intake_submit import (  # noqa: F401  the author's side, re-exported: `phybench.leaderboard.intake.prepare_upload`
    ARCHIVE_SUFFIXES,
    ARCHIVES,
    CARD,
    CLAIM,
    MAX_CLAIM_BYTES,
    SUBMISSIONS_DIR,
    IntakeError,
    Upload,
    model_slug,
    pack_zip,
    prepare_upload,
    parse_claim,
    submit,
)
from ..scoring.run.layout import is_beside, is_record, parse as parse_results
from .intake_splits import split_index
from .journal import Journal, hub_id, recover, results_state, terminate_as_exit
from .sync_viewers import admitted_viewer, viewers_folder

RESULTS_SUBDIR = "hub"  # under --results: one results file (+ record, + sidecar) per admitted PR
MARKER = "<!-- phybench-sync"
MAX_LISTED = 40  # problems a log line lists; the rest are counted (a comment lists fewer: hub_text.MAX_LINES)
_PATH = re.compile(r"^submissions/([a-z0-9][a-z0-9._-]{0,63})/([0-9a-f]{12})/([A-Za-z0-9._-]{1,40})$")
_DIFF = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_MARK = re.compile(r"<!-- phybench-sync head=([0-9a-f]{7,64}) outcome=(admitted|refused) -->")


class Refused(Exception):
    """One pull request refused; `problems` are the lines its comment lists."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


# ------------------------------------------------------------------ sync
@dataclass
class Outcome:
    """What happened to one pull request."""

    num: int
    status: str  # admitted, refused, error (left open; the next sync tries again)
    lines: list[str] = field(default_factory=list)  # refusal problems, or the error
    results: Path | None = None

    def to_text(self) -> str:
        head = f"#{self.num}: {self.status}" + (f" -> {self.results}" if self.results else "")
        more = [f"    ... and {len(self.lines) - MAX_LISTED:,} more"] if len(self.lines) > MAX_LISTED else []
        return "\n".join([head, *(f"    {x[:500]}" for x in self.lines[:MAX_LISTED]), *more])


@dataclass
class SyncReport:
    outcomes: list[Outcome]
    site: Path | None  # rebuilt, or None when nothing changed
    build_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.build_error is None and all(o.status != "error" for o in self.outcomes)

    def to_text(self) -> str:
        return "\n".join([*(o.to_text() for o in self.outcomes), self.summary()])

    def summary(self) -> str:
        """The totals and what happened to the site (the outcomes were logged as they came)."""
        counts = {s: sum(o.status == s for o in self.outcomes) for s in ("admitted", "refused", "error")}
        lines = []
        lines.append(f"sync: {len(self.outcomes)} open pull request(s): {counts['admitted']} admitted, "
                     f"{counts['refused']} refused, {counts['error']} left open after an error")
        if self.build_error:
            lines.append(f"site not rebuilt: {self.build_error}")
        elif self.site is not None:
            lines.append(f"site: {self.site / 'index.html'}")
        else:
            lines.append("nothing new: site not rebuilt")
        return "\n".join(lines)


def _read_meta(archive: Path) -> dict[str, Any]:
    """The submission's submission.json, or Refused with what kept the archive from opening."""
    from ..submission.archive import SubmissionError
    from ..submission.format import Submission

    try:
        with Submission(archive) as opened:
            meta = opened._meta if opened._meta_ok else None
            opened_problems = [f"[{p.code}] {p.message}" for p in opened.problems if p.severity == "error"]
    except SubmissionError as exc:
        raise Refused([f"[{p.code}] {p.message}" for p in exc.problems] or [str(exc)]) from None
    if not isinstance(meta, dict):
        raise Refused(opened_problems or ["[invalid_json] submission.json could not be read"])
    return meta


@dataclass
class Syncer:
    """One sync run's state: the Hub client, the splits, where results go."""

    repo: str
    splits_dir: Path
    results_dir: Path
    metrics: Sequence[str] | None = None
    verified_by: str | None = None
    progress: bool = False
    log: Callable[[str], None] = print
    api: Any = None
    me: str = ""
    splits: dict[str, Path] = field(default_factory=dict)
    max_archive: int = 0
    signer: Any = None
    journal: Any = None  # `phybench.leaderboard.journal.Journal` of results_dir, opened by `run`
    viewers: Path | None = None  # where the board's viewers are: each admitted row's is built there (`sync_viewers`)

    def start(self) -> None:
        from huggingface_hub import HfApi

        from ..submission.archive import Limits
        from ..data.split import read_manifest

        self.api = self.api or HfApi()
        self.me = self.api.whoami()["name"]
        self.verified_by = self.verified_by or f"phybench leaderboard sync ({self.me})"
        self.splits = split_index(self.splits_dir)
        if not self.splits:
            raise IntakeError(f"--splits {self.splits_dir}: no split folders (manifest.json) found")
        self.max_archive = max(Limits.for_split(read_manifest(p)).total_bytes for p in self.splits.values())
        # Every admitted row's record is signed: the board (--require-verified) takes no other.
        from .signing import SigningError, check_signer, default_signer, load_keyring

        try:
            self.signer = default_signer()
            if self.signer is None:
                raise IntakeError("no signing key: set $PHYBENCH_SIGNING_KEY to the maintainers' private key "
                                  "(the workflow's secret); the board takes only signed verification records")
            check_signer(self.signer, load_keyring())
        except SigningError as exc:
            raise IntakeError(f"[{exc.code}] {exc}") from None

    # ------------------------------------------------------------ one pull request
    def _prior(self, details: Any, head: str) -> str | None:
        """The outcome this sync's own user already commented for `head`, if any."""
        for event in reversed(details.events):
            if event.type == "comment" and event.author == self.me:
                m = _MARK.search(getattr(event, "content", "") or "")
                if m and head.startswith(m.group(1)):
                    return m.group(2)
        return None

    def _changes(self, details: Any) -> list[str]:
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

    def _folder(self, paths: list[str], head_files: dict[str, Any], main_files: dict[str, Any]
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
        if any(f.startswith(f"{SUBMISSIONS_DIR}/") and f.split("/")[2:3] == [hash12] for f in main_files):
            problems.append(f"[intake-duplicate] submission {hash12} is already on the board (on main)")
        if problems:
            raise Refused(problems)
        return slug, hash12, sizes

    def _download(self, path: str, head: str, sibling: Any, work: Path) -> Path:
        """One file of the PR at its pinned commit, checked against the hash the Hub lists for it.

        A mismatch is the transfer's fault, not the author's: it raises IntakeError (the PR is
        left open for the next sync), not Refused."""
        import hashlib

        from huggingface_hub import hf_hub_download

        local = Path(hf_hub_download(self.repo, path, repo_type="dataset", revision=head,
                                     cache_dir=str(work / "cache")))
        data_size = local.stat().st_size
        lfs = getattr(sibling, "lfs", None)
        if lfs is not None:
            want, got = str(lfs.sha256), file_sha256(local)
        else:
            want = str(getattr(sibling, "blob_id", ""))
            h = hashlib.sha1(b"blob %d\0" % data_size)
            with open(local, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            got = h.hexdigest()
        if data_size != int(getattr(sibling, "size", -1) or 0) or got != want:
            raise IntakeError(f"{path}: downloaded {data_size:,} bytes that do not match the Hub's listing "
                              f"(hash {got[:12]}, listed {want[:12]}); try again")
        return local

    def evaluate(self, num: int, head: str, details: Any, head_files: dict[str, Any], main_files: dict[str, Any],
                 work: Path) -> tuple[Path, str, dict[str, Path]]:
        """Check, score and compare one pull request at its pinned head; returns (results file,
        submission hash, {repo path: the local copy that was scored}): exactly what is admitted.

        Raises Refused with every problem found."""
        from ..submission.archive import SubmissionError
        from ..submission.card import check_card
        from ..data.split import read_manifest
        from ..submission.validation import validate

        slug, hash12, sizes = self._folder(self._changes(details), head_files, main_files)
        prefix = f"{SUBMISSIONS_DIR}/{slug}/{hash12}/"
        local = {name: self._download(prefix + name, head, head_files[prefix + name], work) for name in sorted(sizes)}
        self.journal.mark(num, "downloaded", head=head)
        archive_name = next(n for n in sizes if n in ARCHIVES)
        archive = work / archive_name  # the name tells the reader the container type
        shutil.copyfile(local[archive_name], archive)
        meta = _read_meta(archive)
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
            problems += self._on_the_board(meta, out)
            from ..submission.identity import videos_hash

            try:
                vhash = videos_hash(archive, manifest=read_manifest(split_dir))
            except SubmissionError as exc:
                problems += [f"[{p.code}] {p.message}" for p in exc.problems][:1] or [f"[videos] {exc}"]
            else:
                problems += self._videos_on_the_board(vhash, str(report.submission_hash))
        claim = None
        if CLAIM in local:
            try:
                claim = parse_claim(local[CLAIM].read_bytes())
            except ValueError as exc:
                problems.append(f"[claim] {exc}")
        if problems:
            raise Refused(problems)
        assert report.submission_hash is not None
        self._score_and_record(num, head, archive, split_dir, out, claim, report.submission_hash, vhash)
        return out, report.submission_hash, {prefix + name: path for name, path in local.items()}

    def _score_and_record(self, num: int, head: str, archive: Path, split_dir: Path, out: Path, claim: Any,
                          submission_hash: str, vhash: str | None) -> None:
        """Score an accepted submission, hold it to its claim if it made one, and write the results
        file with its (signed) verification record.  Raises Refused if scoring fails or the claim differs."""
        from ..scoring.run.results import results_bytes
        from ..scoring.run.score import ScoreError, score, write_results
        from .verification import Verification, claim_differences, write_record

        try:
            scored = score(archive, split_dir, self.metrics, progress=self.progress)
        except ScoreError as exc:
            raise Refused([f"[score] {str(exc).splitlines()[0]}"]) from None
        # Compared as written (results_bytes rounds floats), as the claim was written by `score --out`.
        results = json.loads(results_bytes(scored.results))
        not_recomputed: list[str] = []
        if claim is not None:
            differ, not_recomputed = claim_differences(claim, results)
            if differ:
                raise Refused([f"[claim-differs] {d}" for d in differ])
        self.journal.mark(num, "scoring", head=head, results=out.relative_to(self.results_dir).as_posix())
        write_results(out, scored)
        write_record(out, Verification(
            results_sha256=file_sha256(out), submission_hash=submission_hash,
            split_hash=results["provenance"]["split_hash"], phybench_version=__version__,
            verified_by=str(self.verified_by)[:200], date=datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
            recomputed=tuple(results["metrics"]),
            extra={"pull_request": num, "repo": self.repo, "revision": head, "videos_hash": vhash,
                   **({"claim_not_recomputed": not_recomputed} if not_recomputed else {})},
        ), self.signer)

    def _on_the_board(self, meta: dict[str, Any], out: Path) -> list[str]:
        """A row the board already has for this model on this split (the build allows one per model
        and split); `out`, this PR's own file from an interrupted earlier sync, does not count."""
        name, split_hash = meta["model"]["name"], meta["split_hash"]
        from .files import UnsafeFile, read_regular, scan

        for path in scan(self.results_dir)[0]:  # regular files only: never a link, FIFO or device
            if path == out or is_beside(path):
                continue
            try:
                doc = parse_results(read_regular(path, MAX_CLAIM_BYTES))
                same = doc["model"]["name"] == name and doc["provenance"]["split_hash"] == split_hash
            except (UnsafeFile, ValueError, KeyError, TypeError, RecursionError):
                continue
            if same:
                return [f"[intake-duplicate] model {name[:80]!r} already has a row on {meta['task']}/{meta['split']} "
                        f"({path.relative_to(self.results_dir).as_posix()}); one row per model and split: submit "
                        "under another model name, or ask the maintainers to replace it"]
        return []

    def _videos_on_the_board(self, vhash: str, submission: str) -> list[str]:
        """The same videos already on the board (any board folder) as another submission: a
        second name for one set of videos (issue 36).  Read from the records' signed
        ``extra.videos_hash``; a record of this very submission (an interrupted sync) does not count."""
        from .files import UnsafeFile, read_regular, scan
        from .verification import MAX_RECORD_BYTES

        for path in scan(self.results_dir)[0]:
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
                        f"({path.relative_to(self.results_dir).as_posix()}); one set of videos, one row: the same "
                        "videos under another name or card are not a new entry"]
        return []

    def comment(self, num: int, head: str, outcome: str, lines: Sequence[str]) -> None:
        """Post the outcome.  Every problem line is escaped and the list bounded (`hub_text`): what
        an author sent never reaches the Hub's renderer as Markdown or HTML from the board's account."""
        from .hub_text import bounded_lines, write_full_list

        if outcome == "admitted":
            body = [f"**phybench leaderboard sync: admitted** (phybench {__version__})", "", *lines]
        else:
            shown = bounded_lines(lines)
            if shown[-1].startswith("- ... and ") and write_full_list(self.results_dir, num, head, lines):
                shown = bounded_lines(lines, "the full list is in the sync's work folder; ask the maintainers")
            body = [f"**phybench leaderboard sync: refused** (phybench {__version__}), at commit {head[:12]}.", "",
                    f"Problems ({len(lines):,}):", *shown, "",
                    "Fix them and submit again (`phybench submit`); this pull request is closed."]
        body.append(f"\n<!-- phybench-sync head={head} outcome={outcome} -->")
        self.api.comment_discussion(self.repo, num, "\n".join(body), repo_type="dataset")

    def close(self, num: int) -> None:
        """Close pull request `num`: the last step; the journal needs nothing more of it."""
        self.api.change_discussion_status(self.repo, num, "closed", repo_type="dataset")
        self.journal.forget(num)

    def _pinned(self, num: int) -> tuple[str, dict[str, Any], Any]:
        """(head sha, {path: sibling} at that head, the discussion details), read so that the diff
        is the head's: the head is read before and after the details, and a pull request that
        moved in between is left for the next sync (IntakeError) rather than judged on a mixture."""
        info = self.api.repo_info(self.repo, repo_type="dataset", revision=f"refs/pr/{num}", files_metadata=True)
        details = self.api.get_discussion_details(self.repo, num, repo_type="dataset")
        again = self.api.repo_info(self.repo, repo_type="dataset", revision=f"refs/pr/{num}")
        if str(again.sha) != str(info.sha):
            raise IntakeError(f"pull request #{num} changed while it was read (head {str(info.sha)[:12]} -> "
                              f"{str(again.sha)[:12]}); left open for the next sync")
        if not re.fullmatch(r"[0-9a-f]{40,64}", str(info.sha)):  # it goes into comments and commit messages
            raise IntakeError(f"pull request #{num}: the Hub gave a head that is not a commit id; left open")
        return str(info.sha), {s.rfilename: s for s in info.siblings or []}, details

    @staticmethod
    def _same_file(a: Any, b: Any) -> bool:
        lfs_a, lfs_b = getattr(a, "lfs", None), getattr(b, "lfs", None)
        if lfs_a is not None or lfs_b is not None:
            return lfs_a is not None and lfs_b is not None and str(lfs_a.sha256) == str(lfs_b.sha256)
        return str(getattr(a, "blob_id", "")) == str(getattr(b, "blob_id", "x"))

    def _already_admitted(self, details: Any, head_files: dict[str, Any], main_files: dict[str, Any]) -> bool:
        """Every path the PR changes is on main with the PR head's bytes: an earlier sync committed
        it and stopped before closing the pull request."""
        try:
            paths = self._changes(details)
        except Refused:
            return False
        return all(p in head_files and p in main_files and self._same_file(head_files[p], main_files[p])
                   for p in paths)

    def _commit_admitted(self, num: int, head: str, files: dict[str, Path], main_sha: str) -> str:
        """Write exactly the scored files onto main in one commit whose parent is the main this
        sync read (`parent_commit`): a concurrent change of main fails the commit (the PR stays open
        for the next sync), and nothing pushed to the pull request after `head` rides along."""
        from huggingface_hub import CommitOperationAdd

        info = self.api.create_commit(
            self.repo, [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(local)) for p, local in sorted(files.items())],
            commit_message=f"Admit pull request #{num} (scored at {head[:12]})",
            commit_description=f"phybench leaderboard sync {__version__}: the files of pull request #{num} as "
                               f"re-scored at commit {head}.", repo_type="dataset", parent_commit=main_sha)
        return str(getattr(info, "oid", "") or "")

    def handle(self, num: int, main: tuple[str, dict[str, Any]]) -> Outcome:
        main_sha, main_files = main
        head, head_files, details = self._pinned(num)
        prior = self._prior(details, head)
        if prior == "refused":  # commented by an earlier sync that stopped before closing
            self.close(num)
            return Outcome(num, "refused", ["(refused by an earlier sync; closed now)"])
        if self._already_admitted(details, head_files, main_files):  # committed by a sync that stopped
            if prior is None:
                self.comment(num, head, "admitted", [f"Re-scored at commit {head[:12]} and committed onto the board "
                                                     "by an earlier sync; this pull request is closed."])
            self.close(num)
            return Outcome(num, "admitted", ["(committed by an earlier sync; closed now)"])
        with self.journal.download_folder() as tmp:  # removed on every way out; after a SIGKILL, at the next start
            try:
                path, digest, files = self.evaluate(num, head, details, head_files, main_files, tmp)
            except Refused as exc:
                self.journal.forget(num)
                self.comment(num, head, "refused", exc.problems)
                self.close(num)
                return Outcome(num, "refused", exc.problems)
            except BaseException:
                recover(self.journal, {}, self.log, only=num)  # a row this run half-wrote goes
                raise
            self.journal.mark(num, "scored", results_sha256=file_sha256(path),
                              files={p: hub_id(head_files[p]) for p in files})
            try:
                admitted_viewer(self, path, files, tmp)  # before the commit: a row on main has its viewer
                commit = self._commit_admitted(num, head, files, main_sha)
            except BaseException:
                # not on main, so not on the board: the row goes and the next sync scores the PR again
                # (unless the commit did land and only its answer was lost: `recover` reads main)
                try:
                    recover(self.journal, self.main_files()[1], self.log, only=num)
                except Exception:  # noqa: BLE001 - main unreadable: not known on main, so the row goes
                    recover(self.journal, {}, self.log, only=num)
                raise
            self.journal.mark(num, "committed", commit=commit)
        if prior is None:
            self.comment(num, head, "admitted", [
                f"Re-scored from submission `{digest}` at commit {head[:12]}: every number is this sync's own "
                f"(results file `{path.name}`, verification record beside it).",
                f"Exactly those files were committed onto the board's main ({commit[:12]}); this pull request is "
                "closed."])
            self.journal.mark(num, "commented")
        self.close(num)
        return Outcome(num, "admitted", [], path)

    def main_files(self) -> tuple[str, dict[str, Any]]:
        """(main's head sha, {path: sibling}): what the PR is checked against and the admitted
        files' parent commit."""
        info = self.api.repo_info(self.repo, repo_type="dataset", revision="main", files_metadata=True)
        return str(info.sha), {s.rfilename: s for s in info.siblings or []}

    def run(self) -> list[Outcome]:
        self.start()
        self.journal = self.journal or Journal(self.results_dir)
        for stale in self.journal.clean_stale():
            self.log(f"removed {stale.name}: the download folder of a sync that was killed")
        recover(self.journal, self.main_files()[1], self.log)
        prs = sorted(d.num for d in self.api.get_repo_discussions(
            self.repo, repo_type="dataset", discussion_type="pull_request", discussion_status="open"))
        for num in set(self.journal.numbers()) - set(prs):  # committed, then closed by someone: done
            self.journal.forget(num)
        outcomes = []
        for num in prs:
            try:
                outcome = self.handle(num, self.main_files())
            except Exception as exc:  # noqa: BLE001 - one pull request never stops the others
                outcome = Outcome(num, "error", [f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"])
            self.log(outcome.to_text())
            outcomes.append(outcome)
        return outcomes


def sync(repo: str, splits_dir: str | os.PathLike[str], results_dir: str | os.PathLike[str],
         site_dir: str | os.PathLike[str], *, metrics: Sequence[str] | None = None, verified_by: str | None = None,
         progress: bool = False, log: Callable[[str], None] = print, api: Any = None) -> SyncReport:
    """Handle every open submission pull request of `repo`, then rebuild the site if anything was admitted."""
    from . import LeaderboardError, build
    from .board_viewers import shipped_viewers

    splits, results, site = Path(splits_dir), Path(results_dir), Path(site_dir)
    if not splits.is_dir():
        raise IntakeError(f"--splits {splits} is not a folder")
    from .sync_lock import READ_ONLY, sync_lock

    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IntakeError(f"--results {results} cannot be made: {exc.strerror or exc}", READ_ONLY) from None

    with sync_lock(results):  # one sync per board: a second one raises SyncBusy before reading the Hub
        if not os.access(results, os.W_OK):  # the lock file was there already; the folder is read-only
            raise IntakeError(f"--results {results} is not writable (the sync writes its journal, records and "
                              "rows there); nothing read from the Hub", READ_ONLY)
        syncer = Syncer(repo, splits, results, metrics, verified_by, progress, log, api)
        syncer.viewers = viewers_folder(results, log)  # the folder the build below takes viewers from
        with terminate_as_exit():  # SIGTERM runs the `finally`s too (the download folders are removed)
            outcomes = syncer.run()
            # Rebuilt whenever the results are not what the site was last built from: also when a sync
            # was killed after admitting a row and before building (the journal says so; issue 36).
            state = results_state(results, site)
            if syncer.journal.site_current(site, state):
                return SyncReport(outcomes, None)
            try:
                # The public board: verified rows only (every admitted row has its record; a shipped file
                # without one stops the build here rather than appearing as self-reported).
                build(results, site, require_verified=True, prebuilt_viewers=shipped_viewers(results))
            except LeaderboardError as exc:
                return SyncReport(outcomes, None, str(exc).splitlines()[0])
            syncer.journal.site_built(site, state)
    return SyncReport(outcomes, site)

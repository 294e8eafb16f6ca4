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
(`phybench.leaderboard.verify.records`) under ``RESULTS/hub/``, a comment, and is merged; a
refused one gets a comment listing every problem and is closed (the author fixes it and
submits again).  Then the site is rebuilt.

Why a second sync does nothing: it lists *open* pull requests only, and every handled one
is merged or closed.  If a sync stops between its comment and the status change, the next
one finds its own comment (by the sync's own Hub user, carrying a marker with the commit
it judged) and finishes the job without commenting twice; a comment by anyone else
carrying the marker counts for nothing.  Every step is also written down in a journal under
``RESULTS/.sync/`` (`phybench.leaderboard.hub.journal`): a sync killed anywhere (even by SIGKILL)
is finished by the next one, which removes a row scored but never committed, closes what was
committed, and rebuilds the site whenever the results are not what it was built from.
Downloads go to temporary folders there, removed on every way out (stale ones at the next
start).  Each pull request is handled in its own ``try``:
a hostile one (an archive bomb, a path-traversal entry, a forged claim, files outside its
folder) is refused or, if it breaks something unexpected, reported and left open, and the
others go on.

Here: `sync` and its runner `Syncer` (the maintainer's side): what is admitted is decided by
`phybench.leaderboard.hub.admission`, every Hub call is made by `phybench.leaderboard.hub.client`;
`submit`, `prepare` and the repo layout are in `phybench.leaderboard.hub.submit` (re-exported here).

`huggingface_hub` reads HF_ENDPOINT and HF_TOKEN from the environment; nothing here
names the real Hub, so the tests run against tests/hubserver.py.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...io import file_sha256
from .admission import RESULTS_SUBDIR, Admission, Refused, already_admitted, changes, read_meta  # noqa: F401  RESULTS_SUBDIR: `pull` reads it here
from .client import MARKER, HubClient  # noqa: F401  MARKER: the sync's comment marker
from .submit import (  # noqa: F401  the author's side, re-exported: `phybench.leaderboard.hub.intake.prepare_upload`
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
from .record import Recorder
from .journal import Journal, hub_id, recover, results_state, terminate_as_exit
from .nearcopy import check_intake
from .viewers import admitted_viewer, viewers_folder

MAX_LISTED = 40  # problems a log line lists; the rest are counted (a comment lists fewer: hub_text.MAX_LINES)


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


@dataclass
class Syncer:
    """One sync run: it runs the steps in their order and writes each down in the journal.  What is
    admitted is the policy's (`admission.Admission`), every Hub call the client's
    (`client.HubClient`), the scoring and the signed record the recorder's (`record.Recorder`)."""

    repo: str
    splits_dir: Path
    results_dir: Path
    metrics: Sequence[str] | None = None
    verified_by: str | None = None
    progress: bool = False
    log: Callable[[str], None] = print
    api: Any = None
    client: HubClient = field(init=False)  # every Hub call (connected by `start`)
    policy: Admission = field(init=False)  # what is admitted (made by `start`)
    recorder: Recorder = field(init=False)  # scores an admitted row and signs its record (made by `start`)
    journal: Any = None  # `phybench.leaderboard.hub.journal.Journal` of results_dir, opened by `run`
    viewers: Path | None = None  # where the board's viewers are: each admitted row's is built there (`hub.viewers`)

    def __post_init__(self) -> None:
        self.client = HubClient(self.repo, self.api)

    @property
    def splits(self) -> dict[str, Path]:
        """split hash -> split folder (the policy's; `hub.viewers` reads it)."""
        return self.policy.splits

    def start(self) -> None:
        self.client.connect()
        self.api = self.client.api
        self.verified_by = self.verified_by or f"phybench leaderboard sync ({self.client.me})"
        self.policy = Admission.of(self.splits_dir, self.results_dir)
        # Every admitted row's record is signed: the board (--require-verified) takes no other.
        self.recorder = Recorder(self.repo, self.results_dir, self.metrics, self.progress, self.verified_by)
        self.recorder.load_signer()

    def evaluate(self, num: int, head: str, details: Any, head_files: dict[str, Any], main_files: dict[str, Any],
                 work: Path) -> tuple[Path, str, dict[str, Path]]:
        """Check, score and compare one pull request at its pinned head; returns (results file,
        submission hash, {repo path: the local copy that was scored}): exactly what is admitted.

        Raises Refused with every problem found."""
        slug, hash12, sizes = self.policy.folder(changes(details), head_files, main_files)
        prefix = f"{SUBMISSIONS_DIR}/{slug}/{hash12}/"
        local = {name: self.client.download(prefix + name, head, head_files[prefix + name], work) for name in sorted(sizes)}
        self.journal.mark(num, "downloaded", head=head)
        archive_name = next(n for n in sizes if n in ARCHIVES)
        archive = work / archive_name  # the name tells the reader the container type
        shutil.copyfile(local[archive_name], archive)
        checked = self.policy.check(archive, local, slug, hash12)
        near = check_intake(self, archive, checked.split_dir, read_meta(archive), checked.submission_hash, checked.out,
                            main_files, work)  # an exact twin is refused in check(); a near one here
        if near:
            raise Refused(near)
        self.recorder.score_and_record(num, head, archive, checked, self.journal)
        return checked.out, checked.submission_hash, {prefix + name: path for name, path in local.items()}

    def comment(self, num: int, head: str, outcome: str, lines: Sequence[str]) -> None:
        """Post the outcome, escaped and bounded (`text.comment_body`): what an author sent never
        reaches the Hub's renderer as Markdown or HTML from the board's account."""
        from .text import comment_body

        self.client.comment(num, comment_body(self.results_dir, num, head, outcome, lines))

    def close(self, num: int) -> None:
        """Close pull request `num`: the last step; the journal needs nothing more of it."""
        self.client.close(num)
        self.journal.forget(num)

    def handle(self, num: int, main: tuple[str, dict[str, Any]]) -> Outcome:
        main_sha, main_files = main
        head, head_files, details = self.client.pinned(num)
        prior = self.client.prior(details, head)
        if prior == "refused":  # commented by an earlier sync that stopped before closing
            self.close(num)
            return Outcome(num, "refused", ["(refused by an earlier sync; closed now)"])
        if already_admitted(details, head_files, main_files):  # committed by a sync that stopped
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
            commit = self._admit(num, head, path, files, main_sha, tmp)
        if prior is None:
            self.comment(num, head, "admitted", [
                f"Re-scored from submission `{digest}` at commit {head[:12]}: every number is this sync's own "
                f"(results file `{path.name}`, verification record beside it).",
                f"Exactly those files were committed onto the board's main ({commit[:12]}); this pull request is "
                "closed."])
            self.journal.mark(num, "commented")
        self.close(num)
        return Outcome(num, "admitted", [], path)

    def _admit(self, num: int, head: str, path: Path, files: dict[str, Path], main_sha: str, work: Path) -> str:
        """Build the admitted row's viewer and commit its files onto main; returns the commit."""
        try:
            admitted_viewer(self, path, files, work)  # before the commit: a row on main has its viewer
            commit = self.client.commit_admitted(num, head, files, main_sha)
        except BaseException:
            # not on main, so not on the board: the row goes and the next sync scores the PR again
            # (unless the commit did land and only its answer was lost: `recover` reads main)
            try:
                recover(self.journal, self.client.main_files()[1], self.log, only=num)
            except Exception:  # noqa: BLE001 - main unreadable: not known on main, so the row goes
                recover(self.journal, {}, self.log, only=num)
            raise
        self.journal.mark(num, "committed", commit=commit)
        return commit

    def run(self) -> list[Outcome]:
        self.start()
        self.journal = self.journal or Journal(self.results_dir)
        for stale in self.journal.clean_stale():
            self.log(f"removed {stale.name}: the download folder of a sync that was killed")
        recover(self.journal, self.client.main_files()[1], self.log)
        prs = self.client.open_prs()
        for num in set(self.journal.numbers()) - set(prs):  # committed, then closed by someone: done
            self.journal.forget(num)
        outcomes = []
        for num in prs:
            try:
                outcome = self.handle(num, self.client.main_files())
            except Exception as exc:  # noqa: BLE001 - one pull request never stops the others
                outcome = Outcome(num, "error", [f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"])
            self.log(outcome.to_text())
            outcomes.append(outcome)
        return outcomes


def sync(repo: str, splits_dir: str | os.PathLike[str], results_dir: str | os.PathLike[str],
         site_dir: str | os.PathLike[str], *, metrics: Sequence[str] | None = None, verified_by: str | None = None,
         progress: bool = False, log: Callable[[str], None] = print, api: Any = None) -> SyncReport:
    """Handle every open submission pull request of `repo`, then rebuild the site if anything was admitted."""
    from .. import LeaderboardError, build
    from ..viewer.board_viewers import shipped_viewers

    splits, results, site = Path(splits_dir), Path(results_dir), Path(site_dir)
    if not splits.is_dir():
        raise IntakeError(f"--splits {splits} is not a folder")
    from .lock import READ_ONLY, sync_lock

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

"""An admitted row: the submission scored as `phybench score` scores it, held to its claim, and
written with its signed verification record (`phybench.leaderboard.verify.records`).

Apart from the runner (`intake.Syncer`, which decides when) and the policy (`admission`, which
decides whether): this is the one place a sync writes a results file, and every record it writes
is signed with the maintainers' key, which `load_signer` checks against the board's keyring before
any pull request is read (the public board, ``--require-verified``, takes no other record).
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...io import file_sha256
from .admission import Checked, Refused
from .submit import IntakeError


@dataclass
class Recorder:
    """Scores accepted submissions of the board's Hub repository `repo` into `results_dir`."""

    repo: str
    results_dir: Path
    metrics: Sequence[str] | None = None
    progress: bool = False
    verified_by: str = ""
    signer: Any = None

    def load_signer(self) -> None:
        """The maintainers' signing key, checked against the board's keyring (IntakeError: none, or not the board's)."""
        from ..verify.signing import SigningError, check_signer, default_signer, load_keyring

        try:
            self.signer = default_signer()
            if self.signer is None:
                raise IntakeError("no signing key: set $PHYBENCH_SIGNING_KEY to the maintainers' private key "
                                  "(the workflow's secret); the board takes only signed verification records")
            check_signer(self.signer, load_keyring())
        except SigningError as exc:
            raise IntakeError(f"[{exc.code}] {exc}") from None

    def score_and_record(self, num: int, head: str, archive: Path, checked: Checked, journal: Any) -> None:
        """Score an accepted submission, hold it to its claim if it made one, and write the results
        file with its (signed) verification record, telling `journal` (a `journal.Journal`) before
        the first byte is written.  Raises Refused if scoring fails or the claim differs."""
        from ...scoring.run.results import results_bytes
        from ...scoring.run.score import ScoreError, score, write_results
        from ..verify.records import Verification, claim_differences, write_record

        try:
            scored = score(archive, checked.split_dir, self.metrics, progress=self.progress)
        except ScoreError as exc:
            raise Refused([f"[score] {str(exc).splitlines()[0]}"]) from None
        # Compared as written (results_bytes rounds floats), as the claim was written by `score --out`.
        results = json.loads(results_bytes(scored.results))
        not_recomputed: list[str] = []
        if checked.claim is not None:
            differ, not_recomputed = claim_differences(checked.claim, results)
            if differ:
                raise Refused([f"[claim-differs] {d}" for d in differ])
        out = checked.out
        journal.mark(num, "scoring", head=head, results=out.relative_to(self.results_dir).as_posix())
        write_results(out, scored)
        write_record(out, Verification(
            results_sha256=file_sha256(out), submission_hash=checked.submission_hash,
            split_hash=results["provenance"]["split_hash"], phybench_version=__version__,
            verified_by=str(self.verified_by)[:200], date=datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
            recomputed=tuple(results["metrics"]),
            extra={"pull_request": num, "repo": self.repo, "revision": head, "videos_hash": checked.videos_hash,
                   **({"claim_not_recomputed": not_recomputed} if not_recomputed else {})},
        ), self.signer)

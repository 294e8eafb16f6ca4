"""Intake through the Hub, the author's side: `phybench submit` checks a submission, its card and
its claim, and opens one pull request adding them under ``submissions/<model>/<hash12>/``.

Split from `phybench.leaderboard.hub.intake` (the maintainer's `sync`, which reads the same layout
and re-exports these names); see its docstring for the whole flow.
"""
from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...scoring.run.layout import parse as parse_results

SUBMISSIONS_DIR = "submissions"
CARD = "card.json"
CLAIM = "results.json"
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
ARCHIVES = tuple(f"submission{s}" for s in ARCHIVE_SUFFIXES)
MAX_CLAIM_BYTES = 64 << 20
_SLUG = re.compile(r"[^a-z0-9._-]+")


class IntakeError(Exception):
    """Something that stops `submit` or `sync` as a whole (exit 2): a bad argument, an invalid submission.
    `code`: the error's code where it has its own (``sync_busy``, ``sync_read_only``)."""

    code: str | None = None

    def __init__(self, message: str = "", code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


def model_slug(name: str) -> str:
    """A model name as one path segment of the Hub repo: lower case, [a-z0-9._-], at most 64."""
    slug = _SLUG.sub("-", name.lower()).strip("-._")[:64].strip("-._")
    return slug or "model"


# ------------------------------------------------------------------ submit
@dataclass
class Upload:
    """A checked submission, ready to upload."""

    model: str
    task: str
    split: str
    submission_hash: str
    files: dict[str, bytes | Path]  # path in the repo -> bytes or a local file
    videos: int = 0  # the videos it answers: the split's size

    @property
    def protocol(self) -> str:
        """'full', 'lite' or 'limit N' (a debugging subset no official board ranks), from its size."""
        from ...tasks import get_task
        from ...tasks.protocols import protocol_of

        try:
            full = get_task(self.task).split_size(self.split)
        except Exception:  # an unregistered task or split: no official protocol knows it
            return f"limit {self.videos}"
        return protocol_of(self.task, self.videos, full)

    @property
    def folder(self) -> str:
        return f"{SUBMISSIONS_DIR}/{model_slug(self.model)}/{self.submission_hash[:12]}"


def pack_zip(folder: Path) -> bytes:
    """submission.json and videos/ of a submission folder as one zip, the same bytes every time.

    Only the files the submission hash covers go in (a card or notes beside them stay out);
    fixed dates and modes, names sorted, so the same folder gives the same archive."""
    from ...submission.format import META, VIDEO_DIR

    names = []
    for root, dirs, files in os.walk(folder / VIDEO_DIR, followlinks=False):
        dirs.sort()
        for name in files:
            names.append(Path(root, name).relative_to(folder).as_posix())
    names = sorted([META, *names])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name in names:
            path = folder / name
            if path.is_symlink() or not stat.S_ISREG(path.lstat().st_mode):
                raise IntakeError(f"{path} is a link or not a plain file; copy the file in instead")
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def _archive_name(path: Path) -> str:
    name = path.name.lower()
    for suffix in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return f"submission{suffix}"
    raise IntakeError(f"{path}: a submission is a folder or a {', '.join(ARCHIVE_SUFFIXES)} archive")


def parse_claim(data: bytes) -> dict[str, Any]:
    """A claimed results file, parsed; raises ValueError with a one-line reason."""
    if len(data) > MAX_CLAIM_BYTES:
        raise ValueError(f"{CLAIM} is larger than {MAX_CLAIM_BYTES:,} bytes")
    try:
        doc = parse_results(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{CLAIM} is not a JSON results file ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        raise ValueError(f"{CLAIM} is not a phybench results file (no provenance); see docs/results.md")
    return doc


def prepare_upload(submission: str | os.PathLike[str], card: str | os.PathLike[str] | None = None,
            claim: str | os.PathLike[str] | None = None, split_dir: str | os.PathLike[str] | None = None
            ) -> Upload:
    """Check a submission, its card and its claim before anything is uploaded.

    With `split_dir` the submission is validated in full against it (`phybench validate`);
    without, its structure, submission.json and every file it hashes are still read.
    The card defaults to SUB/card.json, then card.json beside SUB.  Raises IntakeError
    listing every problem."""
    from ...submission.archive import SubmissionError
    from ...submission.card import CARD_NAME, card_candidates, load_card
    from ...submission.format import Submission, submission_hash
    from ...submission.validation import validate

    sub = Path(submission)
    if not sub.exists():
        raise IntakeError(f"{sub} does not exist")
    try:
        with Submission(sub) as opened:
            meta = opened._meta if opened._meta_ok else None
            problems = [p for p in opened.problems if p.severity == "error"]
            digest = submission_hash(opened) if not problems else None
            videos = len(opened.ids) if not problems else 0
    except SubmissionError as exc:
        raise IntakeError(f"{sub} is not a valid submission: {exc}") from None
    if split_dir is not None:
        report = validate(sub, split_dir)
        problems = report.errors
        digest = report.submission_hash
    lines = [f"[{p.code}] {p.message}" for p in problems]
    if not isinstance(meta, dict) and not lines:
        lines.append("[invalid_json] submission.json could not be read")
    model = meta.get("model", {}).get("name") if isinstance(meta, dict) and isinstance(meta.get("model"), dict) else None
    card_path = Path(card) if card else next(
        (p for p in card_candidates(sub, model if isinstance(model, str) else None) if p.is_file()), None)
    if card_path is None:
        lines.append(f"[card-json] no card: give --card CARD (or put {CARD_NAME} in or beside {sub}; "
                     "`phybench card init SUB` writes one)")
        card_doc = None
    else:
        card_doc, card_problems = load_card(card_path, meta)
        lines += [f"[{p.code}] {p.message}" for p in card_problems]
    files: dict[str, bytes | Path] = {}
    if claim is not None:
        try:
            claimed = parse_claim(Path(claim).read_bytes())
            if digest is not None and claimed["provenance"].get("submission_hash") != digest:
                lines.append(f"[claim] {claim} was scored from submission "
                             f"{str(claimed['provenance'].get('submission_hash'))[:12]}, not this one ({digest[:12]})")
            files[CLAIM] = Path(claim)
        except (OSError, ValueError) as exc:
            lines.append(f"[claim] {exc}")
    if lines:
        raise IntakeError(f"{sub}: not submitted (nothing uploaded), {len(lines)} problem(s): " + "; ".join(lines))
    assert isinstance(meta, dict) and digest is not None and card_doc is not None
    from ...submission.card import card_bytes

    files[CARD] = card_bytes(card_doc)
    if sub.is_dir():
        files["submission.zip"] = pack_zip(sub)
    else:
        files[_archive_name(sub)] = sub
    prepared = Upload(meta["model"]["name"], meta["task"], meta["split"], digest, {}, videos)
    prepared.files = {f"{prepared.folder}/{name}": data for name, data in sorted(files.items())}
    return prepared


def submit(prepared: Upload, repo: str, revision: str = "main", token: str | None = None) -> str:
    """Open the pull request; returns its address."""
    from huggingface_hub import CommitOperationAdd, HfApi

    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data if isinstance(data, bytes) else str(data))
                  for path, data in prepared.files.items()]
    info = HfApi(token=token).create_commit(
        repo, operations, repo_type="dataset", revision=revision, create_pr=True,
        commit_message=f"Submission: {prepared.model[:80]} ({prepared.task}/{prepared.split}, "
                       f"{prepared.submission_hash[:12]})",
        commit_description=(f"Submitted with `phybench submit` (phybench {__version__}).  Submission hash "
                            f"{prepared.submission_hash}; `phybench leaderboard sync` re-scores it and answers here."),
    )
    if not info.pr_url:
        raise IntakeError(f"{repo}: the Hub made a commit but opened no pull request ({info.commit_url})")
    return str(info.pr_url)


def _holds(files: Any, hash12: str) -> str | None:
    """The submission folder ``submissions/<model>/<hash12>`` among repo paths, if there."""
    for f in files:
        parts = str(f).split("/")
        if len(parts) > 3 and parts[0] == SUBMISSIONS_DIR and parts[2] == hash12:
            return "/".join(parts[:3])
    return None


def already_on_the_board(repo: str, submission_hash: str, revision: str = "main", token: str | None = None) -> str | None:
    """Why this submission (same submission hash) must not be sent again, or None: it is on the
    board's `revision` (admitted: named with its pull request where one titled with its hash is
    found), or an open pull request adds it (named).  A refused and closed one does not count: its
    author may fix the card and send the same videos again."""
    from huggingface_hub import HfApi

    api, hash12 = HfApi(token=token), submission_hash[:12]
    info = api.dataset_info(repo, revision=revision)
    on_main = _holds((s.rfilename for s in info.siblings or []), hash12)
    prs = list(api.get_repo_discussions(repo, repo_type="dataset", discussion_type="pull_request"))
    if on_main is not None:
        admitted = [d for d in prs if d.status != "open" and hash12 in str(d.title)]
        which = f" (pull request #{admitted[-1].num}: {admitted[-1].url})" if admitted else ""
        return f"submission {hash12} is already on the board: {on_main}/ on {revision}{which}"
    for d in sorted((d for d in prs if d.status == "open"), key=lambda d: d.num):
        head = api.dataset_info(repo, revision=f"refs/pr/{d.num}")
        if _holds((s.rfilename for s in head.siblings or []), hash12) is not None:
            return (f"submission {hash12} is already open as pull request #{d.num} ({d.url}); the sync answers "
                    "there")
    return None


LOG_IN = "log in (`hf auth login`) or set HF_TOKEN"


def require_token() -> None:
    """Refuse before any upload when huggingface_hub has no token (HF_TOKEN or `hf auth login`'s).

    Without one the Hub answers the pull request with a bare `401 Unauthorized` and its URL,
    which tells a first-time author nothing about what to do."""
    from huggingface_hub import get_token

    if not get_token():
        raise IntakeError(f"not logged in to the Hub: {LOG_IN}; a read token is enough to open a pull request. "
                          "Nothing was uploaded")


def hub_refusal(exc: BaseException, repo: str) -> str:
    """The Hub's refusal of the pull request as one line an author can act on."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if status == 401:
        return f"the Hub did not accept your token (401 Unauthorized): {LOG_IN} with a valid token. Nothing was uploaded"
    if status == 404:
        return f"the Hub has no dataset repo {repo} (or your token cannot see it): check --repo. Nothing was uploaded"
    return f"the Hub refused the pull request: {first}"

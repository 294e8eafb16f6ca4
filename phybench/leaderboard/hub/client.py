"""The sync's Hub client: every call `leaderboard sync` makes to the board's dataset repository.

Reads a pull request at one pinned head (`pinned`: its files and diff of that commit, or nothing),
downloads a file checked against the hash the Hub lists for it (`download`), commits exactly the
scored files onto the main the sync read (`commit_admitted`), comments and closes.  A comment of
the sync's own Hub user carries a marker with the head it judged and its outcome (`prior` finds
it: a sync that stopped between comment and close is finished without commenting twice); a
marker in anyone else's comment counts for nothing.

`huggingface_hub` reads HF_ENDPOINT and HF_TOKEN from the environment; nothing here names the
real Hub, so the tests run against tests/hubserver.py.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...io import file_sha256
from .submit import IntakeError

MARKER = "<!-- phybench-sync"
_MARK = re.compile(r"<!-- phybench-sync head=([0-9a-f]{7,64}) outcome=(admitted|refused) -->")


@dataclass
class HubClient:
    """The board's dataset repository `repo`, through `api` (an `HfApi`), as the Hub user `me`."""

    repo: str
    api: Any = None
    me: str = ""

    def connect(self) -> None:
        """Make the client (unless one was given) and learn whose comments are the sync's own."""
        from huggingface_hub import HfApi

        self.api = self.api or HfApi()
        self.me = self.api.whoami()["name"]

    def open_prs(self) -> list[int]:
        """The numbers of the repository's open pull requests, in order."""
        return sorted(d.num for d in self.api.get_repo_discussions(
            self.repo, repo_type="dataset", discussion_type="pull_request", discussion_status="open"))

    def main_files(self) -> tuple[str, dict[str, Any]]:
        """(main's head sha, {path: sibling}): what the PR is checked against and the admitted
        files' parent commit."""
        info = self.api.repo_info(self.repo, repo_type="dataset", revision="main", files_metadata=True)
        return str(info.sha), {s.rfilename: s for s in info.siblings or []}

    def pinned(self, num: int) -> tuple[str, dict[str, Any], Any]:
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

    def prior(self, details: Any, head: str) -> str | None:
        """The outcome this sync's own user already commented for `head`, if any."""
        for event in reversed(details.events):
            if event.type == "comment" and event.author == self.me:
                m = _MARK.search(getattr(event, "content", "") or "")
                if m and head.startswith(m.group(1)):
                    return m.group(2)
        return None

    def download(self, path: str, head: str, sibling: Any, work: Path) -> Path:
        """One file of the PR at its pinned commit, checked against the hash the Hub lists for it.

        A mismatch is the transfer's fault, not the author's: it raises IntakeError (the PR is
        left open for the next sync), not Refused."""
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

    def commit_admitted(self, num: int, head: str, files: dict[str, Path], main_sha: str) -> str:
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

    def comment(self, num: int, body: str) -> None:
        self.api.comment_discussion(self.repo, num, body, repo_type="dataset")

    def close(self, num: int) -> None:
        self.api.change_discussion_status(self.repo, num, "closed", repo_type="dataset")

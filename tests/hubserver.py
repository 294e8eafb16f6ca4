"""A small Hugging Face Hub stand-in for tests: real HTTP on 127.0.0.1, a random port.

It speaks the part of the Hub API that `huggingface_hub` (create_repo, create_commit,
snapshot_download, hf_hub_download, HfFileSystem) and `datasets.load_dataset(repo_id)`
call, learned from the installed `huggingface_hub` sources:

    POST /api/repos/create                            create a repo (409 if it exists)
    POST /api/validate-yaml                           README.md metadata check
    GET  /api/whoami-v2                               who owns the token
    GET  /api/{type}s/{repo}[/revision/{rev}]         repo info: sha, siblings, cardData
    POST /api/{type}s/{repo}/preupload/{rev}          upload mode per file: "regular" or "lfs"
    POST /{type}s/{repo}.git/info/lfs/objects/batch   LFS batch (basic transfer) -> PUT, verify
    POST /api/{type}s/{repo}/commit/{rev}             NDJSON commit: file (base64), lfsFile, deleted*
    GET  /api/{type}s/{repo}/tree/{rev}[/{path}]      tree listing (recursive=1)
    POST /api/{type}s/{repo}/paths-info/{rev}         info on given paths
    GET  /api/{type}s/{repo}/refs                     branches
    GET  /api/{type}s/{repo}/commits/{rev}            `list_repo_commits`: the history of rev, newest first
    HEAD/GET /{type}s/{repo}/resolve/{rev}/{path}     file bytes with ETag, X-Repo-Commit, Range

Pull requests and discussions (the Hub's community tab), as `create_commit(create_pr=True)`,
`get_repo_discussions`, `get_discussion_details`, `comment_discussion`,
`change_discussion_status`, `merge_pull_request` and `create_discussion` call them:

    POST /api/{type}s/{repo}/commit/{rev}?create_pr=1 opens pull request N into branch rev, ref refs/pr/N
                                                      (any signed-in user; "pullRequestUrl" answered)
    POST /api/{type}s/{repo}/commit/refs%2Fpr%2FN     one more commit on an open PR (its author or a writer)
    GET  /api/{type}s/{repo}/discussions              {"discussions", "count", "start"}; type, status,
                                                      author and p (page of 50) filters
    POST /api/{type}s/{repo}/discussions              open a discussion or an empty pull request
    GET  /api/{type}s/{repo}/discussions/{n}          details: events, changes.base, mergeCommitId, diff
    POST /api/{type}s/{repo}/discussions/{n}/comment  {"comment"} -> {"newMessage": event}
    POST|PATCH .../discussions/{n}/status             {"status", "comment"?} -> {"newStatus": event}
                                                      (a writer, or the author closing their own)
    POST /api/{type}s/{repo}/discussions/{n}/merge    a writer; the PR's changes applied to its branch
                                                      (409 on a conflict), status "merged"

`refs/pr/N` resolves wherever a revision is read (info, tree, paths-info, resolve), and
`GET .../refs?include_prs=1` lists the pull requests' refs.

A commit is applied all at once or not at all, as on the Hub.  Faults for tests:
`drop_commit` closes the connection half-way through reading a commit body (nothing is
committed); `lose_commit_answer` applies the next commit and then hangs up without answering
(the client cannot tell that it landed); `corrupt` flips one byte of every download whose path matches a pattern.

Model repos (no `/api/models/...` prefix in the URLs) are handled the same way as datasets.
"""
from __future__ import annotations

import base64
import fnmatch
import hashlib
import html
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml

LFS_SUFFIXES = (".parquet", ".arrow", ".png", ".npz", ".safetensors", ".hdf5")
LFS_MIN_SIZE = 10 * 1024  # bytes: regular files above this go through LFS, like the Hub's 10 MB rule, scaled down
TOKENS = {"hf_test_write": "tester", "hf_test_read": "reader"}
WRITE_TOKENS = {"hf_test_write"}


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def oid(self) -> str:
        """Git blob id: of the content, or of the LFS pointer for LFS files (as on the Hub)."""
        if not self.lfs:
            return git_blob_oid(self.data)
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {len(self.data)}\n"
        return git_blob_oid(pointer.encode())

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else git_blob_oid(self.data)


@dataclass
class Commit:
    sha: str
    parent: str | None
    title: str
    date: str
    files: dict[str, Blob]


@dataclass
class Discussion:
    """A discussion or pull request; a PR's head is the commit its ref refs/pr/{num} points at."""

    num: int
    title: str
    author: str
    is_pull_request: bool
    created_at: str
    status: str = "open"  # open, closed, merged (draft is not modelled)
    target: str = "main"  # the branch a PR merges into
    base: str | None = None  # a PR's base commit: the target's head it was opened from
    head: str | None = None  # a PR's newest commit
    merge_commit: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"refs/pr/{self.num}"


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    owner: str
    commits: dict[str, Commit] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    discussions: dict[int, Discussion] = field(default_factory=dict)

    def pull_request(self, rev: str) -> Discussion | None:
        """The PR whose ref `rev` is (refs/pr/N), or None."""
        if rev.startswith("refs/pr/") and rev[8:].isdigit():
            d = self.discussions.get(int(rev[8:]))
            if d is not None and d.is_pull_request and d.head is not None:
                return d
        return None

    def resolve(self, rev: str) -> Commit | None:
        if rev in self.refs:
            return self.commits[self.refs[rev]]
        pr = self.pull_request(rev)
        if pr is not None:
            return self.commits[pr.head]  # type: ignore[index]
        if rev in self.commits:
            return self.commits[rev]
        matches = [c for sha, c in self.commits.items() if len(rev) >= 7 and sha.startswith(rev)]
        return matches[0] if len(matches) == 1 else None


class HubState:
    """Everything the server holds, plus fault switches tests can flip."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # handlers answer while holding it
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status)
        self.drop_commit = False
        self.lose_commit_answer = False  # one-shot: the next commit lands, its answer is lost
        self.corrupt: list[str] = []  # fnmatch patterns of repo paths whose downloads get a flipped byte
        self.counter = 0
        # called as on_download(repo_id, path) before a file download is served (a test's hook:
        # e.g. `push` a second commit to a pull request while the sync is scoring the first)
        self.on_download: Any = None

    def push(self, repo_type: str, repo_id: str, num: int, changes: dict[str, bytes | None], title: str = "push") -> str:
        """A commit on pull request `num` made directly (as its author pushing): `changes` maps a
        path to its new bytes, or None to delete it.  Returns the new head."""
        with self.lock:
            repo = self.repos[(repo_type, repo_id)]
            d = repo.discussions[num]
            files = dict(repo.commits[d.head].files)  # type: ignore[index]
            for path, data in changes.items():
                if data is None:
                    files.pop(path, None)
                else:
                    files[path] = Blob(data, path.endswith(LFS_SUFFIXES) or len(data) > LFS_MIN_SIZE)
            self.counter += 1
            sha = hashlib.sha1(f"{repo_id} {title} {self.counter}".encode()).hexdigest()
            repo.commits[sha] = Commit(sha, d.head, title, _now(), files)
            d.head = sha
            self.counter += 1
            d.events.append({"id": hashlib.sha1(f"event:{self.counter}".encode()).hexdigest()[:24], "type": "commit",
                             "createdAt": _now(), "author": {"name": d.author, "type": "user"},
                             "data": {"subject": title, "oid": sha}})
            return sha


class _Drop(Exception):
    """Close the connection without answering (a fault)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect
    server: "HubServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep the test output quiet
        pass

    # ------------------------------------------------------------ plumbing
    @property
    def state(self) -> HubState:
        return self.server.state

    @property
    def base(self) -> str:
        return f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        with self.state.lock:
            self.state.requests.append((self.command, self.path, status))

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._json(status, {"error": message}, headers)

    def _user(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return TOKENS.get(auth[7:]) if auth.startswith("Bearer ") else None

    def _can_write(self) -> bool:
        auth = self.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in WRITE_TOKENS

    def _repo(self, repo_type: str, repo_id: str, write: bool = False) -> Repo | None:
        """The repo, or None after answering with the Hub's error."""
        repo = self.state.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and self._user() is None):
            self._error(401 if self._user() is None else 404, f"Repository Not Found for url: {self.path}.",
                        "RepoNotFound")
            return None
        if write and not self._can_write():
            self._error(401 if self._user() is None else 403,
                        "Invalid credentials in Authorization header" if self._user() is None
                        else "You don't have the rights to write to this repo")
            return None
        return repo

    def _commit(self, repo: Repo, rev: str) -> Commit | None:
        commit = repo.resolve(urllib.parse.unquote(rev))
        if commit is None:
            self._error(404, f"Invalid rev id: {urllib.parse.unquote(rev)}", "RevisionNotFound")
        return commit

    # ------------------------------------------------------------ routing
    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_PUT(self) -> None:
        self._route("PUT")

    def do_PATCH(self) -> None:
        self._route("PATCH")

    def _route(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        try:
            if parts[:2] == ["api", "repos"] and parts[2:] == ["create"] and method == "POST":
                return self.create_repo()
            if parts[:2] == ["api", "validate-yaml"] and method == "POST":
                return self.validate_yaml()
            if parts[:2] == ["api", "whoami-v2"]:
                user = self._user()
                if user is None:
                    return self._error(401, "Invalid credentials in Authorization header")
                return self._json(200, {"type": "user", "name": user, "auth": {"accessToken": {
                    "role": "write" if self._can_write() else "read"}}})
            if parts[0] == "lfs-upload" and method == "PUT":
                return self.lfs_put(parts[1])
            if parts[0] == "lfs-verify" and method == "POST":
                body = json.loads(self._body())
                ok = body.get("oid") in self.state.lfs
                return self._json(200 if ok else 404, {"ok": ok})
            if parts[0] == "api" and len(parts) >= 4 and parts[1] in ("datasets", "models", "spaces"):
                repo_type = parts[1][:-1]
                repo_id, rest = "/".join(parts[2:4]), parts[4:]
                return self.api(method, repo_type, repo_id, rest, query)
            if len(parts) >= 3 and parts[0] in ("datasets", "spaces") and parts[2].endswith(".git"):
                return self.lfs_batch(parts[0][:-1], f"{parts[1]}/{parts[2][:-4]}", parts[3:])
            if len(parts) >= 5 and parts[0] in ("datasets", "spaces") and parts[3] == "resolve":
                return self.resolve(method, parts[0][:-1], "/".join(parts[1:3]), parts[4], "/".join(parts[5:]))
            if len(parts) >= 4 and parts[2] == "resolve":
                return self.resolve(method, "model", "/".join(parts[0:2]), parts[3], "/".join(parts[4:]))
            self._error(404, f"no route for {method} {url.path}")
        except _Drop:
            self.close_connection = True
            with self.state.lock:
                self.state.requests.append((method, self.path, -1))
            try:
                import socket

                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def commit_log(self, repo_type: str, repo_id: str, rev: str) -> None:
        """`list_repo_commits`: the commits reachable from `rev`, newest first (one page: no Link header)."""
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        out = []
        while commit is not None:
            out.append({"id": commit.sha, "authors": [{"user": repo.owner}], "date": commit.date,
                        "title": commit.title, "message": ""})
            commit = repo.commits.get(commit.parent) if commit.parent else None
        self._json(200, out)

    def api(self, method: str, repo_type: str, repo_id: str, rest: list[str], query: dict) -> None:
        if not rest or rest[0] == "revision":
            if method not in ("GET", "HEAD"):
                return self._error(405, "method not allowed")
            repo = self._repo(repo_type, repo_id)
            if repo is None:
                return
            commit = self._commit(repo, rest[1] if len(rest) > 1 else "main")
            if commit is not None:
                self._json(200, self._info(repo, commit))
            return
        action = rest[0]
        if action == "preupload" and method == "POST":
            return self.preupload(repo_type, repo_id, "/".join(rest[1:]), query)
        if action == "commit" and method == "POST":
            return self.commit(repo_type, repo_id, "/".join(rest[1:]), query)
        if action == "discussions":
            return self.discussions(method, repo_type, repo_id, rest[1:], query)
        if action == "tree" and method == "GET":
            return self.tree(repo_type, repo_id, rest[1], "/".join(rest[2:]), query)
        if action == "paths-info" and method == "POST":
            return self.paths_info(repo_type, repo_id, rest[1])
        if action == "commits" and method == "GET":
            return self.commit_log(repo_type, repo_id, "/".join(rest[1:]) or "main")
        if action == "refs" and method == "GET":
            repo = self._repo(repo_type, repo_id)
            if repo is not None:
                out: dict[str, Any] = {"branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": s}
                                                    for n, s in repo.refs.items()], "tags": [], "converts": []}
                if query.get("include_prs", ["0"])[0] in ("1", "true", "True"):
                    out["pullRequests"] = [{"name": d.ref, "ref": d.ref, "targetCommit": d.head}
                                           for d in repo.discussions.values() if d.is_pull_request and d.head]
                self._json(200, out)
            return
        self._error(404, f"no route for {method} /api/{repo_type}s/{repo_id}/{'/'.join(rest)}")

    # ------------------------------------------------------------ repos
    def create_repo(self) -> None:
        body = json.loads(self._body())
        if not self._can_write():
            return self._error(401, "Invalid credentials in Authorization header")
        repo_type = body.get("type") or "model"
        repo_id = f"{body.get('organization') or self._user()}/{body['name']}"
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.base}/{prefix}{repo_id}"
        with self.state.lock:
            if (repo_type, repo_id) in self.state.repos:
                return self._json(409, {"error": "You already created this repo", "url": url},
                                  {"X-Error-Message": "You already created this repo"})
            private = body.get("visibility") == "private" or bool(body.get("private"))
            repo = Repo(repo_type, repo_id, private, self._user() or "")
            sha = self._new_sha(repo_id, "initial")
            attributes = "".join(f"*{s} filter=lfs diff=lfs merge=lfs -text\n" for s in LFS_SUFFIXES)
            repo.commits[sha] = Commit(sha, None, "initial commit", _now(),
                                       {".gitattributes": Blob(attributes.encode(), False)})
            repo.refs["main"] = sha
            self.state.repos[(repo_type, repo_id)] = repo
        self._json(200, {"url": url, "name": repo_id, "id": repo_id})

    def validate_yaml(self) -> None:
        body = json.loads(self._body())
        content = body.get("content", "")
        errors = []
        if content.startswith("---"):
            try:
                header = yaml.safe_load(content.split("---", 2)[1])
                if not isinstance(header, dict):
                    errors.append({"message": "metadata must be a YAML mapping"})
            except yaml.YAMLError as exc:
                errors.append({"message": f"invalid YAML: {exc}"})
        self._json(400 if errors else 200, {"errors": errors, "warnings": []})

    def _new_sha(self, repo_id: str, salt: str) -> str:
        self.state.counter += 1
        return hashlib.sha1(f"{repo_id}:{salt}:{self.state.counter}:{time.time_ns()}".encode()).hexdigest()

    def _info(self, repo: Repo, commit: Commit) -> dict[str, Any]:
        card: dict[str, Any] | None = None
        readme = commit.files.get("README.md")
        if readme is not None:
            text = readme.data.decode("utf-8", "replace")
            if text.startswith("---"):
                try:
                    card = yaml.safe_load(text.split("---", 2)[1])
                except yaml.YAMLError:
                    card = None
        siblings = []
        for path, blob in sorted(commit.files.items()):
            s: dict[str, Any] = {"rfilename": path, "size": len(blob.data), "blobId": blob.oid}
            if blob.lfs:
                s["lfs"] = {"sha256": blob.sha256, "size": len(blob.data), "pointerSize": 134}
            siblings.append(s)
        return {
            "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit.sha,
            "lastModified": commit.date,
            "createdAt": commit.date,
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": list((card or {}).get("tags") or []),
            "cardData": card,
            "siblings": siblings,
            "usedStorage": sum(len(b.data) for b in commit.files.values()),
        }

    # ------------------------------------------------------------ upload
    def _may_commit(self, repo: Repo, rev: str, create_pr: bool) -> bool:
        """Writers commit anywhere; any signed-in user opens a PR; a PR's author pushes to it.

        Answers with the Hub's error and returns False otherwise."""
        user = self._user()
        if self._can_write():
            return True
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
            return False
        pr = repo.pull_request(rev)
        if create_pr or (pr is not None and pr.author == user):
            return True
        self._error(403, "You don't have the rights to write to this repo")
        return False

    def preupload(self, repo_type: str, repo_id: str, rev: str, query: dict | None = None) -> None:
        body = json.loads(self._body())
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        create_pr = (query or {}).get("create_pr", ["0"])[0] in ("1", "true", "True")
        if not self._may_commit(repo, urllib.parse.unquote(rev), create_pr):
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        files = []
        for f in body.get("files", []):
            lfs = f["path"].endswith(LFS_SUFFIXES) or int(f.get("size", 0)) > LFS_MIN_SIZE
            existing = commit.files.get(f["path"])
            oid = None
            if existing is not None:
                oid = existing.sha256 if existing.lfs else git_blob_oid(existing.data)
            files.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})
        self._json(200, {"files": files, "commitOid": commit.sha})

    def lfs_batch(self, repo_type: str, repo_id: str, rest: list[str]) -> None:
        body = json.loads(self._body())
        if rest != ["info", "lfs", "objects", "batch"]:
            return self._error(404, "unknown LFS route")
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        if body.get("operation") == "upload":
            # No ref: the objects of a commit that opens a PR (any signed-in user may upload them).
            ref = (body.get("ref") or {}).get("name")
            if not self._may_commit(repo, ref or "", create_pr=ref is None):
                return
        objects = []
        for obj in body.get("objects", []):
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.state.lfs:
                entry["actions"] = {
                    "upload": {"href": f"{self.base}/lfs-upload/{obj['oid']}", "header": {}},
                    "verify": {"href": f"{self.base}/lfs-verify", "header": {}},
                }
            objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def lfs_put(self, oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, f"sha256 of the uploaded object is not {oid}")
        with self.state.lock:
            self.state.lfs[oid] = data
        self._send(200, b"")

    def commit(self, repo_type: str, repo_id: str, rev: str, query: dict | None = None) -> None:
        if self.state.drop_commit:
            # Read part of the body, then hang up: the client sees the connection drop mid-upload.
            self.rfile.read(min(int(self.headers.get("Content-Length") or 0) // 2, 4096))
            raise _Drop()
        raw = self._body()
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        branch = urllib.parse.unquote(rev)
        create_pr = (query or {}).get("create_pr", ["0"])[0] in ("1", "true", "True")
        if not self._may_commit(repo, branch, create_pr):
            return
        lines = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            return self._error(400, "the first NDJSON line must be the commit header")
        header = lines[0]["value"]
        with self.state.lock:
            pr = repo.pull_request(branch)
            if branch not in repo.refs and pr is None:
                return self._error(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            if pr is not None and pr.status != "open":
                return self._error(403, f"Pull request #{pr.num} is {pr.status}; reopen it to push to it")
            if create_pr and pr is not None:
                return self._error(400, "create_pr cannot be used with a pull request revision")
            head = repo.commits[pr.head if pr is not None else repo.refs[branch]]  # type: ignore[index]
            parent = header.get("parentCommit")
            if parent and create_pr:  # a PR opened from an older commit of the branch
                head = repo.resolve(parent)  # type: ignore[assignment]
                if head is None:
                    return self._error(404, f"Invalid rev id: {parent}", "RevisionNotFound")
            elif parent and not head.sha.startswith(parent):
                return self._error(412, f"A commit has happened since. Parent {parent} is not the head {head.sha}")
            files = dict(head.files)
            for line in lines[1:]:
                key, value = line["key"], line["value"]
                path = value["path"]
                if key == "file":
                    files[path] = Blob(base64.b64decode(value["content"]), path.endswith(LFS_SUFFIXES))
                elif key == "lfsFile":
                    data = self.state.lfs.get(value["oid"])
                    if data is None:
                        return self._error(422, f"LFS object {value['oid']} of {path} was never uploaded")
                    files[path] = Blob(data, True)
                elif key == "deletedFile":
                    if path not in files:
                        return self._error(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                    del files[path]
                elif key == "deletedFolder":
                    prefix = path.rstrip("/") + "/"
                    doomed = [p for p in files if p.startswith(prefix)]
                    if not doomed:
                        return self._error(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                    for p in doomed:
                        del files[p]
                else:
                    return self._error(400, f"unknown commit operation {key!r}")
            summary = header.get("summary", "")
            sha = self._new_sha(repo_id, summary)
            repo.commits[sha] = Commit(sha, head.sha, summary, _now(), files)
            pr_url = None
            if create_pr:
                pr = self._open(repo, summary or "Upload files", header.get("description", ""), True)
                pr.base, pr.target = head.sha, branch
                pr_url = f"{self.base}/{self._prefix(repo_type)}{repo_id}/discussions/{pr.num}"
            if pr is not None:
                pr.head = sha
                pr.events.append(self._event("commit", {"subject": summary, "oid": sha}))
            else:
                repo.refs[branch] = sha
            if self.state.lose_commit_answer:
                self.state.lose_commit_answer = False
                raise _Drop()
        self._json(200, {"success": True, "commitOid": sha,
                         "commitUrl": f"{self.base}/{self._prefix(repo_type)}{repo_id}/commit/{sha}",
                         "pullRequestUrl": pr_url})

    # ------------------------------------------------------------ discussions and pull requests
    @staticmethod
    def _prefix(repo_type: str) -> str:
        return "" if repo_type == "model" else f"{repo_type}s/"

    def _event(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        self.state.counter += 1
        return {"id": hashlib.sha1(f"event:{self.state.counter}".encode()).hexdigest()[:24], "type": kind,
                "createdAt": _now(), "author": {"name": self._user() or "deleted", "type": "user"}, "data": data}

    def _comment_event(self, text: str) -> dict[str, Any]:
        now = _now()
        latest = {"raw": text, "html": f"<p>{html.escape(text)}</p>", "updatedAt": now,
                  "author": {"name": self._user() or "deleted"}}
        return self._event("comment", {"edited": False, "hidden": False, "latest": latest, "numEdits": 0,
                                       "editors": [self._user()], "editorAvatarUrls": [], "reactions": [],
                                       "identifiedLanguage": {"language": "en", "probability": 1.0},
                                       "history": [latest]})

    def _open(self, repo: Repo, title: str, description: str, pull_request: bool) -> Discussion:
        """A new discussion or PR, numbered after every earlier one (both share the numbers)."""
        num = max(repo.discussions, default=0) + 1
        d = Discussion(num, title, self._user() or "deleted", pull_request, _now())
        d.events.append(self._comment_event(description or ""))
        repo.discussions[num] = d
        return d

    def _summary(self, repo: Repo, d: Discussion) -> dict[str, Any]:
        return {"num": d.num, "title": d.title, "status": d.status, "createdAt": d.created_at,
                "author": {"name": d.author, "type": "user"}, "isPullRequest": d.is_pull_request,
                "repo": {"name": repo.repo_id, "type": repo.repo_type},
                "numComments": sum(e["type"] == "comment" for e in d.events), "pinned": False, "topReactions": []}

    def _details(self, repo: Repo, d: Discussion) -> dict[str, Any]:
        out = {**self._summary(repo, d), "events": d.events}
        if d.is_pull_request:
            out["changes"] = {"base": f"refs/heads/{d.target}", **({"mergeCommitId": d.merge_commit} if d.merge_commit else {})}
            out["filesWithConflicts"] = self._conflicts(repo, d) if d.status == "open" else []
            out["diff"] = "".join(f"diff --git a/{p} b/{p}\n" for p in sorted(self._changes(repo, d)))
        return out

    @staticmethod
    def _changes(repo: Repo, d: Discussion) -> dict[str, Blob | None]:
        """What a PR changes against its base: path -> new blob, or None when deleted."""
        if d.head is None or d.base is None:
            return {}
        base, head = repo.commits[d.base].files, repo.commits[d.head].files
        out: dict[str, Blob | None] = {p: b for p, b in head.items() if base.get(p) != b}
        out.update({p: None for p in base if p not in head})
        return out

    def _conflicts(self, repo: Repo, d: Discussion) -> list[str]:
        """Paths main changed since the PR's base in another way than the PR did."""
        if d.base is None:
            return []
        base, main = repo.commits[d.base].files, repo.commits[repo.refs[d.target]].files
        return sorted(p for p, new in self._changes(repo, d).items()
                      if main.get(p) != base.get(p) and main.get(p) != new)

    def discussions(self, method: str, repo_type: str, repo_id: str, rest: list[str], query: dict) -> None:
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        if not rest and method == "GET":
            kind = query.get("type", ["all"])[0]
            status = query.get("status", ["all"])[0]
            author = query.get("author", [None])[0]
            page = int(query.get("p", ["0"])[0])
            with self.state.lock:
                found = [d for d in sorted(repo.discussions.values(), key=lambda d: -d.num)
                         if (kind == "all" or (kind == "pull_request") == d.is_pull_request)
                         and (status == "all" or d.status == status) and (author is None or d.author == author)]
                start = page * 50
                self._json(200, {"discussions": [self._summary(repo, d) for d in found[start:start + 50]],
                                 "count": len(found), "start": start,
                                 "numClosedDiscussions": sum(d.status != "open" for d in repo.discussions.values())})
            return
        if not rest and method == "POST":
            body = json.loads(self._body() or b"{}")
            if self._user() is None:
                return self._error(401, "Invalid credentials in Authorization header")
            with self.state.lock:
                d = self._open(repo, str(body.get("title", "")).strip() or "untitled",
                               str(body.get("description") or ""), bool(body.get("pullRequest")))
                if d.is_pull_request:  # an empty PR: its ref points at main's head until commits come
                    d.base = d.head = repo.refs["main"]
            return self._json(200, {"num": d.num, "url": f"{self.base}/{self._prefix(repo_type)}{repo_id}/"
                                                          f"discussions/{d.num}"})
        if not rest[0].isdigit():
            return self._error(404, f"no route for {method} discussions/{'/'.join(rest)}")
        with self.state.lock:
            d = repo.discussions.get(int(rest[0]))
            if d is None:
                return self._error(404, f"Discussion #{rest[0]} not found", "DiscussionNotFound")
            if len(rest) == 1 and method == "GET":
                return self._json(200, self._details(repo, d))
            action = rest[1] if len(rest) == 2 else ""
            if method not in ("POST", "PATCH") or action not in ("comment", "status", "merge"):
                return self._error(404, f"no route for {method} discussions/{'/'.join(rest)}")
            raw = self._body()
            body = json.loads(raw) if raw.strip() else {}
            user = self._user()
            if user is None:
                return self._error(401, "Invalid credentials in Authorization header")
            if action == "comment":
                text = str((body or {}).get("comment", ""))
                if not text.strip():
                    return self._error(400, "comment must not be empty")
                event = self._comment_event(text)
                d.events.append(event)
                return self._json(200, {"newMessage": event})
            if action == "status":
                new = (body or {}).get("status")
                if new not in ("open", "closed"):
                    return self._error(400, f"status must be open or closed, not {new!r}")
                if d.status == "merged":
                    return self._error(400, "A merged pull request cannot change status")
                if not (self._can_write() or (d.author == user and new == "closed")):
                    return self._error(403, "You don't have the rights to change this discussion's status")
                if (body or {}).get("comment"):
                    d.events.append(self._comment_event(str(body["comment"])))
                d.status = new
                event = self._event("status-change", {"status": new})
                d.events.append(event)
                return self._json(200, {"newStatus": event})
            # merge
            if not d.is_pull_request:
                return self._error(400, "Only pull requests can be merged")
            if not self._can_write():
                return self._error(403, "You don't have the rights to merge this pull request")
            if d.status != "open":
                return self._error(400, f"Pull request #{d.num} is {d.status}")
            conflicts = self._conflicts(repo, d)
            if conflicts:
                return self._error(409, f"Merge conflict in {', '.join(conflicts[:5])}")
            files = dict(repo.commits[repo.refs[d.target]].files)
            for path, blob in self._changes(repo, d).items():
                if blob is None:
                    files.pop(path, None)
                else:
                    files[path] = blob
            sha = self._new_sha(repo_id, f"merge {d.num}")
            repo.commits[sha] = Commit(sha, repo.refs[d.target], f"Merge pull request #{d.num}", _now(), files)
            repo.refs[d.target] = sha
            if (body or {}).get("comment"):
                d.events.append(self._comment_event(str(body["comment"])))
            d.status, d.merge_commit = "merged", sha
            d.events.append(self._event("status-change", {"status": "merged"}))
            return self._json(200, {"success": True})

    # ------------------------------------------------------------ listing
    @staticmethod
    def _entries(commit: Commit, paths: list[str] | None = None, under: str = "", recursive: bool = False,
                 expand: bool = False) -> list[dict[str, Any]]:
        folders: set[str] = set()
        for p in commit.files:
            parts = p.split("/")
            for i in range(1, len(parts)):
                folders.add("/".join(parts[:i]))

        def file_entry(p: str) -> dict[str, Any]:
            blob = commit.files[p]
            e: dict[str, Any] = {"type": "file", "oid": blob.oid, "size": len(blob.data), "path": p}
            if blob.lfs:
                e["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
            if expand:
                e["lastCommit"] = {"id": commit.sha, "title": commit.title, "date": commit.date}
            return e

        def folder_entry(p: str) -> dict[str, Any]:
            oid = hashlib.sha1(("tree:" + p + ":" + commit.sha).encode()).hexdigest()
            e: dict[str, Any] = {"type": "directory", "oid": oid, "size": 0, "path": p}
            if expand:
                e["lastCommit"] = {"id": commit.sha, "title": commit.title, "date": commit.date}
            return e

        if paths is not None:
            out = []
            for p in paths:
                p = p.strip("/")
                if p in commit.files:
                    out.append(file_entry(p))
                elif p in folders:
                    out.append(folder_entry(p))
            return out
        prefix = under.strip("/") + "/" if under.strip("/") else ""
        out = []
        for p in sorted(folders):
            if p.startswith(prefix) and (recursive or "/" not in p[len(prefix):]):
                out.append(folder_entry(p))
        for p in sorted(commit.files):
            if p.startswith(prefix) and (recursive or "/" not in p[len(prefix):]):
                out.append(file_entry(p))
        return out

    def tree(self, repo_type: str, repo_id: str, rev: str, path: str, query: dict) -> None:
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        truthy = ("1", "true", "True")
        if path and path not in commit.files and not any(p.startswith(path.rstrip("/") + "/") for p in commit.files):
            return self._error(404, f"{path} does not exist at {rev}", "EntryNotFound")
        self._json(200, self._entries(commit, under=path, recursive=query.get("recursive", ["0"])[0] in truthy,
                                      expand=query.get("expand", ["0"])[0] in truthy))

    def paths_info(self, repo_type: str, repo_id: str, rev: str) -> None:
        body = self._body().decode()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            form = json.loads(body)
            paths, expand = form.get("paths", []), bool(form.get("expand"))
        else:
            form = urllib.parse.parse_qs(body)
            paths, expand = form.get("paths", []), form.get("expand", ["False"])[0] in ("1", "true", "True")
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is not None:
            self._json(200, self._entries(commit, paths=paths, expand=expand))

    # ------------------------------------------------------------ download
    def resolve(self, method: str, repo_type: str, repo_id: str, rev: str, path: str) -> None:
        if method not in ("GET", "HEAD"):
            return self._error(405, "method not allowed")
        if self.state.on_download is not None and method == "GET":
            self.state.on_download(repo_id, path)
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        blob = commit.files.get(path)
        if blob is None:
            return self._error(404, f"Entry not found: {path}", "EntryNotFound")
        data = blob.data
        if any(fnmatch.fnmatch(path, pat) for pat in self.state.corrupt) and data:
            flipped = bytearray(data)
            flipped[len(flipped) // 2] ^= 0x01  # a single bit flipped in transit
            data = bytes(flipped)
        headers = {"X-Repo-Commit": commit.sha, "ETag": f'"{blob.etag}"', "Accept-Ranges": "bytes"}
        if blob.lfs:
            headers["X-Linked-Etag"] = f'"{blob.sha256}"'
            headers["X-Linked-Size"] = str(len(blob.data))
        status = 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[6:].split(",")[0].partition("-")
            if start_s == "":
                start, end = max(0, len(data) - int(end_s)), len(data) - 1
            else:
                start, end = int(start_s), int(end_s) if end_s else len(data) - 1
            end = min(end, len(data) - 1)
            if start >= len(data) and len(data) > 0:
                headers["Content-Range"] = f"bytes */{len(data)}"
                return self._send(416, b"", headers, "application/octet-stream")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start:end + 1], 206
        self._send(status, data, headers, "application/octet-stream")


class HubServer(ThreadingHTTPServer):
    """`with HubServer() as hub:` serves on hub.url until the block ends."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = HubState()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "HubServer":
        self._thread = threading.Thread(target=self.serve_forever, name="hubserver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------ for tests
    def revisions(self, repo_id: str, repo_type: str = "dataset") -> list[str]:
        """Commit shas of a repo's main branch, oldest first."""
        repo = self.state.repos[(repo_type, repo_id)]
        out, sha = [], repo.refs.get("main")
        while sha is not None:
            out.append(sha)
            sha = repo.commits[sha].parent
        return out[::-1]

    def discussion(self, repo_id: str, num: int, repo_type: str = "dataset") -> Discussion:
        """Discussion or pull request `num` as the server holds it (status, events, head)."""
        return self.state.repos[(repo_type, repo_id)].discussions[num]

    def files(self, repo_id: str, rev: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        commit = self.state.repos[(repo_type, repo_id)].resolve(rev)
        assert commit is not None
        return {p: b.data for p, b in commit.files.items()}


if __name__ == "__main__":  # pragma: no cover - `python tests/hubserver.py` to poke at it by hand
    with HubServer() as hub:
        print(f"serving on {hub.url}; HF_ENDPOINT={hub.url} HF_HUB_DISABLE_XET=1; token hf_test_write")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

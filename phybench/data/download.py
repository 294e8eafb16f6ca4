"""Loading a split from the Hub (or a local folder): pinned to a revision, verified against its split hash.

A verified download is remembered under the cache (`phybench.io.cache_dir("verified")`), keyed by
folder, revision and the files' sizes and times, so a second load does not re-hash it.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping
from .. import jsonsafe
from .manifest_bounds import MANIFEST_SIZES, MAX_MANIFEST_BYTES, size_problem
from .split import MANIFEST, SplitError, read_manifest
from .hub import REPO_TYPE, HubError, check_split, hf_module, hub_error, progress_bars, repo_folder, split_files
from .documents import Manifest




# ------------------------------------------------------------------ load
def _verified_dir() -> Path:
    from ..io import cache_dir

    return cache_dir("verified")


def _fingerprint(folder: Path, manifest: Manifest) -> dict[str, Any]:
    """Size and mtime of every file of a split (through symlinks): cheap change detection."""
    out = {}
    for path, rel in split_files(folder, manifest):
        st = path.stat()
        out[rel] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def _marker(folder: Path, revision: str) -> Path:
    key = hashlib.sha256(f"{folder.resolve()}\0{revision}".encode()).hexdigest()[:32]
    return _verified_dir() / f"{key}.json"


def _known_good(folder: Path, manifest: Manifest, revision: str) -> bool:
    try:
        record = jsonsafe.read(_marker(folder, revision), max_bytes=MAX_MANIFEST_BYTES)
        return record["split_hash"] == manifest["split_hash"] and record["files"] == _fingerprint(folder, manifest)
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return False


def _remember_good(folder: Path, manifest: Manifest, revision: str) -> None:
    try:
        marker = _marker(folder, revision)
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"split_hash": manifest["split_hash"], "folder": str(folder),
                                   "files": _fingerprint(folder, manifest)}))
        os.replace(tmp, marker)
    except OSError:
        pass  # a cache of a check; losing it only costs a re-verify


def _forget_download(folder: Path) -> None:
    """Delete a bad download from the HF cache (links and the blobs they point to)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        try:
            if path.is_symlink():
                blob = path.resolve()
                path.unlink()
                if blob.is_file():
                    blob.unlink()
            elif path.is_file():
                path.unlink()
            elif path.is_dir():
                path.rmdir()
        except OSError:
            pass


def _check_manifest_bytes(file: Path) -> None:
    """A manifest larger than any real one is refused before it is parsed."""
    if file.stat().st_size > MAX_MANIFEST_BYTES:
        raise SplitError(f"{MANIFEST} is {file.stat().st_size:,} bytes; at most {MAX_MANIFEST_BYTES:,}",
                         code=MANIFEST_SIZES)


def _check_sizes(manifest: Mapping[str, Any], folder: Path) -> None:
    """The manifest's declared rows, shards and bytes agree, before any shard is hashed or decoded."""
    why = size_problem(manifest, folder)
    if why is not None:
        raise SplitError(f"its manifest does not add up: {why}; refusing it before reading any shard",
                         code=MANIFEST_SIZES)


def _check_identity(manifest: Manifest, task: str, split: str, where: str) -> None:
    if manifest.get("task") != task or manifest.get("split") != split:
        raise HubError(f"{where} holds {manifest.get('task')}/{manifest.get('split')}, not {task}/{split}")


def _check_pin(manifest: Manifest, split_hash: str | None, where: str) -> None:
    if split_hash is not None and manifest["split_hash"] != split_hash:
        raise HubError(
            f"{where}: split hash expected {split_hash} (pinned), found {manifest['split_hash']} in its manifest: "
            "a different split than the one pinned"
        )


def _verify_or_raise(folder: Path, manifest: Manifest, where: str, revision: str | None,
                     progress: bool = False) -> None:
    problems, recomputed = check_split(folder, manifest, progress)
    if problems:
        raise HubError(
            f"{where}{f' at revision {revision}' if revision else ''} does not verify: split hash expected "
            f"{manifest['split_hash']} (manifest), found "
            + (f"{recomputed} (recomputed from the data); " if recomputed else "none (the data could not be decoded); ")
            + "; ".join(problems[:5])
        )


@progress_bars
def load_split(
    task: str,
    split: str,
    source: str | os.PathLike[str],
    revision: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    split_hash: str | None = None,
    progress: bool = False,
) -> Path:
    """A verified split folder of `task`/`split` from a local folder or a Hub dataset repo.

    source: a split folder, a folder laid out like a repo (`<task>/<split>/...`), or a repo
        id.  A repo id downloads only that split (into the HF cache; later calls, also with
        HF_HUB_OFFLINE=1, reuse it) at `revision` (branch, tag or commit sha; default main).
    split_hash: if given, the split must have exactly this hash (pin the data, not only the
        revision).
    Raises HubError (a SplitError) naming the revision and the expected and found hashes
    when the data do not verify; a bad download is removed from the cache first, so the
    next call fetches it afresh.
    """
    local = Path(source)
    if local.is_dir():
        folder = local if (local / MANIFEST).is_file() else local / repo_folder(task, split)
        if not (folder / MANIFEST).is_file():
            raise HubError(f"{local} is neither a split folder nor holds {repo_folder(task, split)}/{MANIFEST}")
        manifest = read_manifest(folder)
        _check_identity(manifest, task, split, str(folder))
        _check_pin(manifest, split_hash, str(folder))
        _verify_or_raise(folder, manifest, str(folder), None, progress)
        return folder

    repo_id = str(source)
    hf = hf_module()
    where = f"{repo_id}:{repo_folder(task, split)}"
    try:
        snapshot = Path(hf.snapshot_download(
            repo_id, repo_type=REPO_TYPE, revision=revision, allow_patterns=[f"{repo_folder(task, split)}/*"],
            token=token, endpoint=endpoint, cache_dir=cache_dir,
        ))
    except (hf.errors.HfHubHTTPError, hf.errors.LocalEntryNotFoundError, OSError) as exc:
        raise hub_error(exc, repo_id, revision, f"load {task}/{split}") from None
    commit = snapshot.name  # snapshots/<commit sha>
    folder = snapshot / repo_folder(task, split)
    if not (folder / MANIFEST).is_file():
        raise HubError(
            f"{repo_id} at revision {commit} has no split {task}/{split}"
            + _available(repo_id, commit, token, endpoint)
        )
    try:
        _check_manifest_bytes(folder / MANIFEST)
        manifest = read_manifest(folder)
        _check_sizes(manifest, folder)
    except SplitError as exc:
        _forget_download(folder)
        raise HubError(f"{where} at revision {commit}: {exc} (the cached copy was removed; run again)",
                       code=exc.code) from None
    _check_identity(manifest, task, split, f"{where} at revision {commit}")
    _check_pin(manifest, split_hash, f"{where} at revision {commit}")
    if _known_good(folder, manifest, commit):
        return folder
    try:
        _verify_or_raise(folder, manifest, where, commit, progress)
    except HubError as exc:
        _forget_download(folder)
        raise HubError(f"{exc}\nthe downloaded copy was removed from the cache; run again to fetch it afresh") from None
    _remember_good(folder, manifest, commit)
    return folder


def _available(repo_id: str, commit: str, token: str | None, endpoint: str | None) -> str:
    """'; it has: a/b, c/d' from the repo's tree, or '' when it cannot be listed (offline)."""
    hf = hf_module()
    try:
        files = hf.HfApi(endpoint=endpoint, token=token).list_repo_files(repo_id, repo_type=REPO_TYPE, revision=commit)
    except Exception:  # offline or refused: the message is complete without the list
        return ""
    splits = sorted({"/".join(f.split("/")[:2]) for f in files if f.endswith("/" + MANIFEST) and f.count("/") == 2})
    return f"; it has: {', '.join(splits) if splits else 'no phybench splits'}"


def fetch_split(repo_id: str, task: str, split: str, revision: str | None = None, *,
                token: str | None = None, endpoint: str | None = None, progress: bool = False) -> Path:
    """The verified local folder of a published split, for `phybench score --from-hub`."""
    return load_split(task, split, source=repo_id, revision=revision, token=token, endpoint=endpoint,
                      progress=progress)

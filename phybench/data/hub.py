"""Publish splits to the Hugging Face Hub with a dataset card; load them back pinned and verified.

Repo layout: one dataset repo holds any number of tasks and splits, one config per task::

    README.md                              dataset card (YAML header: configs, dataset_info)
    <task>/<split>/manifest.json           the split's manifest: provenance, shards, split hash
    <task>/<split>/README.md               the split folder's own minimal card
    <task>/<split>/data/shard-*.parquet    the rows

so that, with no loading script,

    datasets.load_dataset(repo_id, name=task, split=hf_split_name(split))

works, and `load_split(task, split, source=repo_id, revision=sha)` downloads that one split
folder and returns its path after `phybench.data.verify.verify` has recomputed its split hash.

A publish is one commit (`HfApi.create_commit`): data, manifests and the re-rendered card
land together or not at all, so an interrupted upload never leaves a revision that claims
to be complete.  The card is rendered from `data_cards/` (static metadata in
`card_meta.yaml`, prose in `dataset_card.md.jinja`) over the manifests of every split in
the repo, and validated before anything is uploaded.

The Hub is reached through `huggingface_hub`, which reads HF_ENDPOINT, HF_TOKEN,
HF_HUB_OFFLINE and HF_HOME when it is imported; `endpoint=` overrides the first per call.

Here: the client and `publish`; the errors and the repo layout are `phybench.data.hub_layout`
(re-exported here), which the card imports without importing this module; the card is `phybench.data.card`,
`load_split` and `fetch_split` are `phybench.data.download`.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from shlex import quote
from typing import Any

from .._version import __version__
from .. import jsonsafe
from ..io import file_sha256
from .hub_layout import REPO_TYPE, DatasetCardError, HubError, repo_folder  # noqa: F401  re-exported (`phybench.data.hub.DatasetCardError`)
from .manifest_bounds import MAX_MANIFEST_BYTES
from .split import MANIFEST, hf_split_name, read_manifest
from .verify import verify
from .documents import Manifest


def split_files(folder: Path, manifest: Manifest) -> list[tuple[Path, str]]:
    """(local file, path inside the split folder) of what a published split holds."""
    files = [(folder / MANIFEST, MANIFEST)]
    if (folder / "README.md").is_file():
        files.append((folder / "README.md", "README.md"))
    files += [(folder / s["file"], s["file"]) for s in manifest["shards"]]
    return files


def split_num_bytes(folder: Path, manifest: Manifest) -> int:
    """Uncompressed bytes of a split's rows, from the Parquet footers (what `dataset_info` reports)."""
    import pyarrow.parquet as pq

    total = 0
    for s in manifest["shards"]:
        meta = pq.ParquetFile(folder / s["file"]).metadata
        total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return total


# ------------------------------------------------------------------ client
def hf_module():
    """huggingface_hub, imported late: it reads HF_ENDPOINT and friends at import."""
    import huggingface_hub
    import huggingface_hub.errors  # noqa: F401 - the lazy package does not expose its submodules
    import huggingface_hub.hf_api  # noqa: F401

    return huggingface_hub


def progress_bars(fn):
    """Run `fn` with huggingface_hub's progress bars off unless it is called with progress=True."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        hf_module()
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

        quiet = not kwargs.get("progress", False) and not are_progress_bars_disabled()
        if quiet:
            disable_progress_bars()
        try:
            return fn(*args, **kwargs)
        finally:
            if quiet:
                enable_progress_bars()

    return wrapper


def hub_token(token: str | None) -> str | None:
    return token if token is not None else hf_module().get_token()


def hub_error(exc: Exception, repo_id: str, revision: str | None, what: str) -> HubError:
    """Turn a huggingface_hub error into one line that says what to do."""
    hf = hf_module()
    errors = hf.errors
    rev = f" at revision {revision!r}" if revision else ""
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return HubError(
            f"{what}: {repo_id!r}{rev} is not in the local cache and the Hub cannot be reached "
            f"(HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '0')}): {exc}"
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"{what}: dataset repo {repo_id!r} has no revision {revision!r}")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(
            f"{what}: dataset repo {repo_id!r} was not found{rev} (check the name; a private repo needs a token "
            "with read access: give one with --token (token= in Python), set HF_TOKEN or run `hf auth login`)"
        )
    if isinstance(exc, errors.EntryNotFoundError):
        return HubError(f"{what}: {repo_id!r}{rev}: {exc}")
    if isinstance(exc, errors.HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else "?"
        if status in (401, 403):
            return HubError(f"{what}: the Hub refused the token for {repo_id!r} (HTTP {status}); "
                            "a publish needs a token with write access")
        return HubError(f"{what}: the Hub answered HTTP {status} for {repo_id!r}{rev}: {str(exc).splitlines()[0]}")
    return HubError(f"{what}: {type(exc).__name__}: {exc} (nothing was committed; run the same command again)")


def _verified_splits(task: str, split_dirs: list[str | os.PathLike[str]],
                     progress: bool) -> dict[str, tuple[Path, Manifest]]:
    """Split name -> (folder, manifest) for splits that verify, are of `task`, appear once and have every file."""
    local: dict[str, tuple[Path, Manifest]] = {}
    for d in split_dirs:
        folder = Path(d)
        manifest = read_manifest(folder)
        if manifest["task"] != task:
            raise HubError(f"{folder} holds task {manifest['task']!r}, not {task!r}; publish it with its own task")
        if manifest["split"] in local:
            raise HubError(f"split {manifest['split']!r} given twice: {local[manifest['split']][0]} and {folder}")
        problems, _ = check_split(folder, manifest, progress)
        if problems:
            raise HubError(
                f"{folder} does not verify, refusing to publish it ({len(problems)} problem(s)):\n  - "
                + "\n  - ".join(problems[:10])
                + f"\nrun `phybench verify {quote(str(folder))}` for the full report; nothing was uploaded"
            )
        for path, _ in split_files(folder, manifest):
            if not path.is_file():
                raise HubError(f"{path} is missing")
        local[manifest["split"]] = (folder, manifest)
    return local


def _remote_tree(api: Any, repo_id: str, private: bool) -> tuple[str, list[str]]:
    """Create the dataset repo if needed; its `main` head and the files there (the commit's parent)."""
    hf = hf_module()
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision="main").sha
        remote = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head, recursive=True)
                  if isinstance(f, hf.hf_api.RepoFile)]
    except Exception as exc:
        if isinstance(exc, (hf.errors.HfHubHTTPError, OSError)) or _is_transport_error(exc):
            raise hub_error(exc, repo_id, None, "publish") from None
        raise
    return head, remote


def _kept_manifests(api: Any, repo_id: str, head: str, remote: list[str], ours: set[str]) -> list[Manifest]:
    """The manifests of the splits already in the repo that this publish keeps (the card lists them too)."""
    hf = hf_module()
    kept_manifests: list[Manifest] = []
    for path in remote:
        parts = path.split("/")
        if len(parts) == 3 and parts[2] == MANIFEST and "/".join(parts[:2]) not in ours:
            try:
                file = api.hf_hub_download(repo_id, path, repo_type=REPO_TYPE, revision=head)
                kept_manifests.append(jsonsafe.read(file, max_bytes=MAX_MANIFEST_BYTES))
            except (hf.errors.HfHubHTTPError, OSError, ValueError) as exc:  # jsonsafe.JSONError: coded
                raise HubError(f"publish: cannot read {path} already in {repo_id!r}: {exc}") from None
    return kept_manifests


def _keep_card_sizes(api: Any, repo_id: str, head: str, sizes: dict[tuple[Any, str], int]) -> None:
    """Add to `sizes` the byte sizes the current card gives for splits not in it (a card we cannot read only costs them)."""
    from .card import parse_dataset_card

    hf = hf_module()
    try:
        old, _ = parse_dataset_card(Path(api.hf_hub_download(repo_id, "README.md", repo_type=REPO_TYPE,
                                                     revision=head)).read_text())
        for info in old.get("dataset_info") or []:
            for sp in info.get("splits") or []:
                key = (info.get("config_name"), str(sp.get("name")))
                sizes.setdefault(key, int(sp.get("num_bytes") or 0))
    except (DatasetCardError, OSError, ValueError, hf.errors.HfHubHTTPError):
        pass  # a card we cannot read only costs the sizes


# ------------------------------------------------------------------ publish
@progress_bars
def publish(
    task: str,
    repo_id: str,
    split_dirs: list[str | os.PathLike[str]],
    private: bool = False,
    revision_message: str | None = None,
    token: str | None = None,
    *,
    endpoint: str | None = None,
    card_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
):
    """Verify `split_dirs` (splits of `task`) and commit them with a fresh card as one revision.

    Creates the dataset repo if needed.  Splits of other tasks already in the repo are kept
    and stay in the card; a split published again replaces the old one.  Returns the
    `huggingface_hub.CommitInfo` (`.oid` is the revision to pin).
    """
    from .card import render_card, validate_card  # imported on use: jinja2 and yaml

    hf = hf_module()
    token = hub_token(token)
    if not token:
        raise HubError(
            "publishing needs a Hugging Face token with write access: give one with --token (token= in Python), "
            "set HF_TOKEN or run "
            "`hf auth login` (nothing was uploaded)"
        )
    from ..tasks import get_task

    get_task(task)  # an unknown task name fails here, with a did-you-mean
    if not split_dirs:
        raise HubError("nothing to publish: give at least one split folder")

    # 1. Every split verifies, belongs to `task`, and appears once.
    local = _verified_splits(task, split_dirs, progress)
    api = hf.HfApi(endpoint=endpoint, token=token)
    head, remote = _remote_tree(api, repo_id, private)

    # 2. The card covers every split that will be in the repo: the kept ones and ours.
    ours = {repo_folder(task, s) for s in local}
    kept_manifests = _kept_manifests(api, repo_id, head, remote, ours)
    sizes = {(task, hf_split_name(s)): split_num_bytes(folder, m) for s, (folder, m) in local.items()}
    if "README.md" in remote:  # keep the sizes the current card gives for the splits we keep
        _keep_card_sizes(api, repo_id, head, sizes)
    manifests = kept_manifests + [m for _, m in local.values()]
    new_files = {f"{repo_folder(task, s)}/{rel}": path for s, (folder, m) in local.items()
                 for path, rel in split_files(folder, m)}
    after = [p for p in remote if not any(p.startswith(o + "/") for o in ours)] + list(new_files)
    card = render_card(manifests, repo_id, card_dir, sizes)
    validate_card(card, files=after)  # before anything is uploaded

    # 3. One commit: stale files of re-published splits go, new files and the card come.
    ops: list[Any] = [
        hf.CommitOperationDelete(path_in_repo=p) for p in remote
        if any(p.startswith(o + "/") for o in ours) and p not in new_files
    ]
    ops += [hf.CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in sorted(new_files.items())]
    ops.append(hf.CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=card.encode()))
    lines = [f"{task}/{s}: {m['num_samples']} samples, split hash {m['split_hash']}"
             for s, (_, m) in sorted(local.items())]
    message = revision_message or f"phybench {__version__}: publish {task} " + ", ".join(sorted(local))
    try:
        return api.create_commit(
            repo_id, ops, commit_message=message, commit_description="\n".join(lines),
            repo_type=REPO_TYPE, revision="main", parent_commit=head,
        )
    except Exception as exc:
        if _is_transport_error(exc):  # the connection dropped mid-upload
            raise HubError(
                f"publish: the upload to {repo_id!r} was interrupted ({type(exc).__name__}: {exc}); "
                + _after_interruption(api, repo_id, head)
            ) from None
        if isinstance(exc, (hf.errors.HfHubHTTPError, OSError, ValueError, RuntimeError)):
            raise hub_error(exc, repo_id, None, "publish") from None
        raise


def _after_interruption(api: Any, repo_id: str, head: str) -> str:
    """What an interrupted commit left: a Hub commit is all or nothing, so `main` is old or whole."""
    try:
        now = api.repo_info(repo_id, repo_type=REPO_TYPE, revision="main").sha
    except Exception:  # the Hub is unreachable right now
        return ("a commit is all or nothing, so main holds the previous revision or the whole new one; "
                "run the same command again (it uploads only what is missing)")
    if now == head:
        return f"no revision was created (main is still {head}); run the same command again"
    return f"the commit did land before the connection dropped: main is now {now}"


def _is_transport_error(exc: BaseException) -> bool:
    """A dropped connection or timeout from the HTTP stack (its own exception types), possibly wrapped."""
    while exc is not None:
        if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2", "h11"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


# ------------------------------------------------------------------ verify
def check_split(folder: Path, manifest: Manifest, progress: bool = False) -> tuple[list[str], str | None]:
    """(problems, recomputed split hash or None) of a split folder; no problems means it verifies.

    Each file's sha256 is compared with the manifest first, naming expected and found;
    then `phybench.data.verify.verify` recomputes every sample digest.  Data too damaged to
    decode is a problem, not a crash.
    """
    problems = []
    for s in manifest.get("shards", []):
        path = folder / s["file"]
        if path.is_file():
            found = file_sha256(path)
            if found != s["sha256"]:
                problems.append(f"{s['file']}: sha256 expected {s['sha256']}, found {found}")
    try:
        report = verify(folder, progress=progress)
    except Exception as exc:  # e.g. a PNG whose zlib stream was damaged (verify lets it through)
        return problems + [f"the data could not be decoded: {type(exc).__name__}: {exc}"], None
    seen = {p.split(":")[0] for p in problems}
    problems += [p.message for p in report.problems if not (p.entry in seen and p.code == "file_changed")]
    return problems, report.recomputed_hash

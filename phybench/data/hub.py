"""Publish splits to the Hugging Face Hub with a dataset card; load them back pinned and verified.

Repo layout: one dataset repo holds any number of tasks and splits, one config per task::

    README.md                              dataset card (YAML header: configs, dataset_info)
    <task>/<split>/manifest.json           the split's manifest: provenance, shards, split hash
    <task>/<split>/README.md               the split folder's own minimal card
    <task>/<split>/data/shard-*.parquet    the rows

so that, with no loading script,

    datasets.load_dataset(repo_id, name=task, split=hf_split_name(split))

works, and `load_split(task, split, source=repo_id, revision=sha)` downloads that one split
folder and returns its path after `phybench.data.split.verify` has recomputed its split hash.

A publish is one commit (`HfApi.create_commit`): data, manifests and the re-rendered card
land together or not at all, so an interrupted upload never leaves a revision that claims
to be complete.  The card is rendered from `data_cards/` (static metadata in
`card_meta.yaml`, prose in `dataset_card.md.jinja`) over the manifests of every split in
the repo, and validated before anything is uploaded.

The Hub is reached through `huggingface_hub`, which reads HF_ENDPOINT, HF_TOKEN,
HF_HUB_OFFLINE and HF_HOME when it is imported; `endpoint=` overrides the first per call.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from .. import __version__
from ..io import file_sha256
from .split import MANIFEST, SplitError, hf_split_name, read_manifest, verify

REPO_TYPE = "dataset"
# The repo's top-level data_cards/, installed (and shipped inside the wheel) as phybench.data_cards
CARD_DIR = Path(str(resources.files("phybench.data_cards")))
CARD_META = "card_meta.yaml"
CARD_TEMPLATE = "dataset_card.md.jinja"

# What a card must have (checked on the rendered text, before any upload).
REQUIRED_FIELDS = ("pretty_name", "license", "task_categories", "size_categories", "configs", "dataset_info")
REQUIRED_SECTIONS = (
    "Summary", "Structure", "How it was made", "Split hashes", "ID and OOD",
    "Intended use", "Limitations", "License", "Citation",
)
LICENSES = ("cc-by-4.0", "apache-2.0", "cc-by-sa-4.0", "cc0-1.0", "mit", "other")
# Hub task categories a video benchmark could use (the Hub's list is longer).
TASK_CATEGORIES = (
    "image-to-video", "text-to-video", "video-classification", "video-text-to-text",
    "image-to-image", "unconditional-image-generation", "other",
)
SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"),
)
_SPLIT_RE = re.compile(r"^[\w]+$")


class HubError(SplitError):
    """Publishing or loading through the Hub failed; the message says why and what to do."""


class CardError(HubError):
    """A rendered dataset card lacks a required field or section."""


# ------------------------------------------------------------------ paths
def repo_folder(task: str, split: str) -> str:
    """Where a split lives in the repo: `<task>/<split>`."""
    return f"{task}/{split}"


def _split_files(folder: Path, manifest: dict[str, Any]) -> list[tuple[Path, str]]:
    """(local file, path inside the split folder) of what a published split holds."""
    files = [(folder / MANIFEST, MANIFEST)]
    if (folder / "README.md").is_file():
        files.append((folder / "README.md", "README.md"))
    files += [(folder / s["file"], s["file"]) for s in manifest["shards"]]
    return files


def split_num_bytes(folder: Path, manifest: dict[str, Any]) -> int:
    """Uncompressed bytes of a split's rows, from the Parquet footers (what `dataset_info` reports)."""
    import pyarrow.parquet as pq

    total = 0
    for s in manifest["shards"]:
        meta = pq.ParquetFile(folder / s["file"]).metadata
        total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return total


def size_category(num_rows: int) -> str:
    for limit, name in SIZE_CATEGORIES:
        if num_rows < limit:
            return name
    return "n>1T"


# ------------------------------------------------------------------ card
def _card_dir(card_dir: str | os.PathLike[str] | None) -> Path:
    folder = Path(card_dir) if card_dir is not None else CARD_DIR
    for name in (CARD_META, CARD_TEMPLATE):
        if not (folder / name).is_file():
            raise CardError(f"card template {folder / name} is missing")
    return folder


def card_header(manifests: list[dict[str, Any]], meta: dict[str, Any],
                num_bytes: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """The card's YAML header: static metadata plus one config per task over its splits.

    num_bytes: uncompressed bytes per (task, hf split name), for `dataset_info` (0 where unknown).
    """
    from .split import features
    from ..tasks import get_task

    num_bytes = num_bytes or {}
    configs, infos = [], []
    for task in _task_order(manifests):
        ms = sorted((m for m in manifests if m["task"] == task), key=_split_order)
        configs.append({
            "config_name": task,
            "data_files": [
                {"split": hf_split_name(m["split"]), "path": f"{repo_folder(task, m['split'])}/data/*.parquet"}
                for m in ms
            ],
        })
        # One feature set per config: the evaluation one; training rows read `video` as null.
        infos.append({
            "config_name": task,
            "features": features(get_task(task), True)._to_yaml_list(),
            "splits": [
                {"name": hf, "num_bytes": int(num_bytes.get((task, hf), 0)), "num_examples": int(m["num_samples"])}
                for m in ms
                for hf in [hf_split_name(m["split"])]
            ],
        })
    header = dict(meta)
    header["size_categories"] = [size_category(sum(int(m["num_samples"]) for m in manifests))]
    header["configs"] = configs
    header["dataset_info"] = infos
    return header


def _task_order(manifests: list[dict[str, Any]]) -> list[str]:
    """Tasks in registry order (uniform, parabola, collision), unknown names last."""
    from ..tasks import TASKS

    names = list(TASKS)
    present = dict.fromkeys(m["task"] for m in manifests)
    return sorted(present, key=lambda t: (names.index(t) if t in names else len(names), t))


def _split_order(m: dict[str, Any]) -> tuple[int, int, str]:
    """Evaluation splits first (so `datasets` infers the video column), then training by size."""
    training = m["split"].startswith("train-")
    return (1 if training else 0, int(m.get("full_size", m["num_samples"])) if training else 0, m["split"])


def card_context(manifests: list[dict[str, Any]], repo_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    """What the prose template sees."""
    from ..tasks import family_of, get_task

    tasks = []
    seen_dofs: dict[str, dict[str, Any]] = {}
    for task in _task_order(manifests):
        spec = get_task(task)
        splits = []
        for m in sorted((m for m in manifests if m["task"] == task), key=_split_order):
            splits.append({
                "split": m["split"],
                "hf_split": hf_split_name(m["split"]),
                "num_samples": int(m["num_samples"]),
                "full_size": int(m.get("full_size", m["num_samples"])),
                "resolution": m["resolution"],
                "with_video": bool(m["with_video"]),
                "split_hash": m["split_hash"],
                "command": m.get("command") or "(not recorded)",
                "phybench_version": m.get("phybench_version", "?"),
                "imported": m.get("imported"),
                "pixel_mapping": m.get("pixel_mapping", "tile"),
                "time_offset": m.get("time_offset", 0.0),
            })
        dofs = [{"name": d.name, "unit": d.unit, "id_range": d.id_range, "ood_ranges": d.ood_ranges,
                 "description": d.description} for d in spec.dofs]
        for d in dofs:
            seen_dofs.setdefault(d["name"], d)
        tasks.append({
            "name": task,
            "version": spec.version,
            "spec_hash": spec.spec_hash(),
            "description": spec.description,
            "frame_interval": spec.frame_interval,
            "dofs": dofs,
            "ood_levels": [{"name": lv.name, "ood_dofs": lv.ood_dofs} for lv in spec.ood_levels],
            "splits": splits,
            "has_imported": any(s["imported"] for s in splits),
            "imported_id_ranges": family_of(spec).phyworld_id_ranges or {},
        })
    specs = [get_task(t["name"]) for t in tasks]

    def one(values: Iterable[Any]) -> str:
        vals = sorted(set(values))
        return " / ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in vals)

    return {
        "repo_id": repo_id,
        "pretty_name": meta.get("pretty_name", repo_id),
        "license": meta.get("license", ""),
        "tasks": tasks,
        "all_dofs": list(seen_dofs.values()),
        "frames_text": one(s.frames for s in specs),
        "condition_frames_text": one(s.condition_frames for s in specs),
        "world_size": one(float(s.world_size) for s in specs),
        "frame_interval": one(float(s.frame_interval) for s in specs),
        "phybench_version": __version__,
    }


def render_card(manifests: list[dict[str, Any]], repo_id: str, card_dir: str | os.PathLike[str] | None = None,
                num_bytes: dict[tuple[str, str], int] | None = None) -> str:
    """README.md text for a repo holding these splits (YAML header + prose)."""
    import jinja2
    import yaml

    if not manifests:
        raise CardError("a card needs at least one split")
    folder = _card_dir(card_dir)
    try:
        meta = yaml.safe_load((folder / CARD_META).read_text()) or {}
    except yaml.YAMLError as exc:
        raise CardError(f"{folder / CARD_META} is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise CardError(f"{folder / CARD_META} must be a YAML mapping")
    header = card_header(manifests, meta, num_bytes)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,  # a template naming a missing value is an error, not a blank
        keep_trailing_newline=True,
        autoescape=False,
    )
    try:
        body = env.get_template(CARD_TEMPLATE).render(**card_context(manifests, repo_id, meta))
    except jinja2.TemplateError as exc:
        raise CardError(f"{folder / CARD_TEMPLATE}: {exc}") from None
    yaml_text = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{yaml_text}---\n\n{body.strip()}\n"


def parse_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML header, body) of a card; CardError if there is no valid header."""
    import yaml

    if not text.startswith("---\n"):
        raise CardError("dataset card has no YAML header (it must start with a '---' line)")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise CardError("dataset card's YAML header is not closed by a '---' line")
    try:
        header = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise CardError(f"dataset card's YAML header is not valid YAML: {exc}") from None
    if not isinstance(header, dict):
        raise CardError("dataset card's YAML header must be a mapping")
    return header, text[end + 5:]


def validate_card(text: str, files: Iterable[str] | None = None) -> dict[str, Any]:
    """Check a rendered card; returns its header.  Raises CardError listing every problem.

    files: the repo paths the card will sit beside; each config's data_files must match some.
    """
    header, body = parse_card(text)
    problems = []
    missing = [f for f in REQUIRED_FIELDS if header.get(f) in (None, "", [], {})]
    if missing:
        problems.append(f"missing required field(s): {', '.join(missing)}")
    if header.get("license") and header["license"] not in LICENSES:
        problems.append(f"license {header['license']!r} is not one of {', '.join(LICENSES)}")
    cats = header.get("task_categories") or []
    if not isinstance(cats, list) or any(c not in TASK_CATEGORIES for c in cats):
        problems.append(f"task_categories {cats!r}: each must be one of {', '.join(TASK_CATEGORIES)}")
    sizes = header.get("size_categories") or []
    known_sizes = [n for _, n in SIZE_CATEGORIES] + ["n>1T"]
    if not isinstance(sizes, list) or any(s not in known_sizes for s in sizes):
        problems.append(f"size_categories {sizes!r}: each must be one of {', '.join(known_sizes)}")
    file_list = list(files) if files is not None else None
    config_names = []
    for i, cfg in enumerate(header.get("configs") or []):
        name = cfg.get("config_name") if isinstance(cfg, dict) else None
        if not name:
            problems.append(f"configs[{i}] has no config_name")
            continue
        config_names.append(name)
        entries = cfg.get("data_files") or []
        if not entries:
            problems.append(f"config {name!r} has no data_files")
        for e in entries:
            split, path = (e.get("split"), e.get("path")) if isinstance(e, dict) else (None, None)
            if not split or not path:
                problems.append(f"config {name!r}: each data_files entry needs split and path")
            elif not _SPLIT_RE.match(str(split)):
                problems.append(f"config {name!r}: split name {split!r} must be word characters only")
            elif file_list is not None and not any(fnmatch.fnmatchcase(f, str(path)) for f in file_list):
                problems.append(f"config {name!r} split {split!r}: no file matches {path!r}")
    info_names = []
    for i, info in enumerate(header.get("dataset_info") or []):
        if not isinstance(info, dict) or not info.get("config_name") or not info.get("features"):
            problems.append(f"dataset_info[{i}] needs config_name and features")
            continue
        info_names.append(info["config_name"])
    if header.get("configs") and header.get("dataset_info") and sorted(config_names) != sorted(info_names):
        problems.append(f"dataset_info configs {sorted(info_names)} differ from configs {sorted(config_names)}")
    headings = set(re.findall(r"^##\s+(.+?)\s*$", body, flags=re.M))
    absent = [s for s in REQUIRED_SECTIONS if s not in headings]
    if absent:
        problems.append(f"missing section(s): {', '.join('## ' + s for s in absent)}")
    if "arXiv:2411.02385" not in body:
        problems.append("the citation of Kang et al. 2024 (arXiv:2411.02385) is missing")
    if problems:
        raise CardError("dataset card is not valid:\n  - " + "\n  - ".join(problems))
    return header


# ------------------------------------------------------------------ client
def _hf():
    """huggingface_hub, imported late: it reads HF_ENDPOINT and friends at import."""
    import huggingface_hub
    import huggingface_hub.errors  # noqa: F401 - the lazy package does not expose its submodules
    import huggingface_hub.hf_api  # noqa: F401

    return huggingface_hub


def _progress_bars(fn):
    """Run `fn` with huggingface_hub's progress bars off unless it is called with progress=True."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _hf()
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


def _token(token: str | None) -> str | None:
    return token if token is not None else _hf().get_token()


def _hub_error(exc: Exception, repo_id: str, revision: str | None, what: str) -> HubError:
    """Turn a huggingface_hub error into one line that says what to do."""
    hf = _hf()
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


# ------------------------------------------------------------------ publish
@_progress_bars
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
    hf = _hf()
    token = _token(token)
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
    local: dict[str, tuple[Path, dict[str, Any]]] = {}
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
                + f"\nrun `phybench verify {folder}` for the full report; nothing was uploaded"
            )
        for path, _ in _split_files(folder, manifest):
            if not path.is_file():
                raise HubError(f"{path} is missing")
        local[manifest["split"]] = (folder, manifest)

    api = hf.HfApi(endpoint=endpoint, token=token)
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision="main").sha
        remote = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head, recursive=True)
                  if isinstance(f, hf.hf_api.RepoFile)]
    except Exception as exc:
        if isinstance(exc, (hf.errors.HfHubHTTPError, OSError)) or _is_transport_error(exc):
            raise _hub_error(exc, repo_id, None, "publish") from None
        raise

    # 2. The card covers every split that will be in the repo: the kept ones and ours.
    ours = {repo_folder(task, s) for s in local}
    kept_manifests = []
    for path in remote:
        parts = path.split("/")
        if len(parts) == 3 and parts[2] == MANIFEST and "/".join(parts[:2]) not in ours:
            try:
                file = api.hf_hub_download(repo_id, path, repo_type=REPO_TYPE, revision=head)
                kept_manifests.append(json.loads(Path(file).read_text()))
            except (hf.errors.HfHubHTTPError, OSError, json.JSONDecodeError) as exc:
                raise HubError(f"publish: cannot read {path} already in {repo_id!r}: {exc}") from None
    sizes = {(task, hf_split_name(s)): split_num_bytes(folder, m) for s, (folder, m) in local.items()}
    if "README.md" in remote:  # keep the sizes the current card gives for the splits we keep
        try:
            old, _ = parse_card(Path(api.hf_hub_download(repo_id, "README.md", repo_type=REPO_TYPE,
                                                         revision=head)).read_text())
            for info in old.get("dataset_info") or []:
                for sp in info.get("splits") or []:
                    key = (info.get("config_name"), str(sp.get("name")))
                    sizes.setdefault(key, int(sp.get("num_bytes") or 0))
        except (CardError, OSError, ValueError, hf.errors.HfHubHTTPError):
            pass  # a card we cannot read only costs the sizes
    manifests = kept_manifests + [m for _, m in local.values()]
    new_files = {f"{repo_folder(task, s)}/{rel}": path for s, (folder, m) in local.items()
                 for path, rel in _split_files(folder, m)}
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
            raise _hub_error(exc, repo_id, None, "publish") from None
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
def check_split(folder: Path, manifest: dict[str, Any], progress: bool = False) -> tuple[list[str], str | None]:
    """(problems, recomputed split hash or None) of a split folder; no problems means it verifies.

    Each file's sha256 is compared with the manifest first, naming expected and found;
    then `phybench.data.split.verify` recomputes every sample digest.  Data too damaged to
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
    except Exception as exc:  # e.g. a PNG whose zlib stream was damaged (split.verify lets it through)
        return problems + [f"the data could not be decoded: {type(exc).__name__}: {exc}"], None
    seen = {p.split(":")[0] for p in problems}
    problems += [p.message for p in report.problems if not (p.entry in seen and p.code == "file_changed")]
    return problems, report.recomputed_hash


# ------------------------------------------------------------------ load
def _verified_dir() -> Path:
    from ..io import cache_dir

    return cache_dir("verified")


def _fingerprint(folder: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Size and mtime of every file of a split (through symlinks): cheap change detection."""
    out = {}
    for path, rel in _split_files(folder, manifest):
        st = path.stat()
        out[rel] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def _marker(folder: Path, revision: str) -> Path:
    key = hashlib.sha256(f"{folder.resolve()}\0{revision}".encode()).hexdigest()[:32]
    return _verified_dir() / f"{key}.json"


def _known_good(folder: Path, manifest: dict[str, Any], revision: str) -> bool:
    try:
        record = json.loads(_marker(folder, revision).read_text())
        return record["split_hash"] == manifest["split_hash"] and record["files"] == _fingerprint(folder, manifest)
    except (OSError, ValueError, KeyError):
        return False


def _remember_good(folder: Path, manifest: dict[str, Any], revision: str) -> None:
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


def _check_identity(manifest: dict[str, Any], task: str, split: str, where: str) -> None:
    if manifest.get("task") != task or manifest.get("split") != split:
        raise HubError(f"{where} holds {manifest.get('task')}/{manifest.get('split')}, not {task}/{split}")


def _check_pin(manifest: dict[str, Any], split_hash: str | None, where: str) -> None:
    if split_hash is not None and manifest["split_hash"] != split_hash:
        raise HubError(
            f"{where}: split hash expected {split_hash} (pinned), found {manifest['split_hash']} in its manifest: "
            "a different split than the one pinned"
        )


def _verify_or_raise(folder: Path, manifest: dict[str, Any], where: str, revision: str | None,
                     progress: bool = False) -> None:
    problems, recomputed = check_split(folder, manifest, progress)
    if problems:
        raise HubError(
            f"{where}{f' at revision {revision}' if revision else ''} does not verify: split hash expected "
            f"{manifest['split_hash']} (manifest), found "
            + (f"{recomputed} (recomputed from the data); " if recomputed else "none (the data could not be decoded); ")
            + "; ".join(problems[:5])
        )


@_progress_bars
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
    hf = _hf()
    where = f"{repo_id}:{repo_folder(task, split)}"
    try:
        snapshot = Path(hf.snapshot_download(
            repo_id, repo_type=REPO_TYPE, revision=revision, allow_patterns=[f"{repo_folder(task, split)}/*"],
            token=token, endpoint=endpoint, cache_dir=cache_dir,
        ))
    except (hf.errors.HfHubHTTPError, hf.errors.LocalEntryNotFoundError, OSError) as exc:
        raise _hub_error(exc, repo_id, revision, f"load {task}/{split}") from None
    commit = snapshot.name  # snapshots/<commit sha>
    folder = snapshot / repo_folder(task, split)
    if not (folder / MANIFEST).is_file():
        raise HubError(
            f"{repo_id} at revision {commit} has no split {task}/{split}"
            + _available(repo_id, commit, token, endpoint)
        )
    try:
        manifest = read_manifest(folder)
    except SplitError as exc:
        _forget_download(folder)
        raise HubError(f"{where} at revision {commit}: {exc} (the cached copy was removed; run again)") from None
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
    hf = _hf()
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

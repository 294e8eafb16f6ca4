"""The dataset card of a Hub repo: rendered from `data_cards/` over every split's manifest, then validated.

The static metadata is `card_meta.yaml`, the prose `dataset_card.md.jinja`; `validate_card`
checks the rendered text (required fields and sections, licence, categories, configs that
match the files) before anything is uploaded.
"""
from __future__ import annotations

import fnmatch
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterable
from .._version import __version__
from .split import hf_split_name
from .hub_layout import DatasetCardError, repo_folder
from .documents import Manifest


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
            raise DatasetCardError(f"card template {folder / name} is missing")
    return folder


def card_header(manifests: list[Manifest], meta: dict[str, Any],
                num_bytes: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """The card's YAML header: static metadata plus one config per task over its splits.

    num_bytes: uncompressed bytes per (task, hf split name), for `dataset_info` (0 where unknown).
    """
    from .arrow import features
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


def _task_order(manifests: list[Manifest]) -> list[str]:
    """Tasks in registry order (uniform, parabola, collision), unknown names last."""
    from ..tasks import TASKS

    names = list(TASKS)
    present = dict.fromkeys(m["task"] for m in manifests)
    return sorted(present, key=lambda t: (names.index(t) if t in names else len(names), t))


def _split_order(m: Manifest) -> tuple[int, int, str]:
    """Evaluation splits first (so `datasets` infers the video column), then training by size."""
    training = m["split"].startswith("train-")
    return (1 if training else 0, int(m.get("full_size", m["num_samples"])) if training else 0, m["split"])


def card_context(manifests: list[Manifest], repo_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    """What the prose template sees."""
    from ..tasks import family_of, get_task

    tasks: list[dict[str, Any]] = []
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
        dofs: list[dict[str, Any]] = [{"name": d.name, "unit": d.unit, "id_range": d.id_range, "ood_ranges": d.ood_ranges,
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


def render_card(manifests: list[Manifest], repo_id: str, card_dir: str | os.PathLike[str] | None = None,
                num_bytes: dict[tuple[str, str], int] | None = None) -> str:
    """README.md text for a repo holding these splits (YAML header + prose)."""
    import jinja2
    import yaml

    if not manifests:
        raise DatasetCardError("a card needs at least one split")
    folder = _card_dir(card_dir)
    try:
        meta = yaml.safe_load((folder / CARD_META).read_text()) or {}
    except yaml.YAMLError as exc:
        raise DatasetCardError(f"{folder / CARD_META} is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise DatasetCardError(f"{folder / CARD_META} must be a YAML mapping")
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
        raise DatasetCardError(f"{folder / CARD_TEMPLATE}: {exc}") from None
    yaml_text = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{yaml_text}---\n\n{body.strip()}\n"


def parse_dataset_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML header, body) of a card; DatasetCardError if there is no valid header."""
    import yaml

    if not text.startswith("---\n"):
        raise DatasetCardError("dataset card has no YAML header (it must start with a '---' line)")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise DatasetCardError("dataset card's YAML header is not closed by a '---' line")
    try:
        header = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise DatasetCardError(f"dataset card's YAML header is not valid YAML: {exc}") from None
    if not isinstance(header, dict):
        raise DatasetCardError("dataset card's YAML header must be a mapping")
    return header, text[end + 5:]


def validate_card(text: str, files: Iterable[str] | None = None) -> dict[str, Any]:
    """Check a rendered card; returns its header.  Raises DatasetCardError listing every problem.

    files: the repo paths the card will sit beside; each config's data_files must match some.
    """
    header, body = parse_dataset_card(text)
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
        raise DatasetCardError("dataset card is not valid:\n  - " + "\n  - ".join(problems))
    return header

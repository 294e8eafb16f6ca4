"""The fields that describe a model on the board, as one table (`MODEL_FIELDS`).

A model is described by its submission: submission.json's `model` object (family, size,
params, training data, ...) and a few top-level keys (notes, sampler, seeds, conditioning).
Three readers used to spell these in three lists in two languages; now each is one
`ModelField` row here:

* the scorer (`phybench.scoring.run.score`) copies every row's `submission_key` from
  submission.json into the results file's `model` block;
* the board (`phybench.leaderboard.site.table`) keeps, per row, what `read` returns from that block
  (anything of an unexpected type is dropped: results files are untrusted);
* the page's script (leaderboard.js) draws each row as `show` says, from the table serialised
  into the page (`page_fields()`, as JSON beside the data), so a new row shows without a line
  of JavaScript.

Adding a column is one row (docs/leaderboard.md).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal

Show = Literal["summary", "details", "badge"]
Style = Literal["text", "count", "code", "link"]


def is_scalar(x: Any) -> bool:
    """A string or a number (not a bool): what a board cell can show as text."""
    return isinstance(x, (str, int, float)) and not isinstance(x, bool)


def train_size(value: Any) -> float | None:
    """30000, "30k", "3M", "3,000,000" -> a number of training videos."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9][0-9,_]*\.?[0-9]*)\s*([kKmMbB]?)\s*", value)
        if m:
            return float(m.group(1).replace(",", "").replace("_", "")) * {"": 1, "k": 1e3, "m": 1e6, "b": 1e9}[m.group(2).lower()]
    return None


def scalar(key: str) -> Callable[[dict[str, Any]], Any]:
    """The reader of a plain field: its value when a string or a number."""
    return lambda model: model[key] if is_scalar(model.get(key)) else None


def _sampler(model: dict[str, Any]) -> Any:
    sampler = model.get("sampler")
    if is_scalar(sampler):
        return sampler
    if isinstance(sampler, dict):  # submission.json's sampler object, e.g. {"name": "ddim", "steps": 50}
        return ", ".join(f"{k}={v}" for k, v in sorted(sampler.items()) if is_scalar(v))
    return None


def _track(model: dict[str, Any]) -> Any:
    cond = model.get("conditioning")
    if isinstance(cond, dict) and isinstance(cond.get("inputs"), str):  # the condition track (issue 28)
        used = cond.get("condition_frames_used")
        kind = "image-to-video" if used == 1 else "video-to-video" if isinstance(used, int) and used > 1 else None
        return cond["inputs"] + (f", {kind}" if kind else "")
    return None


def _source_counts(sources: Any) -> Any:
    """`phybench pack` records each video's source; the results file keeps how many came from each."""
    if not isinstance(sources, dict):
        return None
    from ..data.source import source_counts

    return source_counts(sources)


def _lossy(model: dict[str, Any]) -> Any:
    sources = model.get("sources")
    if isinstance(sources, dict) and all(isinstance(k, str) and isinstance(v, int) for k, v in sources.items()):
        lossy = {k: v for k, v in sources.items() if k.startswith("mp4")}
        if lossy:  # videos packed from a lossy codec (issue 24): their image metrics carry its loss
            return ", ".join(f"{v} of {sum(sources.values())} videos from {k}" for k, v in sorted(lossy.items()))
    return None


def _number(key: str) -> Callable[[dict[str, Any]], Any]:
    """The reader of a finite number (not a bool)."""
    def read(model: dict[str, Any]) -> Any:
        p = model.get(key)
        return p if isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) else None
    return read


_params = _number("params")


def _train_size(model: dict[str, Any]) -> Any:
    value = model.get("train_size")
    return value if value is not None and train_size(value) is not None else None


def _seeds(model: dict[str, Any]) -> Any:
    seeds = [x for x in model.get("seeds") or [] if is_scalar(x)] if isinstance(model.get("seeds"), list) else []
    if not seeds:
        return None
    return seeds if len(seeds) <= 8 else f"{len(seeds)} seeds, {seeds[0]} … {seeds[-1]}"  # one per run, or per sample


@dataclass(frozen=True)
class ModelField:
    """One field describing a model.  `key`: its name in the board's row (`meta`) and exports;
    `read`: its value from a results file's `model` block (None: not shown); `show`: where the
    page draws it (the line under the model's name, the provenance details, a badge);
    `label`: the page's name for it; `text`: the summary's wording, "{}" the value; `style`:
    plain text, a count (1.2M), a hash in code, a link; `submission_key`: a top-level key of
    submission.json that the scorer copies into the results' `model` block."""

    key: str
    read: Callable[[dict[str, Any]], Any]
    show: Show
    label: str
    text: str = "{}"
    style: Style = "text"
    submission_key: str | None = None
    submitted: Callable[[Any], Any] | None = None  # the scorer's copy of submission_key (None: as is; returns None: skip)

    def to_page(self) -> dict[str, str]:
        return {"key": self.key, "show": self.show, "label": self.label, "text": self.text, "style": self.style}


# In the order the page shows them (summary line, then details); the board's row keeps each
# field whose `read` gives a value.
MODEL_FIELDS: list[ModelField] = [
    ModelField("family", scalar("family"), "summary", "family"),
    ModelField("size", scalar("size"), "summary", "size"),
    ModelField("params", _params, "summary", "parameters", "{} params", "count"),
    ModelField("train_split", scalar("train_split"), "summary", "training split", "trained on {}"),
    ModelField("track", _track, "summary", "condition track", "conditioned on {}", submission_key="conditioning"),
    ModelField("train_size", _train_size, "summary", "training videos", "{} videos", "count"),
    ModelField("hardware", scalar("hardware"), "summary", "hardware", "on {}"),
    ModelField("version", scalar("version"), "details", "model version"),
    ModelField("model_version", scalar("model_version"), "details", "model version"),
    ModelField("checkpoint_sha256", scalar("checkpoint_sha256"), "details", "checkpoint", style="code"),
    ModelField("sampler", _sampler, "details", "sampler", submission_key="sampler"),
    ModelField("seeds", _seeds, "details", "seeds", submission_key="seeds"),
    ModelField("notes", scalar("notes"), "details", "notes", submission_key="notes"),
    ModelField("condition_frames", scalar("condition_frames"), "details", "condition frames"),
    ModelField("train_steps", _number("train_steps"), "details", "training steps", "{} steps", "count"),
    ModelField("train_seconds", _number("train_seconds"), "details", "training time", "{} s"),
    ModelField("train_split_hash", scalar("train_split_hash"), "details", "training split hash", style="code"),
    ModelField("train_config", scalar("train_config"), "details", "training config", style="code"),
    ModelField("url", scalar("url"), "details", "url", style="link"),
    ModelField("lossy", _lossy, "badge", "lossy source", submission_key="sources", submitted=_source_counts),
]


def board_meta(model: dict[str, Any]) -> dict[str, Any]:
    """The fields the board shows of a results file's `model` block, every one checked for type."""
    out: dict[str, Any] = {}
    for field in MODEL_FIELDS:
        value = field.read(model)
        if value is not None:
            out[field.key] = value
    return out


def submission_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """What the scorer adds to the results' `model` block from submission.json's top level."""
    out: dict[str, Any] = {}
    for field in MODEL_FIELDS:
        if field.submission_key is None or field.submission_key not in meta:
            continue
        value = meta[field.submission_key]
        if field.submitted is not None:
            value = field.submitted(value)
            if value is None:
                continue
        out[field.submission_key] = value
    return out


def page_fields() -> list[dict[str, str]]:
    """The table as the page's script reads it (JSON in the page)."""
    return [f.to_page() for f in MODEL_FIELDS]

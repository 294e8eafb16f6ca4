"""A results file and its ``.samples.json`` sidecar as types (docs/results.md, leaderboard/README.md).

`TypedDict`s like the split's (`phybench.data.documents`): the same JSON objects on disk and
the same dicts at run time, so no byte moves, but mypy knows the keys, and a misspelt
``results["provenence"]`` is a type error (`tests/test_documents.py`).  One writer and one
reader each:

* `Results`: written by `results.build_results` (its `Provenance` by `score._provenance`),
  its bytes by `results.results_bytes`; read by `layout.parse_results` / `layout.read_results`.
  A reader of an untrusted folder (`phybench.leaderboard.site.load`) checks the structure key
  by key on the raw document first and only then calls it a `Results`.
* `Sidecar` and its rows (`SidecarRow`): written by `score.samples_sidecar`, its bytes by
  `layout.samples_bytes`; read by `layout.parse_sidecar` / `layout.read_sidecar`.

The summary groups (``summary.overall`` and each level) stay open dicts: their keys are metric
names from the registry (`phybench.scoring.metrics.METRICS`), read by name at run time.
"""
from __future__ import annotations

from typing import Any, TypedDict


class _Provenance(TypedDict):
    phybench_version: str
    task_spec_hash: str
    split_hash: str
    split_num_samples: int
    split_full_size: int | None
    protocol: str | None  # "full", "lite", "limit N"
    resolution: int  # px
    pixel_mapping: str  # "centre" or "grid" (`phybench.scoring.run.sample.pixel_mapping`)
    submission_hash: str | None
    weights: dict[str, Any]  # network name -> sha256 (and its source)
    metric_settings: dict[str, Any]  # every convention of every metric reported
    results_schema: str  # "docs/results.md"


class Provenance(_Provenance, total=False):
    """Where a results file's numbers come from: enough to reproduce them."""

    rescored: Any  # what `phybench rescore` recomputed (absent in a file scored once)


class Summary(TypedDict):
    """Per-split and per-level summaries: {metric: {"mean", "ci95", "count"}, "videos", ...}."""

    overall: dict[str, Any]
    levels: dict[str, dict[str, Any]]


class _Results(TypedDict):
    schema_version: int  # `results.SCHEMA_VERSION`
    kind: str  # "phybench-results"
    model: dict[str, Any]  # "name" and the model-description fields (`submission.model_fields`)
    task: str
    task_version: int
    split: str
    metrics: list[str]
    higher_is_better: dict[str, bool]
    summary: Summary
    untrackable: list[dict[str, Any]]  # {"sample_id", "level", "reason"}
    excluded: list[dict[str, Any]]  # {"sample_id", "level", "reason"}
    provenance: Provenance


class Results(_Results, total=False):
    """A results file (``NAME.json``): a model on one split, summarised, with its provenance."""

    warnings: list[str]  # what the scorer warned about (absent: nothing)


class _SidecarRow(TypedDict):
    sample_id: str
    level: str
    true_velocity: float | None  # the conditioned value of the plotted DoF
    generated_velocity: float | None  # None: untrackable


class SidecarRow(_SidecarRow, total=False):
    """One video of a sidecar: the plotted DoF, true and generated, and its fitted law."""

    law: dict[str, Any]  # `phybench.scoring.learned.law.sidecar_law`: {"law", "fit", "truth"}


class Sidecar(TypedDict):
    """A results file's ``NAME.samples.json``: per-video values for the board's scatter."""

    kind: str  # "phybench-samples"
    schema_version: int  # 1
    submission_hash: str | None
    split_hash: str
    dof: str  # the family's plotted DoF
    samples: list[SidecarRow]

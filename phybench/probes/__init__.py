"""Generalisation probes (paper section 5): one analysis module per probe, above the scorer.

A probe's task family and tasks (``probe = NAME``) are data and live with the task families
(`phybench.tasks.probe_families`); its module here (`priority`, `flip`, `gaps`, `holes`,
`composition`, `ambiguity`) registers a `Probe`: the analysis that turns a submission on one of its
evaluation splits into a versioned, deterministic results file (per video verdicts, per
split shares with intervals), the summary of several such files, its text, and its section
of the leaderboard's Probes page.  Importing this package imports the six, then every
``phybench.probes`` entry point (a plug-in's analysis; its family goes in
``phybench.families``).  A plug-in probe may also be one module that registers both
(`tests/test_probe_plugin.py` writes a throwaway one).  Nothing here names a task: a task's
pair and combinations come from its ``family_params``.

Here: `analyse` (a submission -> a results file), the results files' IO and checks, and
`summarise`.  Shared readers are in `reading`, shared HTML in `page`.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from .. import jsonsafe
from ..io import atomic_write_bytes
from ..scoring.run.results import json_ready
from ..tasks import family_of
from ..tasks.spec import TaskSpec
from .registry import PROBES, SCHEMA, SCHEMA_VERSION, Probe, ProbeError, register_probe

ENTRY_POINT_GROUP = "phybench.probes"

__all__ = ["ENTRY_POINT_GROUP", "PROBES", "SCHEMA", "SCHEMA_VERSION", "Probe", "ProbeError", "analyse", "load_plugins",
           "load_results", "probe_of", "register_probe", "probe_results_bytes", "results_digest", "summarise_probe",
           "write_probe_results"]


def probe_of(spec: TaskSpec) -> Probe:
    """The probe that analyses a task: its family's `probe`."""
    name = family_of(spec).probe
    if name is None:
        raise ProbeError(f"task {spec.name!r} is not a probe (its family {family_of(spec).name!r} has no analysis)")
    return PROBES.get(name)


def analyse(submission: str | os.PathLike[str], split_dir: str | os.PathLike[str],
            progress: bool = True, train_split: str | None = None) -> dict[str, Any]:
    """The results of a probe's analysis of one submission on one evaluation split.

    train_split: the training split the model learnt from, for probes whose verdict
    depends on it (gaps); default: the one the submission's model metadata names.
    """
    from ..data.split import SplitError, SplitReader
    from ..submission.archive import SubmissionError
    from ..submission.format import open_submission, submission_hash

    try:
        reader = SplitReader(split_dir)
    except SplitError as exc:
        raise ProbeError(f"--data: {exc}") from None
    manifest = reader.manifest
    probe = probe_of(reader.spec)
    if reader.spec.is_training(manifest["split"]):
        raise ProbeError(f"{split_dir} is the training split {manifest['split']}; analyse an evaluation split "
                         f"({', '.join(reader.spec.eval_splits)})")
    try:
        with open_submission(submission, manifest=manifest) as sub:
            meta = dict(sub.meta)
            if meta.get("split_hash") != manifest["split_hash"]:
                raise ProbeError(f"the submission was made for split hash {str(meta.get('split_hash'))[:12]}, "
                                 f"but {split_dir} has {manifest['split_hash'][:12]}")
            model = meta.get("model")
            if not isinstance(model, dict):
                model = {}
            options = {"train_split": train_split or model.get("train_split")}
            analysis = probe.analyse(reader, sub, progress, options)
        sub_hash = submission_hash(submission)
    except SubmissionError as exc:
        raise ProbeError("; ".join(p.message for p in exc.problems)) from None
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "probe": probe.name,
        "model": _model_name(meta), "task": manifest["task"], "spec_hash": manifest["spec_hash"],
        "split": manifest["split"], "split_hash": manifest["split_hash"], "resolution": manifest["resolution"],
        "submission_hash": sub_hash, "analysis": analysis,
    }


def _model_name(meta: dict[str, Any]) -> str:
    model = meta.get("model", "")
    return str(model.get("name", "")) if isinstance(model, dict) else str(model)


def probe_results_bytes(results: dict[str, Any]) -> bytes:
    return (json.dumps(json_ready(results), sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def write_probe_results(path: str | os.PathLike[str], results: dict[str, Any]) -> None:
    atomic_write_bytes(path, probe_results_bytes(results))


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A probe results file, checked: schema, version and that it is internally consistent."""
    path = Path(path)
    try:
        data = jsonsafe.read(path)
    except (OSError, ValueError) as exc:  # jsonsafe.JSONError: coded
        raise ProbeError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ProbeError(f"{path}: not a probe results file (schema {SCHEMA!r})")
    if not isinstance(data.get("model"), str) or not data["model"].strip() or data.get("probe") not in PROBES:
        raise ProbeError(f"{path}: model must be a non-empty name and probe a registered probe")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ProbeError(f"{path}: schema_version {data.get('schema_version')!r}; this phybench reads "
                         f"{SCHEMA_VERSION}")
    from ..tasks import TASKS

    if data.get("task") not in TASKS:
        raise ProbeError(f"{path}: unknown task {data.get('task')!r}")
    spec = TASKS.get(data["task"])
    if data.get("spec_hash") != spec.spec_hash():
        raise ProbeError(f"{path}: made for spec {str(data.get('spec_hash'))[:12]} of {spec.name}, this phybench "
                         f"has {spec.spec_hash()[:12]}")
    analysis = data.get("analysis", {})
    videos = analysis.get("videos", [])
    names = list(analysis.get("verdicts", {}))
    recount = {v: sum(1 for x in videos if x.get("verdict") == v) for v in names}
    if (not names or sum(recount.values()) != sum(1 for x in videos if x.get("verdict") is not None)
            or any(analysis["verdicts"][v].get("count") != recount[v] for v in names)):
        raise ProbeError(f"{path}: the verdict counts do not match its per-video verdicts")
    return data


def results_digest(results: dict[str, Any]) -> str:
    return hashlib.sha256(probe_results_bytes(results)).hexdigest()


def summarise_probe(probe: str, paths: Iterable[str | os.PathLike[str]]) -> dict[str, Any]:
    results = [load_results(p) for p in paths]
    wrong = [r["task"] for r in results if r["probe"] != probe]
    if wrong:
        raise ProbeError(f"results of another probe given to {probe}: {', '.join(wrong)}")
    return PROBES.get(probe).summarise(results)


def load_plugins() -> list[str]:
    """Import every ``phybench.probes`` entry point (a plug-in probe's analysis); returns the names loaded."""
    from ..registry import load_entry_points

    return load_entry_points(ENTRY_POINT_GROUP, "probe")


from . import priority, flip, gaps, holes, composition, ambiguity  # noqa: E402,F401  each registers its `Probe`

load_plugins()

"""phybench results in the Hub's own "Eval Results" format (issue 36 item 8).

Since 2026 the Hugging Face Hub aggregates benchmark results itself
(https://huggingface.co/docs/hub/eval-results): a *benchmark* dataset repository declares
its tasks in an ``eval.yaml`` at its root, and a *model* repository carries small YAML files
under ``.eval_results/``, one list of ``{dataset: {id, task_id}, value, ...}`` entries per
file, which the Hub shows on the model page and on the benchmark's leaderboard.

Here:

* `eval_results_files`: a model's results files -> ``.eval_results/phybench-<task>-<split>.yaml``
  (one file per results file, one entry per metric of its whole-split summary);
* `eval_yaml`: the board's results -> the ``eval.yaml`` of the board's dataset repository
  (one Hub task per phybench task, split and metric, each metric with ``lower_is_better``);
* `validate_eval_results` / `validate_eval_yaml`: the documented schemas, kept in
  ``phybench/leaderboard/schemas/`` (their ``$comment`` cites the source), checked with
  `jsonschema`, plus what a schema cannot say (finite values, unique task ids).

A Hub task id is ``<task>/<split>/<metric>`` (e.g. ``uniform/id-eval/velocity_error_ranked``):
the Hub shows one value per task, and phybench reports several metrics per split.  Every
input is read size-capped as a regular file (`phybench.leaderboard.common.files`) and YAML only
through ``yaml.safe_load`` (no Python objects).  Problems raise `HubFormatError` with a code.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from ... import jsonsafe
from ..._version import __version__
from ...scoring.run.layout import is_beside, record_path

EVAL_RESULTS_DIR = ".eval_results"
EVAL_YAML = "eval.yaml"
FRAMEWORK = "phybench"  # not in the Hub's framework list yet (docs/leaderboard.md says what that means)
MAX_YAML_BYTES = 1024 * 1024  # an eval.yaml or .eval_results file of the whole board is a few tens of KB
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")  # a task, split or metric name that may be part of a file name
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


class HubFormatError(Exception):
    """A file in (or for) the Hub's Eval Results format that phybench refuses; `code` names why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


@lru_cache(maxsize=None)
def packaged_schema(name: str) -> dict[str, Any]:
    """A packaged schema: ``eval_results`` or ``eval_yaml``."""
    packaged = resources.files(__package__).joinpath("schemas").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(packaged)
    return doc


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _schema_problems(doc: Any, name: str) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(packaged_schema(name))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def validate_eval_results(doc: Any) -> None:
    """One ``.eval_results/*.yaml`` document against the Hub's documented schema; finite values."""
    problems = _schema_problems(doc, "eval_results")
    if not problems:
        problems = [f"{i}/value: {entry['value']} is not a finite number" for i, entry in enumerate(doc)
                    if isinstance(entry["value"], bool) or not math.isfinite(entry["value"])]
    if problems:
        raise HubFormatError("eval_results_invalid", f"{len(problems)} problem(s): " + "; ".join(problems[:5]))


def validate_eval_yaml(doc: Any) -> None:
    """An ``eval.yaml`` against the Hub's documented schema; unique ids; every task's metric declared."""
    problems = _schema_problems(doc, "eval_yaml")
    if not problems:
        ids = [t["id"] for t in doc["tasks"]]
        problems += [f"tasks: id {i!r} appears more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
        declared = {m["id"] for m in doc.get("metrics", [])}
        problems += [f"tasks/{t['id']}: metric {m!r} is not declared under metrics"
                     for t in doc["tasks"] for m in t.get("metrics", []) if m not in declared]
    if problems:
        raise HubFormatError("eval_yaml_invalid", f"{len(problems)} problem(s): " + "; ".join(problems[:5]))


def load_yaml(path: str | Path) -> Any:
    """A YAML file of ours or the Hub's, read as a size-capped regular file and parsed safely."""
    import yaml

    from ..common.files import UnsafeFile, read_regular

    try:
        data = read_regular(path, MAX_YAML_BYTES)
    except UnsafeFile as exc:
        raise HubFormatError(exc.code, str(exc)) from None
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise HubFormatError("yaml_unreadable", f"{Path(path).name} is not YAML: {str(exc).splitlines()[0][:200]}") from None


def dump_yaml(doc: Any) -> bytes:
    """Plain block YAML, keys in the order given (dates and look-alike strings are quoted)."""
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100).encode("utf-8")


# ---------------------------------------------------------------- reading results files
def read_hub_results(path: Path) -> dict[str, Any]:
    """A phybench results file, read as a size-capped regular file; `HubFormatError` otherwise."""
    from ..common.files import UnsafeFile, read_regular

    try:
        doc = jsonsafe.loads(read_regular(path), path.name)
    except UnsafeFile as exc:
        raise HubFormatError(exc.code, str(exc)) from None
    except ValueError as exc:  # jsonsafe.JSONError: its code is in the message
        raise HubFormatError("results_unreadable", f"{path.name} is not a JSON results file "
                             f"({getattr(exc, 'code', 'json_malformed')}: {exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") != "phybench-results":
        raise HubFormatError("not_results", f"{path.name} is not a phybench results file (kind phybench-results)")
    for key in ("task", "split"):
        if not isinstance(doc.get(key), str) or not NAME.fullmatch(doc[key]):
            raise HubFormatError("results_names", f"{path.name}: {key} {str(doc.get(key))[:40]!r} is not a plain name")
    return doc


def publishable_files(paths: Iterable[str | Path]) -> list[Path]:
    """The results files among files and folders (sidecars, records and probe files left out)."""
    from ..common.files import scan

    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir() and not p.is_symlink():
            found, refused = scan(p)
            if refused:
                path, code, reason = refused[0]
                raise HubFormatError(code, reason)
            out += [f for f in found if not is_beside(f)]
        else:
            out.append(p)
    return out


def metric_values(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """(metric, whole-split value) for every metric of the file that has a finite one, in the
    file's order: a per-video metric's mean, a set metric's value."""
    from ...scoring.metrics import is_set_metric

    overall = _dict(_dict(doc.get("summary")).get("overall"))
    out = []
    for name in doc.get("metrics") or []:
        entry = overall.get(name) if isinstance(name, str) and NAME.fullmatch(name) else None
        value = (entry or {}).get("value" if is_set_metric(name) else "mean") if isinstance(entry, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out.append((name, float(value)))
    return out


def lower_is_better(doc: dict[str, Any], metric: str) -> bool:
    """From the registry, else from the results file's own `higher_is_better`."""
    from ...scoring.metrics import METRICS

    if metric in METRICS:
        return not METRICS.get(metric).higher_is_better
    return not bool((doc.get("higher_is_better") or {}).get(metric, False))


def task_id(doc: dict[str, Any], metric: str) -> str:
    return f"{doc['task']}/{doc['split']}/{metric}"


# ---------------------------------------------------------------- .eval_results for a model repository
def _record_date(path: Path) -> str | None:
    """The verification record's date beside a results file, if it has a readable one."""
    from ..common.files import UnsafeFile, read_regular

    record = record_path(path)
    try:
        date = jsonsafe.loads(read_regular(record, 1 << 20)).get("date") if record.exists() else None
    except (UnsafeFile, ValueError, AttributeError, OSError):  # jsonsafe.JSONError is a ValueError
        return None
    return date if isinstance(date, str) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", date) else None


def _notes(doc: dict[str, Any]) -> str:
    """What the Hub shows beside a value: the model as the results file names it, bounded and printable."""
    name = "".join(c for c in str(_dict(doc.get("model")).get("name", "?"))[:80] if c.isprintable())
    prov = _dict(doc.get("provenance"))
    sub, split_hash = str(prov.get("submission_hash", ""))[:12], str(prov.get("split_hash", ""))[:12]
    return f"phybench {str(prov.get('phybench_version', __version__))[:20]}; model {name}; submission {sub}; split {split_hash}"


def eval_results_entries(doc: dict[str, Any], benchmark: str, *, revision: str | None = None,
                         date: str | None = None, source_url: str | None = None) -> list[dict[str, Any]]:
    """The Hub entries of one results file: one per metric with a whole-split value."""
    dataset: dict[str, Any] = {"id": benchmark}
    entries = []
    for metric, value in metric_values(doc):
        entry: dict[str, Any] = {"dataset": {**dataset, "task_id": task_id(doc, metric)}, "value": value}
        if revision:
            entry["dataset"]["revision"] = revision
        if date:
            entry["date"] = date
        if source_url:
            entry["source"] = {"url": source_url, "name": "phybench results"}
        entry["notes"] = _notes(doc)
        entries.append(entry)
    return entries


def eval_results_files(paths: Sequence[str | Path], benchmark: str, *, revision: str | None = None,
                       source_url: str | None = None) -> dict[str, bytes]:
    """{``.eval_results/phybench-<task>-<split>.yaml``: bytes} for one model's results files.

    A model repository holds one model: results files of two models are refused
    (`eval_results_models`), as are two files of one split (`eval_results_duplicate`)."""
    if not REPO_ID.fullmatch(benchmark or ""):
        raise HubFormatError("benchmark_id", f"--benchmark {str(benchmark)[:100]!r} is not a Hub dataset id OWNER/NAME")
    if revision is not None and not re.fullmatch(r"[0-9a-f]{40}", revision):
        raise HubFormatError("benchmark_revision", "--revision must be a full 40-hex commit id of the benchmark dataset")
    if source_url is not None and not re.fullmatch(r"https?://\S{1,500}", source_url):
        raise HubFormatError("source_url", "--source-url must be an http(s) URL without spaces")
    out: dict[str, bytes] = {}
    models: set[str] = set()
    for path in publishable_files(paths):
        doc = read_hub_results(path)
        models.add(str((doc.get("model") or {}).get("name")))
        name = f"{EVAL_RESULTS_DIR}/phybench-{doc['task']}-{doc['split']}.yaml"
        if name in out:
            raise HubFormatError("eval_results_duplicate", f"two results files for {doc['task']}/{doc['split']} "
                                                           f"({path.name} is the second); export one per split")
        entries = eval_results_entries(doc, benchmark, revision=revision, date=_record_date(path),
                                       source_url=source_url)
        if not entries:
            raise HubFormatError("eval_results_empty", f"{path.name} has no whole-split metric value to export")
        validate_eval_results(entries)
        out[name] = dump_yaml(entries)
    if len(models) > 1:
        raise HubFormatError("eval_results_models", f"the results files name {len(models)} models; a model repository "
                                                    "holds one: export each model's files on their own")
    if not out:
        raise HubFormatError("eval_results_empty", "no results files given")
    return out


# ---------------------------------------------------------------- eval.yaml for the board's dataset repository
DESCRIPTION = (
    "phybench: does a video generation model learn physical laws? Each model continues the conditioning frames "
    "of rendered physics scenes (uniform motion, parabolas, collisions, ...); the videos are tracked and scored "
    "per task and split. One leaderboard per task, split and metric (task id task/split/metric); most metrics are "
    "errors, better when lower (each metric says so under metrics). The board re-scores every submission and "
    "signs a verification record for it (docs/leaderboard.md).")


def eval_yaml(results_dir: str | Path, *, name: str = "phybench") -> dict[str, Any]:
    """The ``eval.yaml`` of the board's dataset repository: one task per (task, split, metric) that
    some results file of the board reports, in a stable order; metrics with their direction."""
    tasks: dict[str, dict[str, Any]] = {}
    metrics: dict[str, bool] = {}
    for path in publishable_files([results_dir]):
        try:
            doc = read_hub_results(path)
        except HubFormatError as exc:
            if exc.code == "not_results":  # a probe's file: not a leaderboard of its own
                continue
            raise
        for metric, _ in metric_values(doc):
            metrics.setdefault(metric, lower_is_better(doc, metric))
            tasks.setdefault(task_id(doc, metric), {"id": task_id(doc, metric), "config": doc["task"],
                                                    "split": doc["split"], "metrics": [metric]})
    if not tasks:
        raise HubFormatError("eval_yaml_empty", f"no results files with whole-split values under {results_dir}")
    doc_out = {"name": name, "description": DESCRIPTION, "evaluation_framework": FRAMEWORK,
               "metrics": [{"id": m, "lower_is_better": lib} for m, lib in sorted(metrics.items())],
               "tasks": [tasks[k] for k in sorted(tasks)]}
    validate_eval_yaml(doc_out)
    return doc_out


def write_files(files: dict[str, bytes], out: str | Path) -> list[Path]:
    """Write {relative path: bytes} under `out` (each path checked to stay inside it) as one unit.

    Every path is checked before anything is written, and the files go through
    `atomic_write_many` (all staged, then renamed): a failure part-way (a full disk, a folder
    where a file should go) leaves none of them new and no folder made for them, so a model
    repository never holds half of an export."""
    from ...io import atomic_write_many

    root = Path(out)
    targets = []
    for rel, data in sorted(files.items()):
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise HubFormatError("path_outside", f"{rel!r} would be written outside {root}")
        targets.append((root / rel, data))
    atomic_write_many(targets)
    return [path for path, _ in targets]


__all__ = ["EVAL_RESULTS_DIR", "EVAL_YAML", "HubFormatError", "eval_results_files", "eval_yaml",
           "load_yaml", "validate_eval_results", "validate_eval_yaml", "write_files"]

"""The leaderboard: results files in, a static site out (tables, plots, exports).

`build(RESULTS_DIR, SITE_DIR)` reads every ``*.json`` results file (docs/results.md) under
RESULTS_DIR, refuses the ones whose provenance does not match this phybench, and writes a
site that needs no server: open ``index.html`` from disk.  The page embeds its data as one
JSON script tag (no fetch of local files), draws its tables with the small plain script in
``phybench/leaderboard/template/leaderboard.js`` and its plots as inline SVG made here.
Beside it go ``leaderboard.md`` (one table per task, for READMEs and papers),
``leaderboard.csv`` and ``leaderboard.json`` (the combined table, one row per model, task,
level and metric).

What a results file must agree on before it is shown:

* its `schema_version` is one this module reads and its `kind` is ``phybench-results``;
* its task is registered, with the same version and spec hash (`phybench.tasks`);
* its metric settings are the ones this phybench writes, for every metric it reports;
* its weight hashes are the pinned ones (`phybench.scoring.weights.weight_hashes`);
* results on the same (task, split, resolution) quote the same split hash, and that hash
  is the manifest's when the maintainers pass the split folders (`splits_dir`).

Every refusal names the file and the reason.  Submissions are untrusted text: every name
and note is escaped for the medium it lands in (HTML, SVG, JSON in a script tag, Markdown
table cells, CSV cells that a spreadsheet would run as formulas).  The output is
deterministic: the same inputs give the same bytes.
"""
from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from .. import __version__
from ..scoring.metrics import METRICS, all_metrics, is_set_metric, metric_names
from ..scoring.results import SCHEMA_VERSION, results_bytes
from ..data.split import atomic_write_bytes
from ..problems import Problem
from . import probes as probe_page

LEADERBOARD_SCHEMA_VERSION = 1
SAMPLES_SUFFIX = ".samples.json"  # per-sample velocity sidecar beside a results file
SAMPLES_KIND = "phybench-samples"
EVAL_SPLITS = ("id-eval", "ood-eval")  # the fundamental layout; a task may declare others


def _eval_splits(task: Any) -> tuple[str, ...]:
    """The evaluation splits a registered task declares (training splits are not entries)."""
    try:
        from ..tasks import get_task

        return get_task(task).eval_splits
    except Exception:  # an unregistered task is refused elsewhere, with its own reason
        return EVAL_SPLITS


def _layout(task: Any) -> str:
    """How a task's board is laid out: "levels" or "splits" (`TaskFamily.board_layout`)."""
    try:
        from ..tasks import family_of, get_task

        return family_of(get_task(task)).board_layout
    except Exception:
        return "levels"


def _is_ood_split(task: str, split: str) -> bool:
    """A split drawn OOD level by level: its whole-split summary is the "OOD overall" column."""
    try:
        from ..tasks import get_task

        return get_task(task).split(split).draw == "ood-levels"
    except Exception:
        return split == "ood-eval"
# Tables open on (and the Markdown ranks by) the ranked velocity error (docs/results.md, "The
# ranked column"): a lost frame costs more the more frames are lost, so losing balls never
# improves a rank; results files without it (made before it existed) fall back to the
# lost-ball-as-worst column, then to the paper's trackable-only mean.
PRIMARY_METRIC = "velocity_error_ranked"
OLDER_PRIMARY = "velocity_error_penalised"
FALLBACK_METRIC = "velocity_error"
TEMPLATE_PACKAGE = "phybench.leaderboard"
TEMPLATE_DIR = "template"
STATIC_FILES = ("style.css", "leaderboard.js")  # copied verbatim from the template

# Which block of `provenance.metric_settings` states a metric's conventions, which pinned
# network it runs (its weight hash must be in `provenance.weights`), its label and unit:
# the metric registry, `phybench.scoring.metrics.METRICS`.
ID_LEVEL = "id"
OOD_ALL = "ood-overall"  # the ood-eval file's `summary.overall`: every OOD video together

# Observable 10: distinct, colour-blind friendly enough, calm on white and on dark.
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e", "#9498a0")
ID_COLOUR = "#4269d0"
OOD_COLOURS = ("#ff725c", "#efb118", "#a463f2", "#3ca951", "#ff8ab7", "#9c6b4e", "#6cc5b0")
SIZE_ORDER = ("XS", "S", "M", "B", "L", "XL", "XXL", "H", "G")  # DiT / ViT size letters


class LeaderboardError(Exception):
    """Results were refused (or the input is unusable); `refused` lists (file, reason)."""

    def __init__(self, message: str, refused: Sequence["Refusal"] = ()) -> None:
        super().__init__(message)
        self.refused = list(refused)


# Refusal codes (stable; listed in docs/submission.md and leaderboard/README.md).  A file refused
# for several reasons carries the first one's code; its reason lists them all.
RESULTS_FORMAT = "results_format"  # not JSON, wrong kind or schema version, missing or mistyped keys
RESULTS_REGISTRY = "results_registry"  # task, spec, metric settings, directions or weights not this phybench's
RESULTS_SIDECAR = "results_sidecar"  # the .samples.json beside it is malformed or quotes another file
SPLIT_HASH_DISAGREES = "split_hash_disagrees"  # files on one split quote different split hashes
SPLIT_NOT_FOUND = "split_not_found"  # --splits: no split folder to verify the file against
SPLIT_HASH_MISMATCH = "split_hash_mismatch"  # --splits: the hash is not that split's manifest's
DUPLICATE_MODEL = "duplicate_model"  # one model twice on one (task, split, resolution)
LEVEL_CLASH = "level_clash"  # a model's level(s) given by two files (e.g. "id" in an ood-eval file)


class Refusal(Problem):
    """A results file the build refused: a `Problem` (a code above) whose entry is the file."""

    def __init__(self, file: str, reason: str, code: str = "refused") -> None:
        super().__init__("error", code, None, reason, file)

    @property
    def file(self) -> str:  # relative to the results folder
        return str(self.entry)

    @property
    def reason(self) -> str:
        return self.message

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"

    def __repr__(self) -> str:
        return f"Refusal({self.file!r}, {self.reason!r})"


@dataclass
class BuildReport:
    """What `build` read, refused and wrote."""

    out_dir: Path
    accepted: list[str] = field(default_factory=list)  # results files shown
    refused: list[Refusal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # site files, relative to out_dir
    boards: int = 0  # task tables (one per task and resolution)
    models: int = 0  # distinct model names shown

    @property
    def ok(self) -> bool:
        return not self.refused

    def to_text(self) -> str:
        lines = [
            f"leaderboard: {self.out_dir / 'index.html'}",
            f"  {len(self.accepted)} results file(s), {self.models} model(s), {self.boards} task table(s)",
        ]
        if self.refused:
            lines.append(f"  refused {len(self.refused)} file(s):")
            lines += [f"    {r}" for r in self.refused]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass
class _Entry:
    """One accepted results file."""

    file: str
    results: dict[str, Any]
    samples: dict[str, Any] | None = None

    @property
    def model(self) -> str:
        return self.results["model"]["name"]

    @property
    def protocol_group(self) -> str:
        """'full', 'lite' or 'debug': results on different official protocols are different boards."""
        name = _protocol(self.results["task"], self.results["provenance"])
        return name if name in ("full", "lite") else "debug"

    @property
    def key(self) -> tuple[str, int, str]:
        """(task, resolution, protocol group): one board each."""
        return self.results["task"], int(self.results["provenance"]["resolution"]), self.protocol_group


# ================================================================ reading and checking
def _load(path: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """A results document and the structural problems that stop it being read at all."""
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, [f"not valid JSON ({exc})"]
    if not isinstance(doc, dict) or doc.get("kind") != "phybench-results":
        kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        return None, [f"not a phybench results file (kind {kind!r}, expected 'phybench-results')"]
    if doc.get("schema_version") != SCHEMA_VERSION:
        return None, [
            f"schema_version {doc.get('schema_version')!r} is not one this phybench ({__version__}) reads "
            f"(it reads {SCHEMA_VERSION}); re-score with this version"
        ]
    problems = []
    model = doc.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("name"), str) or not model["name"].strip():
        problems.append("model.name is missing or empty")
    for key, kind in (("task", str), ("split", str), ("task_version", int), ("summary", dict), ("provenance", dict)):
        if not isinstance(doc.get(key), kind):
            problems.append(f"{key} is missing or not a {kind.__name__}")
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    for key, kind in (("task_spec_hash", str), ("split_hash", str), ("resolution", int), ("metric_settings", dict)):
        if not isinstance(prov.get(key), kind):
            problems.append(f"provenance.{key} is missing or not a {kind.__name__}")
    if "weights" in prov and not isinstance(prov["weights"], dict):
        problems.append("provenance.weights is not an object")
    summary = doc.get("summary")
    if isinstance(summary, dict) and not (
        isinstance(summary.get("overall"), dict)
        and isinstance(summary.get("levels"), dict)
        and all(isinstance(v, dict) for v in summary["levels"].values())
    ):
        problems.append("summary must be {\"overall\": {...}, \"levels\": {level: {...}}}")
    for key, kind in (("metrics", list), ("higher_is_better", dict), ("untrackable", list), ("warnings", list)):
        if key in doc and not isinstance(doc[key], kind):
            problems.append(f"{key} is not a {kind.__name__}")
    allowed = _eval_splits(doc.get("task"))
    if isinstance(doc.get("split"), str) and doc["split"] not in allowed:
        problems.append(f"split {doc['split']!r} is not an evaluation split ({', '.join(allowed)})")
    return (None if problems else doc), problems


def _metrics_present(doc: dict[str, Any]) -> set[str]:
    present = {m for m in doc.get("metrics", []) if isinstance(m, str)}
    for group in _groups(doc):
        present |= {k for k in group if k in METRICS}
    return present & set(METRICS)


def _report_order() -> tuple[str, ...]:
    """Per-video metrics, then set metrics, each in registration order (table columns)."""
    return metric_names("video") + metric_names("set")


def _groups(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every summary of a results file: the whole split, then each level."""
    return [doc["summary"]["overall"], *doc["summary"]["levels"].values()]


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                out.append(sub)
            else:
                out += _diff(a[key], b[key], sub)
        return out
    return [] if a == b else [path or "(value)"]


class _Registry:
    """What this phybench would write into a results file, computed once per build."""

    def __init__(self) -> None:
        self._settings: dict[str, Any] = {}
        self._weights: tuple[dict[str, str] | None, str] | None = None

    def settings(self, key: str) -> Any:
        """The current `metric_settings[key]`, as it reads back from a results file; None if none."""
        if key not in self._settings:
            metric = next((m for m in all_metrics() if m.settings_key == key), None)
            try:
                value = metric.settings if metric is not None else None
            except Exception:  # a module being written, or an optional dependency missing
                value = None
            self._settings[key] = None if value is None else json.loads(results_bytes({"v": value}))["v"]
        return self._settings[key]

    def weights(self) -> tuple[dict[str, str] | None, str]:
        if self._weights is None:
            try:
                from ..scoring.weights import weight_hashes

                self._weights = (dict(weight_hashes()), "")
            except Exception as exc:
                self._weights = (None, f"{type(exc).__name__}: {exc}")
        return self._weights


def _check_registry(doc: dict[str, Any], registry: _Registry) -> list[str]:
    """Reasons a readable results file does not match this phybench's registry."""
    from ..registry import RegistryError
    from ..tasks import get_task

    reasons: list[str] = []
    prov = doc["provenance"]
    try:
        spec = get_task(doc["task"])
    except RegistryError as exc:
        return [str(exc)]
    if doc["task_version"] != spec.version:
        reasons.append(f"task {spec.name} version {doc['task_version']} is not the registered version {spec.version}")
    if prov["task_spec_hash"] != spec.spec_hash():
        reasons.append(
            f"task_spec_hash {prov['task_spec_hash'][:12]} does not match the registered {spec.name} spec "
            f"{spec.spec_hash()[:12]} (scored with phybench {prov.get('phybench_version', '?')}; "
            f"regenerate the split and re-score with {__version__})"
        )

    present = _metrics_present(doc)
    written = prov["metric_settings"]
    needed = {METRICS.get(m).settings_key for m in present} - {None}
    for key in sorted(needed | set(written)):
        current = registry.settings(key)
        if key not in written:
            metrics = ", ".join(sorted(m for m in present if METRICS.get(m).settings_key == key))
            reasons.append(f"metric_settings has no {key!r} block, but the file reports {metrics}")
        elif current is None:
            if key in needed:
                reasons.append(f"metric_settings[{key!r}] cannot be checked: this phybench defines no {key} settings")
        else:
            changed = _diff(written[key], current)
            if changed:
                shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
                reasons.append(f"metric_settings[{key!r}] differ from this phybench's ({shown})")

    recorded, derived = prov.get("protocol"), _protocol(doc["task"], prov)
    if recorded is not None and recorded != derived:
        reasons.append(f"provenance.protocol {recorded!r} does not match its sizes ({prov.get('split_num_samples')} "
                       f"of {prov.get('split_full_size')} samples make {derived!r})")

    written_dirs = doc.get("higher_is_better") or {}
    flipped = sorted(m for m, hib in written_dirs.items() if m in METRICS and hib != METRICS.get(m).higher_is_better)
    if flipped:
        reasons.append(f"higher_is_better differs from this phybench for {', '.join(flipped)}")

    used = prov.get("weights") or {}
    for metric, name in ((m.name, m.weights) for m in all_metrics() if m.weights):
        if metric in present and name not in used:
            reasons.append(f"reports {metric} but provenance.weights has no {name!r} hash")
    if used:
        pinned, error = registry.weights()
        if pinned is None:
            reasons.append(f"weight hashes cannot be checked: phybench.scoring.weights does not import ({error})")
        else:
            for name, value in sorted(used.items()):
                if name not in pinned:
                    reasons.append(f"weights[{name!r}] is not a weight file this phybench pins")
                elif value != pinned[name]:
                    reasons.append(
                        f"weights[{name!r}] hash {str(value)[:12]} is not the pinned {pinned[name][:12]} "
                        "(run `phybench weights verify`)"
                    )
    return reasons


def _load_samples(path: Path, doc: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """The per-sample velocity sidecar of a results file (see leaderboard/README.md)."""
    name = path.name
    try:
        side = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, [f"{name} is not valid JSON ({exc})"]
    if not isinstance(side, dict) or side.get("kind") != SAMPLES_KIND or side.get("schema_version") != 1:
        return None, [f"{name} is not a {SAMPLES_KIND} file with schema_version 1"]
    problems = []
    prov = doc["provenance"]
    for key in ("submission_hash", "split_hash"):
        if side.get(key) != prov.get(key):
            problems.append(f"{name}: {key} {str(side.get(key))[:12]} is not the results file's {str(prov.get(key))[:12]}")
    samples = side.get("samples")
    if not isinstance(samples, list):
        return None, problems + [f"{name}: 'samples' must be a list"]
    clean = []
    for i, s in enumerate(samples):
        ok = (
            isinstance(s, dict)
            and isinstance(s.get("sample_id"), str)
            and isinstance(s.get("level"), str)
            and _is_number(s.get("true_velocity"))
            and (s.get("generated_velocity") is None or _is_number(s.get("generated_velocity")))
        )
        if not ok:
            problems.append(
                f"{name}: samples[{i}] needs sample_id (string), level (string), true_velocity (number) "
                "and generated_velocity (number or null)"
            )
            break
        clean.append({k: s[k] for k in ("sample_id", "level", "true_velocity", "generated_velocity")})
    if problems:
        return None, problems
    dof = side.get("dof")
    return {"dof": dof if isinstance(dof, str) else None, "samples": sorted(clean, key=lambda s: s["sample_id"])}, []


def _protocol(task: str, prov: dict[str, Any]) -> str | None:
    """'full', 'lite' or 'limit N' (a debugging subset), from a results file's sizes.

    Files record it (`provenance.protocol`); the sizes decide, so an older file without the
    key reads the same and a file whose key disagrees with its sizes is refused (`_check`).
    """
    from ..tasks.protocols import protocol_of

    n, full = prov.get("split_num_samples"), prov.get("split_full_size")
    return protocol_of(task, n, full) if isinstance(n, int) and isinstance(full, int) else None


def _samples_words(doc: dict[str, Any]) -> str:
    """'the full split (1050 samples)' or 'a 64-sample subset of 1050 (--limit 64)', from provenance."""
    prov = doc.get("provenance", {})
    n, full = prov.get("split_num_samples"), prov.get("split_full_size")
    if not isinstance(n, int):
        return "an unknown number of samples"
    if isinstance(full, int) and n >= full:
        return f"the full split ({n} samples)"
    return f"a {n}-sample subset" + (f" of {full}" if isinstance(full, int) else "") + f" (--limit {n})"


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _split_manifests(splits_dir: Path) -> dict[tuple[str, str, int], dict[str, str]]:
    """(task, split, resolution) -> {split hash: folder} for every split folder under `splits_dir`."""
    found: dict[tuple[str, str, int], dict[str, str]] = {}
    files = sorted(set(splits_dir.glob("manifest.json")) | set(splits_dir.glob("*/manifest.json"))
                   | set(splits_dir.glob("*/*/manifest.json")))
    for file in files:
        try:
            m = json.loads(file.read_text())
            key = (str(m["task"]), str(m["split"]), int(m["resolution"]))
            found.setdefault(key, {})[str(m["split_hash"])] = file.parent.relative_to(splits_dir).as_posix() or "."
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a split manifest; the results it would verify are refused below
    return found


def _read_all(
    results_dir: Path, registry_check: bool, splits_dir: Path | None, skip: Path | None = None
) -> tuple[list[_Entry], list[Refusal], list[str]]:
    refused: dict[str, list[tuple[str, str]]] = {}  # file -> (code, reason), in the order found
    warnings: list[str] = []
    entries: list[_Entry] = []
    registry = _Registry()
    files = sorted(
        (p for p in results_dir.rglob("*.json")
         if not any(part.startswith(".") for part in p.relative_to(results_dir).parts)
         and not (skip is not None and p.resolve().is_relative_to(skip))),  # a site built inside the folder
        key=lambda p: p.relative_to(results_dir).as_posix(),
    )
    results_files = [p for p in files if not p.name.endswith(SAMPLES_SUFFIX)
                     and not probe_page.is_probe_file(p)]  # probe results: the Probes page's own check
    stems = {p.with_suffix("") for p in results_files}
    for p in files:
        if p.name.endswith(SAMPLES_SUFFIX) and p.with_name(p.name[: -len(SAMPLES_SUFFIX)]) not in stems:
            warnings.append(f"{p.relative_to(results_dir).as_posix()}: sidecar without a results file beside it; ignored")

    for path in results_files:
        rel = path.relative_to(results_dir).as_posix()
        doc, problems = _load(path)
        code = RESULTS_FORMAT
        if doc is not None and registry_check:
            problems, code = _check_registry(doc, registry), RESULTS_REGISTRY
        samples = None
        side = path.with_name(path.stem + SAMPLES_SUFFIX)
        if doc is not None and not problems and side.is_file():
            (samples, problems), code = _load_samples(side, doc), RESULTS_SIDECAR
        if problems:
            refused[rel] = [(code, p) for p in problems]
        else:
            entries.append(_Entry(rel, doc, samples))

    # Results on the same split must agree on what that split is.
    # (Official protocols are separate boards, so a full and a lite result never disagree;
    # debugging subsets of different sizes do, and are refused with the reason in words.)
    by_split: dict[tuple[str, str, int, str], list[_Entry]] = {}
    for e in entries:
        by_split.setdefault((e.results["task"], e.results["split"], e.key[1], e.key[2]), []).append(e)
    manifests = _split_manifests(splits_dir) if splits_dir is not None else None
    for (task, split, res, _), group in sorted(by_split.items()):
        hashes = sorted({e.results["provenance"]["split_hash"] for e in group})
        if len(hashes) > 1:
            for e in group:
                other = [o for o in group if o.results["provenance"]["split_hash"] != e.results["provenance"]["split_hash"]]
                mine, theirs = _samples_words(e.results), _samples_words(other[0].results)
                why = (f"; this file is on {mine}, {other[0].file} on {theirs}: score both on the same samples "
                       f"(`phybench generate {task} --split {split}` with the same --limit, or none for the full "
                       "split; the command is in the split's manifest.json)" if mine != theirs else
                       "; they are on the same number of samples, so the splits differ in content: regenerate "
                       "one with this phybench, or check which one `phybench verify` accepts")
                refused.setdefault(e.file, []).append((SPLIT_HASH_DISAGREES,
                    f"split hash {e.results['provenance']['split_hash'][:12]} of {task}/{split} at {res} px disagrees "
                    f"with {', '.join(o.file for o in other)}; every results file on one split must quote the same "
                    f"split hash{why}"
                ))
        if manifests is not None:
            known = manifests.get((task, split, res))
            for e in group:
                h = e.results["provenance"]["split_hash"]
                if not known:
                    refused.setdefault(e.file, []).append(
                        (SPLIT_NOT_FOUND, f"no {task}/{split} split at {res} px under the split folders to verify it against"))
                elif h not in known:
                    where = ", ".join(f"{folder} ({k[:12]})" for k, folder in sorted(known.items()))
                    refused.setdefault(e.file, []).append((SPLIT_HASH_MISMATCH, f"split hash {h[:12]} is not the manifest's: {where}"))

    # One model, one file per (task, split, resolution): two would be ambiguous.
    seen: dict[tuple[str, str, str, int, str], list[str]] = {}
    for e in entries:
        seen.setdefault((e.model, e.results["task"], e.results["split"], e.key[1], e.key[2]), []).append(e.file)
    for (model, task, split, res, _), group in seen.items():
        if len(group) > 1:
            for f in group:
                others = ", ".join(g for g in group if g != f)
                refused.setdefault(f, []).append((DUPLICATE_MODEL, f"model {model!r} on {task}/{split} at {res} px is also in {others}"))

    entries = [e for e in entries if e.file not in refused]
    refusals = [Refusal(f, "; ".join(r for _, r in reasons), reasons[0][0]) for f, reasons in sorted(refused.items())]
    return entries, refusals, warnings


# ================================================================ the combined table
def _split_columns(task: str, present: Iterable[str]) -> list[dict[str, str]]:
    """Columns of a "splits" board: each evaluation split the task declares, in its order."""
    from ..tasks import get_task

    present = set(present)
    spec = get_task(task)
    return [{"key": s, "label": s, "group": "", "short": s, "title": spec.split(s).description or s}
            for s in spec.eval_splits if s in present]


def _levels(task: str, present: Iterable[str]) -> list[dict[str, str]]:
    """Columns of a task table: ID, all OOD videos, then each OOD level in registry order."""
    if _layout(task) == "splits":
        return _split_columns(task, present)
    described: dict[str, str] = {}
    order: list[str] = []
    try:
        from ..tasks import get_task

        spec = get_task(task)
        for level in spec.ood_levels:
            order.append(level.name)
            described[level.name] = level.description or f"{', '.join(level.ood_dofs)} out of the training range"
    except Exception:
        pass
    present = set(present)
    cols = []
    # label: in Markdown and plots; group + short: the two lines of a table header
    if ID_LEVEL in present:
        cols.append({"key": ID_LEVEL, "label": "ID", "group": "", "short": "ID",
                     "title": "in distribution: every parameter inside the training range"})
    if OOD_ALL in present:
        cols.append({"key": OOD_ALL, "label": "OOD overall", "group": "OOD", "short": "overall",
                     "title": "out of distribution: every OOD video together"})
    for name in order + sorted(present - set(order) - {ID_LEVEL, OOD_ALL}):
        if name in present:
            cols.append({"key": name, "label": f"OOD {name}", "group": "OOD level", "short": name,
                         "title": described.get(name, f"OOD level {name}")})
    return cols


def _train_size(value: Any) -> float | None:
    """30000, "30k", "3M", "3,000,000" -> a number of training videos."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9][0-9,_]*\.?[0-9]*)\s*([kKmMbB]?)\s*", value)
        if m:
            return float(m.group(1).replace(",", "").replace("_", "")) * {"": 1, "k": 1e3, "m": 1e6, "b": 1e9}[m.group(2).lower()]
    return None


def _scalar(x: Any) -> bool:
    return isinstance(x, (str, int, float)) and not isinstance(x, bool)


def _model_meta(model: dict[str, Any]) -> dict[str, Any]:
    """The `model` fields the page shows; anything of an unexpected type is dropped."""
    meta: dict[str, Any] = {}
    for key in ("family", "size", "version", "model_version", "checkpoint_sha256", "notes", "url", "condition_frames",
                "train_split"):
        if _scalar(model.get(key)):
            meta[key] = model[key]
    sampler = model.get("sampler")
    if _scalar(sampler):
        meta["sampler"] = sampler
    elif isinstance(sampler, dict):  # submission.json's sampler object, e.g. {"name": "ddim", "steps": 50}
        meta["sampler"] = ", ".join(f"{k}={v}" for k, v in sorted(sampler.items()) if _scalar(v))
    if _is_number(model.get("params")):
        meta["params"] = model["params"]
    if model.get("train_size") is not None and _train_size(model["train_size"]) is not None:
        meta["train_size"] = model["train_size"]
    seeds = [x for x in model.get("seeds") or [] if _scalar(x)] if isinstance(model.get("seeds"), list) else []
    if seeds:  # one per run, or one per sample: a long list is summarised
        meta["seeds"] = seeds if len(seeds) <= 8 else f"{len(seeds)} seeds, {seeds[0]} … {seeds[-1]}"
    return meta


def _cell(group: dict[str, Any], metrics: Iterable[str]) -> dict[str, Any]:
    """One table cell's numbers; anything that is not a number becomes null (files are untrusted)."""

    def number(x: Any) -> float | None:
        return x if _is_number(x) else None

    def count(x: Any) -> int | None:
        return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None

    untrackable = group.get("untrackable") if isinstance(group.get("untrackable"), dict) else {}
    cell: dict[str, Any] = {
        "videos": count(group.get("videos")),
        "untrackable": {"count": count(untrackable.get("count")), "rate": number(untrackable.get("rate"))},
        "metrics": {},
    }
    for m in metrics:
        value = group.get(m)
        if not isinstance(value, dict):
            continue
        if is_set_metric(m):
            cell["metrics"][m] = {"value": number(value.get("value")), "videos": count(value.get("videos")),
                                  "frames": count(value.get("frames"))}
        else:
            ci = value.get("ci95") if isinstance(value.get("ci95"), list) and len(value["ci95"]) == 2 else [None, None]
            cell["metrics"][m] = {"mean": number(value.get("mean")), "ci95": [number(ci[0]), number(ci[1])],
                                  "count": count(value.get("count"))}
    return cell


def _combine(entries: list[_Entry]) -> tuple[list[dict[str, Any]], list[Refusal]]:
    """Boards (one per task and resolution): rows of models, cells per level."""
    boards: dict[tuple[str, int], dict[str, Any]] = {}
    refused: list[Refusal] = []
    known = list(_registered_tasks())
    for e in sorted(entries, key=lambda e: (e.key, e.model, e.results["split"], e.file)):
        doc = e.results
        metrics = [m for m in _report_order() if m in _metrics_present(doc)]
        cells = {}
        if _layout(doc["task"]) == "splits":  # one column per split: its whole-split summary
            cells[doc["split"]] = _cell(doc["summary"]["overall"], metrics)
        else:
            if _is_ood_split(doc["task"], doc["split"]):  # for id-eval the whole split is the ID level
                cells[OOD_ALL] = _cell(doc["summary"]["overall"], metrics)
            for level, summary in doc["summary"]["levels"].items():
                cells[level] = _cell(summary, metrics)
        board = boards.setdefault(e.key, {"rows": {}, "metrics": {}, "task_version": doc["task_version"]})
        row = board["rows"].get(e.model) or {"model": e.model, "meta": _model_meta(doc["model"]), "cells": {}, "sources": []}
        clash = sorted(set(cells) & set(row["cells"]))
        if clash:  # an ood-eval file with an "id" level, say: which file is right is not ours to guess
            refused.append(Refusal(e.file, f"model {e.model!r} already has level(s) {', '.join(clash)} "
                                           f"on {e.key[0]} from {', '.join(s['file'] for s in row['sources'])}", LEVEL_CLASH))
            continue
        board["rows"][e.model] = row
        for m in metrics:
            board["metrics"].setdefault(m, bool(doc.get("higher_is_better", {}).get(m, METRICS.get(m).higher_is_better)))
        row["cells"].update(cells)
        row.setdefault("cell_splits", {}).update({k: doc["split"] for k in cells})
        prov = doc["provenance"]
        row["sources"].append({
            "file": e.file,
            "split": doc["split"],
            "model": _model_meta(doc["model"]),
            "provenance": {k: prov.get(k) for k in (
                "phybench_version", "task_spec_hash", "split_hash", "split_num_samples", "split_full_size",
                "resolution", "pixel_mapping", "submission_hash", "weights")},
            "protocol": _protocol(doc["task"], prov),
            "untrackable": len(doc.get("untrackable") or []),
            "warnings": [w for w in doc.get("warnings") or [] if isinstance(w, str)],
        })
        if e.samples is not None:
            row.setdefault("samples", []).extend(e.samples["samples"])
            if e.samples["dof"]:
                row["samples_dof"] = e.samples["dof"]

    out: list[dict[str, Any]] = []
    ids: set[str] = set()
    resolutions: dict[str, set[int]] = {}
    groups: dict[str, set[str]] = {}
    for task, res, group in boards:
        resolutions.setdefault(task, set()).add(res)
        groups.setdefault(task, set()).add(group)
    order = {t: i for i, t in enumerate(known)}
    group_order = {"full": 0, "lite": 1, "debug": 2}
    for (task, res, group), board in sorted(
            boards.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][0], kv[0][1], group_order[kv[0][2]])):
        rows = [board["rows"][name] for name in sorted(board["rows"])]
        for row in rows:
            splits = _eval_splits(task)
            row["sources"].sort(key=lambda s: (splits.index(s["split"]) if s["split"] in splits else len(splits), s["file"]))
            if "samples" in row:
                row["samples"].sort(key=lambda s: s["sample_id"])
        present = {k for r in rows for k in r["cells"]}
        metrics = [m for m in _report_order() if m in board["metrics"]]
        title = task if len(resolutions[task]) == 1 else f"{task} · {res} px"
        board_id = _slug(f"{task}-{res}")
        if len(groups[task]) > 1:  # the same task on several protocols: one board each, named
            title += " · " + ("debugging subsets" if group == "debug" else f"{group} protocol")
            board_id += f"-{group}"
        while board_id in ids:  # two unregistered task names that slug alike
            board_id += "-x"
        ids.add(board_id)
        out.append({
            "id": board_id,
            "task": task,
            "task_version": board["task_version"],
            "resolution": res,
            "protocol_group": group,
            "title": title,
            "description": _task_description(task),
            "layout": _layout(task),
            "protocols": sorted({s["protocol"] for r in rows for s in r["sources"] if s.get("protocol")}),
            "levels": _levels(task, present),
            "metrics": [
                {"name": m, "label": METRICS.get(m).label, "unit": METRICS.get(m).unit,
                 "higher_is_better": board["metrics"][m]}
                for m in metrics
            ],
            "rows": rows,
        })
    return out, refused


def _registered_tasks() -> list[str]:
    try:
        from ..tasks import TASKS

        return list(TASKS)
    except Exception:
        return []


def _task_description(task: str) -> str:
    try:
        from ..tasks import get_task

        return get_task(task).description
    except Exception:
        return ""


def _task_velocity_range(task: str, dof: str | None) -> tuple[str, tuple[float, float]] | None:
    """The training (ID) range of the velocity the scatter plot shows, from the registry."""
    try:
        from ..tasks import get_task

        dofs = get_task(task).dofs
    except Exception:
        return None
    for d in dofs:
        if (dof and d.name == dof) or (not dof and d.name.startswith("velocity")):
            return d.name, (float(d.id_range[0]), float(d.id_range[1]))
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


# ================================================================ formatting and exports
def fmt(x: float | None) -> str:
    """Three significant figures, fixed point where it reads better (mirrors leaderboard.js)."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:.3g}"


def _mean(cell: dict[str, Any] | None, metric: str) -> float | None:
    entry = (cell or {}).get("metrics", {}).get(metric) or {}
    value = entry.get("value" if is_set_metric(metric) else "mean")
    return value if _is_number(value) else None


def _cell_text(cell: dict[str, Any] | None, metric: str) -> str:
    entry = (cell or {}).get("metrics", {}).get(metric)
    if not entry:
        return "–"
    if is_set_metric(metric):
        return f"{fmt(entry.get('value'))} (N={entry.get('videos')})"
    ci = entry.get("ci95") or [None, None]
    text = fmt(entry.get("mean"))
    if _is_number(ci[0]) and _is_number(ci[1]):
        text += f" [{fmt(ci[0])}, {fmt(ci[1])}]"
    return text


def _untrackable_rate(row: dict[str, Any]) -> float | None:
    """Untrackable videos over all videos of the row's files (ID and every OOD level)."""
    count = videos = 0
    for key, cell in row["cells"].items():
        if key == OOD_ALL:
            continue
        videos += cell.get("videos") or 0
        count += (cell.get("untrackable") or {}).get("count") or 0
    return count / videos if videos else None


def _sort_key(row: dict[str, Any], board: dict[str, Any], metric: str) -> tuple:
    """Best first on the first level column present (ID, usually), then by name."""
    hib = next((m["higher_is_better"] for m in board["metrics"] if m["name"] == metric), False)
    for level in board["levels"]:
        value = _mean(row["cells"].get(level["key"]), metric)
        if value is not None:
            return (0, -value if hib else value, row["model"])
    return (1, 0.0, row["model"])


def markdown_escape(text: str) -> str:
    """Text safe inside a GitHub Markdown table cell: no pipes, no HTML, no emphasis."""
    text = re.sub(r"[\r\n\t]+", " ", str(text))
    text = re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown(data: dict[str, Any], metric: str = PRIMARY_METRIC) -> str:
    """One Markdown table per task: models x (ID, OOD levels), mean [95% interval]."""
    label, unit = METRICS.get(metric).label, METRICS.get(metric).unit
    lost = ("Per video (1 - f) e + f^2 P: e the velocity error over the frames where the ball is found, f the "
            "share of in-view frames where it is lost, P = 2 sqrt(2) x world size / frame interval (282.8 units/s "
            "here, the worst possible error), so a blink costs little and losing a ball never helps; the last "
            "column gives the share of videos with a lost ball. Tables of results files without this column show "
            "the older lost-ball-as-worst column, else the paper's mean over trackable videos. "
            if metric == PRIMARY_METRIC else
            "Untrackable videos are left out of the means and counted in the last column. ")
    lines = [
        "# phybench leaderboard",
        "",
        f"{label} ({unit}; {'higher' if METRICS.get(metric).higher_is_better else 'lower'} is better): mean "
        "[bootstrap 95% interval] over videos. ID: every parameter inside the training range; "
        f"OOD: outside it. {lost}"
        f"Built with phybench {data['phybench_version']}.",
    ]
    asked = metric
    for board in data["boards"]:
        if board.get("layout") == "splits":
            lines += _markdown_by_split(board)
            continue
        metric = asked
        if not any(m["name"] == metric for m in board["metrics"]) and metric == PRIMARY_METRIC:
            metric = OLDER_PRIMARY if any(m["name"] == OLDER_PRIMARY for m in board["metrics"]) else FALLBACK_METRIC
        if not any(m["name"] == metric for m in board["metrics"]):
            continue
        arrow = "↑" if METRICS.get(metric).higher_is_better else "↓"
        head = ["model"] + [f"{markdown_escape(c['label'])} {arrow}" for c in board["levels"]] + ["untrackable"]
        lines += ["", f"## {markdown_escape(board['title'])}", "", _protocol_line(board), "",
                  "| " + " | ".join(head) + " |",
                  "|---|" + "---:|" * (len(head) - 1)]
        for row in sorted(board["rows"], key=lambda r: _sort_key(r, board, metric)):
            rate = _untrackable_rate(row)
            cells = [markdown_escape(row["model"])]
            cells += [_cell_text(row["cells"].get(c["key"]), metric) for c in board["levels"]]
            cells.append("–" if rate is None else f"{100 * rate:.1f}%")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _protocol_line(board: dict[str, Any]) -> str:
    """Which evaluation protocol the board's results are on, in words."""
    from ..tasks.protocols import PROTOCOLS

    words = []
    for name in board.get("protocols", []):
        if name in PROTOCOLS:
            words.append(f"{name} ({PROTOCOLS.get(name).description})")
        else:
            words.append(f"{name.replace('limit ', '--limit ')} (a debugging subset, not an official protocol)")
    return ("Protocol: " + "; ".join(words) + ".") if words else "Protocol: unknown."


def _markdown_by_split(board: dict[str, Any]) -> list[str]:
    """The paper's Table 2 layout: model, training set, then each metric as "split A / split B"."""
    splits = [c["key"] for c in board["levels"]]
    metrics = board["metrics"]
    head = ["model", "training set"] + [
        f"{markdown_escape(m['label'])} {'↑' if m['higher_is_better'] else '↓'}" for m in metrics]
    lines = ["", f"## {markdown_escape(board['title'])}", "", _protocol_line(board), "",
             f"Each cell: {' / '.join(markdown_escape(s) for s in splits)} (mean over videos; FVD over the set).",
             "", "| " + " | ".join(head) + " |", "|---|---|" + "---:|" * len(metrics)]
    first = metrics[0]["name"] if metrics else PRIMARY_METRIC
    for row in sorted(board["rows"], key=lambda r: _sort_key(r, board, first)):
        meta = row.get("meta", {})
        train = meta.get("train_split", "–")
        if "train_size" in meta:
            train = f"{train} ({meta['train_size']} videos)"
        cells = [markdown_escape(row["model"]), markdown_escape(train)]
        for m in metrics:
            cells.append(" / ".join(_cell_text(row["cells"].get(s), m["name"]) for s in splits))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


CSV_COLUMNS = (
    "task", "task_version", "resolution", "model", "family", "size", "params", "train_size", "level", "metric",
    "higher_is_better", "mean", "ci95_low", "ci95_high", "count", "videos", "untrackable_count",
    "untrackable_rate", "split", "file", "submission_hash", "split_hash", "task_spec_hash", "phybench_version",
)


def csv_safe(value: Any) -> Any:
    """A cell a spreadsheet shows as text, never runs: text starting =, +, -, @, tab or CR gets a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def csv_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The combined table, long form: one row per (task, resolution, model, level, metric)."""
    out = []
    for board in data["boards"]:
        for row in board["rows"]:
            for level in board["levels"]:
                cell = row["cells"].get(level["key"])
                if cell is None:
                    continue
                split = row.get("cell_splits", {}).get(level["key"])
                source = next((s for s in row["sources"] if s["split"] == split), row["sources"][0])
                for m in board["metrics"]:
                    entry = cell["metrics"].get(m["name"])
                    if not entry:
                        continue
                    ci = entry.get("ci95") or [None, None]
                    unt = cell.get("untrackable") or {}
                    out.append({
                        "task": board["task"], "task_version": board["task_version"], "resolution": board["resolution"],
                        "model": row["model"], "family": row["meta"].get("family"), "size": row["meta"].get("size"),
                        "params": row["meta"].get("params"), "train_size": row["meta"].get("train_size"),
                        "level": level["key"], "metric": m["name"], "higher_is_better": m["higher_is_better"],
                        "mean": entry.get("value", entry.get("mean")), "ci95_low": ci[0], "ci95_high": ci[1],
                        "count": entry.get("count", entry.get("videos")), "videos": cell.get("videos"),
                        "untrackable_count": unt.get("count"), "untrackable_rate": unt.get("rate"),
                        "split": source["split"], "file": source["file"],
                        "submission_hash": source["provenance"]["submission_hash"],
                        "split_hash": source["provenance"]["split_hash"],
                        "task_spec_hash": source["provenance"]["task_spec_hash"],
                        "phybench_version": source["provenance"]["phybench_version"],
                    })
    return out


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return csv_safe(value)


def csv_text(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in csv_rows(data):
        writer.writerow({k: _csv_cell(row[k]) for k in CSV_COLUMNS})
    return buf.getvalue()


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def script_json(data: dict[str, Any]) -> str:
    """JSON for a <script type="application/json"> element: nothing in it can end the element."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


# ================================================================ plots (inline SVG)
def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [10.0**k for k in range(a, b + 1)]
    if b - a <= 2:
        ticks = sorted({t * f for t in ticks for f in (1, 2, 5)})
    return [t for t in ticks if lo * 0.999 <= t <= hi * 1.001]


def _lin_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = hi - lo
    raw = span / n
    step = 10 ** math.floor(math.log10(raw))
    for f in (1, 2, 2.5, 5, 10):
        if raw <= f * step:
            step *= f
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def _short(text: str, n: int = 24) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class _Plot:
    """A small SVG canvas with a data rectangle; every text goes through `_e`."""

    def __init__(self, width: int, height: int, left: int, right: int, top: int, bottom: int, label: str) -> None:
        self.w, self.h = width, height
        self.x0, self.x1, self.y0, self.y1 = left, width - right, top, height - bottom
        self.parts = [
            f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{_e(label)}" xmlns="http://www.w3.org/2000/svg">'
        ]

    def add(self, s: str) -> None:
        self.parts.append(s)

    def text(self, x: float, y: float, s: str, cls: str = "tick", anchor: str = "middle", extra: str = "") -> None:
        self.add(f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{_e(s)}</text>')

    def yaxis(self, ticks: list[float], ymap, label: str) -> None:
        for t in ticks:
            y = ymap(t)
            self.add(f'<line class="grid" x1="{self.x0}" x2="{self.x1}" y1="{y:.1f}" y2="{y:.1f}"/>')
            self.text(self.x0 - 6, y + 4, fmt(t), anchor="end")
        cy = (self.y0 + self.y1) / 2
        self.text(14, cy, label, cls="axis-label", extra=f' transform="rotate(-90 14 {cy:.1f})"')

    def frame(self) -> None:
        self.add(f'<line class="axis" x1="{self.x0}" x2="{self.x0}" y1="{self.y0}" y2="{self.y1}"/>')
        self.add(f'<line class="axis" x1="{self.x0}" x2="{self.x1}" y1="{self.y1}" y2="{self.y1}"/>')

    def legend(self, items: list[tuple[str, str, str]], x: float, y: float) -> None:
        """items: (colour, label, dash) drawn as a short line with a dot."""
        for i, (colour, label, dash) in enumerate(items):
            yy = y + 18 * i
            d = f' stroke-dasharray="{dash}"' if dash else ""
            self.add(f'<g class="legend-item"><title>{_e(label)}</title>'
                     f'<line x1="{x:.1f}" x2="{x + 18:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{colour}" stroke-width="2"{d}/>'
                     f'<circle cx="{x + 9:.1f}" cy="{yy:.1f}" r="3.5" fill="{colour}"/>')
            self.add(f'<text class="legend" x="{x + 24:.1f}" y="{yy + 4:.1f}">{_e(_short(label, 26))}</text></g>')

    def svg(self) -> str:
        return "".join(self.parts) + "</svg>"


def _log_scale(values: list[float], y0: float, y1: float):
    positive = [v for v in values if v > 0]
    lo, hi = (min(positive), max(positive)) if positive else (1e-3, 1.0)
    lo, hi = 10 ** (math.floor(math.log10(lo) * 4) / 4), 10 ** (math.ceil(math.log10(hi) * 4) / 4)
    if hi <= lo:
        hi = lo * 10
    floor = lo

    def ymap(v: float) -> float:
        v = max(v, floor)
        return y1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (y1 - y0)

    return lo, hi, ymap


def plot_error_by_level(board: dict[str, Any], colours: dict[str, str], metric: str = FALLBACK_METRIC) -> str | None:  # plots: the paper's metric
    """Velocity error by level (ID, then each OOD level), one line per model, log y."""
    levels = [c for c in board["levels"] if c["key"] != OOD_ALL]
    series = []
    for row in board["rows"]:
        pts = []
        for i, level in enumerate(levels):
            entry = row["cells"].get(level["key"], {}).get("metrics", {}).get(metric)
            if entry and _is_number(entry.get("mean")):
                ci = entry.get("ci95") or [None, None]
                pts.append((i, entry["mean"], ci[0] if _is_number(ci[0]) else None, ci[1] if _is_number(ci[1]) else None))
        if pts:
            series.append((row["model"], pts))
    if not series or not levels:
        return None
    label, unit = METRICS.get(metric).label, METRICS.get(metric).unit
    height = max(320, 60 + 18 * len(series))
    plot = _Plot(780, height, 64, 200, 16, 40, f"{label} by level, {board['title']}")
    values = [v for _, pts in series for p in pts for v in p[1:] if v is not None]
    lo, hi, ymap = _log_scale(values, plot.y0, plot.y1)
    plot.yaxis(_log_ticks(lo, hi), ymap, f"{label} ({unit}, log)")
    band = (plot.x1 - plot.x0) / len(levels)
    for i, level in enumerate(levels):
        plot.add(f'<text class="tick" x="{plot.x0 + band * (i + 0.5):.1f}" y="{plot.y1 + 22:.1f}" text-anchor="middle">'
                 f'<title>{_e(level["title"])}</title>{_e(level["label"])}</text>')
    plot.frame()
    dodge = min(8.0, band / (len(series) + 2))
    for k, (model, pts) in enumerate(series):
        colour = colours[model]
        off = (k - (len(series) - 1) / 2) * dodge
        xy = [(plot.x0 + band * (i + 0.5) + off, ymap(mean)) for i, mean, _, _ in pts]
        plot.add(f'<g class="series"><title>{_e(model)}</title>')
        if len(xy) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            plot.add(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5" stroke-opacity="0.55"/>')
        for (x, y), (i, mean, a, b) in zip(xy, pts):
            if a is not None and b is not None:
                plot.add(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{ymap(a):.1f}" y2="{ymap(b):.1f}" stroke="{colour}" stroke-width="1.5"/>')
            tip = f"{model} · {levels[i]['label']}: {fmt(mean)}" + (f" [{fmt(a)}, {fmt(b)}]" if a is not None else "")
            hollow = ' fill-opacity="0"' if mean < lo else ""
            plot.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}" stroke="{colour}"{hollow}><title>{_e(tip)}</title></circle>')
        plot.add("</g>")
    plot.legend([(colours[m], m, "") for m, _ in series], plot.x1 + 18, plot.y0 + 8)
    return plot.svg()


def _size_rank(row: dict[str, Any]) -> tuple:
    meta = row["meta"]
    if _is_number(meta.get("params")):
        return (0, float(meta["params"]), "")
    size = str(meta.get("size", ""))
    letters = re.split(r"[-_/ ]", size)[-1].upper()
    return (1, float(SIZE_ORDER.index(letters)) if letters in SIZE_ORDER else float(len(SIZE_ORDER)), size)


def _size_label(row: dict[str, Any]) -> str | None:
    meta = row["meta"]
    if meta.get("size") is not None:
        return str(meta["size"])
    if _is_number(meta.get("params")):
        return _params_text(meta["params"])
    return None


def _params_text(p: float) -> str:
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if p >= div:
            return f"{p / div:.3g}{suffix}"
    return f"{p:g}"


def plot_scaling(board: dict[str, Any], family: str, rows: list[dict[str, Any]], axis: str,
                 metric: str = FALLBACK_METRIC) -> str | None:  # plots: the paper's metric
    """Error against training-set size (or model size) for one family, ID solid and OOD dashed."""
    if axis == "train_size":
        xs = {r["model"]: _train_size(r["meta"].get("train_size")) for r in rows}
        rows = [r for r in rows if xs[r["model"]] is not None]
        group_of = _size_label
        categorical = False
    else:
        rows = [r for r in rows if _size_label(r) is not None]
        numeric = all(_is_number(r["meta"].get("params")) for r in rows)
        ranked = sorted({(_size_rank(r), _size_label(r)) for r in rows})
        position = {label: i for i, (_, label) in enumerate(ranked)}
        xs = {r["model"]: float(r["meta"]["params"]) if numeric else float(position[_size_label(r)]) for r in rows}
        group_of = lambda r: None if r["meta"].get("train_size") is None else str(r["meta"]["train_size"])  # noqa: E731
        categorical = not numeric
    if len({xs[r["model"]] for r in rows}) < 2:
        return None
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(group_of(r), []).append(r)
    series = []  # (label, colour, dash, points)
    ordered = sorted(groups.items(), key=lambda kv: (_size_rank(kv[1][0]) if axis == "train_size" else (0, _train_size(kv[0]) or 0, ""), str(kv[0])))
    for gi, (group, members) in enumerate(ordered):
        colour = PALETTE[gi % len(PALETTE)]
        for key, name, dash in ((ID_LEVEL, "ID", ""), (OOD_ALL, "OOD", "5 4")):
            pts = sorted(
                (xs[r["model"]], _mean(r["cells"].get(key), metric), r["model"]) for r in members
                if _mean(r["cells"].get(key), metric) is not None
            )
            if pts:
                if group is None:
                    head = family
                elif axis == "train_size":
                    head = f"{family} {group}" if len(f"{family} {group}") <= 14 else str(group)
                else:
                    head = f"{_params_text(_train_size(group) or 0)} videos"
                series.append((f"{head} · {name}", colour, dash, pts))
    if not any(len(s[3]) >= 2 for s in series):
        return None
    label, unit = METRICS.get(metric).label, METRICS.get(metric).unit
    axis_name = "training videos" if axis == "train_size" else "model size"
    plot = _Plot(560, max(300, 70 + 18 * len(series)), 64, 170, 16, 44, f"{label} against {axis_name}, {family}")
    lo, hi, ymap = _log_scale([p[1] for s in series for p in s[3]], plot.y0, plot.y1)
    plot.yaxis(_log_ticks(lo, hi), ymap, f"{label} ({unit}, log)")
    all_x = sorted({x for s in series for x, _, _ in s[3]})
    if categorical:
        labels = {xs[r["model"]]: _size_label(r) for r in rows}
        band = (plot.x1 - plot.x0) / len(all_x)
        xmap = {x: plot.x0 + band * (i + 0.5) for i, x in enumerate(all_x)}.__getitem__
        ticks = [(x, str(labels[x])) for x in all_x]
    else:
        a, b = math.log10(all_x[0]), math.log10(all_x[-1])
        pad = (b - a) * 0.08

        def xmap(x: float) -> float:
            return plot.x0 + (math.log10(x) - a + pad) / (b - a + 2 * pad) * (plot.x1 - plot.x0)

        ticks = [(x, _params_text(x)) for x in all_x]
    for x, text in ticks:
        plot.add(f'<line class="grid" x1="{xmap(x):.1f}" x2="{xmap(x):.1f}" y1="{plot.y0}" y2="{plot.y1}"/>')
        plot.text(xmap(x), plot.y1 + 18, text)
    plot.text((plot.x0 + plot.x1) / 2, plot.y1 + 38, axis_name + ("" if categorical else " (log)"), cls="axis-label")
    plot.frame()
    for name, colour, dash, pts in series:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        path = " ".join(f"{xmap(x):.1f},{ymap(y):.1f}" for x, y, _ in pts)
        plot.add(f'<g class="series"><title>{_e(name)}</title>')
        plot.add(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{d}/>')
        for x, y, model in pts:
            plot.add(f'<circle cx="{xmap(x):.1f}" cy="{ymap(y):.1f}" r="4" fill="{colour}"><title>{_e(f"{model}: {fmt(y)}")}</title></circle>')
        plot.add("</g>")
    plot.legend([(c, n, d) for n, c, d, _ in series], plot.x1 + 18, plot.y0 + 8)
    return plot.svg()


def plot_velocity_scatter(board: dict[str, Any], row: dict[str, Any]) -> str | None:
    """Generated against conditioned velocity per sample (paper figure 5), training range shaded."""
    pts = [s for s in row.get("samples", []) if s["generated_velocity"] is not None]
    if not pts:
        return None
    levels = [c["key"] for c in board["levels"] if c["key"] != OOD_ALL]
    levels += sorted({s["level"] for s in pts} - set(levels))
    shown = [lv for lv in levels if any(s["level"] == lv for s in pts)]
    # Legend entries wrap into rows within the card (collision has 7); the top margin grows with them.
    legend, x, line = [], 56.0, 0
    for level in shown:
        name = "ID" if level == ID_LEVEL else f"OOD {level}"
        width = 24 + 7.0 * len(name)
        if x + width > 380 - 4 and x > 56:
            x, line = 56.0, line + 1
        legend.append((level, name, x, line))
        x += width
    top = 34 + 16 * line
    plot = _Plot(380, 380 + 16 * line, 56, 16, top, 44, f"generated against conditioned velocity, {row['model']}")
    values = [s["true_velocity"] for s in pts] + [s["generated_velocity"] for s in pts]
    dof_range = _task_velocity_range(board["task"], row.get("samples_dof"))
    if dof_range:
        values += list(dof_range[1])
    lo, hi = min(0.0, min(values)), max(values)
    hi = hi + 0.05 * (hi - lo or 1)
    ticks = _lin_ticks(lo, hi)
    sx = lambda v: plot.x0 + (v - lo) / (hi - lo) * (plot.x1 - plot.x0)  # noqa: E731
    sy = lambda v: plot.y1 - (v - lo) / (hi - lo) * (plot.y1 - plot.y0)  # noqa: E731
    if dof_range:
        a, b = dof_range[1]
        plot.add(f'<rect class="id-band" x="{sx(a):.1f}" y="{plot.y0}" width="{sx(b) - sx(a):.1f}" height="{plot.y1 - plot.y0}">'
                 f'<title>{_e(f"training range of {dof_range[0]}: [{_num(a)}, {_num(b)}]")}</title></rect>')
        plot.text((sx(a) + sx(b)) / 2, plot.y0 + 12, "training range", cls="band-label")
    for t in ticks:
        plot.add(f'<line class="grid" x1="{plot.x0}" x2="{plot.x1}" y1="{sy(t):.1f}" y2="{sy(t):.1f}"/>')
        plot.add(f'<line class="grid" x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{plot.y0}" y2="{plot.y1}"/>')
        plot.text(plot.x0 - 6, sy(t) + 4, _num(t), anchor="end")
        plot.text(sx(t), plot.y1 + 16, _num(t))
    plot.text((plot.x0 + plot.x1) / 2, plot.y1 + 36, "conditioned velocity (world units / s)", cls="axis-label")
    cy = (plot.y0 + plot.y1) / 2
    plot.text(14, cy, "generated velocity", cls="axis-label", extra=f' transform="rotate(-90 14 {cy:.1f})"')
    plot.frame()
    plot.add(f'<line class="diagonal" x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}"/>')
    colour = {ID_LEVEL: ID_COLOUR}
    for i, level in enumerate(k for k in levels if k != ID_LEVEL):
        colour[level] = OOD_COLOURS[i % len(OOD_COLOURS)]
    for level in levels:
        mine = [s for s in pts if s["level"] == level]
        if not mine:
            continue
        plot.add(f'<g class="points" fill="{colour[level]}" fill-opacity="0.55"><title>{_e(level)}</title>')
        plot.add("".join(f'<circle cx="{sx(s["true_velocity"]):.1f}" cy="{sy(s["generated_velocity"]):.1f}" r="2.2"/>' for s in mine))
        plot.add("</g>")
    for level, name, x, line in legend:
        y = 16 + 16 * line  # rows from the top, above the data area
        plot.add(f'<circle cx="{x + 5:.1f}" cy="{y:.1f}" r="4" fill="{colour[level]}"/>')
        plot.text(x + 12, y + 4, name, cls="legend", anchor="start")
    return plot.svg()


# ================================================================ the page
def _template(name: str) -> str:
    return (resources.files(TEMPLATE_PACKAGE) / TEMPLATE_DIR / name).read_text(encoding="utf-8")


def _render(template: str, values: dict[str, str]) -> str:
    """One pass over {{name}} placeholders: inserted text is never scanned again."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


def _figure(svg: str, caption: str, cls: str = "") -> str:
    return f'<figure class="plot-card {cls}">{svg}<figcaption>{_e(caption)}</figcaption></figure>'


def model_colours(names: Iterable[str]) -> dict[str, str]:
    """A colour per model that stays the same from build to build: the model name's hash picks
    a palette slot; a clash takes the next free slot (names in sorted order), so adding a
    model moves no other model's colour unless the two would clash."""
    import hashlib

    out: dict[str, str] = {}
    taken: set[int] = set()
    for name in sorted(set(names)):
        slot = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % len(PALETTE)
        for k in range(len(PALETTE)):
            if (slot + k) % len(PALETTE) not in taken or len(taken) >= len(PALETTE):
                slot = (slot + k) % len(PALETTE)
                break
        taken.add(slot)
        out[name] = PALETTE[slot]
    return out


def _board_html(board: dict[str, Any]) -> str:
    colours = model_colours(row["model"] for row in board["rows"])
    figures = []
    by_level = plot_error_by_level(board, colours)
    if by_level:
        figures.append(_figure(by_level, "Velocity error at each level, per model: mean and 95% interval. "
                                         "A model that learned the law stays flat from ID to OOD.", "wide"))
    families: dict[str, list[dict[str, Any]]] = {}
    for row in board["rows"]:
        if isinstance(row["meta"].get("family"), str):
            families.setdefault(row["meta"]["family"], []).append(row)
    for family, rows in sorted(families.items()):
        for axis, what in (("train_size", "training-set size"), ("size", "model size")):
            svg = plot_scaling(board, family, rows, axis)
            if svg:
                figures.append(_figure(svg, f"Scaling of {family} with {what}: velocity error, ID solid, OOD dashed."))
    scatters = [(row, plot_velocity_scatter(board, row)) for row in board["rows"]]
    scatters = [(row, svg) for row, svg in scatters if svg]
    scatter_html = ""
    if scatters:
        cards = "".join(_figure(svg, row["model"], "small") for row, svg in scatters)
        scatter_html = (
            '<h3>Generated vs conditioned velocity, per sample</h3>'
            '<p class="note">Each dot is one video: the velocity it was conditioned on against the velocity the '
            'model generated. On the dashed diagonal the model follows the law; outside the shaded training '
            'range, models that only mimic their data pull velocities back towards it (paper figure 5).</p>'
            f'<div class="plots scatter">{cards}</div>'
        )
    desc = f'<p class="task-desc">{_e(board["description"])}</p>' if board["description"] else ""
    plots = f'<h3>Plots</h3><div class="plots">{"".join(figures)}</div>' if figures else ""
    return (
        f'<section class="board" id="{board["id"]}" data-board="{board["id"]}">'
        f'<div class="board-head"><h2>{_e(board["title"])} <span class="version">v{_e(board["task_version"])}</span></h2>'
        f'{desc}</div>'
        '<div class="controls"><label>Metric <select class="metric-select" aria-label="metric"></select></label>'
        '<span class="hint">Click a column to sort; ▸ shows where an entry comes from.</span></div>'
        f'<div class="table-wrap"><table class="lb" data-board="{board["id"]}"></table></div>'
        '<noscript><p class="note">The tables need JavaScript; the same numbers are in '
        '<a href="leaderboard.md">leaderboard.md</a> and <a href="leaderboard.csv">leaderboard.csv</a>.</p></noscript>'
        f'{plots}{scatter_html}</section>'
    )


def page_html(data: dict[str, Any], probes: bool = False) -> str:
    """The main page; `probes`: link the Probes page (written only when probe results exist)."""
    boards = data["boards"]
    nav = "".join(f'<a href="#{b["id"]}">{_e(b["title"])}</a>' for b in boards)
    if probes:
        nav += '<a href="probes.html">Probes</a>'

    refused = ""
    if data["refused"]:
        items = "".join(f"<li><code>{_e(r['file'])}</code>: {_e(r['reason'])}</li>" for r in data["refused"])
        refused = (
            f'<section class="refused"><h2>Refused results ({len(data["refused"])})</h2>'
            "<p>These files do not match this phybench's registry and are not shown.</p>"
            f"<ul>{items}</ul></section>"
        )
    sections = "".join(_board_html(b) for b in boards) or '<p class="empty">No results yet.</p>'
    models = len({r["model"] for b in boards for r in b["rows"]})
    return _render(_template("index.html"), {
        "version": _e(data["phybench_version"]),
        "nav": nav,
        "refused": refused,
        "sections": sections,
        "counts": _e(f"{models} model{'s' * (models != 1)}, {len(data['files'])} results file{'s' * (len(data['files']) != 1)}"),
        "checked": (
            "Every entry was checked against this version's registry: task spec hash, metric settings, "
            "network weight hashes and split hash." if data["registry_checked"] else
            "<strong>Built without the registry check</strong>: entries were not verified against this version."
        ),
        "data": script_json(data),
    })


# ================================================================ build
def build(
    results_dir: str | Path,
    out_dir: str | Path,
    registry_check: bool = True,
    *,
    splits_dir: str | Path | None = None,
    allow_partial: bool = False,
) -> BuildReport:
    """Read the results files under `results_dir`; write the site into `out_dir`.

    Raises `LeaderboardError` listing every refused file, unless `allow_partial`: then the
    site is built from the accepted files and the page lists the refused ones.
    """
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    if not results_dir.is_dir():
        raise LeaderboardError(f"{results_dir} is not a folder of results files")
    if splits_dir is not None and not Path(splits_dir).is_dir():
        raise LeaderboardError(f"--splits {splits_dir} is not a folder")
    entries, refused, warnings = _read_all(
        results_dir, registry_check, Path(splits_dir) if splits_dir else None, skip=out_dir.resolve()
    )
    boards, clashes = _combine(entries)
    probe_docs, probe_refused = probe_page.read(results_dir, probe_page.files(results_dir, skip=out_dir.resolve()))
    refused += [Refusal(f, reason, RESULTS_FORMAT) for f, reason in probe_refused]
    refused = sorted(refused + clashes, key=lambda r: r.file)
    if refused and not allow_partial:
        raise LeaderboardError(
            f"{len(refused)} results file(s) refused (pass allow_partial / --allow-partial to build without them):\n"
            + "\n".join(f"  {r}" for r in refused),
            refused,
        )
    refused_files = {r.file for r in refused}
    accepted = sorted([e.file for e in entries if e.file not in refused_files] + [d["_file"] for d in probe_docs])
    data = {
        "kind": "phybench-leaderboard",
        "schema_version": LEADERBOARD_SCHEMA_VERSION,
        "phybench_version": __version__,
        "primary_metric": PRIMARY_METRIC,
        "registry_checked": registry_check,
        "boards": boards,
        "files": accepted,
        "refused": [{"file": r.file, "reason": r.reason, "code": r.code} for r in refused],
    }
    files = {
        "index.html": page_html(data, probes=bool(probe_docs)),
        "leaderboard.md": markdown(data),
        "leaderboard.csv": csv_text(data),
        "leaderboard.json": json_text(data),
    }
    if probe_docs:
        files[probe_page.PAGE] = probe_page.page_html(probe_docs)
    for name in STATIC_FILES:
        files[name] = _template(name)
    for name, text in sorted(files.items()):
        atomic_write_bytes(out_dir / name, text.encode("utf-8"))
    return BuildReport(
        out_dir=out_dir,
        accepted=accepted,
        refused=refused,
        warnings=warnings,
        written=sorted(files),
        boards=len(boards),
        models=len({r["model"] for b in boards for r in b["rows"]}),
    )


# ================================================================ command line
EXAMPLES = """
examples:
  phybench leaderboard build leaderboard/results --out site
  phybench leaderboard build leaderboard/results --out site --splits data/
  phybench leaderboard build results/ --out /tmp/preview --allow-partial
"""


def add_arguments(parser: Any) -> None:
    """`phybench leaderboard build RESULTS_DIR --out SITE_DIR` (see cli.py)."""
    parser.add_argument("action", choices=["build"], help="build: write the static site")
    parser.add_argument("results_dir", metavar="RESULTS_DIR", help="folder of results files (*.json, searched recursively)")
    parser.add_argument("--out", required=True, metavar="SITE_DIR", help="where index.html and the exports go")
    parser.add_argument("--splits", metavar="DIR", help="folder of split folders: each split hash must equal its manifest's")
    parser.add_argument("--allow-partial", action="store_true", help="build from the accepted files; list the refused ones on the page")
    parser.add_argument("--no-registry-check", action="store_true", help="skip the spec, settings and weight checks (previews only)")


def run(args: Any, log: Any = print) -> int:
    """Exit code 0: built, nothing refused; 1: built with --allow-partial, some refused; 2: refused, nothing built."""
    import sys

    try:
        report = build(args.results_dir, args.out, registry_check=not args.no_registry_check,
                       splits_dir=args.splits, allow_partial=args.allow_partial)
    except LeaderboardError as exc:
        print(f"phybench leaderboard: error: {exc}", file=sys.stderr)
        return 2
    log(report.to_text())
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m phybench.leaderboard", description=__doc__.splitlines()[0],
                                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover - until `phybench leaderboard` is wired in cli.py
    raise SystemExit(main())

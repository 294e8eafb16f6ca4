"""Reading results files and refusing the ones that do not match this phybench.

Every refusal names the file, the reason and a stable code (`Refusal`); `read_all` returns
the accepted entries, the refusals and the warnings.  Results files are untrusted text.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

from ..._version import __version__
from ... import jsonsafe
from ...data.manifest_bounds import MAX_MANIFEST_BYTES
from ...problems import Problem
from ...scoring.metrics import METRICS, all_metrics, metric_names
from ...scoring.run.results import SCHEMA_VERSION, results_bytes
from ..verify import checks
from ..common import files
from ...scoring.run.documents import Results
from ...scoring.run.layout import is_beside, is_samples, results_of, samples_path, is_record, parse as parse_document
from .law_cell import is_number, law_cell
from .scatter import reduce as reduce_samples
from ..verify.records import Verification, VerificationError, read_record

LEADERBOARD_SCHEMA_VERSION = 1
SAMPLES_KIND = "phybench-samples"
EVAL_SPLITS = ("id-eval", "ood-eval")  # the fundamental layout; a task may declare others


def eval_splits(task: Any) -> tuple[str, ...]:
    """The evaluation splits a registered task declares (training splits are not entries)."""
    try:
        from ...tasks import get_task

        return get_task(task).eval_splits
    except Exception:  # an unregistered task is refused elsewhere, with its own reason
        return EVAL_SPLITS


class LeaderboardError(Exception):
    """Results were refused (or the input is unusable); `refused` lists (file, reason)."""

    def __init__(self, message: str, refused: Sequence["Refusal"] = ()) -> None:
        super().__init__(message)
        self.refused = list(refused)


# Refusal codes (stable; listed in docs/submission.md and leaderboard/README.md).  A file refused
# for several reasons carries the first one's code; its reason lists them all.
RESULTS_FORMAT = "results_format"  # not JSON, wrong kind or schema version, missing or mistyped keys
RESULTS_LINK = "results_link"  # a results file (or its sidecar) that is a link, or resolves outside the folder
RESULTS_NOT_REGULAR = files.NOT_REGULAR  # a FIFO, device or socket named *.json: never opened
RESULTS_TOO_LARGE = files.TOO_LARGE  # a *.json larger than files.MAX_FILE_BYTES: never read
RESULTS_REGISTRY = "results_registry"  # task, spec, metric settings, directions or weights not this phybench's
RESULTS_SIDECAR = "results_sidecar"  # the .samples.json beside it is malformed or quotes another file
SPLIT_HASH_DISAGREES = "split_hash_disagrees"  # files on one split quote different split hashes
SPLIT_NOT_FOUND = "split_not_found"  # --splits: no split folder to verify the file against
SPLIT_HASH_MISMATCH = "split_hash_mismatch"  # --splits: the hash is not that split's manifest's
DUPLICATE_MODEL = "duplicate_model"  # one submission twice for one model on one (task, split, resolution)
LEVEL_CLASH = "level_clash"  # a model's level(s) given by two files (e.g. "id" in an ood-eval file)
NOT_VERIFIED = "not_verified"  # --require-verified: no verification record beside the file
# A bad verification record is refused with the record's own code (`VerificationError.code`:
# verify-stale, verify-mismatch, verify-malformed); impossible numbers with the codes of
# `checks` (value_type, value_range, ...).  docs/results.md lists them all.


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
    written: list[str] = field(default_factory=list)  # site files, relative to out_dir (a folder: "viewers/<slug>/")
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
class Entry:
    """One accepted results file."""

    file: str
    results: dict[str, Any]  # checked, then slimmed (`_slim`): no per-video lists, no metric settings
    samples: dict[str, Any] | None = None  # the sidecar's sample for the page (`scatter.reduce`), not every video
    verification: Verification | None = None  # the valid record beside it; None: self-reported

    @property
    def model(self) -> str:
        return self.results["model"]["name"]

    @property
    def protocol_group(self) -> str:
        """'full', 'lite' or 'debug': results on different official protocols are different boards."""
        name = protocol_of_provenance(self.results["task"], self.results["provenance"])
        return name if name in ("full", "lite") else "debug"

    @property
    def key(self) -> tuple[str, int, str]:
        """(task, resolution, protocol group): one board each."""
        return self.results["task"], int(self.results["provenance"]["resolution"]), self.protocol_group


# ================================================================ reading and checking
def _load(path: Path) -> tuple[Results | None, list[str]]:
    """A results document and the structural problems that stop it being read at all."""
    try:
        doc = parse_document(files.read_regular(path))  # untrusted: checked key by key below
    except files.UnsafeFile as exc:
        return None, [str(exc)]
    except ValueError as exc:  # jsonsafe.JSONError: coded, one line
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
    allowed = eval_splits(doc.get("task"))
    if isinstance(doc.get("split"), str) and doc["split"] not in allowed:
        problems.append(f"split {doc['split']!r} is not an evaluation split ({', '.join(allowed)})")
    return (None if problems else cast(Results, doc)), problems  # a `Results` once its structure is checked


def metrics_present(doc: Mapping[str, Any]) -> set[str]:
    present = {m for m in doc.get("metrics", []) if isinstance(m, str)}
    for group in _groups(doc):
        present |= {k for k in group if k in METRICS}
    return present & set(METRICS)


def report_order() -> tuple[str, ...]:
    """Per-video metrics, then set metrics, each in registration order (table columns)."""
    return metric_names("video") + metric_names("set")


def _groups(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
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
                from ...scoring.perceptual.weights import weight_hashes

                self._weights = (dict(weight_hashes()), "")
            except Exception as exc:
                self._weights = (None, f"{type(exc).__name__}: {exc}")
        return self._weights


def _check_registry(doc: Results, registry: _Registry) -> list[str]:
    """Reasons a readable results file does not match this phybench's registry."""
    from ...registry import RegistryError
    from ...tasks import get_task

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

    present = metrics_present(doc)
    written = prov["metric_settings"]
    needed = {key for m in present if (key := METRICS.get(m).settings_key) is not None}
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

    recorded, derived = prov.get("protocol"), protocol_of_provenance(doc["task"], prov)
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
            reasons.append(f"weight hashes cannot be checked: phybench.scoring.perceptual.weights does not import ({error})")
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


def _load_samples(path: Path, doc: Results) -> tuple[dict[str, Any] | None, list[str]]:
    """The per-sample velocity sidecar of a results file (see leaderboard/README.md)."""
    name = path.name
    try:
        side = parse_document(files.read_regular(path))
    except files.UnsafeFile as exc:
        return None, [str(exc)]
    except ValueError as exc:  # jsonsafe.JSONError: coded, one line
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
    clean, laws = [], []
    for i, s in enumerate(samples):
        ok = (
            isinstance(s, dict)
            and isinstance(s.get("sample_id"), str)
            and isinstance(s.get("level"), str)
            and is_number(s.get("true_velocity"))
            and (s.get("generated_velocity") is None or is_number(s.get("generated_velocity")))
        )
        if not ok:
            problems.append(
                f"{name}: samples[{i}] needs sample_id (string), level (string), true_velocity (number) "
                "and generated_velocity (number or null)"
            )
            break
        clean.append({k: s[k] for k in ("sample_id", "level", "true_velocity", "generated_velocity")})
        if "law" in s:  # the fitted law of this video (phybench.scoring.learned.law.sidecar_law): checked against the summary
            law = s["law"]
            if not (isinstance(law, dict) and isinstance(law.get("law"), str) and all(
                    isinstance(law.get(k), dict) and all(isinstance(n, str) and (v is None or is_number(v))
                                                         for n, v in law[k].items()) for k in ("fit", "truth"))):
                problems.append(f"{name}: samples[{i}].law needs law (string), fit and truth ({{name: number or null}})")
                break
            laws.append({"sample_id": s["sample_id"], "level": s["level"], "law": law["law"], "fit": law["fit"],
                         "truth": law["truth"]})
    if problems:
        return None, problems
    dof = side.get("dof")
    return {"dof": dof if isinstance(dof, str) else None, "samples": sorted(clean, key=lambda s: s["sample_id"]),
            "laws": laws}, []


def protocol_of_provenance(task: str, prov: Mapping[str, Any]) -> str | None:
    """'full', 'lite' or 'limit N' (a debugging subset), from a results file's sizes.

    Files record it (`provenance.protocol`); the sizes decide, so an older file without the
    key reads the same and a file whose key disagrees with its sizes is refused (`_check`).
    """
    from ...tasks.protocols import protocol_of

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


def _split_manifests(splits_dir: Path) -> dict[tuple[str, str, int], dict[str, str]]:
    """(task, split, resolution) -> {split hash: folder} for every split folder under `splits_dir`."""
    found: dict[tuple[str, str, int], dict[str, str]] = {}
    files = sorted(set(splits_dir.glob("manifest.json")) | set(splits_dir.glob("*/manifest.json"))
                   | set(splits_dir.glob("*/*/manifest.json")))
    for file in files:
        try:
            m = jsonsafe.read(file, max_bytes=MAX_MANIFEST_BYTES)
            key = (str(m["task"]), str(m["split"]), int(m["resolution"]))
            found.setdefault(key, {})[str(m["split_hash"])] = file.parent.relative_to(splits_dir).as_posix() or "."
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a split manifest; the results it would verify are refused below
    return found


def _check_splits(entries: list[Entry], splits_dir: Path | None, refused: dict[str, list[tuple[str, str]]]) -> None:
    """Results on the same split must agree on what that split is (and, with `splits_dir`, be one found there).

    Official protocols are separate boards, so a full and a lite result never disagree;
    debugging subsets of different sizes do, and are refused with the reason in words."""
    by_split: dict[tuple[str, str, int, str], list[Entry]] = {}
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


def _check_duplicates(entries: list[Entry], refused: dict[str, list[tuple[str, str]]]) -> None:
    """One model, one file per (task, split, resolution) and submission: files of one model with
    different submission hashes are independent runs (seeds), shown as one row; the same
    submission twice would be counted twice."""
    seen: dict[tuple[Any, ...], list[str]] = {}
    for e in entries:
        seen.setdefault((e.model, e.results["task"], e.results["split"], e.key[1], e.key[2],
                         str(e.results["provenance"].get("submission_hash"))), []).append(e.file)
    for (model, task, split, res, _, _), group in seen.items():
        if len(group) > 1:
            for f in group:
                others = ", ".join(g for g in group if g != f)
                refused.setdefault(f, []).append((DUPLICATE_MODEL, f"model {model!r} on {task}/{split} at {res} px is "
                                                                   f"also in {others}, from the same submission"))


CELL_KEYS = ("mean", "ci95", "count", "value", "videos", "frames")  # what a table cell reads of a metric (`table._cell`)


def _slim_group(group: dict[str, Any]) -> dict[str, Any]:
    """One summary group as the board reads it (`table._cell`, `law.law_cell`, `metrics_present`):
    its video count, untrackable count, each metric's numbers and the law block, cleaned.  The
    metric entries' other keys (per-level law params of the model and the truth, spreads) go."""

    out: dict[str, Any] = {}
    for key, value in group.items():
        if key in ("videos", "untrackable"):
            out[key] = value
        elif key == "law":
            out[key] = law_cell(value)
        elif key in METRICS:
            out[key] = {k: value[k] for k in CELL_KEYS if k in value} if isinstance(value, dict) else value
    return out


def _slim(doc: Results) -> dict[str, Any]:
    """A checked results document reduced to what the board reads once the checks have run: the
    per-video lists (`untrackable` keeps its length as `untrackable_count`, `excluded` goes), the
    metric settings (a third of a file, compared with the registry already) and, in each summary
    group, all but a table cell's numbers (`_slim_group`).  A build holds one per results file
    until the boards are made: this keeps that to the numbers the page shows."""
    out = {k: v for k, v in doc.items() if k not in ("untrackable", "excluded", "summary")}
    out["untrackable_count"] = len(doc.get("untrackable") or [])
    out["provenance"] = {k: v for k, v in doc["provenance"].items() if k != "metric_settings"}
    summary = doc["summary"]
    out["summary"] = {"overall": _slim_group(summary["overall"]),
                      "levels": {level: _slim_group(g) for level, g in summary["levels"].items()}}
    return out


def read_all(
    results_dir: Path, registry_check: bool, splits_dir: Path | None, skip: Path | None = None,
    keyring: Any = None,
) -> tuple[list[Entry], list[Refusal], list[str]]:
    """Every results file under `results_dir`, checked; `keyring` (`signing.Keyring`): every
    verification record's signature is checked too (the public board, --require-verified)."""
    refused: dict[str, list[tuple[str, str]]] = {}  # file -> (code, reason), in the order found
    warnings: list[str] = []
    entries: list[Entry] = []
    registry = _Registry()
    # Every *.json is lstat'ed first: links, FIFOs, devices and oversized files are refused
    # without being opened (`files.scan`); only regular files are read, each up to its cap.
    found, unsafe = files.scan(results_dir, skip)
    for path, code, reason in unsafe:
        refused[path.relative_to(results_dir).as_posix()] = [(code, reason)]
    results_files = [p for p in found if not is_beside(p) and not files.is_probe_file(p)]  # probe results: the Probes page's own check
    stems = {p.with_suffix("") for p in results_files}
    for p in found:
        if is_samples(p) and results_of(p).with_suffix("") not in stems:
            warnings.append(f"{p.relative_to(results_dir).as_posix()}: sidecar without a results file beside it; ignored")
        if is_record(p) and results_of(p) not in results_files:
            warnings.append(f"{p.relative_to(results_dir).as_posix()}: verification record without a results file "
                            "beside it; ignored")

    root = results_dir.resolve()
    for path in results_files:
        rel = path.relative_to(results_dir).as_posix()
        side = samples_path(path)
        outside = [p for p in (path, side) if p.exists() and (p.is_symlink() or not p.resolve().is_relative_to(root))]
        if outside:  # never read a file the folder only points at
            refused[rel] = [(RESULTS_LINK, f"{p.relative_to(results_dir).as_posix()} is a link or lies outside "
                                           f"{results_dir}; copy the file in instead") for p in outside]
            continue
        doc, problems = _load(path)
        if doc is None:
            refused[rel] = [(RESULTS_FORMAT, p) for p in problems]
            continue
        reasons: list[tuple[str, str]] = []
        if registry_check:
            reasons += [(RESULTS_REGISTRY, p) for p in _check_registry(doc, registry)]
        samples = None
        if side.is_file():
            samples, problems = _load_samples(side, doc)
            reasons += [(RESULTS_SIDECAR, p) for p in problems]
        reasons += checks.check_file(doc, samples)  # impossible numbers, whatever is trusted
        verification = None
        try:
            verification = read_record(path, keyring)
        except VerificationError as exc:
            reasons.append((exc.code, str(exc)))
        if reasons:
            refused[rel] = reasons
        else:  # the sidecar, checked, shrinks to the page's sample: no build holds every sidecar at once
            entries.append(Entry(rel, _slim(doc), None if samples is None else reduce_samples(samples, doc["task"], file=rel),
                                 verification))

    _check_splits(entries, splits_dir, refused)
    _check_duplicates(entries, refused)
    for file, reasons in checks.check_across(entries).items():
        refused.setdefault(file, []).extend(reasons)

    entries = [e for e in entries if e.file not in refused]
    refusals = [Refusal(f, "; ".join(r for _, r in reasons), reasons[0][0]) for f, reasons in sorted(refused.items())]
    return entries, refusals, warnings

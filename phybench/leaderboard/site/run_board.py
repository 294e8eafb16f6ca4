"""`phybench run`'s answer (issue 49): each split's headline beside the reference rows of the same split.

A model author's loop ends with numbers, not paths: `run` prints, per split, the ranked
velocity error with its interval, the untrackable share, the judge's abnormal share, the
law error and the OOD / ID gap of the model beside the reference rows scored on the *same
split* (same split hash), and where the model would rank among them.

The reference rows come from the shipped lite board (`REFERENCE_FOLDERS` of the repository's
``leaderboard/results``, or any results folder given): ground truth, copy-last, nearest-
neighbour, physics-oracle, linear extrapolation and the learned rows.  A split no shipped row
matches (``run --limit``, the author's own data) gets the cheap reference baselines scored on
it by `run` itself (`phybench.reference.rows`), so a smoke test reads against them too.

`assemble` puts the model's results files and those rows into one results folder (the run's
board: ``OUT/board/``), which the printed table (`headline_text`) and ``run --site`` read
with the board's own reader (`load.read_all`: every file checked as any board input is).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterable, Sequence

from ...scoring.run.layout import record_path, samples_path
from ...scoring.metrics import METRICS
from ..common.format import fmt
from .gap import ratio_interval
from .load import Entry, is_number, read_all
from .table import PRIMARY_METRIC, _is_ood_split

REFERENCE_FOLDERS = ("fundamental/lite", "learned/lite")  # the shipped lite reference rows, under a results folder
REFERENCE_DIR = "reference"  # OUT/board/reference/<folder>/: the reference rows' copies
MARK = "→"  # the model's rows in the printed table


def shipped_results_dir() -> Path | None:
    """The repository's ``leaderboard/results`` when phybench runs from a checkout (a wheel ships none)."""
    root = Path(__file__).resolve().parents[3] / "leaderboard" / "results"
    return root if root.is_dir() else None


def reference_files(results_dir: Path, split_hashes: Iterable[str], skip_models: Iterable[str] = ()) -> list[Path]:
    """The results files under `results_dir`'s `REFERENCE_FOLDERS` on one of `split_hashes`, read and
    checked as a board reads them (refused files are left out); none named as one of `skip_models`
    (a model run under a reference row's name is itself, not its own reference)."""
    wanted, skip = set(split_hashes), set(skip_models)
    out = []
    for folder in REFERENCE_FOLDERS:
        root = Path(results_dir) / folder
        if not root.is_dir() or root.is_symlink():
            continue
        entries, _, _ = read_all(root, False, None)
        out += [root / e.file for e in entries
                if e.results["provenance"].get("split_hash") in wanted and e.model not in skip]
    return sorted(out)


def assemble(model_files: Sequence[Path], reference: Sequence[Path], dest: Path, reference_root: Path | None) -> Path:
    """`dest` (made afresh: it is `run`'s own folder) = the model's results files at its top and each
    reference file, with its sidecar and verification record, under ``reference/`` (its path below
    `reference_root` kept, or its name).  Returns `dest`."""
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise OSError(f"{dest} is not a folder")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for f in model_files:
        _copy_with_beside(f, dest / f.name)
    for f in reference:
        root = reference_root
        rel = f.relative_to(root) if root is not None and f.is_relative_to(root) else Path(f.name)
        _copy_with_beside(f, dest / REFERENCE_DIR / rel)
    return dest


def _copy_with_beside(src: Path, dst: Path) -> None:
    """A results file with its sidecar and verification record where there (plain files only)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    for a, b in ((src, dst), (samples_path(src), samples_path(dst)), (record_path(src), record_path(dst))):
        if a.is_file() and not a.is_symlink():
            shutil.copyfile(a, b)


def read_board(folder: Path) -> list[Entry]:
    """The accepted results files of a run's board folder (checked as `leaderboard build` checks them)."""
    entries, _, _ = read_all(Path(folder), False, None)
    return entries


def printable(text: object) -> str:
    """Text for a terminal: a name from a results file given to us (--reference) could carry an escape
    sequence or a bidi override that rewrites what the reader sees; such a name is shown escaped."""
    text = str(text)
    return text if text.isprintable() else ascii(text)


def _overall(e: Entry, metric: str) -> dict[str, Any] | None:
    got = e.results["summary"]["overall"].get(metric)
    return got if isinstance(got, dict) else None


def _mean(e: Entry, metric: str) -> float | None:
    value = (_overall(e, metric) or {}).get("mean")
    return value if is_number(value) else None


def _ranked(e: Entry) -> str:
    entry = _overall(e, PRIMARY_METRIC) or {}
    ci = entry.get("ci95") or [None, None]
    text = fmt(entry.get("mean")) if is_number(entry.get("mean")) else "–"
    return text + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if is_number(ci[0]) and is_number(ci[1]) else "")


def _share(e: Entry) -> str:
    videos = e.results["summary"]["overall"].get("videos") or 0
    count = e.results.get("untrackable_count", 0)
    return f"{100 * count / videos:.1f}%" if videos else "–"


def _gap(e: Entry, id_entry: Entry | None) -> str:
    if id_entry is None:
        return ""
    got = ratio_interval(_overall(id_entry, PRIMARY_METRIC), _overall(e, PRIMARY_METRIC))
    if got is None:
        return "–"
    lo, hi = got["ci95"]
    return f"{got['ratio']:.3g}" + (f" [{lo:.3g}, {hi:.3g}]" if is_number(lo) and is_number(hi) else "")


def _order(entries: Sequence[Entry]) -> list[Entry]:
    """Best first on the ranked column, then by name; rows without it last (the board's order)."""
    return sorted(entries, key=lambda e: (_mean(e, PRIMARY_METRIC) is None, _mean(e, PRIMARY_METRIC) or 0.0, e.model))


def _protocol(e: Entry) -> str:
    return str(e.results["provenance"].get("protocol") or "no protocol")


def ranks(entries: Sequence[Entry], models: Iterable[str]) -> list[tuple[Entry, int, int]]:
    """(the model's entry, its rank 1.., rows ranked) per split: where it would rank among the rows of its split hash."""
    names, out = set(models), []
    for rows in _by_split(entries).values():
        ranked = [e for e in _order(rows) if _mean(e, PRIMARY_METRIC) is not None]
        out += [(e, _rank(e, ranked), len(ranked)) for e in ranked if e.model in names]
    return out


def _rank(e: Entry, ranked: Sequence[Entry]) -> int:
    """1 + the rows strictly better: a tie shares its rank (a model equal to copy-last ranks with it)."""
    mine = _mean(e, PRIMARY_METRIC)
    return 1 + sum(1 for o in ranked if (_mean(o, PRIMARY_METRIC) or 0.0) < (mine or 0.0))


def _by_split(entries: Sequence[Entry]) -> dict[tuple[str, str, str], list[Entry]]:
    groups: dict[tuple[str, str, str], list[Entry]] = {}
    for e in entries:
        key = (e.results["task"], e.results["split"], str(e.results["provenance"].get("split_hash")))
        groups.setdefault(key, []).append(e)
    return dict(sorted(groups.items()))


def headline_text(entries: Sequence[Entry], models: Iterable[str]) -> str:
    """One plain-text table per split: rank, model, the ranked velocity error [95% interval], the
    untrackable share, abnormal, law error and (on an OOD split) OOD / ID of the ranked column,
    numbers as the board rounds them; `models` (the run's) are marked, then where each would rank."""
    names = set(models)
    unit = METRICS.get(PRIMARY_METRIC).unit if PRIMARY_METRIC in METRICS else ""
    groups = _by_split(entries)
    lines: list[str] = []
    for (task, split, split_hash), rows in groups.items():
        ood = _is_ood_split(task, split)
        ids = {e.model: e for (t, s, _), es in groups.items() if t == task and not _is_ood_split(t, s) for e in es}
        head = ["", "#", "model", "ranked velocity error [95%]", "untrackable", "abnormal", "law error"]
        head += ["OOD/ID"] if ood else []
        table = [head]
        ranked = [e for e in rows if _mean(e, PRIMARY_METRIC) is not None]
        for e in _order(rows):
            has = _mean(e, PRIMARY_METRIC) is not None
            cells = [MARK if e.model in names else "", str(_rank(e, ranked)) if has else "–", printable(e.model), _ranked(e), _share(e),
                     fmt(_mean(e, "abnormal")), fmt(_mean(e, "law_error"))]
            table.append(cells + ([_gap(e, ids.get(e.model))] if ood else []))
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        lines += ["", f"{printable(task)}/{printable(split)} (split {printable(split_hash[:12])}, "
                      f"{printable(_protocol(rows[0]))}, "
                      f"{rows[0].results['summary']['overall'].get('videos')} videos; velocity error in {unit}, "
                      "every column lower is better)"]
        lines += ["  " + "  ".join(c.ljust(w) if i in (0, 2) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                  for r in table]
    for e, rank, of in ranks(entries, names):
        others = of - 1
        lines.append(f"{printable(e.model)} would rank {rank} of {of} on {printable(e.results['task'])}/"
                     f"{printable(e.results['split'])}"
                     + ("" if others else " (no reference row on this split)"))
    return "\n".join(lines).lstrip("\n") + "\n"

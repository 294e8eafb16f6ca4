"""The results layout: a results file and the two files that may sit beside it, named here only.

* ``NAME.json``: the results file (`phybench score`; its contents: `phybench.scoring.run.results`);
* ``NAME.samples.json``: its per-video sidecar (true and generated velocities, law fits) for a
  family with a plotted DoF, written with it as a unit;
* ``NAME.verified.json``: its verification record (`phybench leaderboard verify`; its contents
  and signature: `phybench.leaderboard.verify.records`, which reads and writes it through the
  names here).

Every module that writes, finds, pairs or parses these files calls this one, so the layout
is spelled once (docs/results.md describes it).  Bytes are what they always were: the results
file is `results_bytes` (sorted keys, indent 2), the sidecar one sorted-key JSON line.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, cast

from ... import jsonsafe
from .documents import Results, Sidecar

RESULTS_SUFFIX = ".json"
SAMPLES_SUFFIX = ".samples.json"
RECORD_SUFFIX = ".verified.json"

PathLike = str | os.PathLike[str]


def samples_path(results_path: PathLike) -> Path:
    """``dir/name.json`` -> ``dir/name.samples.json``."""
    p = Path(results_path)
    return p.with_name(p.stem + SAMPLES_SUFFIX)


def record_path(results_path: PathLike) -> Path:
    """``dir/name.json`` -> ``dir/name.verified.json``."""
    p = Path(results_path)
    return p.with_name(p.name[: -len(RESULTS_SUFFIX)] + RECORD_SUFFIX if p.name.endswith(RESULTS_SUFFIX)
                       else p.name + RECORD_SUFFIX)


def is_samples(path: PathLike) -> bool:
    return Path(path).name.endswith(SAMPLES_SUFFIX)


def is_record(path: PathLike) -> bool:
    return Path(path).name.endswith(RECORD_SUFFIX)


def is_beside(path: PathLike) -> bool:
    """A sidecar or a record: a file that belongs to a results file, never one itself."""
    return is_samples(path) or is_record(path)


def results_of(path: PathLike) -> Path:
    """The results file a sidecar or a record belongs to (``name.samples.json`` ->
    ``name.json``); a results file is its own."""
    p = Path(path)
    for suffix in (SAMPLES_SUFFIX, RECORD_SUFFIX):
        if p.name.endswith(suffix):
            return p.with_name(p.name[: -len(suffix)] + RESULTS_SUFFIX)
    return p


def samples_bytes(samples: Mapping[str, Any]) -> bytes:
    """The sidecar's bytes (a `Sidecar`, or a document being checked against one): one line of sorted-key JSON."""
    return (json.dumps(samples, sort_keys=True) + "\n").encode()


def output_files(path: PathLike, results: Results, samples: Sidecar | None) -> list[tuple[Path, bytes]]:
    """(path, bytes) of a results file and, when there is one, its sidecar (first), every byte
    made before anything is written (an unencodable string fails here)."""
    from .results import results_bytes

    path = Path(path)
    files = [(path, results_bytes(results))]
    if samples is not None:
        files.insert(0, (samples_path(path), samples_bytes(samples)))
    return files


def parse(data: bytes | str) -> Any:
    """A results file's (or its sidecar's) document from its bytes, through the one bounded
    reader (`phybench.jsonsafe`): `JSONError` (a ValueError with a code) if it is not bounded
    JSON.  Readers of untrusted folders read the bytes safely first (`phybench.leaderboard.common.files`)."""
    return jsonsafe.loads(data)


def read_results_doc(path: PathLike) -> Any:
    """A results file's (or its sidecar's) document, read from a trusted path."""
    return parse(Path(path).read_bytes())


SEED_MARK = ".seed"  # `<task>-<split>-<model>.seed<k>.json`: seed k's run of a model (seed 0's keeps the plain name)


def seed_tag(seeds: Any) -> str:
    """The name's mark of a run's seeds: ``""`` for seed 0 (or a card naming none: the names
    every results file had before seeds were told apart, so no shipped name moves), else
    ``.seed<k>`` (``.seed1-2`` for a run whose card lists several)."""
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        return ""
    unique = sorted(set(seeds))
    return "" if unique == [0] else SEED_MARK + "-".join(str(s) for s in unique[:8])


def seeded_path(path: PathLike, seeds: Any) -> Path:
    """Where the run with `seeds` writes its results when asked for `path`: ``dir/name.json`` ->
    ``dir/name.seed<k>.json`` (its sidecar and record follow: ``name.seed<k>.samples.json``,
    ``name.seed<k>.verified.json``), so seeds 0, 1 and 2 of one model never overwrite each other.
    A name that already ends in its seed's mark is kept."""
    p = Path(path)
    tag = seed_tag(seeds)
    stem = p.name[: -len(RESULTS_SUFFIX)] if p.name.endswith(RESULTS_SUFFIX) else p.name
    if not tag or stem.endswith(tag):
        return p
    return p.with_name(stem + tag + RESULTS_SUFFIX)


def results_name(task: str, split: str, model: str, seeds: Any = None) -> str:
    """A results file's name: ``<task>-<split>-<model>.json``, ``<task>-<split>-<model>.seed<k>.json``
    for seed k != 0 (`seeded_path`)."""
    return seeded_path(f"{task}-{split}-{model}{RESULTS_SUFFIX}", seeds).name


# The typed doors: what a reader that knows which of the two it holds calls (the keys then
# checked by mypy, `phybench.scoring.run.documents`).  Their values are as checked as the
# caller's source: a trusted path here; an untrusted folder's reader checks the structure first.
def parse_results(data: bytes | str) -> Results:
    """A results file's document from its bytes."""
    return cast(Results, parse(data))


def parse_sidecar(data: bytes | str) -> Sidecar:
    """A `.samples.json` sidecar's document from its bytes."""
    return cast(Sidecar, parse(data))


def read_results(path: PathLike) -> Results:
    """A results file's document, read from a trusted path."""
    return parse_results(Path(path).read_bytes())


def read_sidecar(path: PathLike) -> Sidecar:
    """A sidecar's document, read from a trusted path."""
    return parse_sidecar(Path(path).read_bytes())

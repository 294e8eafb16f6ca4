"""`phybench generate`: write a split, in shards, resumable, with any number of workers.

Each shard is written to a temporary file and renamed into place, then its sidecar
(hashes) is written the same way: a killed run leaves only finished shards behind,
and the next run skips them.  The manifest is written last, once every shard exists.
Every row is run through the family checker (`phybench.tasks.check`) before its shard is
written: a family whose rows break a promise (a body out of view in a frame the row
claims, a trajectory off its closed form, a sample that does not regenerate) is refused
with the row and the check named, and that shard is never written.
A folder that holds another task, split, spec hash or layout is refused, never mixed.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Mapping

from tqdm import tqdm

from .. import jsonsafe
from ..io import mkdirs, rmdirs
from ..tasks.check import FamilyCheckError, check_spec_hash
from .split import (
    DATA_DIR,
    MANIFEST,
    SplitError,
    SplitPlan,
    atomic_write_bytes,
    build_manifest,
    card_text,
    file_sha256,
    write_shard,
)
from .documents import Manifest

_OWN_NAMES = {MANIFEST, DATA_DIR, "README.md"}


@dataclass
class GenerateResult:
    plan: SplitPlan
    written: int  # shards written by this run
    reused: int  # shards found finished
    missing: list[int]  # shards still to write (other --shard slices)
    manifest: Manifest | None  # set once the split is complete


def _describe(identity: Mapping[str, Any]) -> str:
    return (
        f"{identity.get('task')}/{identity.get('split')} v{identity.get('task_version')} "
        f"(spec {str(identity.get('spec_hash'))[:12]}, {identity.get('resolution')} px, "
        f"{identity.get('num_samples')} samples, shard size {identity.get('shard_size')})"
    )


def _check_identity(found: dict[str, Any], plan: SplitPlan, where: Path) -> None:
    want: Mapping[str, Any] = plan.identity()  # compared key by key with what the folder holds
    have = {k: found.get(k) for k in want}
    if have != want:
        diff = ", ".join(f"{k}: {have[k]!r} != {want[k]!r}" for k in want if have[k] != want[k])
        raise SplitError(
            f"{where} already holds {_describe(have)}, not {_describe(want)} ({diff}); "
            "refusing to mix them: choose another --out or delete that folder"
        )


def scan_existing(plan: SplitPlan, out: Path, clean_temp: bool = True) -> dict[int, dict[str, Any]]:
    """Finished shards already in `out` (after checking they belong to this plan).

    clean_temp: delete temp files of killed runs.  Off for `--shard` runs, which may share
    the folder with other slices that are writing right now.
    """
    if not out.exists():
        return {}
    if not out.is_dir():
        raise SplitError(f"--out {out} exists and is not a folder")
    strangers = sorted(p.name for p in out.iterdir() if p.name not in _OWN_NAMES)
    if strangers:
        raise SplitError(
            f"--out {out} is not empty and is not a phybench split (it holds {', '.join(strangers[:5])}); "
            "choose an empty or new folder"
        )
    if (out / MANIFEST).is_file():
        try:
            _check_identity(jsonsafe.read(out / MANIFEST), plan, out / MANIFEST)
        except jsonsafe.JSONError as exc:
            raise SplitError(f"{out / MANIFEST} is corrupt ({exc}); delete the folder and generate again") from None
    done: dict[int, dict[str, Any]] = {}
    data = out / DATA_DIR
    if not data.is_dir():
        return done
    for tmp in data.glob(".shard-*.tmp") if clean_temp else ():
        tmp.unlink(missing_ok=True)  # left by a run that was killed mid-write
    for sidecar in sorted(data.glob("shard-*.json")):
        try:
            record = jsonsafe.read(sidecar)
        except jsonsafe.JSONError:
            sidecar.unlink()  # half-written sidecars cannot happen (atomic), but be safe
            continue
        _check_identity(record, plan, sidecar)
        parquet = out / record["file"]
        if parquet.is_file() and file_sha256(parquet) == record["sha256"]:
            done[int(record["shard"])] = record
    return done


def parse_shard_arg(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N) with 0 <= I < N."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SplitError(f"--shard must look like I/N (e.g. 0/4), got {text!r}") from None
    if n < 1 or not 0 <= i < n:
        raise SplitError(f"--shard {text}: need 0 <= I < N")
    return i, n


def generate(
    plan: SplitPlan,
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
    shard: tuple[int, int] | None = None,
    progress: bool = True,
    command: str | None = None,
) -> GenerateResult:
    """Write (the rest of) a split into `out`."""
    if workers < 1:
        raise SplitError(f"--workers must be at least 1, got {workers}")
    out = Path(out)
    found = check_spec_hash(plan.spec)  # the family checker's task-level check; rows are checked per shard
    if found:
        raise SplitError(str(FamilyCheckError(found, plan.spec.name)), code="family_check")
    done = scan_existing(plan, out, clean_temp=shard is None)
    made = mkdirs(out / DATA_DIR)
    try:
        return _generate(plan, out, done, workers, shard, progress, command)
    except BaseException:
        rmdirs(made)  # a first shard that failed (a full disk, an interrupt) leaves no empty folders
        raise


def _generate(plan: SplitPlan, out: Path, done: dict[int, Any], workers: int, shard: tuple[int, int] | None,
              progress: bool, command: str | None) -> GenerateResult:
    mine = [s for s in range(plan.num_shards) if shard is None or s % shard[1] == shard[0]]
    todo = [s for s in mine if s not in done]
    reused = len(mine) - len(todo)
    total = sum(plan.shard_range(s)[1] - plan.shard_range(s)[0] for s in todo)
    bar = tqdm(
        total=total,
        unit="video" if plan.with_video else "sample",
        desc=f"{plan.spec.name}/{plan.split}",
        disable=not progress or total == 0,
        dynamic_ncols=True,
    )
    try:
        if workers == 1 or len(todo) <= 1:
            for s in todo:  # the bar moves per sample, not per shard (never minutes at 0)
                before = bar.n
                done[s] = write_shard(plan, out, s, tick=lambda: bar.update(1))
                bar.update(done[s]["stop"] - done[s]["start"] - (bar.n - before))
        else:
            ctx = get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
                futures = [pool.submit(write_shard, plan, out, s) for s in todo]
                try:
                    for fut in as_completed(futures):
                        record = fut.result()
                        done[record["shard"]] = record
                        bar.update(record["stop"] - record["start"])
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
    finally:
        bar.close()
    missing = [s for s in range(plan.num_shards) if s not in done]
    manifest = None
    if not missing:
        manifest = build_manifest(plan, list(done.values()), command)
        atomic_write_bytes(out / "README.md", card_text(plan).encode())
        atomic_write_bytes(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
    return GenerateResult(plan, len(todo), reused, missing, manifest)

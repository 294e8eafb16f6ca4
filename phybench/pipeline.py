"""`phybench run --model MODULE:CLASS`: a model answers evaluation splits, then they are scored.

The model interface (in the spirit of lm-eval's ``--model``) is one class::

    class Model:
        def __init__(self, **model_args): ...            # from --model-args k=v,...
        def generate(self, condition, num_frames):        # condition: uint8 (B, C, H, W, 3)
            return videos                                 # uint8 (B, num_frames, H, W, 3), or only the
                                                          # num_frames - C generated frames

For each split, the videos are written one file per sample id under ``OUT/<task>-<split>/
generated/`` (atomically), so a killed run resumes where it stopped; then `pack` makes the
submission and `score` writes ``OUT/results/<task>-<split>-<model>.json`` for the leaderboard.
See phybench/examples/shift.py for a small model.

* **Protocols.**  ``--tasks uniform,collision --protocol lite`` generates (or reuses) the
  protocol's evaluation splits under ``OUT/data/`` first, so one command goes from nothing to
  results files; ``--data`` answers splits you already have.
* **Sharding.**  Under ``accelerate launch`` or ``torchrun`` (any launcher that sets ``RANK`` and
  ``WORLD_SIZE``), process r generates every WORLD_SIZE-th missing video starting at r (a
  model picks its GPU from ``LOCAL_RANK``); process 0 waits for all of them, then packs and
  scores.  The files are the same as from one process, so the results are the same bytes.
* **Reference baselines.**  ``--model baseline:NAME`` (``copy-last``, ``physics-oracle``,
  ``nearest-neighbour`` with ``--model-args train=DIR``, ...) runs `phybench baseline NAME`
  into the same layout, so every reference result can come from this one command.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .data.split import SplitReader
from .scoring.run.estimate import duration as _duration
from .scoring.run.layout import results_name
from .conditioning import conditioning_record, model_caller
from . import jsonsafe
from .io import atomic_save_npy, atomic_write_bytes, file_sha256
from .submission.inputs import CONTROL, InputsError, export_inputs, pack
from .data.documents import Manifest

RUN_RECORD = "run.json"  # OUT/<task>-<split>/run.json: who made the files there (the resume key)
DETAILS = "details.parquet"  # OUT/<task>-<split>/details.parquet: the per-video details (`score --details`)
ERROR_LOG = "generate-error.txt"  # the traceback of a failed generate(), beside run.json


class RunError(Exception):
    """The model or the run cannot be used; the message says why, `code` names the case (docs/submission.md)."""

    def __init__(self, message: str, code: str = "run_error") -> None:
        super().__init__(message)
        self.code = code


def _import(module: str) -> Any:
    """A module by dotted name, or a Python file by path (path/to/model.py)."""
    if module.endswith(".py") or os.sep in module or "/" in module:
        from importlib import util

        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise RunError(f"--model: {module} is not a file", "model_import")
        name = "phybench_user_model_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        spec = util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise RunError(f"--model: {module} cannot be imported as Python", "model_import")
        mod = util.module_from_spec(spec)
        sys.modules[name] = mod
        keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ beside the author's file
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)  # a module that fails on import is not kept half-made
            raise
        finally:
            sys.dont_write_bytecode = keep
        return mod
    return importlib.import_module(module)


def load_model(spec: str, model_args: dict[str, Any]) -> Any:
    """MODULE:CLASS (importable, e.g. phybench.examples.shift:Model, or a file, path/to/model.py:Model)
    instantiated with model_args."""
    if ":" not in spec:
        raise RunError(f"--model {spec!r}: give MODULE:CLASS or path/to/file.py:CLASS, e.g. "
                       "phybench.examples.shift:Model", "model_spec")
    module, name = spec.rsplit(":", 1)
    try:
        cls = getattr(_import(module), name)
    except RunError:
        raise
    except (ImportError, AttributeError) as exc:
        raise RunError(f"--model {spec!r}: {exc}", "model_import") from None
    except Exception as exc:  # the module itself fails on import (SyntaxError, NameError, ...)
        raise RunError(f"--model {spec!r}: importing it raised {type(exc).__name__}: {exc}", "model_import") from None
    if not callable(cls):
        raise RunError(f"--model {spec!r}: {name} is not a class", "model_import")
    try:
        model = cls(**model_args)
    except Exception as exc:
        given = ", ".join(model_args) or "none"
        raise RunError(f"--model {spec!r}: the class could not be made ({type(exc).__name__}: {exc}); its "
                       f"arguments go in --model-args key=value,... (given: {given})", "model_init") from None
    if not callable(getattr(model, "generate", None)):
        raise RunError(f"--model {spec!r}: the class needs a generate(condition, num_frames) method", "model_init")
    return model


CARD_HOOK = "submission_card"  # a model's optional method: its own description for submission.json
CARD_KEYS = ("model", "sampler", "seeds")
GENERIC_CLASSES = ("Model", "Pipeline")  # class names that say nothing: `run` names the model after the module


def model_card(model: Any) -> dict[str, Any]:
    """What a model says of itself, for its submission.json: ``model.submission_card()`` when it has one.

    Why: a baseline run through `run` must be described as its own command describes it (its
    name, checkpoint hash, sampler settings, training facts), else the board shows a model called
    after its module with an empty sampler (issue 49).  The hook returns ``{"model": {...},
    "sampler": {...}, "seeds": [...]}`` (each optional); anything else is refused up front."""
    hook = getattr(model, CARD_HOOK, None)
    if not callable(hook):
        return {}
    try:
        card = hook()
    except Exception as exc:
        raise RunError(f"{type(model).__name__}.{CARD_HOOK}() raised {type(exc).__name__}: {exc}", "model_card") from None
    shapes = {"model": dict, "sampler": dict, "seeds": list}
    if not isinstance(card, dict) or set(card) - set(CARD_KEYS) or any(
            not isinstance(card[k], shapes[k]) for k in card):
        raise RunError(f"{type(model).__name__}.{CARD_HOOK}() must return a dict with only "
                       f"{', '.join(CARD_KEYS)} (a dict, a dict, a list); got {str(card)[:80]}", "model_card")
    if any(not isinstance(s, int) or isinstance(s, bool) for s in card.get("seeds", [])):
        raise RunError(f"{type(model).__name__}.{CARD_HOOK}(): seeds must be integers", "model_card")
    return card


def default_model_name(spec: str, model: Any) -> str:
    """The name results go under when --name is not given: the model's card's name, else the class's,
    except a generic class name (`GENERIC_CLASSES`: the template's ``Model``, the diffusers adapter's
    ``Pipeline``), which keeps its module's name (``phybench.examples.shift:Model`` -> "shift").
    Two classes in one file so get two names."""
    name = model_card(model).get("model", {}).get("name")
    if isinstance(name, str) and name.strip():
        return name
    module, _, cls = spec.rpartition(":")
    if cls not in GENERIC_CLASSES:
        return cls
    return Path(module).stem if module.endswith(".py") or "/" in module else module.rsplit(".", 1)[-1]


def parse_model_args(text: str | None) -> dict[str, Any]:
    """'a=1,b=x' -> {'a': 1, 'b': 'x'} (ints and floats parsed, the rest strings)."""
    out: dict[str, Any] = {}
    for part in filter(None, (text or "").split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise RunError(f"--model-args: {part!r} is not key=value", "model_args")
        for cast in (int, float):
            try:
                out[key.strip()] = cast(value)
                break
            except ValueError:
                continue
        else:
            out[key.strip()] = value
    return out


def check_model_name(name: str) -> str:
    """A model name as it goes into submission.json and results: printable, one line, not empty.

    Control characters (ESC, BEL, newlines) and bidi overrides (RLO) would reach a terminal or a
    page raw and could hide or reorder what a reader sees, so they are refused, not stripped."""
    if not name.strip():
        raise RunError("--name: the model name is empty", "model_name")
    bad = CONTROL.search(name)
    if bad:
        raise RunError(f"--name {ascii(name)}: contains the control character {ascii(bad.group())}; model names "
                       "are printable text", "model_name")
    return name


def model_identity(spec: str, model_args: dict[str, Any], name: str) -> dict[str, Any]:
    """What a run's files depend on, besides the split: the resume key (OUT/<task>-<split>/run.json).

    spec as MODULE:CLASS (a file path made absolute), the model args, the name the results go
    under, and the sha256 of every model arg that names a file (a checkpoint; for a folder, a
    fingerprint of its files' names, sizes and times).  The model's
    source code is not part of it: after changing what the model generates, pass --restart."""
    module, _, cls = spec.rpartition(":")
    if module and not spec.startswith(BASELINE_PREFIX) and (module.endswith(".py") or "/" in module
                                                            or os.sep in module):
        module = os.path.abspath(module)
    checkpoints = {}
    for key, value in sorted(model_args.items()):
        if isinstance(value, str) and os.path.isfile(value):
            checkpoints[key] = file_sha256(value)
        elif isinstance(value, str) and os.path.isdir(value):
            checkpoints[key] = "folder:" + _folder_fingerprint(value)
    return {"model": f"{module}:{cls}" if module else spec, "model_args": {k: model_args[k] for k in sorted(model_args)},
            "checkpoint_sha256": checkpoints, "name": name}


def _folder_fingerprint(folder: str) -> str:
    """A checkpoint folder's fingerprint: the sha256 of its files' relative paths, sizes and modification
    times (not their bytes: a folder of shards can hold many GB, and a retrained one is rewritten)."""
    import hashlib

    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            h.update(f"{os.path.relpath(path, folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()




def _describe(identity: dict[str, Any]) -> str:
    args = ",".join(f"{k}={v}" for k, v in identity.get("model_args", {}).items())
    return f"{identity.get('model')}" + (f" --model-args {args}" if args else "") + f" --name {identity.get('name')}"


def _claim(work: Path, identity: dict[str, Any], split_hash: str, rank: int, restart: bool) -> None:
    """Make OUT/<task>-<split> this model's: resume only what the same model on the same split made.

    A folder made by another model (or args, checkpoint, name, split version) is refused with
    what to do; --restart clears it first.  Process 0 writes the record, the others compare."""
    key = {"kind": "phybench-run", **identity, "split_hash": split_hash}
    record = work / RUN_RECORD
    if restart and rank == 0 and work.exists():
        shutil.rmtree(work)
    if rank != 0:
        _wait_for([record], f"process 0's {record}")
    if record.is_file():
        try:
            old = jsonsafe.read(record)
        except (OSError, ValueError) as exc:  # jsonsafe.JSONError is a ValueError
            raise RunError(f"{record} cannot be read ({exc}); pass --restart to clear {work}, or give a new --out",
                           "run_record") from None
        if old == key:
            return
        if not isinstance(old, dict):
            old = {}
        what = [f for f in ("model", "model_args", "checkpoint_sha256", "name", "split_hash") if old.get(f) != key[f]]
        raise RunError(
            f"{work} holds the videos of another run ({', '.join(what)} differ: it was {_describe(old)}"
            + (f" on split {old.get('split_hash', '?')[:12]}" if "split_hash" in what else "")
            + f"); this is {_describe(key)}. Give a new --out, or pass --restart to delete {work} and start again",
            "run_mismatch")
    made = [p for p in (work / "generated", work / "submission") if p.exists()]
    if made:
        raise RunError(f"{work} holds {made[0].name}/ but no {RUN_RECORD} (made by an older phybench, or by hand): "
                       f"which model made it is unknown. Give a new --out, or pass --restart to delete {work}",
                       "run_unkeyed")
    if rank == 0:
        atomic_write_bytes(record, (json.dumps(key, indent=1, sort_keys=True) + "\n").encode())


def _check_videos(videos: Any, batch: Sequence[int], ids: Sequence[str], model_name: str, T: int, C: int, R: int,
                  first: bool) -> np.ndarray:
    """The model's answer for one batch, checked before anything of it is written (so the first batch
    tells a wrong dtype, frame count or size, not the pack after hours)."""
    try:
        videos = np.asarray(videos)
    except Exception as exc:
        raise RunError(f"{model_name}.generate returned something that is not an array ({exc})", "model_output") from None
    want = f"uint8 ({len(batch)}, {T} or {T - C}, {R}, {R}, 3)"
    if videos.dtype != np.uint8:
        raise RunError(f"{model_name}.generate returned dtype {videos.dtype} {videos.shape}; expected {want} "
                       "(convert with (x*255).round().clip(0,255).astype(np.uint8) for floats in [0, 1])",
                       "model_output")
    if videos.ndim != 5 or len(videos) != len(batch) or videos.shape[2:] != (R, R, 3) or videos.shape[1] not in (T, T - C):
        raise RunError(f"{model_name}.generate returned {videos.shape} for sample ids {ids[batch[0]]}.. "
                       f"({'the first batch' if first else 'a later batch'}); expected {want}: all {T} frames, or "
                       f"the {T - C} generated ones, at {R}x{R} px, colour last", "model_output")
    return videos


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "model"


BASELINE_PREFIX = "baseline:"


def world() -> tuple[int, int]:
    """(rank, world size) from the launcher's environment (accelerate launch, torchrun); (0, 1) alone."""
    try:
        rank, size = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise RunError("RANK and WORLD_SIZE must be integers (set by accelerate launch or torchrun)") from None
    if size < 1 or not 0 <= rank < size:
        raise RunError(f"RANK={rank} is not in [0, WORLD_SIZE={size})")
    return rank, size


def protocol_splits(tasks: Sequence[str], protocol_name: str, out: str | os.PathLike[str], *,
                    progress: bool = True, limit: int | None = None) -> list[Path]:
    """The protocol's evaluation splits of `tasks`, generated under OUT/data/ (reused when there).

    limit: instead of the protocol, the first `limit` samples of each split (`run --limit`, a smoke
    test), in OUT/data/<task>-<split>-limit<N>/ so a protocol split there is never mixed with it.
    Such a split has its own split hash and its results say `limit N`: a debugging subset, which
    the leaderboard labels as no official protocol."""
    from .data.generate import generate
    from .data.split import make_plan
    from .tasks import get_task
    from .tasks.protocols import PROTOCOLS

    protocol = PROTOCOLS.get(protocol_name)
    rank, size = world()
    folders = []
    for task in tasks:
        spec = get_task(task)
        for split in spec.eval_splits:
            folder = Path(out) / "data" / (f"{task}-{split}" if limit is None else f"{task}-{split}-limit{limit}")
            if rank == 0:
                n = protocol.size(spec, split) if limit is None else limit
                plan = make_plan(spec, split, None, n, None)
                how = f"--protocol {protocol.name}" if limit is None else f"--limit {plan.num_samples}"
                generate(plan, folder, progress=progress, command=f"phybench generate {task} --split {split} {how}")
            folders.append(folder)
    if size > 1:  # the others wait for process 0's splits
        for folder in folders:
            _wait_for([folder / "manifest.json"], f"split {folder}")
    return folders


def _wait_for(paths: Sequence[Path], what: str, timeout_s: float = 24 * 3600) -> None:
    """Poll until every path exists (other processes write them atomically)."""
    start = time.monotonic()
    while not all(p.is_file() for p in paths):
        if time.monotonic() - start > timeout_s:
            missing = sum(not p.is_file() for p in paths)
            raise RunError(f"waited {timeout_s:.0f} s for {what}: {missing} file(s) still missing; "
                           "did another process fail?")
        time.sleep(1.0)


def _run_baseline(model_spec: str, model_args: dict[str, Any], model_name: str, split_dir: Any,
                  sub: Path, progress: bool) -> None:
    from .reference import BaselineError, run_baseline

    unknown = set(model_args) - {"train", "cache_dir"}
    if unknown:
        raise RunError(f"--model-args {', '.join(sorted(unknown))}: a baseline takes train=DIR (nearest-neighbour) "
                       "and cache_dir=DIR only")
    try:
        run_baseline(model_spec[len(BASELINE_PREFIX):], split_dir, sub, model_args.get("train"), progress,
                     cache_dir=model_args.get("cache_dir"), fmt="npz", model_name=model_name)
    except BaselineError as exc:
        raise RunError(str(exc)) from None


def _generate_failed(exc: Exception, work: Path, model_name: str, n: int, of: int, batch_ids: Sequence[str],
                     done: int) -> RunError:
    """One line for a generate() that raised: which batch and ids, that a re-run resumes; the traceback
    goes to OUT/<task>-<split>/generate-error.txt for the model's author."""
    log = work / ERROR_LOG
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        atomic_write_bytes(log, text.encode("utf-8", "backslashreplace"))
        where = f"; traceback in {log}"
    except OSError:
        where = ""
    shown = ", ".join(batch_ids[:3]) + (f", ... ({len(batch_ids)} ids)" if len(batch_ids) > 3 else "")
    return RunError(f"{model_name}.generate raised {type(exc).__name__}: {exc} on batch {n + 1} of {of} (sample ids "
                    f"{shown}){where}. The {done} video(s) written before it are kept: fix the model and run the same "
                    "command again to resume (--restart starts over)", "model_error")


def _generate_and_pack(model: Any, model_name: str, split_dir: str | os.PathLike[str], m: Manifest,
                       work: Path, sub: Path, rank: int, size: int, batch_size: int, progress: bool) -> None:
    """This process's share of a split's videos from `model.generate`, resumed from what is already
    written; process 0 then waits for the others' and packs the submission into `sub`."""
    from tqdm import tqdm

    inputs = work / "inputs"
    if rank == 0 and not (inputs / "manifest.json").is_file():
        export_inputs(split_dir, inputs, progress=False)
    _wait_for([inputs / "manifest.json"], f"the inputs of {m['task']}/{m['split']}")
    with np.load(inputs / "condition_frames.npz", allow_pickle=False) as z:
        cond, ids = z["frames"], [str(s) for s in z["sample_ids"]]
    gen = work / "generated"
    call = model_caller(model, inputs, split_dir)  # passes prompts/states when generate takes them
    # This process's share: every size-th sample of the split, not of what is left (the others
    # may already have written some), minus what a killed run already wrote (resume).
    mine = [k for k in range(rank, len(ids), size) if not (gen / f"{ids[k]}.npy").is_file()]
    bar = tqdm(total=len(mine), desc=f"{model_name} {m['task']}/{m['split']}"
               + (f" [{rank}/{size}]" if size > 1 else ""), unit="video", disable=not progress)
    T, C, R = int(m["frames"]), int(m["condition_frames"]), int(m["resolution"])
    batches = range(0, len(mine), batch_size)
    for n, a in enumerate(batches):
        batch = mine[a:a + batch_size]
        t0 = time.perf_counter()
        try:
            answer = call(cond[batch], T, [ids[k] for k in batch])
        except Exception as exc:
            bar.close()
            raise _generate_failed(exc, work, model_name, n, len(batches), [ids[k] for k in batch],
                                   len(ids) - len(mine) + a) from None
        videos = _check_videos(answer, batch, ids, model_name, T, C, R, first=n == 0)
        if n == 0 and progress and len(batches) > 1:  # the one cost not measurable before the model runs
            each = (time.perf_counter() - t0) / len(batch)
            bar.write(f"{model_name}: {each:.2g} s a video on its first batch: about {_duration(each * len(mine))} for "
                      f"the {len(mine)} video(s) of {m['task']}/{m['split']}", file=sys.stderr)
        for k, video in zip(batch, videos, strict=True):
            atomic_save_npy(gen / f"{ids[k]}.npy", video)
        bar.update(len(batch))
    bar.close()
    (work / ERROR_LOG).unlink(missing_ok=True)
    if rank != 0:
        return
    _wait_for([gen / f"{sid}.npy" for sid in ids], f"the other processes' videos of {m['task']}/{m['split']}")
    if not (sub / "submission.json").is_file():
        try:
            pack(gen, inputs, sub, model_name, progress=False,
                 conditioning=conditioning_record(model, int(m["condition_frames"])), card=model_card(model))
        except InputsError as exc:
            raise RunError(str(exc), exc.code) from None


def run(model: Any, model_name: str, split_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
        *, batch_size: int = 8, metrics: Sequence[str] | None = None, progress: bool = True,
        model_args: dict[str, Any] | None = None, identity: dict[str, Any] | None = None,
        restart: bool = False) -> list[Path]:
    """Generate, pack and score every split; returns the results files (on process 0 of a launch).

    model: an object with `generate(condition, num_frames)`, or a string ``baseline:NAME``
    (a reference baseline; `model_args` then gives its ``train`` split).
    identity: the resume key (`model_identity`; default: the model's class and `model_args`).  A
    split's work folder made by another identity is refused (RunError ``run_mismatch``) unless
    `restart`, which deletes it first.
    """
    from .scoring.run.results import details_bytes
    from .scoring.run.score import score, write_results

    out = Path(out)
    rank, size = world()
    if restart and size > 1:
        raise RunError("--restart under a launcher would race its processes: run it once alone, or delete the "
                       "folders by hand", "run_restart")
    check_model_name(model_name)
    if identity is None:
        spec = model if isinstance(model, str) else f"{type(model).__module__}:{type(model).__qualname__}"
        identity = model_identity(spec, model_args or {}, model_name)
    results = []
    for split_dir in split_dirs:
        reader = SplitReader(split_dir)
        m = reader.manifest
        work = out / f"{m['task']}-{m['split']}"
        sub = work / "submission"
        _claim(work, identity, m["split_hash"], rank, restart)
        if isinstance(model, str):  # a reference baseline: its own writer, one process
            if rank == 0 and not (sub / "submission.json").is_file():
                _run_baseline(model, model_args or {}, model_name, split_dir, sub, progress)
        else:
            _generate_and_pack(model, model_name, split_dir, m, work, sub, rank, size, batch_size, progress)
        if rank != 0:
            continue
        scored = score(sub, split_dir, metrics, progress=progress)
        path = out / "results" / results_name(m["task"], m["split"], _safe(model_name), scored.results["model"].get("seeds"))
        path.parent.mkdir(parents=True, exist_ok=True)
        # the details beside the results, written with them as a unit: the viewer's judge cards,
        # column and per-video findings read them (`run --view`), as `view --details` does
        write_results(path, scored, extra=[(work / DETAILS, details_bytes(scored.details, scored.results["metrics"]))])
        results.append(path)
    return results

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
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..data.split import SplitReader
from ..conditioning import conditioning_record, model_caller
from ..io import atomic_save_npy
from .inputs import InputsError, export_inputs, pack


class RunError(Exception):
    """The model or the run cannot be used; the message says why."""


def _import(module: str) -> Any:
    """A module by dotted name, or a Python file by path (path/to/model.py)."""
    if module.endswith(".py") or os.sep in module or "/" in module:
        from importlib import util

        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise RunError(f"--model: {module} is not a file")
        name = "phybench_user_model_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        spec = util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise RunError(f"--model: {module} cannot be imported as Python")
        mod = util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    return importlib.import_module(module)


def load_model(spec: str, model_args: dict[str, Any]) -> Any:
    """MODULE:CLASS (importable, e.g. phybench.examples.shift:Model, or a file, path/to/model.py:Model)
    instantiated with model_args."""
    if ":" not in spec:
        raise RunError(f"--model {spec!r}: give MODULE:CLASS or path/to/file.py:CLASS, e.g. "
                       "phybench.examples.shift:Model")
    module, name = spec.rsplit(":", 1)
    try:
        cls = getattr(_import(module), name)
    except (ImportError, AttributeError) as exc:
        raise RunError(f"--model {spec!r}: {exc}") from None
    try:
        model = cls(**model_args)
    except TypeError as exc:
        given = ", ".join(model_args) or "none"
        raise RunError(f"--model {spec!r}: the class could not be made ({exc}); its arguments go in --model-args "
                       f"key=value,... (given: {given})") from None
    if not callable(getattr(model, "generate", None)):
        raise RunError(f"--model {spec!r}: the class needs a generate(condition, num_frames) method")
    return model


def parse_model_args(text: str | None) -> dict[str, Any]:
    """'a=1,b=x' -> {'a': 1, 'b': 'x'} (ints and floats parsed, the rest strings)."""
    out: dict[str, Any] = {}
    for part in filter(None, (text or "").split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise RunError(f"--model-args: {part!r} is not key=value")
        for cast in (int, float):
            try:
                out[key.strip()] = cast(value)
                break
            except ValueError:
                continue
        else:
            out[key.strip()] = value
    return out


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
                    progress: bool = True) -> list[Path]:
    """The protocol's evaluation splits of `tasks`, generated under OUT/data/ (reused when there)."""
    from ..data.generate import generate
    from ..data.split import make_plan
    from ..tasks import get_task
    from ..tasks.protocols import PROTOCOLS

    protocol = PROTOCOLS.get(protocol_name)
    rank, size = world()
    folders = []
    for task in tasks:
        spec = get_task(task)
        for split in spec.eval_splits:
            folder = Path(out) / "data" / f"{task}-{split}"
            if rank == 0:
                plan = make_plan(spec, split, None, protocol.size(spec, split), None)
                generate(plan, folder, progress=progress,
                         command=f"phybench generate {task} --split {split} --protocol {protocol.name}")
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
    from ..reference import BaselineError, run_baseline

    unknown = set(model_args) - {"train", "cache_dir"}
    if unknown:
        raise RunError(f"--model-args {', '.join(sorted(unknown))}: a baseline takes train=DIR (nearest-neighbour) "
                       "and cache_dir=DIR only")
    try:
        run_baseline(model_spec[len(BASELINE_PREFIX):], split_dir, sub, model_args.get("train"), progress,
                     cache_dir=model_args.get("cache_dir"), fmt="npz", model_name=model_name)
    except BaselineError as exc:
        raise RunError(str(exc)) from None


def run(model: Any, model_name: str, split_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
        *, batch_size: int = 8, metrics: Sequence[str] | None = None, progress: bool = True,
        model_args: dict[str, Any] | None = None) -> list[Path]:
    """Generate, pack and score every split; returns the results files (on process 0 of a launch).

    model: an object with `generate(condition, num_frames)`, or a string ``baseline:NAME``
    (a reference baseline; `model_args` then gives its ``train`` split).
    """
    from tqdm import tqdm

    from ..scoring.score import score, write_results

    out = Path(out)
    rank, size = world()
    results = []
    for split_dir in split_dirs:
        reader = SplitReader(split_dir)
        m = reader.manifest
        work = out / f"{m['task']}-{m['split']}"
        sub = work / "submission"
        if isinstance(model, str):  # a reference baseline: its own writer, one process
            if rank == 0 and not (sub / "submission.json").is_file():
                _run_baseline(model, model_args or {}, model_name, split_dir, sub, progress)
        else:
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
            for a in range(0, len(mine), batch_size):
                batch = mine[a:a + batch_size]
                videos = np.asarray(call(cond[batch], int(m["frames"]), [ids[k] for k in batch]))
                if videos.dtype != np.uint8 or videos.ndim != 5 or len(videos) != len(batch):
                    raise RunError(f"{model_name}.generate returned {videos.dtype} {videos.shape}; expected uint8 "
                                   f"({len(batch)}, frames, H, W, 3)")
                for k, video in zip(batch, videos):
                    atomic_save_npy(gen / f"{ids[k]}.npy", video)
                bar.update(len(batch))
            bar.close()
            if rank != 0:
                continue
            _wait_for([gen / f"{sid}.npy" for sid in ids], f"the other processes' videos of {m['task']}/{m['split']}")
            if not (sub / "submission.json").is_file():
                try:
                    pack(gen, inputs, sub, model_name, progress=False,
                         conditioning=conditioning_record(model, int(m["condition_frames"])))
                except InputsError as exc:
                    raise RunError(str(exc)) from None
        if rank != 0:
            continue
        scored = score(sub, split_dir, metrics, progress=progress)
        path = out / "results" / f"{m['task']}-{m['split']}-{_safe(model_name)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_results(path, scored)
        results.append(path)
    return results

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
See examples/shift.py for a small model.
"""
from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..data.split import SplitReader
from ..io import atomic_save_npy, atomic_write_bytes
from .inputs import InputsError, export_inputs, pack


class RunError(Exception):
    """The model or the run cannot be used; the message says why."""


def load_model(spec: str, model_args: dict[str, Any]) -> Any:
    """MODULE:CLASS (importable, e.g. examples.shift:Model) instantiated with model_args."""
    if ":" not in spec:
        raise RunError(f"--model {spec!r}: give MODULE:CLASS, e.g. examples.shift:Model")
    module, name = spec.split(":", 1)
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise RunError(f"--model {spec!r}: {exc}") from None
    model = cls(**model_args)
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


def run(model: Any, model_name: str, split_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
        *, batch_size: int = 8, metrics: Sequence[str] | None = None, progress: bool = True) -> list[Path]:
    """Generate, pack and score every split; returns the results files."""
    from tqdm import tqdm

    from .results import results_bytes
    from .score import score

    out = Path(out)
    results = []
    for split_dir in split_dirs:
        reader = SplitReader(split_dir)
        m = reader.manifest
        work = out / f"{m['task']}-{m['split']}"
        inputs = work / "inputs"
        if not (inputs / "manifest.json").is_file():
            export_inputs(split_dir, inputs, progress=False)
        with np.load(inputs / "condition_frames.npz", allow_pickle=False) as z:
            cond, ids = z["frames"], [str(s) for s in z["sample_ids"]]
        gen = work / "generated"
        todo = [k for k, sid in enumerate(ids) if not (gen / f"{sid}.npy").is_file()]  # resume
        bar = tqdm(total=len(ids), initial=len(ids) - len(todo), desc=f"{model_name} {m['task']}/{m['split']}",
                   unit="video", disable=not progress)
        for a in range(0, len(todo), batch_size):
            batch = todo[a:a + batch_size]
            videos = np.asarray(model.generate(cond[batch], int(m["frames"])))
            if videos.dtype != np.uint8 or videos.ndim != 5 or len(videos) != len(batch):
                raise RunError(f"{model_name}.generate returned {videos.dtype} {videos.shape}; expected uint8 "
                               f"({len(batch)}, frames, H, W, 3)")
            for k, video in zip(batch, videos):
                atomic_save_npy(gen / f"{ids[k]}.npy", video)
            bar.update(len(batch))
        bar.close()
        sub = work / "submission"
        if not (sub / "submission.json").is_file():
            try:
                pack(gen, inputs, sub, model_name, progress=False)
            except InputsError as exc:
                raise RunError(str(exc)) from None
        scored = score(sub, split_dir, metrics, progress=progress)
        path = out / "results" / f"{m['task']}-{m['split']}-{_safe(model_name)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, results_bytes(scored.results))
        results.append(path)
    return results

"""Which conditions a model is given, and the record of them in its submission.

`phybench run` always gives a model its condition frames.  A model whose ``generate``
names a ``prompts`` and/or ``states`` keyword parameter also gets, per video of the batch,
the sample's plain-words prompt (str) and/or numeric state (dict), as written by
`phybench.data.conditions` (``prompts.csv``, ``states.jsonl``)::

    def generate(self, condition, num_frames, prompts=None, states=None): ...

Only parameters named in the signature count (a bare ``**kwargs`` gets nothing), so what
the submission records is what the model asked for.  A model that looks at fewer than
all condition frames (an image-to-video model reads the last one) says so with an
attribute ``condition_frames_used`` (an int); otherwise it is taken to use all of them.

The submission's ``conditioning`` block records both: ``inputs`` is the condition track
(``frames``, ``frames+text``, ``frames+state`` or ``frames+text+state``) and
``condition_frames_used`` the frames count, so a board can keep image-to-video apart from
video-to-video and frames-only apart from frames-plus-text entries.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

TRACKS = ("frames", "frames+text", "frames+state", "frames+text+state")


def accepted_conditions(model: Any) -> tuple[bool, bool]:
    """(takes prompts, takes states): whether `model.generate` names those keyword parameters."""
    try:
        params = inspect.signature(model.generate).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature: frames only
        return False, False
    named = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return "prompts" in named, "states" in named


def track(model: Any) -> str:
    """The condition track of a model: frames, frames+text, frames+state or frames+text+state."""
    text, state = accepted_conditions(model)
    return "frames" + ("+text" if text else "") + ("+state" if state else "")


def condition_frames_used(model: Any, condition_frames: int) -> int:
    """The model's `condition_frames_used` attribute (checked), else every condition frame."""
    used = getattr(model, "condition_frames_used", None)
    if used is None:
        return int(condition_frames)
    if isinstance(used, bool) or not isinstance(used, (int, np.integer)) or not 0 <= int(used) <= condition_frames:
        raise ValueError(f"the model's condition_frames_used is {used!r}; it must be an int in [0, {condition_frames}]")
    return int(used)


def conditioning_record(model: Any, condition_frames: int) -> dict[str, Any]:
    """The submission.json ``conditioning`` block of a model run on a split."""
    return {"inputs": track(model), "condition_frames_used": condition_frames_used(model, condition_frames)}


def model_caller(model: Any, inputs_dir: str | os.PathLike[str],
                 split_dir: str | os.PathLike[str]) -> Callable[[np.ndarray, int, Sequence[str]], Any]:
    """``call(condition, num_frames, sample_ids)``: model.generate with the conditions it asks for.

    The prompts and states come from the inputs folder; an inputs folder exported before
    they existed gets them written beside its frames first (from the split, deterministically).
    """
    text, state = accepted_conditions(model)
    if not (text or state):
        return lambda condition, num_frames, ids: model.generate(condition, num_frames)
    from .data.conditions import read_conditions, write_conditions

    found = read_conditions(inputs_dir)
    if found is None:
        write_conditions(split_dir, inputs_dir)
        found = read_conditions(inputs_dir)
    assert found is not None
    texts, states = found

    def call(condition: np.ndarray, num_frames: int, ids: Sequence[str]) -> Any:
        missing = [sid for sid in ids if sid not in texts or sid not in states]
        if missing:
            raise ValueError(f"{Path(inputs_dir)}: no prompt or state for {missing[0]}; export the inputs again")
        kwargs: dict[str, Any] = {}
        if text:
            kwargs["prompts"] = [texts[sid] for sid in ids]
        if state:
            kwargs["states"] = [states[sid] for sid in ids]
        return model.generate(condition, num_frames, **kwargs)

    return call

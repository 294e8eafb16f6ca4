"""Writing a submission: `write_submission` (atomic, lossless, checked first) and `submission_meta`."""
from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..data.frames import encode_png
from ..io import atomic_folder
from .archive import SubmissionError, safe_relpath
from .arrays import check_array
from .format import FILE_FORMATS, META, SCHEMA_VERSION, VIDEO_DIR, schema_problems
from ..data.documents import Manifest

WRITE_FORMATS = ("npy", "npz", "png")  # no mp4: write_submission never makes a lossy copy



def _check_sample_id(sample_id: Any) -> str:
    if not isinstance(sample_id, str) or not sample_id:
        raise ValueError(f"sample id must be a non-empty string, got {sample_id!r}")
    clean, why = safe_relpath(sample_id)
    if clean != sample_id or posixpath.splitext(sample_id)[1] in (*FILE_FORMATS, ".png"):
        raise ValueError(f"sample id {sample_id!r} cannot be a path inside videos/ ({why or 'not normalised'})")
    return sample_id


def write_submission(out_dir: str | os.PathLike[str], meta: dict[str, Any],
                     videos: Iterable[tuple[str, np.ndarray]], fmt: str = "npy") -> Path:
    """Write a submission folder atomically: all of it, or nothing.

    meta: submission.json (`schema_version` is filled in); checked against the schema
    before anything is written.  videos: (sample_id, uint8 (T, H, W, 3)) pairs, full
    length, condition frames included.  fmt: "npy", "npz" or "png" (lossless only).
    The folder is built beside `out_dir` under a temporary name, then renamed; an
    existing `out_dir` is never overwritten.
    """
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(WRITE_FORMATS)}, got {fmt!r}")
    out = Path(out_dir)
    if out.exists():
        raise FileExistsError(f"{out} exists; write_submission never overwrites: choose a new folder or remove it")
    meta = {"schema_version": SCHEMA_VERSION, **meta}
    problems = schema_problems(meta)
    if problems:
        raise SubmissionError(problems)
    expected = (meta["frames"], meta["resolution"], meta["condition_frames"])
    with atomic_folder(out) as tmp:
        seen: set[str] = set()
        for sample_id, video in videos:
            _check_sample_id(sample_id)
            if sample_id in seen:
                raise ValueError(f"sample id {sample_id!r} given twice")
            seen.add(sample_id)
            video = np.asarray(video)
            problems = check_array(video.shape, video.dtype, expected, sample_id, sample_id)
            if problems:
                raise SubmissionError(problems)
            path = tmp / VIDEO_DIR / sample_id
            path.parent.mkdir(parents=True, exist_ok=True)
            if fmt == "npy":
                with open(f"{path}.npy", "wb") as f:
                    np.save(f, np.ascontiguousarray(video), allow_pickle=False)
            elif fmt == "npz":
                with open(f"{path}.npz", "wb") as f:
                    np.savez_compressed(f, video=video)
            else:
                path.mkdir()
                for t, frame in enumerate(video):
                    (path / f"{t:05d}.png").write_bytes(encode_png(np.ascontiguousarray(frame)))
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return out


def submission_meta(manifest: Manifest, model: str, *, sampler: dict[str, Any] | None = None,
                    seeds: list[int] | None = None, notes: str = "", **extra: Any) -> dict[str, Any]:
    """A submission.json for a split, its fields copied from the split's manifest."""
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "model": {"name": model},
        "task": manifest["task"],
        "split": manifest["split"],
        "split_hash": manifest["split_hash"],
        "condition_frames": int(manifest["condition_frames"]),
        "frames": int(manifest["frames"]),
        "resolution": int(manifest["resolution"]),
        "fps": 1.0 / float(manifest["frame_interval"]),
        "sampler": sampler or {},
        "seeds": seeds if seeds is not None else [0],
    }
    if notes:
        meta["notes"] = notes
    if extra:
        meta["extra"] = extra
    return meta

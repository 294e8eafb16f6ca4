"""Plain-file model inputs and packing: a model runs in its own environment, without phybench.

`export_inputs(split_dir, out)` writes the condition frames of every sample of an evaluation
split as plain PNG files and one .npz, with a manifest of ids and frame counts::

    OUT/manifest.json                 kind phybench-inputs: task, split, split hash, frames,
                                      condition frames, resolution, fps, sample ids, and the
                                      submission.json to use (`submission`)
    OUT/frames/<sample_id>/00000.png  the condition frames, lossless
    OUT/condition_frames.npz          `frames` uint8 (N, C, H, W, 3), `sample_ids` (N,) str

`pack(generated, inputs_dir, out, model)` turns a folder of generated videos laid out by
sample id (``<sample_id>.npy | .npz | .mp4`` or ``<sample_id>/00000.png ...``) back into a
submission.  A video may hold every frame, or only the generated ones (frames - condition
frames): then the exported condition frames are put in front.  Everything is decoded with
phybench's own readers (no pickle; mp4 through the hardened decoder) and written as lossless
.npz by `write_submission`, all or nothing.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..data.frames import decode_png, decode_video, encode_png
from ..data.split import SplitReader
from ..data.video import LimitExceeded, decode_mp4
from ..tasks.conditions import write_conditions
from .writer import submission_meta, write_submission

INPUTS_KIND = "phybench-inputs"
MANIFEST = "manifest.json"


class InputsError(Exception):
    """The inputs folder or the generated videos cannot be used; the message says why and what to do."""


def export_inputs(split_dir: str | os.PathLike[str], out: str | os.PathLike[str], progress: bool = True) -> Path:
    """Write the condition frames of an evaluation split as plain files (atomically)."""
    from tqdm import tqdm

    reader = SplitReader(split_dir)
    manifest = reader.manifest
    if reader.spec.is_training(manifest["split"]):
        raise InputsError(f"{split_dir} is {manifest['task']}/{manifest['split']}, a training split; "
                          "export the inputs of an evaluation split")
    out = Path(out)
    if out.exists():
        raise InputsError(f"{out} exists; choose a new folder (nothing is overwritten)")
    cf = int(manifest["condition_frames"])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        ids, frames = [], []
        for row in tqdm(reader.rows(columns=["sample_id", "video"]), total=len(reader), desc="export inputs",
                        unit="video", disable=not progress):
            video = decode_video(row["video"][:cf])  # (C, H, W, 3): only the condition frames are decoded
            folder = tmp / "frames" / row["sample_id"]
            folder.mkdir(parents=True)
            for t, frame in enumerate(video):
                (folder / f"{t:05d}.png").write_bytes(encode_png(frame))
            ids.append(row["sample_id"])
            frames.append(video)
        with open(tmp / "condition_frames.npz", "wb") as f:
            np.savez_compressed(f, frames=np.stack(frames), sample_ids=np.array(ids, dtype=str))
        write_conditions(split_dir, tmp)  # prompts.csv, states.jsonl, conditions.json (phybench.tasks.conditions)
        doc = {
            "kind": INPUTS_KIND,
            "schema_version": 1,
            "task": manifest["task"],
            "split": manifest["split"],
            "split_hash": manifest["split_hash"],
            "frames": int(manifest["frames"]),
            "condition_frames": cf,
            "frames_to_generate": int(manifest["frames"]) - cf,
            "resolution": int(manifest["resolution"]),
            "fps": 1.0 / float(manifest["frame_interval"]),
            "sample_ids": ids,
            "submission": submission_meta(manifest, "MODEL NAME"),
            "how": ("for each sample id, write the full video (all frames, condition frames first) or only the "
                    "generated frames as <GEN>/<sample_id>.npy (uint8 T x H x W x 3), .npz, .mp4 or a folder of "
                    "PNG frames 00000.png ...; then: phybench pack GEN --inputs THIS_FOLDER --out SUB --name MODEL"),
        }
        (tmp / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_inputs(inputs_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], np.ndarray]:
    """The inputs manifest and the condition frames (N, C, H, W, 3), checked against each other."""
    folder = Path(inputs_dir)
    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputsError(f"{folder} is not a `phybench export-inputs` folder ({MANIFEST}: {exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") != INPUTS_KIND:
        raise InputsError(f"{folder / MANIFEST} is not a phybench inputs manifest (kind {INPUTS_KIND!r})")
    with np.load(folder / "condition_frames.npz", allow_pickle=False) as z:
        frames, ids = z["frames"], [str(s) for s in z["sample_ids"]]
    if ids != doc["sample_ids"]:
        raise InputsError(f"{folder}: condition_frames.npz and {MANIFEST} list different samples")
    return doc, frames


def _find(generated: Path, sample_id: str) -> Path | None:
    for suffix in (".npy", ".npz", ".mp4"):
        path = generated / f"{sample_id}{suffix}"
        if path.is_file() and not path.is_symlink():
            return path
    folder = generated / sample_id
    if folder.is_dir() and not folder.is_symlink() and (folder / "00000.png").is_file():
        return folder
    return None


def _load(path: Path) -> np.ndarray:
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir() if p.suffix == ".png")
        want = [f"{t:05d}.png" for t in range(len(names))]
        if names != want:
            raise InputsError(f"{path}: PNG frames must be named 00000.png, 00001.png, ... with no gaps")
        return np.stack([decode_png((path / n).read_bytes()) for n in names])
    data = path.read_bytes()
    if path.suffix == ".mp4":
        try:
            return decode_mp4(data)
        except (ValueError, LimitExceeded) as exc:
            raise InputsError(f"{path}: does not decode ({exc or 'too large'})") from None
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)  # never unpickles
    except ValueError as exc:
        raise InputsError(f"{path}: not a plain array ({exc})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            if len(loaded.files) != 1:
                raise InputsError(f"{path}: an .npz must hold exactly one array, found {len(loaded.files)}")
            return loaded[loaded.files[0]]
    return loaded


def pack(generated: str | os.PathLike[str], inputs_dir: str | os.PathLike[str], out: str | os.PathLike[str],
         model: str, progress: bool = True, conditioning: dict[str, Any] | None = None) -> Path:
    """Make a submission from generated videos laid out by sample id (see the module docstring).

    conditioning: the submission's record of the conditions the model used (`phybench.conditioning`)."""
    from tqdm import tqdm

    doc, cond = read_inputs(inputs_dir)
    generated = Path(generated)
    ids = doc["sample_ids"]
    paths = {sid: _find(generated, sid) for sid in ids}
    missing = [sid for sid, p in paths.items() if p is None]
    if missing:
        raise InputsError(f"{len(missing)} of {len(ids)} sample(s) have no video under {generated}, e.g. "
                          f"{generated / missing[0]}.npy (or .npz, .mp4, or a folder of PNG frames)")
    T, C, R = doc["frames"], doc["condition_frames"], doc["resolution"]

    def videos() -> Iterator[tuple[str, np.ndarray]]:
        for k, sid in enumerate(tqdm(ids, desc="pack", unit="video", disable=not progress)):
            video = np.asarray(_load(paths[sid]))
            if video.dtype != np.uint8 or video.ndim != 4 or video.shape[1:] != (R, R, 3):
                raise InputsError(f"{paths[sid]}: expected uint8 (frames, {R}, {R}, 3), got {video.dtype} {video.shape}")
            if video.shape[0] == T - C:  # the generated frames only: put the condition frames first
                video = np.concatenate([cond[k], video])
            if video.shape[0] != T:
                raise InputsError(f"{paths[sid]}: {video.shape[0]} frames; give all {T} or the {T - C} generated ones")
            yield sid, video

    meta = dict(doc["submission"])
    meta["model"] = {"name": model}
    if conditioning:
        meta["conditioning"] = conditioning
    from ..data.source import video_source

    meta["sources"] = {sid: video_source(p) for sid in ids if (p := paths[sid]) is not None}  # lossless or mp4:<codec>
    try:
        return write_submission(out, meta, videos(), fmt="npz")
    except FileExistsError as exc:
        raise InputsError(str(exc)) from None

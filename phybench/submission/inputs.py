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

import json
import os
import stat
import zipfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..data.frames import decode_video, encode_png
from ..data.split import SplitReader
from ..data.video import decode_mp4
from ..problems import LimitExceeded
from ..data.conditions import write_conditions
from .archive import Limits, read_capped
from .arrays import PNG_COLOURS, decode_png_rgb, parse_npy, parse_npz, png_header
from .. import jsonsafe
from ..io import atomic_folder
from .format import CONTROL
from .writer import submission_meta, write_submission

INPUTS_KIND = "phybench-inputs"

MANIFEST = "manifest.json"


class InputsError(Exception):
    """The inputs folder or the generated videos cannot be used; the message says why and what to do,
    `code` names the case (docs/submission.md)."""

    def __init__(self, message: str, code: str = "inputs_invalid") -> None:
        super().__init__(message)
        self.code = code


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
        raise InputsError(f"{out} exists; choose a new folder (nothing is overwritten)", "out_exists")
    cf = int(manifest["condition_frames"])
    with atomic_folder(out) as tmp:
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
        write_conditions(split_dir, tmp)  # prompts.csv, states.jsonl, conditions.json (phybench.data.conditions)
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
    return out


def read_inputs(inputs_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], np.ndarray]:
    """The inputs manifest and the condition frames (N, C, H, W, 3), checked against each other.

    The folder may come from elsewhere: every field is type-checked and the .npz is read without
    pickles, so a broken or hostile one is one InputsError (code ``inputs_invalid``)."""
    folder = Path(inputs_dir)

    def bad(why: str) -> InputsError:
        return InputsError(f"{folder} is not a usable `phybench export-inputs` folder: {why}; export it again "
                           "(phybench export-inputs --data SPLIT_DIR --out DIR)", "inputs_invalid")

    try:
        doc = jsonsafe.read(folder / MANIFEST)
    except (OSError, ValueError) as exc:  # jsonsafe.JSONError: coded (too deep, too large, ...)
        raise bad(f"{MANIFEST}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != INPUTS_KIND:
        raise bad(f"{MANIFEST} is not a phybench inputs manifest (kind {INPUTS_KIND!r})")
    for key in ("frames", "condition_frames", "resolution"):
        if not isinstance(doc.get(key), int) or isinstance(doc.get(key), bool) or doc[key] < 1:
            raise bad(f"{MANIFEST}: {key} must be a positive integer, got {doc.get(key)!r}")
    if doc["condition_frames"] >= doc["frames"]:
        raise bad(f"{MANIFEST}: condition_frames {doc['condition_frames']} is not below frames {doc['frames']}")
    ids = doc.get("sample_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
        raise bad(f"{MANIFEST}: sample_ids must be a non-empty list of ids")
    if not isinstance(doc.get("submission"), dict):
        raise bad(f"{MANIFEST}: 'submission' must be the submission.json to use")
    try:
        with np.load(folder / "condition_frames.npz", allow_pickle=False) as z:
            frames, stored = z["frames"], [str(s) for s in z["sample_ids"]]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise bad(f"condition_frames.npz: {exc}") from None
    if stored != ids:
        raise bad(f"condition_frames.npz and {MANIFEST} list different samples")
    want = (len(ids), doc["condition_frames"], doc["resolution"], doc["resolution"], 3)
    if frames.dtype != np.uint8 or frames.shape != want:
        raise bad(f"condition_frames.npz holds {frames.dtype} {frames.shape}, expected uint8 {want}")
    return doc, frames


VIDEO_SUFFIXES = (".npy", ".npz", ".mp4")


def _input_error(problem: Any) -> "InputsError":
    if problem.code in ("pickled_array", "not_npy"):
        return InputsError(f"not a plain array: {problem.message}", problem.code)
    return InputsError(problem.message, problem.code)


def _lkind(path: Path) -> str | None:
    """file, dir, link, special, or None (absent): without following a link."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputsError(f"{path}: cannot be read ({exc.strerror})", "entry_unreadable") from None
    if stat.S_ISLNK(st.st_mode):
        return "link"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "special"


def _refuse_kind(path: Path, kind: str | None) -> None:
    if kind == "link":
        raise InputsError(f"{path} is a symbolic link; pack reads regular files only: copy the video in", "link")
    if kind == "special":
        raise InputsError(f"{path} is not a regular file (a FIFO, socket or device); write the video as a file",
                          "special_file")


def _find(generated: Path, sample_id: str) -> Path | None:
    """The one video of a sample id; a link, a FIFO or two videos for one id are refused."""
    found = []
    for suffix in VIDEO_SUFFIXES:
        path = generated / f"{sample_id}{suffix}"
        kind = _lkind(path)
        _refuse_kind(path, kind)
        if kind == "file":
            found.append(path)
    folder = generated / sample_id
    kind = _lkind(folder)
    _refuse_kind(folder, kind)
    if kind == "dir" and _lkind(folder / "00000.png") is not None:
        found.append(folder)
    if len(found) > 1:
        raise InputsError(f"sample {sample_id} has {len(found)} videos ({', '.join(p.name for p in found)}); "
                          "keep one", "duplicate_id")
    return found[0] if found else None


def _unknown_ids(generated: Path, ids: list[str]) -> list[str]:
    """Videos under `generated` that answer no sample id of the split (a stale or misnamed file)."""
    known = set(ids)
    unknown = []
    for root, dirs, files in os.walk(generated):  # does not follow links
        rel = os.path.relpath(root, generated)
        rel = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in files:
            stem, suffix = os.path.splitext(name)
            if suffix in VIDEO_SUFFIXES and not name.startswith(".") and rel + stem not in known:
                unknown.append(rel + name)
            elif suffix == ".png" and rel[:-1] not in known:
                unknown.append(rel + name)
                dirs.clear()
                break
    return sorted(unknown)


def _capped_bytes(path: Path, limit: int) -> bytes:
    """A regular file's bytes, refused unread past `limit` (the size is checked first, then counted)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputsError(f"{path}: cannot be opened ({exc.strerror}); pack reads regular files only",
                          "entry_unreadable") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InputsError(f"{path} is not a regular file", "special_file")
        if st.st_size > limit:
            raise InputsError(f"{path}: {st.st_size:,} bytes, over the {limit:,}-byte limit for one video of this "
                              "split (8x its raw size): is it the right file?", "entry_too_large")
        try:
            return read_capped(f, limit)
        except LimitExceeded:
            raise InputsError(f"{path}: grew past the {limit:,}-byte limit while read", "entry_too_large") from None


def _check_header(path: Path, shape: tuple[int, ...], T: int, C: int, R: int) -> None:
    """Frames and size from a header, before any pixel is decoded."""
    if len(shape) != 4 or tuple(shape[1:]) != (R, R, 3):
        raise InputsError(f"{path}: shape {tuple(shape)}, expected (frames, {R}, {R}, 3): {R}x{R} px, colour last",
                          "shape" if len(shape) != 4 or shape[-1] != 3 else "resolution")
    if shape[0] not in (T, T - C):
        raise InputsError(f"{path}: {shape[0]} frames; give all {T} or the {T - C} generated ones", "frame_count")


def _load(path: Path, T: int, C: int, R: int, limit: int) -> np.ndarray:
    """One generated video, its header checked before anything is decoded (the validator's checks)."""
    where = str(path)
    if path.is_dir():
        names = sorted(os.listdir(path))
        pngs = [n for n in names if n.endswith(".png")]
        want = [f"{t:05d}.png" for t in range(len(pngs))]
        if pngs != want:
            raise InputsError(f"{path}: PNG frames must be named 00000.png, 00001.png, ... with no gaps",
                              "bad_frame_names")
        if len(pngs) not in (T, T - C):
            raise InputsError(f"{path}: {len(pngs)} frames; give all {T} or the {T - C} generated ones", "frame_count")
        frames, total = [], 0
        for n in pngs:
            _refuse_kind(path / n, _lkind(path / n))
            data = _capped_bytes(path / n, limit - total)
            total += len(data)
            header = png_header(data)
            if header is None:
                raise InputsError(f"{path / n}: not a PNG (it starts with {data[:8]!r})", "unreadable")
            width, height, depth, colour = header
            if (depth, colour) != (8, 2):
                raise InputsError(f"{path / n}: {PNG_COLOURS.get(colour, f'colour type {colour}')} {depth}-bit; "
                                  "frames must be 8-bit RGB", "png_format")
            if (height, width) != (R, R):
                raise InputsError(f"{path / n}: {height}x{width} pixels (H x W), the split is {R}x{R}", "resolution")
            try:
                frames.append(decode_png_rgb(data))
            except Exception as exc:  # Pillow and zlib raise many types for broken files
                raise InputsError(f"{path / n}: cannot be decoded ({type(exc).__name__}: {exc})", "unreadable") from None
        return np.stack(frames)
    data = _capped_bytes(path, limit)
    if path.suffix == ".mp4":
        try:
            video = decode_mp4(data, max_bytes=limit, timeout_s=Limits().mp4_timeout_s)
        except LimitExceeded:
            raise InputsError(f"{path}: decodes to more than {limit:,} bytes of frames, far more than the split's "
                              "videos", "entry_too_large") from None
        except (ValueError, OSError, RuntimeError) as exc:
            raise InputsError(f"{path}: does not decode as mp4 ({exc})", "unreadable") from None
        _check_header(path, video.shape, T, C, R)
        return video
    if path.suffix == ".npz":
        array, problems = parse_npz(data, path.stem, where, None, limit)
    else:
        array, problems = parse_npy(data, path.stem, where, None)
    errors = [p for p in problems if p.severity == "error"]
    if errors:  # dtype and layout from the header, a short file, a pickle: nothing was decoded
        raise _input_error(errors[0])
    assert array is not None
    _check_header(path, array.shape, T, C, R)
    return array


def with_card(meta: dict[str, Any], name: str, card: dict[str, Any]) -> None:
    """submission.json's model block, sampler and seeds from a model's card (`pipeline.model_card`); the name is `name`."""
    meta["model"] = {**card.get("model", {}), "name": name}
    meta.update({key: card[key] for key in ("sampler", "seeds") if key in card})


def pack(generated: str | os.PathLike[str], inputs_dir: str | os.PathLike[str], out: str | os.PathLike[str],
         model: str, progress: bool = True, conditioning: dict[str, Any] | None = None,
         warnings: list[str] | None = None, card: dict[str, Any] | None = None) -> Path:
    """Make a submission from generated videos laid out by sample id (see the module docstring).

    conditioning: the submission's record of the conditions the model used (`phybench.conditioning`).
    warnings: if given, gets a line when full-length videos' condition frames differ from the exported
    ones by more than `score`'s tolerance (zeroed frames, another sample's video, a colour swap).
    card: the model's own description (`phybench.pipeline.model_card`): its ``model`` fields (the
    name stays `model`), ``sampler`` and ``seeds`` go into submission.json."""
    from .format import CONDITION_TOLERANCE

    from tqdm import tqdm

    if CONTROL.search(model) or not model.strip():
        raise InputsError(f"--name {ascii(model)}: model names are printable text on one line (no control "
                          "characters)", "model_name")
    doc, cond = read_inputs(inputs_dir)
    generated = Path(generated)
    if _lkind(generated) != "dir":
        raise InputsError(f"{generated} is not a folder of generated videos", "not_found")
    ids = doc["sample_ids"]
    unknown = _unknown_ids(generated, ids)
    if unknown:
        raise InputsError(f"{len(unknown)} video(s) under {generated} answer no sample id of "
                          f"{doc['task']}/{doc['split']}, e.g. {unknown[0]}; remove them (ids look like "
                          f"{ids[0]})", "extra_id")
    paths = {sid: _find(generated, sid) for sid in ids}
    missing = [sid for sid, p in paths.items() if p is None]
    if missing:
        raise InputsError(f"{len(missing)} of {len(ids)} sample(s) have no video under {generated}, e.g. "
                          f"{generated / missing[0]}.npy (or .npz, .mp4, or a folder of PNG frames)", "missing_id")
    T, C, R = doc["frames"], doc["condition_frames"], doc["resolution"]
    limit = 8 * T * R * R * 3 + (1 << 20)  # the validator's per-video limit (Limits.for_split)
    for path in paths.values():  # sizes first: nothing is read (not even an mp4's codec) past the limit
        if path is not None and path.is_file() and path.stat().st_size > limit:
            raise InputsError(f"{path}: {path.stat().st_size:,} bytes, over the {limit:,}-byte limit for one video "
                              "of this split (8x its raw size): is it the right file?", "entry_too_large")

    def videos() -> Iterator[tuple[str, np.ndarray]]:
        for k, sid in enumerate(tqdm(ids, desc="pack", unit="video", disable=not progress)):
            path = paths[sid]
            assert path is not None
            video = _load(path, T, C, R, limit)
            if video.shape[0] == T - C:  # the generated frames only: put the condition frames first
                video = np.concatenate([cond[k], video])
            else:  # the model's own condition frames: they must still be the sample's
                diff = float(np.abs(video[:C].astype(np.int16) - cond[k].astype(np.int16)).mean())
                if diff > CONDITION_TOLERANCE:
                    differ.append((diff, sid))
            yield sid, video

    meta = dict(doc["submission"])
    with_card(meta, model, card or {})
    if conditioning:
        meta["conditioning"] = conditioning
    from ..data.source import video_source

    meta["sources"] = {sid: video_source(p) for sid in ids if (p := paths[sid]) is not None}  # lossless or mp4:<codec>
    differ: list[tuple[float, str]] = []
    try:
        written = write_submission(out, meta, videos(), fmt="npz")
        if warnings is not None:
            from .format import lossy_source_problems

            warnings.extend(p.message for p in lossy_source_problems(meta))
        if differ and warnings is not None:
            worst = max(differ)
            warnings.append(f"{len(differ)} video(s) have condition frames that differ from the exported ones (mean "
                            f"absolute difference up to {worst[0]:.3g} grey levels, e.g. {worst[1]}): the first {C} "
                            "frames must be the sample's own; `score` will warn too. Zeroed frames, another "
                            "sample's video, a BGR/RGB swap? Or write only the generated frames and let pack "
                            "put the exported ones first")
        return written
    except FileExistsError as exc:
        if exc.errno is None:  # write_submission's own refusal; an OS one (a file in the way) stays an OSError
            raise InputsError(str(exc), "out_exists") from None
        raise

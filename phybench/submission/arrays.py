"""Video bytes -> arrays: .npy and .npz headers checked before the data is touched, PNG frames.

Every check says what is wrong and how to fix it (a `Problem`); nothing here unpickles.
"""
from __future__ import annotations

import io
import struct
import zipfile
from collections import Counter

import numpy as np

from ..data.frames import PNG_SIGNATURE
from ..problems import LimitExceeded, Problem
from ..problems import error as _error
from ..problems import warning as _warning
from .archive import ZIP_READ_ERRORS, read_capped


def _dtype_hint(dtype: np.dtype) -> str:
    if dtype.kind == "f":
        return "(x*255).round().clip(0,255).astype(np.uint8) if x is in [0, 1], after replacing any NaN"
    if dtype.kind in "iub":
        return "x.clip(0,255).astype(np.uint8)"
    return "np.asarray(x, dtype=np.uint8)"


def check_array(shape: tuple[int, ...], dtype: np.dtype, expected: tuple[int, int, int] | None,
                 sample_id: str | None, where: str) -> list[Problem]:
    """Problems with a video's header: dtype, layout, frame count, resolution.

    expected: (frames, resolution, condition_frames) of the split, if known."""
    problems = []
    if dtype != np.uint8:
        problems.append(_error("dtype", f"{where}: dtype {dtype}, expected uint8 (convert with {_dtype_hint(dtype)})",
                               sample_id, where))
    if len(shape) != 4 or shape[-1] != 3:
        if len(shape) == 4 and shape[1] == 3:
            hint = "it looks channels-first (T, 3, H, W): use x.transpose(0, 2, 3, 1)"
        elif len(shape) == 3:
            hint = "one video is (T, H, W, 3), colour last; greyscale must be repeated to 3 channels"
        elif len(shape) == 5:
            hint = "is it a batch? save one video per sample id"
        else:
            hint = "save one video per sample id, colour last"
        problems.append(_error("shape", f"{where}: shape {tuple(shape)}, expected (T, H, W, 3); {hint}",
                               sample_id, where))
        return problems
    if expected is not None:
        frames, resolution, condition = expected
        if shape[0] != frames:
            problems.append(_error(
                "frame_count",
                f"{where}: {shape[0]} frames, the split has {frames}; videos are full length: the {condition} "
                f"condition frames first, then {frames - condition} generated ones", sample_id, where))
        if tuple(shape[1:3]) != (resolution, resolution):
            problems.append(_error(
                "resolution",
                f"{where}: {shape[1]}x{shape[2]} pixels (H x W), the split is {resolution}x{resolution}; "
                f"generate at {resolution} px", sample_id, where))
    return problems


def parse_npy(data: bytes, sample_id: str | None, where: str,
               expected: tuple[int, int, int] | None) -> tuple[np.ndarray | None, list[Problem]]:
    """An .npy file's bytes -> array, checking its header before touching the data."""
    if data[:1] == b"\x80":  # pickle protocol 2+ opcode
        return None, [_error("pickled_array", f"{where}: a Python pickle, not an .npy array; pickles can run code "
                             "and are never loaded: save with np.save(path, video, allow_pickle=False)",
                             sample_id, where)]
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"npy format version {version[0]}.{version[1]}, expected 1.0 or 2.0")
    except (ValueError, SyntaxError, TypeError, EOFError, OverflowError) as exc:
        return None, [_error("not_npy", f"{where}: not a readable .npy file ({exc}; it starts with {data[:10]!r}); "
                             "write it with np.save(path, video)", sample_id, where)]
    if any(n < 0 for n in shape):
        return None, [_error("not_npy", f"{where}: the header declares a negative size {shape}; the file is "
                             "corrupt: write it with np.save(path, video)", sample_id, where)]
    if dtype.hasobject:
        return None, [_error("pickled_array", f"{where}: an array of Python objects (dtype {dtype}), stored as a pickle; "
                             "pickles can run code and are never loaded: save a uint8 array with "
                             "np.save(path, np.asarray(video, dtype=np.uint8), allow_pickle=False)", sample_id, where)]
    problems = check_array(shape, dtype, expected, sample_id, where)
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    have = len(data) - f.tell()
    if have < need:
        problems.append(_error("truncated", f"{where}: the header promises {need:,} data bytes but the file holds "
                               f"{have:,}: it is truncated (an interrupted write or upload?); write it again",
                               sample_id, where))
    elif have > need:
        problems.append(_warning("trailing_bytes", f"{where}: {have - need:,} bytes after the array data are ignored",
                                 sample_id, where))
    if any(p.severity == "error" for p in problems):
        return None, problems
    return np.load(io.BytesIO(data), allow_pickle=False), problems


def parse_npz(data: bytes, sample_id: str, where: str, expected: tuple[int, int, int] | None,
               limit: int) -> tuple[np.ndarray | None, list[Problem]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            arrays = [i for i in infos if i.filename.endswith(".npy")]
            if len(infos) != 1 or len(arrays) != 1:
                names = ", ".join(i.filename for i in infos[:5]) + (", ..." if len(infos) > 5 else "")
                return None, [_error("npz_members", f"{where}: holds {len(infos)} members ({names or 'none'}); "
                                     "expected exactly one array: np.savez_compressed(path, video=video)",
                                     sample_id, where)]
            info = arrays[0]
            if info.file_size > limit:
                return None, [_error("entry_too_large", f"{where}: its array is {info.file_size:,} bytes "
                                     f"uncompressed, over the {limit:,}-byte limit", sample_id, where)]
            with zf.open(info) as f:
                inner = read_capped(f, limit)
    except LimitExceeded:
        return None, [_error("entry_too_large", f"{where}: its array decompresses past the {limit:,}-byte limit",
                             sample_id, where)]
    except ZIP_READ_ERRORS as exc:
        return None, [_error("unreadable", f"{where}: not a readable .npz file ({exc}); write it with "
                             "np.savez_compressed(path, video=video)", sample_id, where)]
    key = info.filename[:-4]
    problems = []
    if key != "video":
        problems.append(_warning("npz_key", f"{where}: the array is named {key!r}; name it 'video' "
                                 "(np.savez_compressed(path, video=video))", sample_id, where))
    array, more = parse_npy(inner, sample_id, f"{where}:{key}", expected)
    return array, problems + more


PNG_COLOURS = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale+alpha", 6: "RGBA"}


def png_header(data: bytes) -> tuple[int, int, int, int] | None:
    """(width, height, bit depth, colour type) from the IHDR chunk, or None if not a PNG."""
    if not data.startswith(PNG_SIGNATURE) or len(data) < 29 or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, depth, colour


def decode_png_rgb(data: bytes) -> np.ndarray:
    """An 8-bit RGB PNG (IHDR checked by the caller) -> uint8 (H, W, 3).

    Pillow inflates into an image of the declared size and stops there, so compressed
    data that would inflate far past it (a bomb) cannot; `frames.decode_png`'s fast
    path inflates everything first, which is fine for our own splits, not for uploads."""
    from PIL import Image

    with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
        image.load()
        if image.mode != "RGB":
            raise ValueError(f"decodes as {image.mode}, not RGB")
        return np.asarray(image, dtype=np.uint8).copy()


class Tally:
    """First example and count of each kind of problem across a video's frames."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[str, str]] = {}
        self.count: Counter[str] = Counter()

    def add(self, code: str, frame: str, text: str) -> None:
        self.first.setdefault(code, (frame, text))
        self.count[code] += 1

    def problems(self, sample_id: str, folder: str, hints: dict[str, str]) -> list[Problem]:
        out = []
        for code, (frame, text) in self.first.items():
            more = self.count[code] - 1
            out.append(_error(code, f"{folder}/{frame}: {text}" + (f" (and {more} more frames)" if more else "")
                              + f"; {hints[code]}", sample_id, f"{folder}/{frame}"))
        return out

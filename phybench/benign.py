"""Benign degradations: correct videos made the way real models' outputs are imperfect.

A generated video is never exact: it is blurry, compressed, resampled, noisy.  A judge or a
metric whose verdict flips on such a video measures the codec, not the physics.  Each kind
here takes a ground-truth video and returns it degraded but physically unchanged, so any rule
can be checked for false positives (`phybench degrade`, `phybench calibrate-judge`).

Kinds (`BENIGN`; lengths in px at 128 px, scaled with the resolution):

* ``blur-0.5``, ``blur-1.0``, ``blur-1.5``: Gaussian blur of each frame (sigma in px);
* ``h264-18``, ``h264-28``, ``h264-35``: an H.264 round trip of the whole clip (libx264,
  yuv420p, one thread so the bytes are deterministic) through the project's ffmpeg;
* ``resample-2x``, ``resample-4x``: each frame down by area averaging, then up (bicubic);
* ``noise-8``: uniform integer noise in [-8, 8] per pixel and channel (seeded by the sample);
* ``cast-6``: a colour cast of (+6, -6, +3) levels;
* ``shift-1-edge``, ``shift-2-edge``, ``shift-1-white``, ``shift-2-white``: the picture moved
  1 or 2 px right and down, the uncovered rows and columns repeating the edge or left white.

Every kind but the H.264 round trip changes only the generated frames (index >= the condition
frames), as a model given exact condition frames would: that is the harder case for a judge
that compares generated frames with the last condition frame.  The codec re-encodes the
whole clip, condition frames included, as an mp4 submission would.
"""
from __future__ import annotations

import hashlib
import subprocess
from typing import Callable

import numpy as np

Degrade = Callable[[np.ndarray, int, str], np.ndarray]  # (video (T, H, W, 3) uint8, condition frames, sample id)


def _generated(fn: Callable[[np.ndarray, float], np.ndarray]) -> Degrade:
    """Apply fn(frames, scale) to the generated frames only (scale = width / 128)."""
    def degrade(video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
        out = video.copy()
        out[condition_frames:] = fn(video[condition_frames:], video.shape[2] / 128.0)
        return out

    return degrade


def _blur(sigma: float) -> Degrade:
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        from scipy import ndimage

        s = sigma * scale
        return np.clip(np.rint(ndimage.gaussian_filter(frames.astype(np.float32), (0, s, s, 0), mode="nearest")),
                       0, 255).astype(np.uint8)

    return _generated(fn)


def _resample(factor: int) -> Degrade:
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        from PIL import Image

        H, W = frames.shape[1:3]
        out = np.empty_like(frames)
        for t, frame in enumerate(frames):
            small = Image.fromarray(frame).resize((W // factor, H // factor), Image.Resampling.BOX)
            out[t] = np.asarray(small.resize((W, H), Image.Resampling.BICUBIC))
        return out

    return _generated(fn)


def _rng(sample_id: str, kind: str) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256(f"{kind}:{sample_id}".encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


def _noise(level: int) -> Degrade:
    def degrade(video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
        out = video.copy()
        gen = out[condition_frames:].astype(np.int16)
        gen += _rng(sample_id, f"noise-{level}").integers(-level, level + 1, gen.shape, dtype=np.int16)
        out[condition_frames:] = np.clip(gen, 0, 255).astype(np.uint8)
        return out

    return degrade


def _cast(offset: tuple[int, int, int]) -> Degrade:
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        return np.clip(frames.astype(np.int16) + np.asarray(offset, np.int16), 0, 255).astype(np.uint8)

    return _generated(fn)


def _shift(px: int, fill: str) -> Degrade:
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        k = max(1, int(round(px * scale)))
        mode = "edge" if fill == "edge" else "constant"
        kw = {} if fill == "edge" else {"constant_values": 255}
        padded = np.pad(frames, ((0, 0), (k, 0), (k, 0), (0, 0)), mode=mode, **kw)  # type: ignore[call-overload]
        return np.ascontiguousarray(padded[:, :frames.shape[1], :frames.shape[2]])

    return _generated(fn)


def h264_round_trip(video: np.ndarray, crf: int, fps: int = 10) -> np.ndarray:
    """(T, H, W, 3) uint8 through libx264 at `crf` (yuv420p, 1 thread) and back, in memory."""
    from .data.video import ffmpeg_exe, decode_mp4

    T, H, W = video.shape[:3]
    cmd = [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{W}x{H}", "-r", str(fps), "-i", "pipe:0", "-c:v", "libx264", "-preset", "medium", "-crf", str(crf),
           "-pix_fmt", "yuv420p", "-threads", "1", "-x264-params", "threads=1", "-movflags", "frag_keyframe+empty_moov",
           "-f", "mp4", "pipe:1"]
    proc = subprocess.run(cmd, input=np.ascontiguousarray(video).tobytes(), capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg could not encode H.264: {proc.stderr.decode(errors='replace').strip()}")
    out = decode_mp4(proc.stdout)
    if out.shape != video.shape:
        raise RuntimeError(f"H.264 round trip changed the shape {video.shape} -> {out.shape}")
    return out


def _h264(crf: int) -> Degrade:
    def degrade(video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
        return h264_round_trip(video, crf)

    return degrade


BENIGN: dict[str, Degrade] = {
    "blur-0.5": _blur(0.5),
    "blur-1.0": _blur(1.0),
    "blur-1.5": _blur(1.5),
    "h264-18": _h264(18),
    "h264-28": _h264(28),
    "h264-35": _h264(35),
    "resample-2x": _resample(2),
    "resample-4x": _resample(4),
    "noise-8": _noise(8),
    "cast-6": _cast((6, -6, 3)),
    "shift-1-edge": _shift(1, "edge"),
    "shift-2-edge": _shift(2, "edge"),
    "shift-1-white": _shift(1, "white"),
    "shift-2-white": _shift(2, "white"),
}


def degrade(kind: str, video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
    """The ground-truth `video` degraded by `kind` (a key of BENIGN)."""
    if kind not in BENIGN:
        raise KeyError(f"unknown benign degradation {kind!r}; known: {', '.join(BENIGN)}")
    return BENIGN[kind](video, condition_frames, sample_id)

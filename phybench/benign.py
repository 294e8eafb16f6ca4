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
  1 or 2 px right and down, the uncovered rows and columns repeating the edge or left white;
* ``contrast-0.85``: every level pulled 15% of the way to mid grey (a white background becomes
  236): what a model whose colours are washed out draws;
* ``gamma-0.8``, ``gamma-1.25``: levels through a power curve (255 (x / 255) ** gamma);
* ``zoom-2``: the picture scaled by 1.02 about its centre (bilinear), as a model that drifts
  in scale draws it (at 256 px, 2.6 px at the edge);
* ``rotate-1``: the picture turned by 1 degree about its centre (bilinear, edges repeated);
* ``blend``: each generated frame 0.5 itself + 0.25 each neighbour (the first and last
  generated frames their one neighbour), the ghosting a temporal autoencoder leaves;
* ``jpeg-40``: every generated frame through JPEG at quality 40 (Pillow, 4:2:0);
* ``h265-28``: an H.265 round trip of the whole clip (libx265, crf 28, no thread pools);
* ``vp9-40``: a VP9 round trip of the whole clip (libvpx-vp9, crf 40, one thread).

Every kind but the codec round trips changes only the generated frames (index >= the condition
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


# Encoder arguments per codec, each single-threaded so the bytes are deterministic.
CODECS: dict[str, list[str]] = {
    "h264": ["-c:v", "libx264", "-preset", "medium", "-threads", "1", "-x264-params", "threads=1"],
    "h265": ["-c:v", "libx265", "-preset", "medium", "-x265-params", "pools=none:frame-threads=1:log-level=error"],
    "vp9": ["-c:v", "libvpx-vp9", "-b:v", "0", "-deadline", "good", "-cpu-used", "2", "-threads", "1",
            "-row-mt", "0"],
}


def codec_round_trip(video: np.ndarray, codec: str, crf: int, fps: int = 10) -> np.ndarray:
    """(T, H, W, 3) uint8 through ffmpeg's `codec` encoder (a key of CODECS) at `crf`
    (yuv420p) and back, in memory."""
    from .data.video import ffmpeg_exe, decode_mp4

    T, H, W = video.shape[:3]
    cmd = [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{W}x{H}", "-r", str(fps), "-i", "pipe:0", *CODECS[codec], "-crf", str(crf),
           "-pix_fmt", "yuv420p", "-movflags", "frag_keyframe+empty_moov", "-f", "mp4", "pipe:1"]
    proc = subprocess.run(cmd, input=np.ascontiguousarray(video).tobytes(), capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg could not encode {codec}: {proc.stderr.decode(errors='replace').strip()}")
    out = decode_mp4(proc.stdout)
    if out.shape != video.shape:
        raise RuntimeError(f"{codec} round trip changed the shape {video.shape} -> {out.shape}")
    return out


def h264_round_trip(video: np.ndarray, crf: int, fps: int = 10) -> np.ndarray:
    """(T, H, W, 3) uint8 through libx264 at `crf` (yuv420p, 1 thread) and back, in memory."""
    return codec_round_trip(video, "h264", crf, fps)


def _codec(codec: str, crf: int) -> Degrade:
    def degrade(video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
        return codec_round_trip(video, codec, crf)

    return degrade


def _levels(fn: Callable[[np.ndarray], np.ndarray]) -> Degrade:
    """A per-level map of the generated frames (float levels in, rounded and clipped out)."""
    def apply(frames: np.ndarray, scale: float) -> np.ndarray:
        return np.clip(np.rint(fn(frames.astype(np.float32))), 0, 255).astype(np.uint8)

    return _generated(apply)


def _warp(zoom: float, degrees: float) -> Degrade:
    """The picture scaled by `zoom` and turned by `degrees` about its centre (bilinear,
    edges repeated): a model whose camera drifts."""
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        from scipy import ndimage

        H, W = frames.shape[1:3]
        a = np.deg2rad(degrees)
        # output pixel (y, x) reads input centre + R(-a) (p - centre) / zoom
        m = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) / zoom
        c = np.array([(H - 1) / 2.0, (W - 1) / 2.0])
        offset = c - m @ c
        out = np.empty_like(frames)
        for t, frame in enumerate(frames):
            for ch in range(frame.shape[2]):
                out[t, :, :, ch] = np.clip(np.rint(ndimage.affine_transform(
                    frame[:, :, ch].astype(np.float32), m, offset, order=1, mode="nearest")), 0, 255)
        return out

    return _generated(fn)


def _blend(video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
    """Each generated frame 0.5 itself + 0.25 each generated neighbour (an end frame: 0.75 +
    0.25 its one neighbour)."""
    out = video.copy()
    gen = video[condition_frames:].astype(np.float32)  # (T', H, W, 3)
    if len(gen) < 2:
        return out
    prev = np.concatenate([gen[:1], gen[:-1]])
    nxt = np.concatenate([gen[1:], gen[-1:]])
    out[condition_frames:] = np.clip(np.rint(0.5 * gen + 0.25 * prev + 0.25 * nxt), 0, 255).astype(np.uint8)
    return out


def _jpeg(quality: int) -> Degrade:
    def fn(frames: np.ndarray, scale: float) -> np.ndarray:
        import io

        from PIL import Image

        out = np.empty_like(frames)
        for t, frame in enumerate(frames):
            buf = io.BytesIO()
            Image.fromarray(frame).save(buf, format="JPEG", quality=quality, subsampling=2)
            out[t] = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
        return out

    return _generated(fn)


BENIGN: dict[str, Degrade] = {
    "blur-0.5": _blur(0.5),
    "blur-1.0": _blur(1.0),
    "blur-1.5": _blur(1.5),
    "h264-18": _codec("h264", 18),
    "h264-28": _codec("h264", 28),
    "h264-35": _codec("h264", 35),
    "resample-2x": _resample(2),
    "resample-4x": _resample(4),
    "noise-8": _noise(8),
    "cast-6": _cast((6, -6, 3)),
    "shift-1-edge": _shift(1, "edge"),
    "shift-2-edge": _shift(2, "edge"),
    "shift-1-white": _shift(1, "white"),
    "shift-2-white": _shift(2, "white"),
    "contrast-0.85": _levels(lambda x: 0.85 * x + 0.15 * 128.0),
    "gamma-0.8": _levels(lambda x: 255.0 * (x / 255.0) ** 0.8),
    "gamma-1.25": _levels(lambda x: 255.0 * (x / 255.0) ** 1.25),
    "zoom-2": _warp(1.02, 0.0),
    "rotate-1": _warp(1.0, 1.0),
    "blend": _blend,
    "jpeg-40": _jpeg(40),
    "h265-28": _codec("h265", 28),
    "vp9-40": _codec("vp9", 40),
}


WHOLE_CLIP = frozenset(k for k in BENIGN if k.split("-")[0] in CODECS)  # these re-encode the condition frames too


def degrade(kind: str, video: np.ndarray, condition_frames: int, sample_id: str) -> np.ndarray:
    """The ground-truth `video` degraded by `kind` (a key of BENIGN)."""
    if kind not in BENIGN:
        raise KeyError(f"unknown benign degradation {kind!r}; known: {', '.join(BENIGN)}")
    return BENIGN[kind](video, condition_frames, sample_id)

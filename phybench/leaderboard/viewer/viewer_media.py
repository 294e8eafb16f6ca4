"""The viewer's media: every frame of a video's panels in one sprite PNG, the difference image,
and bodies' tracks in pixels.  Split from `viewer` (the page and its data), which imports it.
"""
from __future__ import annotations

import io
import math
from typing import Any, Sequence

import numpy as np

MAX_SIDE = 256  # px: larger frames are subsampled in the sprites (the tracks keep full-resolution coordinates)
SPRITE_ROWS = 64  # frames per sprite column, so no sprite is taller than 64 frames


def difference(gen: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """|generated - ground truth|, amplified and shown dark on white (identical pixels are white)."""
    d = np.abs(gen.astype(np.int16) - gt.astype(np.int16))
    return (255 - np.clip(d * 2, 0, 255)).astype(np.uint8)


def sprite_png(panels: Sequence[np.ndarray], step: int = 1) -> tuple[bytes, dict[str, int]]:
    """One PNG holding every frame of every panel: frame t of panel p at column (t // rows) * P + p,
    row t % rows (each cell one frame).  Returns the bytes and the layout the page needs."""
    from PIL import Image

    panels = [np.asarray(p)[:, ::step, ::step, :3] for p in panels]
    t, h, w, _ = panels[0].shape
    rows = min(t, SPRITE_ROWS)
    cols = math.ceil(t / rows)
    canvas = np.full((rows * h, cols * len(panels) * w, 3), 255, np.uint8)
    for k in range(t):
        r, c = k % rows, k // rows
        for p, video in enumerate(panels):
            x = (c * len(panels) + p) * w
            canvas[r * h:(r + 1) * h, x:x + w] = video[k]
    buf = io.BytesIO()
    packed = (canvas[..., 0].astype(np.uint32) << 16) | (canvas[..., 1].astype(np.uint32) << 8) | canvas[..., 2]
    colours, index = np.unique(packed.ravel(), return_inverse=True)
    if len(colours) <= 256:  # a palette PNG, exactly the same pixels: about half the bytes for rendered scenes
        image = Image.fromarray(index.reshape(canvas.shape[:2]).astype(np.uint8), mode="P")
        rgb = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], axis=-1)
        image.putpalette(rgb.astype(np.uint8).tobytes())
    else:
        image = Image.fromarray(canvas)
    image.save(buf, format="PNG", optimize=True)
    return buf.getvalue(), {"rows": rows, "w": w, "h": h, "panels": len(panels)}


def pixel_tracks(positions: np.ndarray, mapping: Any, width: int) -> list[list[list[float] | None]]:
    """World positions (T, K, 2) -> per body, per frame, [col, row] in full-resolution pixels (None if lost)."""
    positions = np.asarray(positions, dtype=np.float64)
    col, row = mapping.to_pixel(positions[..., 0], positions[..., 1], width)
    tracks = []
    for k in range(positions.shape[1]):
        track: list[list[float] | None] = []
        for t in range(positions.shape[0]):
            c, r = col[t, k], row[t, k]
            track.append([round(float(c), 2), round(float(r), 2)] if np.isfinite(c) and np.isfinite(r) else None)
        tracks.append(track)
    return tracks

"""An example model for `phybench run`: it moves the last condition frame on at the pixel velocity
it measures between the last two condition frames (a crude linear extrapolation of the whole image).

    phybench run --model phybench.examples.shift:Model --model-args damping=1.0 --data data/uniform-id-eval --out runs/shift

Only numpy: a real model would import its own framework here, in its own environment.
"""
from __future__ import annotations

import numpy as np


class Model:
    def __init__(self, damping: float = 1.0) -> None:
        self.damping = float(damping)  # 1.0: keep the measured shift; 0.0: copy the last frame

    @staticmethod
    def _shift(frames: np.ndarray) -> tuple[int, int]:
        """The integer (dy, dx) that best maps the second-to-last condition frame onto the last."""
        a, b = frames[-2].astype(np.int32), frames[-1].astype(np.int32)
        best, arg = None, (0, 0)
        for dy in range(-3, 4):
            for dx in range(-3, 4):
                cost = np.abs(np.roll(a, (dy, dx), axis=(0, 1)) - b).sum()
                if best is None or cost < best:
                    best, arg = cost, (dy, dx)
        return arg

    def generate(self, condition: np.ndarray, num_frames: int) -> np.ndarray:
        """condition: uint8 (B, C, H, W, 3) -> uint8 (B, num_frames, H, W, 3)."""
        out = []
        for frames in condition:
            dy, dx = self._shift(frames) if len(frames) >= 2 else (0, 0)
            last = frames[-1]
            video = [*frames]
            for k in range(1, num_frames - len(frames) + 1):
                step = (round(dy * k * self.damping), round(dx * k * self.damping))
                shifted = np.roll(last, step, axis=(0, 1))
                video.append(shifted)
            out.append(np.stack(video))
        return np.stack(out).astype(np.uint8)

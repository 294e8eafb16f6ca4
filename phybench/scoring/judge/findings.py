"""What every rule of the abnormality judge shares: findings, verdicts, the judgement's context."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .segment import Layer, Segmentation


@dataclass
class Finding:
    rule: str  # area, break, teleport, static, rest, interpenetration, merge, shape, jerk, kink, gravity, spin, ...
    colour: str  # "r,g,b"
    frames: list[int]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "colour": self.colour, "frames": self.frames, "detail": self.detail}


@dataclass
class Verdict:
    abnormal: bool
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"abnormal": self.abnormal, "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class Ctx:
    """What every rule needs about one judgement."""

    T: int
    H: int
    W: int
    start: int  # first generated frame
    scale_a: float  # (W / 128)^2
    scale_l: float  # W / 128
    blur: float  # blur factor >= 1
    border: float  # px
    gap: int  # px

    @property
    def ref(self) -> int:
        return self.start - 1


def single(q: Layer, t: int, ctx: Ctx, min_area: float = 0.0) -> bool:
    return bool(q.count[t] == 1 and q.edge[t] >= ctx.border and q.piece_area[t][0] >= min_area)


def touching(seg: Segmentation, c: tuple[int, ...], box: np.ndarray, t: int, ctx: Ctx) -> bool:
    """Whether other ink or the border lies within GAP px of a piece's bounding box at frame t."""
    r0, r1, c0, c1 = (int(x) for x in box)
    g = ctx.gap
    if r0 - g < 0 or c0 - g < 0 or r1 + g > ctx.H or c1 + g > ctx.W:
        return True
    window = (t, slice(r0 - g, r1 + g), slice(c0 - g, c1 + g))
    return bool(seg.others(c, window).any())


def single_steps(p: Layer, start: int, reach: float, border: float, out: np.ndarray) -> set[int]:
    """`rules.steps` of the frames with one piece, as the frame before (most frames), all at once into
    `out`, the same floats (a piece may have just entered only where the one before could leave);
    returns those frames."""
    one = [t for t in range(max(start, 1), len(p.area)) if len(p.centroids[t]) == 1 and len(p.centroids[t - 1]) == 1]
    if not one:
        return set()
    a = np.array([p.centroids[t][0] for t in one])
    b = np.array([p.centroids[t - 1][0] for t in one])
    left = np.array([p.piece_edge[t - 1][0] < border or p.piece_exit[t - 1][0] < reach for t in one])
    inside = np.array([p.piece_edge[t][0] >= border and p.piece_exit[t][0] >= reach for t in one])
    free = ~left | inside
    out[np.asarray(one)[free]] = np.sqrt(((a - b) ** 2).sum(axis=-1))[free]
    return set(one)

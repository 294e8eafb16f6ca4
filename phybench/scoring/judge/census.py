"""Every piece the generated video draws, accounted for: the per-body metrics' census.

The per-body metrics (`phybench.scoring.learned.bodies`) follow the ground truth's bodies into the
generated video; what the model draws besides them went unseen (a ball appearing from nothing,
far from every body, left `body_position_error` at exactly 0).  Here, per generated frame and
colour of the scene, every generated piece (the judge's pieces, without dust) is assigned:

1. to the body whose generated track follows it (`phybench.scoring.judge.motion.tracks`);
2. else, one to one by nearest centroid within one step (the colour's reach), to a ground-truth
   piece no followed body takes (a body the tracker lost, one the ground truth shows later);
3. else it is part of a body drawn beside it: its bounding box within the judge's contact gap
   of a ground-truth piece of its colour or of an assigned piece (split by blur or a codec,
   merged, a blended frame's ghost), or it is never solid (coverage below the break rule's
   `SOLID_PEAK`: a ghost);
4. else it is **extra** (appeared, duplicated, split off) if it is at least a quarter of its
   colour's smallest body in the last condition frame (the judge's dust share, `DUST_REL`) and
   not a flicker or an entrance: extras are linked frame to frame (nearest within one step); a
   chain seen in fewer than `PERSIST` frames is a flicker, and one whose first piece touches the
   border, or lies within the colour's fastest ground-truth move of leaving it, entered the
   view; frames where an extra is that near the border do not count either.

A ground-truth piece off the border that no generated piece is assigned to or drawn beside is
**missing** in that frame.  A video's counts are the most extra (missing) pieces in any generated
frame, over all colours; `body_position_error` adds each extra body as a body of the scene that
costs `LOST` of the view's width in every generated frame it is present (as a lost body does).
Both videos go through the same census, so the ground truth has none of either.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .findings import Ctx
from .rules import DUST_REL, SOLID_PEAK, ColourView
from .segment import box_gaps

PERSIST = 2  # frames: an extra piece seen in fewer consecutive frames is a flicker, not a body


@dataclass
class Census:
    """Per frame (0 before the first generated frame), the extra and missing pieces over all colours."""

    extra: np.ndarray  # (T,) int
    missing: np.ndarray  # (T,) int

    @property
    def extra_bodies(self) -> int:
        return int(self.extra.max(initial=0))

    @property
    def missing_bodies(self) -> int:
        return int(self.missing.max(initial=0))


def _match(a: np.ndarray, b: np.ndarray, reach: float) -> dict[int, int]:
    """{i: j}: one-to-one nearest pairs of rows of a (n, 2) and b (m, 2) within `reach`, greedily."""
    if not len(a) or not len(b):
        return {}
    d = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    out: dict[int, int] = {}
    used: set[int] = set()
    for i, j in zip(*np.unravel_index(np.argsort(d, axis=None, kind="stable"), d.shape)):
        if d[i, j] > reach:
            break
        if int(i) not in out and int(j) not in used:
            out[int(i)] = int(j)
            used.add(int(j))
    return out


def _near_border(v: ColourView, q: Any, t: int, j: int, ctx: Ctx) -> bool:
    """Piece j of frame t touches the border, or lies within one of the colour's fastest moves of leaving it."""
    return bool(q.piece_edge[t][j] < ctx.border or q.piece_exit[t][j] < v.fastest + ctx.border)


def _solid(q: Any, t: int, j: int) -> bool:
    r0, r1, c0, c1 = (int(x) for x in q.boxes[t][j])
    return float(q.soft[t, r0:r1, c0:c1].max(initial=0.0)) >= SOLID_PEAK


def _frame(v: ColourView, gen: Sequence[Any], gt: Sequence[Any], t: int, least: float, ctx: Ctx
           ) -> tuple[list[int], int]:
    """(the generated pieces of frame t nothing explains, of at least `least` px^2; the ground-truth
    pieces missing) of one colour."""
    p, g = v.p, v.g
    claimed = {int(a.piece[t]) for a in gen if a.piece[t] >= 0}
    taken = {int(b.piece[t]) for a, b in zip(gen, gt) if a.piece[t] >= 0 and b.piece[t] >= 0}
    rest_p = [j for j in range(len(p.centroids[t])) if j not in claimed]
    rest_g = [k for k in range(len(g.centroids[t])) if k not in taken]
    pairs = _match(p.centroids[t][rest_p], g.centroids[t][rest_g], v.reach)
    assigned = sorted(claimed | {rest_p[i] for i in pairs})
    loose = [j for i, j in enumerate(rest_p) if i not in pairs]
    if loose:
        beside = np.concatenate([g.boxes[t], p.boxes[t][assigned]])
        near = [False] * len(loose)
        if len(beside):
            gaps: np.ndarray = box_gaps(p.boxes[t][loose], beside).min(axis=1)
            near = [bool(x <= ctx.gap) for x in gaps]
        loose = [j for j, n in zip(loose, near) if not n and p.piece_area[t][j] >= least and _solid(p, t, j)]
    missing = 0
    lone = [k for i, k in enumerate(rest_g) if i not in set(pairs.values())]
    for k in lone:
        if _near_border(v, g, t, k, ctx):
            continue
        if not len(p.boxes[t]) or not (box_gaps(g.boxes[t][k:k + 1], p.boxes[t]) <= ctx.gap).any():
            missing += 1
    return loose, missing


def _counted(v: ColourView, loose: list[list[int]], ctx: Ctx) -> np.ndarray:
    """(T,) extras per frame: `loose` pieces linked into chains frame to frame; a chain that enters
    at the border, or is seen in fewer than `PERSIST` frames, is not counted, nor any frame where
    its piece is near the border."""
    p = v.p
    chains: list[list[tuple[int, int]]] = []  # (frame, piece) per chain
    open_: dict[int, int] = {}  # piece of the frame before -> its chain
    for t in range(ctx.start, ctx.T):
        here = loose[t]
        before = sorted(open_)
        prev = p.centroids[t - 1][before] if before else np.zeros((0, 2))
        links = _match(p.centroids[t][here], prev, v.reach)
        now: dict[int, int] = {}
        for i, j in enumerate(here):
            k = open_[before[links[i]]] if i in links else len(chains)
            if k == len(chains):
                chains.append([])
            chains[k].append((t, j))
            now[j] = k
        open_ = now
    out = np.zeros(ctx.T, int)
    for chain in chains:
        if len(chain) < PERSIST or _near_border(v, p, *chain[0], ctx):
            continue
        for t, j in chain:
            out[t] += not _near_border(v, p, t, j, ctx)
    return out


def census(views: Sequence[tuple[ColourView, Sequence[Any], Sequence[Any]]], ctx: Ctx) -> Census:
    """The census of a video: per colour, its view and its bodies' generated and ground-truth tracks."""
    extra, missing = np.zeros(ctx.T, int), np.zeros(ctx.T, int)
    for v, gen, gt in views:
        whole = v.g.piece_area[ctx.ref][v.g.piece_edge[ctx.ref] >= ctx.border]
        least = DUST_REL * float(whole.min(initial=np.inf) if len(whole) else 0.0)  # a quarter of its smallest body
        loose: list[list[int]] = [[] for _ in range(ctx.T)]
        for t in range(ctx.start, ctx.T):
            loose[t], m = _frame(v, gen, gt, t, least, ctx)
            missing[t] += m
        extra += _counted(v, loose, ctx)
    return Census(extra, missing)

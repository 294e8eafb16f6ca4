"""Pixels to objects, for the abnormality judge (`phybench.scoring.judge.abnormal`) and its trackers.

Every pixel away from the background is read against each object colour of the scene: projected
on the line from the background to the colour, it gets a coverage t in [0, 1] and a residual
off the line.  A colour's *soft* coverage (dead-zoned: t below 0.15 is noise or a colour cast,
above 0.85 full) sums to an area that blur, resampling and codecs preserve; its *pieces* are the
connected components of t >= 0.5, where a blurred edge crosses the sharp one, with coverage-
weighted centroids, second moments and bounding boxes from one labelling pass per colour.  The
colour arithmetic is a table per palette (bins of 2**QUANT levels), built once and gathered per
pixel.  Lengths are px at the video's resolution; tolerances "at 128 px" scale with it.
"""
from __future__ import annotations

import functools
import mmap
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import ndimage

from . import segment_fast

BACKGROUND = (255, 255, 255)

# Segmentation
INK = 12  # levels: a pixel within this of the background on every channel is background
QUANT = 2  # colours are read in bins of 4 levels a channel (a table per palette; coverage to +/- 0.02)
RESIDUAL = 0.3  # a pixel belongs to a colour if it lies within 0.3 x |background - colour| of its line ...
RESIDUAL_MIN = 24.0  # ... or 24 levels, whichever is larger (colour casts, codec chroma)
NEAR = 4.0  # px at 128 px: a pixel two colours could explain goes to one with a solid piece this near ...
SURE = 0.35  # ("solid": a pixel whose best reading scores at most this, with t >= 0.5)
SOLID = 1.0  # ... else among the lines within reach, the pixel goes to the least residual / reach + SOLID x (1 - coverage)
LOW, HIGH = 0.15, 0.85  # soft coverage: (t - LOW) / (HIGH - LOW), clipped to [0, 1]
HARD = 0.5  # a pixel is in a piece at coverage t >= 0.5
MIN_PIECE = 4.0  # px^2 at 128 px: smaller pieces are dust


@dataclass
class Layer:
    """One colour's segmentation of one video (px at the video's resolution)."""

    soft: np.ndarray  # (T, H, W) float32: dead-zoned coverage in [0, 1]
    area: np.ndarray  # (T,) px^2: sum of soft
    count: np.ndarray  # (T,) pieces
    edge: np.ndarray  # (T,) smallest distance from a piece's bounding box to the border (inf: none)
    exit: np.ndarray  # (T,) smallest move that takes a whole piece out of view (inf: none)
    centroids: list[np.ndarray]  # T arrays (n_t, 2) of (row, col)
    piece_edge: list[np.ndarray]  # T arrays (n_t,)
    piece_exit: list[np.ndarray]  # T arrays (n_t,)
    piece_area: list[np.ndarray]  # T arrays (n_t,) px^2 (pixels with t >= HARD)
    moments: list[np.ndarray]  # T arrays (n_t, 3): central second moments (rr, cc, rc), px^2
    boxes: list[np.ndarray]  # T arrays (n_t, 4): row start, row stop, col start, col stop
    perimeter: np.ndarray  # (T,) px: pixels of the pieces with a 4-neighbour outside them
    partial: np.ndarray  # (T,) partly covered pixels (0 < soft < 1)
    extent: tuple[int, int, int, int] | None = None  # rows [r0, r1), columns [c0, c1) of every soft > 0 pixel (None: unknown)


@dataclass
class Segmentation:
    """Every colour of one video, and where any ink is (for contact tests)."""

    layers: dict[tuple[int, ...], Layer]
    owner: np.ndarray  # (T, H, W) int8: 0 background, k + 1 the k-th colour of `layers`, -1 ink of none

    def others(self, c: tuple[int, ...], window: tuple[Any, ...]) -> np.ndarray:
        """bool: ink in `window` that is not colour c's."""
        o = self.owner[window]
        return (o != 0) & (o != list(self.layers).index(c) + 1)

    def blur(self, frames: slice) -> float:
        """Edge width: partly covered pixels per perimeter pixel, over the sampled frames among those given."""
        p = e = 0.0
        for x in self.layers.values():
            sampled = np.isfinite(x.perimeter[frames])
            p += float(x.partial[frames][sampled].sum())
            e += float(x.perimeter[frames][sampled].sum())
        return p / e if e else 1.0


def _ink(video: np.ndarray, background: Sequence[int]) -> np.ndarray:
    """Flat pixel indices (sorted) of pixels farther than INK from the background on some channel."""
    bg = np.asarray(background, np.int16)
    flat = video.reshape(-1)
    if (bg == 255).all():  # the common case, one comparison
        hit = np.flatnonzero(flat < 255 - INK)
    else:
        lo = np.tile(np.clip(bg - INK, 0, 255).astype(np.uint8), flat.size // 3)
        hi = np.tile(np.clip(bg + INK, 0, 255).astype(np.uint8), flat.size // 3)
        hit = np.flatnonzero((flat < lo) | (flat > hi))
    px = hit // 3
    if px.size:  # a pixel's channels' hits are neighbours: keep the first (compress: 3x a boolean index)
        first = np.empty(px.size, bool)
        first[0] = True
        np.not_equal(px[1:], px[:-1], out=first[1:])
        px = np.compress(first, px)
    return px


def segment(video: np.ndarray, colours: Sequence[Sequence[int]], background: Sequence[int] = BACKGROUND,
            *, soft_only: Sequence[Sequence[int]] = (), perimeter_frames: Sequence[int] | None = None) -> Segmentation:
    """Soft coverage, pieces and their moments of every colour in a (T, H, W, 3) uint8 video.

    soft_only: colours whose pieces are not needed (static ones: the judge compares their
    coverage); perimeter_frames: the frames whose piece perimeter is counted (default all;
    NaN elsewhere), for the blur estimate."""
    T, H, W = video.shape[:3]
    HW = H * W
    scale_a = (W / 128.0) ** 2
    distinct = list(dict.fromkeys(tuple(int(x) for x in c) for c in colours))
    bg = tuple(int(x) for x in background)
    tables = _colour_table(tuple(distinct), bg)
    fast = segment_fast.compiled(segment)
    idx, q, best, t_all, ambiguous = (_read_numpy if fast is None else _read_compiled)(video, bg, tables)
    owner = np.zeros(T * HW, np.int8)
    owner[idx] = -1
    if ambiguous.any():
        res_bins, t_bins = tables[:2]
        sure_bins = _least_score(tuple(distinct), bg) <= SURE  # a near-perfect reading
        if fast is None:
            best, t_all = _near_first(res_bins[:, q[ambiguous]], t_bins[:, q[ambiguous]], best, t_all, ambiguous,
                                      sure_bins[q], idx, (T, H, W))
        else:
            fast.near_first(idx, q, best, t_all, ambiguous, res_bins, t_bins, sure_bins, T, H, W,
                            max(1, int(round(NEAR * W / 128.0))), np.float32(HARD))
    frames = list(range(T) if perimeter_frames is None else perimeter_frames)
    no_pieces = {tuple(int(x) for x in o) for o in soft_only}
    layers = {}
    for k, c in enumerate(distinct):
        soft, area, partial, every, extent = (_colour_numpy if fast is None else _colour_compiled)(
            idx, best, t_all, k, owner, (T, H, W))
        hidx = every[:0] if c in no_pieces else every
        layers[c] = _pieces(soft.reshape(T, H, W), hidx, area, partial, MIN_PIECE * scale_a, frames, every)
        layers[c].extent = extent
    return Segmentation(layers, owner.reshape(T, H, W))


Tables = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _read_numpy(video: np.ndarray, background: tuple[int, ...], tables: Tables
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ink pixels (sorted flat indices into (T, H, W)), their palette bins, best colours
    (int64, -1: none), coverages t (float32) and whether two colours could explain them."""
    _, t_bins, best_bins, amb_bins = tables
    idx = _ink(video, background)
    pix = np.take(video.reshape(-1, 3), idx, axis=0) >> QUANT  # (N, 3) bins of 2**QUANT levels (take: 3x a fancy index)
    q = (pix[:, 0].astype(np.int32) << (2 * (8 - QUANT))) | (pix[:, 1].astype(np.int32) << (8 - QUANT)) | pix[:, 2]
    best = best_bins[q].astype(np.int64)
    t_all = t_bins.reshape(-1).take(np.maximum(best, 0) * t_bins.shape[1] + q)  # t_bins[best, q]: 2x faster
    return idx, q, best, t_all, amb_bins[q]


def _read_compiled(video: np.ndarray, background: tuple[int, ...], tables: Tables
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_read_numpy` with the palette gathers in one compiled pass over the ink pixels."""
    kern = segment_fast.compiled(segment)
    assert kern is not None and QUANT == 2  # the kernel's bins are 2**2 levels
    _, t_bins, best_bins, amb_bins = tables
    idx = _ink_compiled(kern, video, background)
    n = len(idx)
    out = (np.empty(n, np.int32), np.empty(n, np.int64), np.empty(n, np.float32), np.empty(n, bool))
    kern.read_ink(np.ascontiguousarray(video).reshape(-1, 3), idx, best_bins, t_bins, amb_bins, *out)
    return (idx, *out)


def _ink_compiled(kern: Any, video: np.ndarray, background: tuple[int, ...]) -> np.ndarray:
    """`_ink` on a white background by `segment_numba.ink_pixels` (eight pixels tested at once as
    three words, skipped together when none is dark: most of a frame); `_ink` on any other."""
    if any(int(x) != 255 for x in background):
        return _ink(video, background)
    flat = np.ascontiguousarray(video).reshape(-1)  # (T H W 3,) uint8
    words = flat[:len(flat) // 24 * 24].view(np.uint64)
    byte = np.uint64(0x0101010101010101)
    out = np.empty(len(flat) // 3, np.int64)  # (pages touched only as far as it fills)
    n = kern.ink_pixels(flat, words, np.uint64(0x7F) * byte, np.uint64(128 - (INK + 1)) * byte, np.uint64(0x80) * byte,
                        255 - INK, out)
    return out[:n].copy()


def _colour_numpy(idx: np.ndarray, best: np.ndarray, t_all: np.ndarray, k: int, owner: np.ndarray,
                  shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                        tuple[int, int, int, int]]:
    """Colour k's flat soft coverage, (T,) area and partly covered pixels, its hard pixels (flat,
    sorted) and extent; marks its pixels k + 1 in `owner`."""
    T, H, W = shape
    HW = H * W
    sel = best == k  # (found pixels only: best is -1 where no colour explains a pixel)
    t = t_all[sel]
    pidx = idx[sel]
    owner[pidx] = k + 1
    soft_vals = np.clip((t - LOW) / (HIGH - LOW), 0.0, 1.0).astype(np.float32)
    soft = np.zeros(T * HW, np.float32)
    soft[pidx] = soft_vals
    frame_of = pidx // HW
    area = np.bincount(frame_of, weights=soft_vals, minlength=T)[:T]
    partial = np.bincount(frame_of[(soft_vals > 0) & (soft_vals < 1)], minlength=T)[:T].astype(np.float64)
    return soft, area, partial, pidx[t >= HARD], _extent(pidx[soft_vals > 0], H, W)


def _untouched_zeros(n: int) -> np.ndarray:
    """float32 (n,) zeros in pages the kernel zeroes on first touch (an anonymous map of its own).

    A colour's coverage is a whole (T, H, W) stack (8 MiB at 256 px) of which it covers a few
    percent, and the rules read it near its extent: `np.zeros` there is a memset of every page
    (calloc on reused heap memory), most of a colour's segmentation cost; a fresh map costs only
    the pages written or read.  Small stacks stay on the heap (a map is a system call)."""
    if n < 1 << 20:
        return np.zeros(n, np.float32)
    try:
        return np.frombuffer(mmap.mmap(-1, 4 * n), np.float32)  # writable; unmapped with its last view
    except (OSError, ValueError):  # no map to be had (a limit): the heap's zeros, the same values
        return np.zeros(n, np.float32)


def _colour_compiled(idx: np.ndarray, best: np.ndarray, t_all: np.ndarray, k: int, owner: np.ndarray,
                     shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                           tuple[int, int, int, int]]:
    """`_colour_numpy` in one compiled pass over the ink pixels."""
    kern = segment_fast.compiled(segment)
    assert kern is not None
    T, H, W = shape
    soft, area, partial = _untouched_zeros(T * H * W), np.zeros(T), np.zeros(T)
    every, ext = np.empty(len(idx), np.int64), np.array([H, -1, W, -1], np.int64)
    n = kern.fill_colour(idx, best, t_all, k, H * W, W, np.float32(LOW), np.float32(HIGH - LOW), np.float32(HARD),
                         owner, soft, area, partial, every, ext)
    extent = (0, 0, 0, 0) if ext[1] < 0 else (int(ext[0]), int(ext[1]), int(ext[2]), int(ext[3]))
    return soft, area, partial, every[:n].copy(), extent


def _extent(on: np.ndarray, H: int, W: int) -> tuple[int, int, int, int]:
    """Rows [r0, r1) and columns [c0, c1) holding the pixels `on` (sorted flat indices into a
    (T, H, W) stack; (0, 0, 0, 0) when none), for work that reads only where coverage is."""
    if not len(on):
        return 0, 0, 0, 0
    rows, cols = np.divmod(on % (H * W), W)
    return int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1


@functools.lru_cache(maxsize=16)
def _colour_table(colours: tuple[tuple[int, ...], ...], background: tuple[int, ...]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per RGB bin (2**QUANT levels a side, at its centre): each colour's score (least
    residual / reach + SOLID x (1 - t); inf where the pixel is not on its line) and coverage t,
    the best colour (-1: none) and whether two colours could explain it.  Computed once per
    palette: a video is then a gather, not arithmetic per pixel."""
    n = 256 >> QUANT
    centre = (np.arange(n, dtype=np.float32) * (1 << QUANT) + ((1 << QUANT) - 1) / 2)
    rgb = np.stack(np.meshgrid(centre, centre, centre, indexing="ij"), axis=-1).reshape(-1, 3)
    d = np.asarray(background, np.float32) - rgb
    res = np.full((len(colours), len(rgb)), np.inf, np.float32)
    ts = np.zeros((len(colours), len(rgb)), np.float32)
    for k, c in enumerate(colours):
        D = np.asarray(background, np.float32) - np.asarray(c, np.float32)
        n2 = float(D @ D) or 1.0
        proj = d @ D
        t = proj / n2
        perp = np.sqrt(np.maximum((d * d).sum(axis=1) - proj * proj / n2, 0.0))
        tol = max(RESIDUAL * np.sqrt(n2), RESIDUAL_MIN)
        # nearest line, preferring the reading as a solid colour: a desaturated light grey (a codec's
        # chroma loss) reads as full grey rather than a quarter of black
        res[k] = np.where((perp <= tol) & (t > 0), perp / tol + SOLID * np.abs(1.0 - np.minimum(t, 1.0)), np.inf)
        ts[k] = t
    finite = np.isfinite(res)
    best = np.where(finite.any(axis=0), np.argmin(res, axis=0), -1).astype(np.int8)
    return res, ts, best, finite.sum(axis=0) >= 2


@functools.lru_cache(maxsize=16)
def _least_score(colours: tuple[tuple[int, ...], ...], background: tuple[int, ...]) -> np.ndarray:
    """Per RGB bin, the best colour's score (`_colour_table`'s scores' minimum), once per palette."""
    return _colour_table(colours, background)[0].min(axis=0)


def _near_first(res: np.ndarray, ts: np.ndarray, best: np.ndarray, t_all: np.ndarray, ambiguous: np.ndarray,
                sure: np.ndarray, idx: np.ndarray, shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Pixels that two colours could explain go to the one with a solid piece nearby.

    A blurred black rim passes through light neutral greys, and a codec can wash a light grey
    body out to neutral: the same pixel value.  Next to a solid black piece it is the rim.
    res, ts: (K, M) scores and coverages of the M ambiguous pixels."""
    T, H, W = shape
    r = max(1, int(round(NEAR * W / 128.0)))  # block side: "near" = in the same block or a neighbouring one
    gh, gw = -(-H // r), -(-W // r)
    amb_t, amb_rc = np.divmod(idx[ambiguous], H * W)
    amb_r, amb_c = np.divmod(amb_rc, W)
    amb_block = (amb_t * gh + amb_r // r) * gw + amb_c // r
    K = len(res)
    bonus = np.zeros(res.shape, np.float32)
    wanted = np.flatnonzero(np.isfinite(res).any(axis=1))  # the colours some ambiguous pixel may be
    solid = np.flatnonzero(sure & (t_all >= HARD))  # solid: read as its best colour almost exactly, and mostly covered
    solid = solid[np.isin(best[solid], wanted)]
    st, src = np.divmod(idx[solid], H * W)
    sr, sc = np.divmod(src, W)
    blocks = np.zeros((K, T, gh + 2, gw + 2), bool)  # each colour's solid pixels per block, padded by one block
    blocks[best[solid], st, sr // r + 1, sc // r + 1] = True
    near = np.zeros((K, T, gh, gw), bool)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            near |= blocks[:, :, dy:dy + gh, dx:dx + gw]
    bonus[wanted] = near.reshape(K, -1)[wanted][:, amb_block]
    score = res - bonus  # (K, M): inf - 1 is inf, never NaN
    choice, least = np.zeros(score.shape[1], np.intp), score[0].copy()
    for k in range(1, len(score)):  # argmin over axis 0 row by row (the first of equals): a strided argmin's half
        choice[score[k] < least] = k
        np.minimum(least, score[k], out=least)
    best, t_all = best.copy(), t_all.copy()
    best[ambiguous] = choice
    t_all[ambiguous] = ts.reshape(-1).take(choice * ts.shape[1] + np.arange(ts.shape[1]))  # ts[choice, arange]
    return best, t_all


_IN_PLANE = np.zeros((3, 3, 3), dtype=bool)
_IN_PLANE[1] = True  # 8-connected within a frame, never across frames


def _perimeter(every: np.ndarray, shape: tuple[int, int, int], frames: list[int], kern: Any = None) -> np.ndarray:
    """(T,) pixels of the hard pixels `every` (flat indices) with a 4-neighbour outside them, in
    `frames` (NaN elsewhere); counted in the box of every hard pixel, a pixel wider, where nothing
    outside it counts, from the indices (no whole-video mask)."""
    T, H, W = shape
    perimeter = np.full(T, np.nan)
    if not frames:
        return perimeter
    if not len(every):
        perimeter[frames] = 0.0
        return perimeter
    if kern is not None:  # `segment_numba.perimeter_counts`: the same integer counts, no boxes built
        wanted, counts = np.zeros(T, bool), np.zeros(T, np.int64)
        wanted[frames] = True
        kern.perimeter_counts(every, H, W, wanted, counts)
        perimeter[frames] = counts[frames]
        return perimeter
    t, rem = np.divmod(every, H * W)
    rows, cols = np.divmod(rem, W)
    a, b = max(int(rows.min()) - 1, 0), min(int(rows.max()) + 2, H)
    e, f = max(int(cols.min()) - 1, 0), min(int(cols.max()) + 2, W)
    at = np.full(T, -1)
    at[frames] = np.arange(len(frames))
    sel = at[t] >= 0
    h = np.zeros((len(frames), b - a, f - e), bool)
    h[at[t[sel]], rows[sel] - a, cols[sel] - e] = True
    inner = h[:, 1:-1, 1:-1] & h[:, :-2, 1:-1] & h[:, 2:, 1:-1] & h[:, 1:-1, :-2] & h[:, 1:-1, 2:]
    perimeter[frames] = np.count_nonzero(h.reshape(len(h), -1), axis=1) - np.count_nonzero(
        inner.reshape(len(h), -1), axis=1)
    return perimeter


def _pieces(soft: np.ndarray, hidx: np.ndarray, area: np.ndarray, partial: np.ndarray,
            min_piece: float, perimeter_frames: list[int], every: np.ndarray | None = None) -> Layer:
    """One colour's layer from its coverage and the flat indices of its hard pixels whose pieces
    are wanted (`hidx`); `every`: all its hard pixels, where `hidx` holds fewer."""
    T, H, W = soft.shape
    kern = segment_fast.compiled(segment)
    perimeter = _perimeter(hidx if every is None else every, (T, H, W), perimeter_frames, kern)
    n = 0
    if len(hidx):
        n, sums, spans = (_piece_sums(soft, hidx) if kern is None else _piece_sums_compiled(kern, soft, hidx))
    empty = [np.zeros((0, 2)), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 4))]
    found: list[list[np.ndarray] | None] = [None] * T
    if n:
        npix, s_r, s_c, s_rr, s_cc, s_rc, w, wr, wc = sums
        safe = np.maximum(npix, 1.0)
        wsum = np.maximum(w, 1e-9)  # coverage-weighted centroids: sub-pixel for thin bodies
        mr, mc = wr / wsum, wc / wsum
        ur, uc = s_r / safe, s_c / safe  # moments about the unweighted mean
        rr = s_rr / safe - ur * ur + 1 / 12  # + a pixel's own
        cc = s_cc / safe - uc * uc + 1 / 12
        rc = s_rc / safe - ur * uc
        keep_a = np.flatnonzero(npix >= min_piece)
        keep = keep_a
        frames = spans[keep_a, 0]
        box = spans[keep_a, 1:].astype(np.float64)
        to_edge = np.minimum.reduce([box[:, 0], box[:, 2], H - box[:, 1], W - box[:, 3]]) if len(keep) else np.zeros(0)
        to_exit = np.minimum.reduce([box[:, 1], box[:, 3], H - box[:, 0], W - box[:, 2]]) if len(keep) else np.zeros(0)
        order = np.argsort(frames, kind="stable")  # each frame's pieces one run, in label order
        ks, frames = keep_a[order], frames[order]
        cent, mom = np.stack([mr[ks], mc[ks]], axis=1), np.stack([rr[ks], cc[ks], rc[ks]], axis=1)
        area_k, to_edge, to_exit, box = npix[ks], to_edge[order], to_exit[order], box[order]
        ts, first = np.unique(frames, return_index=True)
        for t, a, b in zip(ts.tolist(), first.tolist(), [*first[1:].tolist(), len(keep)]):
            found[t] = [cent[a:b].copy(), to_edge[a:b].copy(), to_exit[a:b].copy(), area_k[a:b].copy(),
                            mom[a:b].copy(), box[a:b].copy()]
    per_frame = [f if f is not None else [x.copy() for x in empty] for f in found]
    count = np.array([len(f[1]) for f in per_frame], np.int64)
    edge, exit = np.full(T, np.inf), np.full(T, np.inf)
    if n and len(keep):  # each frame's least, over its run of pieces
        edge[ts], exit[ts] = np.minimum.reduceat(to_edge, first), np.minimum.reduceat(to_exit, first)
    return Layer(soft, area, count, edge, exit, [f[0] for f in per_frame], [f[1] for f in per_frame],
                 [f[2] for f in per_frame], [f[3] for f in per_frame], [f[4] for f in per_frame],
                 [f[5] for f in per_frame], perimeter, partial)


def _piece_sums(soft: np.ndarray, hidx: np.ndarray) -> tuple[int, list[np.ndarray], np.ndarray]:
    """The pieces of the hard pixels `hidx` (flat indices into `soft`'s (T, H, W)): n, per piece
    (float64, each (n,)) its pixels, sums of r, c, r^2, c^2, r c, and of the coverage w, r w, c w
    (in pixel order), and its box (n, 5): `_label_frames`' frame, rows and columns."""
    T, H, W = soft.shape
    lab, n, rows, cols, spans = _label_frames(hidx, H, W)
    if not n:
        return 0, [], spans
    r, c = rows.astype(np.float64), cols.astype(np.float64)
    wts = soft.reshape(-1)[hidx].astype(np.float64)
    weighted = [np.bincount(lab, weights=x, minlength=n + 1)[1:] for x in (wts, r * wts, c * wts)]
    return n, [*_integer_sums(lab, n, rows, cols), *weighted], spans


def _piece_sums_compiled(kern: Any, soft: np.ndarray, hidx: np.ndarray) -> tuple[int, list[np.ndarray], np.ndarray]:
    """`_piece_sums` in one compiled union-find pass (`segment_numba.label_pieces`)."""
    T, H, W = soft.shape
    n, sums, boxes = kern.label_pieces(hidx, H, W, soft.reshape(-1), np.empty(len(hidx), np.int64))
    return int(n), [x.copy() for x in sums.T], boxes


def _integer_sums(lab: np.ndarray, n: int, rows: np.ndarray, cols: np.ndarray) -> list[np.ndarray]:
    """Per label 1..n, float64: pixels and the sums of r, c, r^2, c^2, r c over them.  Whole
    numbers under 2^53, so exact in any order: the floats `np.bincount(lab, weights=...)` gives,
    from one pass where the labels run in order (a piece's pixels together: the usual case)."""
    if len(lab) and bool((lab[1:] >= lab[:-1]).all()):
        starts = np.flatnonzero(np.concatenate([[True], lab[1:] != lab[:-1]]))
        if len(starts) == n and int(lab[0]) == 1:  # every label 1..n, in order
            cols_ = np.stack([rows, cols, rows * rows, cols * cols, rows * cols], axis=1)
            sums = np.add.reduceat(cols_, starts, axis=0).astype(np.float64)
            count = np.diff(np.append(starts, len(lab))).astype(np.float64)
            return [count, *sums.T]
    out = [np.bincount(lab, minlength=n + 1)[1:].astype(np.float64)]
    r, c = rows.astype(np.float64), cols.astype(np.float64)
    return out + [np.bincount(lab, weights=w, minlength=n + 1)[1:] for w in (r, c, r * r, c * c, r * c)]


def _label_frames(hidx: np.ndarray, H: int, W: int) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    """The 8-connected pieces (within a frame) of the hard pixels `hidx` (sorted flat indices into
    a (T, H, W) stack), labelled in one `ndimage.label` call over each frame's own box, the boxes
    stacked: far fewer pixels than the box every frame's pixels span, the same pieces, numbered
    in the same scan order (frame, then row and column of a piece's first pixel).  Returns each
    pixel's label (1..n), n, its row and column, and each label's (frame, row start, row stop,
    column start, column stop) in the frame, (n, 5) int64: `ndimage.find_objects`'s boxes, read
    from the pixels (which come in scan order) instead of a pass over the stacked boxes."""
    t, rem = np.divmod(hidx, H * W)
    rows, cols = np.divmod(rem, W)
    starts = np.flatnonzero(np.concatenate([[True], t[1:] != t[:-1]]))
    r_lo, r_hi = np.minimum.reduceat(rows, starts), np.maximum.reduceat(rows, starts) + 1
    c_lo, c_hi = np.minimum.reduceat(cols, starts), np.maximum.reduceat(cols, starts) + 1
    k = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(hidx))))  # each pixel's frame in the stack
    h, w = int((r_hi - r_lo).max()), int((c_hi - c_lo).max())
    flat = (k * h + rows - r_lo[k]) * w + cols - c_lo[k]
    packed = np.zeros(len(starts) * h * w, bool)
    packed[flat] = True
    labels, n = ndimage.label(packed.reshape(len(starts), h, w), structure=_IN_PLANE)
    lab = labels.reshape(-1)[flat].astype(np.intp)  # (bincount's own index type)
    return lab, int(n), rows, cols, _boxes(lab, t, rows, cols)


def _boxes(lab: np.ndarray, t: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(n, 5) int64 per label 1..n (every one present): frame, row start, row stop, column start,
    column stop of its pixels, given in scan order (a label's first pixel is in its top row)."""
    order = None if bool((lab[1:] >= lab[:-1]).all()) else np.argsort(lab, kind="stable")
    if order is not None:
        lab, t, rows, cols = lab[order], t[order], rows[order], cols[order]
    first = np.flatnonzero(np.concatenate([[True], lab[1:] != lab[:-1]]))
    return np.stack([t[first], rows[first], np.maximum.reduceat(rows, first) + 1, np.minimum.reduceat(cols, first),
                     np.maximum.reduceat(cols, first) + 1], axis=1).astype(np.int64)


def with_pieces(q: Layer, min_piece: float) -> Layer:
    """A soft-only layer (`segment`'s `soft_only`: a static colour, whose pieces the judge does not
    need) with its pieces, made as `segment` makes them (components of t >= HARD, under `min_piece`
    px^2 dropped), for the per-body metrics that follow static bodies too; its perimeter is kept."""
    T, H, W = q.soft.shape
    r0, r1, c0, c1 = (0, H, 0, W) if q.extent is None else q.extent  # no hard pixel outside
    hard = np.flatnonzero(q.soft[:, r0:r1, c0:c1] >= (HARD - LOW) / (HIGH - LOW))
    t, rem = np.divmod(hard, max((r1 - r0) * (c1 - c0), 1))
    rows, cols = np.divmod(rem, max(c1 - c0, 1))
    out = _pieces(q.soft, (t * H + rows + r0) * W + cols + c0, q.area, q.partial, min_piece, [])  # flat, sorted
    out.perimeter, out.extent = q.perimeter, q.extent
    return out


def colour_masks(video: np.ndarray, colour: Sequence[int], background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """bool (T, H, W): pixels of `colour` (coverage >= 0.5 of the way from the background to it)."""
    seg = segment(video, [colour], background)
    return seg.layers[tuple(int(x) for x in colour)].soft >= (HARD - LOW) / (HIGH - LOW)


# ----------------------------------------------------------------------------- shape descriptors

@dataclass(frozen=True)
class Shape:
    """Shape descriptors of one piece (a binary mask), px at the frame's resolution."""

    area: float  # px^2
    centroid: tuple[float, float]  # (row, col)
    angle: float  # rad: orientation of the major axis, from the second central moments
    elongation: float  # sqrt(major / minor second-moment eigenvalue); 1 for a disc or a square
    compactness: float  # area / (4 pi sqrt(major minor)): 1 for a disc (an ellipse), 3/pi for a rectangle
    rect: tuple[float, float, float]  # extents along the principal axes: (long side, short side, angle)


def eig(rr: np.ndarray, cc: np.ndarray, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Major and minor eigenvalues and the major axis angle (rad, image x right, rows down) of moments."""
    half = np.sqrt(((cc - rr) / 2) ** 2 + rc ** 2)
    major, minor = (cc + rr) / 2 + half, (cc + rr) / 2 - half
    return major, minor, 0.5 * np.arctan2(2 * rc, cc - rr)


def shape_of(mask: np.ndarray) -> Shape | None:
    """Descriptors of a 2-D bool mask (None when empty): moments and extents along the principal axes."""
    rows, cols = np.nonzero(mask)
    n = rows.size
    if n == 0:
        return None
    r0, c0 = rows.mean(), cols.mean()
    dr, dc = rows - r0, cols - c0
    major, minor, angle = eig((dr * dr).mean() + 1 / 12, (dc * dc).mean() + 1 / 12, (dr * dc).mean())
    u = dc * np.cos(angle) + dr * np.sin(angle)
    v = -dc * np.sin(angle) + dr * np.cos(angle)
    long_, short = float(np.ptp(u) + 1), float(np.ptp(v) + 1)
    return Shape(float(n), (float(r0), float(c0)), float(angle), float(np.sqrt(major / max(minor, 1e-9))),
                 float(n / (4 * np.pi * np.sqrt(max(major * minor, 1e-12)))), (max(long_, short), min(long_, short),
                                                                               float(angle)))


def track_colour(video: np.ndarray, colour: Sequence[int]) -> list[list[Shape]]:
    """Per frame, the shape descriptors of every piece of one colour (the tracker's full record)."""
    mask = colour_masks(video, colour)
    out = []
    for frame in mask:
        labels, n = ndimage.label(frame, structure=np.ones((3, 3), bool))
        out.append([sh for k in range(1, n + 1) if (sh := shape_of(labels == k)) is not None])
    return out


def box_gaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) px between bounding boxes (row start, row stop, col start, col stop); 0 when they overlap."""
    dr = np.maximum(0.0, np.maximum(a[:, None, 0] - b[None, :, 1], b[None, :, 0] - a[:, None, 1]))
    dc = np.maximum(0.0, np.maximum(a[:, None, 2] - b[None, :, 3], b[None, :, 2] - a[:, None, 3]))
    return np.sqrt(dr * dr + dc * dc)


def descriptors(q: Layer, t: int) -> tuple[float, float, float]:
    """(elongation, compactness, angle) of the one piece of frame t."""
    rr, cc, rc = q.moments[t][0]
    major, minor, angle = eig(rr, cc, rc)
    area = float(q.piece_area[t][0])
    return (float(np.sqrt(major / max(minor, 1e-9))), float(area / (4 * np.pi * np.sqrt(max(major * minor, 1e-12)))),
            float(angle))

"""`segment`'s per-pixel NumPy steps compiled by numba: the same values, one pass each (issue 52).

Imported only by `segment_fast.compiled`, on first use (ImportError here, e.g. numba missing or
too old for this NumPy, means the NumPy path runs).  Each kernel replaces a chain of small NumPy
steps that each read or wrote every ink pixel (the palette gathers, the
ambiguous pixels' nearest solid piece, a colour's coverage and its per-frame sums): the
arithmetic is the NumPy path's own (float32 coverage, float64 sums in pixel order, strict
comparisons for the first of equals), so the outputs are equal bit for bit, which
`segment_fast` checks at load.  No `fastmath`; `cache=True` keeps the machine code on disk.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_JIT: dict[str, Any] = {"cache": True, "nogil": True, "boundscheck": False}


@numba.njit(**_JIT)
def read_ink(rgb: np.ndarray, idx: np.ndarray, best_bins: np.ndarray, t_bins: np.ndarray, amb_bins: np.ndarray,
             q: np.ndarray, best: np.ndarray, t_all: np.ndarray, amb: np.ndarray) -> None:  # pragma: no cover
    """Each ink pixel's (`idx`: flat indices into (P, 3) uint8 `rgb`) palette bin (2**2 levels a
    channel), best colour (-1: none), its coverage and whether two colours could explain it."""
    for j in range(len(idx)):
        p = idx[j]
        k = (np.int32(rgb[p, 0] >> 2) << 12) | (np.int32(rgb[p, 1] >> 2) << 6) | np.int32(rgb[p, 2] >> 2)
        bk = np.int64(best_bins[k])
        q[j] = k
        best[j] = bk
        t_all[j] = t_bins[max(bk, 0), k]
        amb[j] = amb_bins[k]


@numba.njit(**_JIT)
def near_first(idx: np.ndarray, q: np.ndarray, best: np.ndarray, t_all: np.ndarray, amb: np.ndarray,
               res_bins: np.ndarray, t_bins: np.ndarray, sure_bins: np.ndarray, T: int, H: int, W: int, r: int,
               hard: np.float32) -> None:  # pragma: no cover
    """`segment._near_first` in place on `best` and `t_all`: solid pieces' blocks first (from the
    values before), then each ambiguous pixel's least score, a near colour's less by one."""
    K, HW = res_bins.shape[0], H * W
    gh, gw = -(-H // r), -(-W // r)
    wanted = np.zeros(K, np.bool_)
    for i in range(len(idx)):
        if amb[i]:
            for k in range(K):
                if np.isfinite(res_bins[k, q[i]]):
                    wanted[k] = True
    frame, rows, cols = np.empty(len(idx), np.int64), np.empty(len(idx), np.int64), np.empty(len(idx), np.int64)
    _split(idx, HW, W, frame, rows, cols)
    row_block, col_block = np.arange(H) // r, np.arange(W) // r  # looked up, not divided, per pixel
    blocks = np.zeros((K, T, gh + 2, gw + 2), np.bool_)
    for i in range(len(idx)):
        b = best[i]
        if sure_bins[q[i]] and t_all[i] >= hard and b >= 0 and wanted[b]:
            blocks[b, frame[i], row_block[rows[i]] + 1, col_block[cols[i]] + 1] = True
    near = np.zeros((K, T, gh, gw), np.bool_)  # a block's 3 x 3 blocks' OR, once per block, not per pixel
    for k in range(K):
        if wanted[k]:
            for t in range(T):
                for by in range(gh):
                    for bx in range(gw):
                        hit = False
                        for dy in range(3):
                            for dx in range(3):
                                hit = hit or blocks[k, t, by + dy, bx + dx]
                        near[k, t, by, bx] = hit
    one, zero = np.float32(1.0), np.float32(0.0)
    for i in range(len(idx)):
        if not amb[i]:
            continue
        t, by, bx = frame[i], row_block[rows[i]], col_block[cols[i]]
        choice, least = 0, zero
        for k in range(K):
            s = res_bins[k, q[i]] - (one if near[k, t, by, bx] else zero)
            if k == 0:
                least = s
            elif s < least:
                choice, least = k, s
        best[i] = choice
        t_all[i] = t_bins[choice, q[i]]


@numba.njit(**_JIT)
def fill_colour(idx: np.ndarray, best: np.ndarray, t_all: np.ndarray, k: int, HW: int, W: int, low: np.float32,
                span: np.float32, hard: np.float32, owner: np.ndarray, soft: np.ndarray, area: np.ndarray,
                partial: np.ndarray, every: np.ndarray, extent: np.ndarray) -> int:  # pragma: no cover
    """Colour k's pixels (best == k): owner k + 1, soft coverage clip((t - low) / span, 0, 1) in
    float32, each frame's area (float64, summed in pixel order) and partly covered pixels, its
    hard pixels (t >= hard) into `every` (returns how many) and the rows [0:2) and columns
    [2:4) of its soft > 0 pixels (unchanged where none)."""
    n = 0
    zero, one = np.float32(0.0), np.float32(1.0)
    for i in range(len(idx)):
        if best[i] != k:
            continue
        p, t = idx[i], t_all[i]
        owner[p] = k + 1
        v = (t - low) / span
        v = zero if v < zero else (one if v > one else v)
        soft[p] = v
        f = p // HW
        area[f] += np.float64(v)
        if v > zero:
            if v < one:
                partial[f] += 1.0
            row, col = divmod(p % HW, W)
            extent[0], extent[1] = min(extent[0], row), max(extent[1], row + 1)
            extent[2], extent[3] = min(extent[2], col), max(extent[3], col + 1)
        if t >= hard:
            every[n] = p
            n += 1
    return n


@numba.njit(**_JIT)
def _root(parent: np.ndarray, j: int) -> int:  # pragma: no cover
    while parent[j] != j:
        parent[j] = parent[parent[j]]
        j = parent[j]
    return j


@numba.njit(**_JIT)
def _split(hidx: np.ndarray, HW: int, W: int, frame: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:  # pragma: no cover
    """Each of the sorted flat indices `hidx` into a (T, H, W) stack as its frame, row and column:
    one integer division a pixel (the frame found by stepping, the column by a product), where
    `%` and `//` at each use cost several."""
    if not len(hidx):
        return
    t = hidx[0] // HW
    base = t * HW
    for j in range(len(hidx)):
        p = hidx[j]
        while p >= base + HW:
            t += 1
            base += HW
        r = (p - base) // W
        frame[j], rows[j], cols[j] = t, r, p - base - r * W


@numba.njit(**_JIT)
def _link_frame(rows: np.ndarray, cols: np.ndarray, j0: int, j1: int, parent: np.ndarray, grid: np.ndarray) -> None:  # pragma: no cover
    """Join the 8-connected neighbours among pixels j0..j1 (one frame, raster order; `rows`,
    `cols` their rows and columns) in `parent`; `grid` (all -1) maps a pixel of the frame's box
    to its index, and is left all -1."""
    r_lo, r_hi = rows[j0], rows[j1 - 1] + 1
    c_lo, c_hi = cols[j0], 0
    for j in range(j0, j1):
        c = cols[j]
        c_lo, c_hi = min(c_lo, c), max(c_hi, c + 1)
    w = c_hi - c_lo + 2  # a column of -1 each side: no bounds tests
    g = grid[:(r_hi - r_lo + 1) * w]
    for j in range(j0, j1):
        r, c = rows[j] - r_lo + 1, cols[j] - c_lo + 1  # row 0 of g stays -1 (the row above the box)
        g[r * w + c] = j
        for k in (g[(r - 1) * w + c - 1], g[(r - 1) * w + c], g[(r - 1) * w + c + 1], g[r * w + c - 1]):
            if k >= 0:
                a, b = _root(parent, j), _root(parent, k)
                if a != b:
                    parent[max(a, b)] = min(a, b)  # a piece's root: its first pixel
    for j in range(j0, j1):
        g[(rows[j] - r_lo + 1) * w + cols[j] - c_lo + 1] = -1


@numba.njit(**_JIT)
def label_pieces(hidx: np.ndarray, H: int, W: int, soft: np.ndarray, lab: np.ndarray
                 ) -> tuple[int, np.ndarray, np.ndarray]:  # pragma: no cover
    """The 8-connected pieces (within a frame) of the hard pixels `hidx` (sorted flat indices into
    a (T, H, W) stack), numbered 1..n in the order of their first pixel (`ndimage.label`'s
    numbering, which `segment._label_frames` keeps): each pixel's label into `lab`; returns n,
    per label (row lb - 1) `sums` (n, 9): the pixel count and the sums of r, c, r^2, c^2, r c
    (whole numbers, exact), then of the coverage w, r w and c w (float64, in pixel order, as
    `np.bincount`), and `boxes` (n, 5) int64: frame, row start, row stop, column start, column
    stop.  The per-label arrays are sized by n once the labels are known, not by the pixels: a
    colour's tens of thousands of pixels make a few pieces, and zeroed megabytes cost a memset."""
    N = len(hidx)
    parent = np.arange(N)
    grid = np.full((H + 1) * (W + 2), -1, np.int64)
    frame, rows, cols = np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64)
    _split(hidx, H * W, W, frame, rows, cols)
    j0 = 0
    while j0 < N:
        j1 = j0 + 1
        while j1 < N and frame[j1] == frame[j0]:
            j1 += 1
        _link_frame(rows, cols, j0, j1, parent, grid)
        j0 = j1
    n = 0
    for j in range(N):  # labels first (a piece's root is its first pixel: labelled before the rest)
        root = _root(parent, j)
        if root == j:
            n += 1
            lab[j] = n
        else:
            lab[j] = lab[root]
    sums, boxes = np.zeros((n, 9)), np.zeros((n, 5), np.int64)
    ints = np.zeros((n + 1, 6), np.int64)
    for j in range(N):  # then the sums, in pixel order as before
        lb, r, c = lab[j], rows[j], cols[j]
        if ints[lb, 0] == 0:  # the piece's first pixel
            boxes[lb - 1, 0], boxes[lb - 1, 1] = frame[j], r
            boxes[lb - 1, 2], boxes[lb - 1, 3], boxes[lb - 1, 4] = 0, W, 0
        ints[lb, 0] += 1
        ints[lb, 1] += r
        ints[lb, 2] += c
        ints[lb, 3] += r * r
        ints[lb, 4] += c * c
        ints[lb, 5] += r * c
        boxes[lb - 1, 2] = max(boxes[lb - 1, 2], r + 1)
        boxes[lb - 1, 3] = min(boxes[lb - 1, 3], c)
        boxes[lb - 1, 4] = max(boxes[lb - 1, 4], c + 1)
        w = np.float64(soft[hidx[j]])
        sums[lb - 1, 6] += w
        sums[lb - 1, 7] += np.float64(r) * w
        sums[lb - 1, 8] += np.float64(c) * w
    for lb in range(n):
        for i in range(6):
            sums[lb, i] = np.float64(ints[lb + 1, i])
    return n, sums, boxes


@numba.njit(**_JIT)
def joint_histogram(ref: np.ndarray, gen: np.ndarray, ch: int, out: np.ndarray) -> None:  # pragma: no cover
    """`np.bincount((ref[..., ch] << 8) | gen[..., ch], minlength=65536)` of two (F, H, W, 3)
    uint8 stacks, added into int64 `out` (zeros), without the channel copies: exact counts."""
    for f in range(ref.shape[0]):
        for i in range(ref.shape[1]):
            for j in range(ref.shape[2]):
                out[(np.int64(ref[f, i, j, ch]) << 8) | np.int64(gen[f, i, j, ch])] += 1


@numba.njit(**_JIT)
def ink_pixels(flat: np.ndarray, words: np.ndarray, low7: np.uint64, add: np.uint64, high: np.uint64, below: int,
               out: np.ndarray) -> int:  # pragma: no cover
    """`segment._ink` on a white background: the (sorted) indices of the pixels of `flat` ((3 P,)
    uint8 RGB) with some channel below `below`, into `out`; returns how many.  `words` is `flat`'s
    first 24 g bytes as uint64: three words hold eight whole pixels, skipped at once when no byte
    is dark (with y = ~word, a byte under `below` is a byte of y at least 256 - below, found with
    no carry between bytes: ((y & low7) + add) | y) & high; exact, integer tests only)."""
    n = 0
    g = len(words) // 3
    for i in range(g):
        y0, y1, y2 = ~words[3 * i], ~words[3 * i + 1], ~words[3 * i + 2]
        hit = ((((y0 & low7) + add) | y0) | (((y1 & low7) + add) | y1) | (((y2 & low7) + add) | y2)) & high
        if hit == 0:
            continue
        for p in range(8 * i, 8 * i + 8):
            if flat[3 * p] < below or flat[3 * p + 1] < below or flat[3 * p + 2] < below:
                out[n] = p
                n += 1
    for p in range(8 * g, len(flat) // 3):
        if flat[3 * p] < below or flat[3 * p + 1] < below or flat[3 * p + 2] < below:
            out[n] = p
            n += 1
    return n


@numba.njit(**_JIT)
def perimeter_counts(every: np.ndarray, H: int, W: int, wanted: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """`segment._perimeter`'s counts: per frame t with wanted[t], into out[t], the pixels of
    `every` (sorted flat indices into a (T, H, W) stack) with a 4-neighbour outside them (or
    outside the picture); exact integer counts."""
    N, w = len(every), W + 2
    frame, rows, cols = np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64)
    _split(every, H * W, W, frame, rows, cols)
    grid = np.zeros((H + 2) * w, np.bool_)  # a frame's pixels, a pixel of padding round it
    j0 = 0
    while j0 < N:
        t, j1 = frame[j0], j0 + 1
        while j1 < N and frame[j1] == t:
            j1 += 1
        if wanted[t]:
            for j in range(j0, j1):
                grid[(rows[j] + 1) * w + cols[j] + 1] = True
            edge = 0
            for j in range(j0, j1):
                k = (rows[j] + 1) * w + cols[j] + 1
                if not (grid[k - w] and grid[k + w] and grid[k - 1] and grid[k + 1]):
                    edge += 1
            out[t] = edge
            for j in range(j0, j1):
                grid[(rows[j] + 1) * w + cols[j] + 1] = False
        j0 = j1

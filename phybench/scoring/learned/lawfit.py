"""Deterministic closed-form least squares for the law fits (`phybench.scoring.learned.law`).

`np.linalg.lstsq` goes through LAPACK, whose blocking and SIMD paths differ between CPUs:
law fits differed at 1e-15 across machines, which changes results bytes.  Here the
normal equations of a polynomial in t (degree 1 or 2) are built from `math.fsum` sums
(correctly rounded, so independent of summation order) over centred times, and solved
by Cramer's rule in plain Python floats: the same input gives the same bits everywhere.
Centring keeps the normal equations well conditioned for the short, evenly spaced time
grids of a video (at most a few hundred frames).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def _det3(m: Sequence[Sequence[float]]) -> float:
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def poly_fit(t: np.ndarray, x: np.ndarray, degree: int) -> tuple[list[float], float] | None:
    """Coefficients [c0, c1(, c2)] of x ~ c0 + c1 t (+ c2 t^2) and the squared residual; None if singular.

    t, x: 1-D float arrays of the same length (at least degree + 1 points).  The fit is
    made in s = t - mean(t) and converted back to powers of t exactly as polynomial algebra
    says, so callers read the coefficients at t = 0.
    """
    tl = [float(v) for v in np.asarray(t, dtype=np.float64)]
    xl = [float(v) for v in np.asarray(x, dtype=np.float64)]
    n = len(tl)
    if n < degree + 1 or n != len(xl):
        return None
    centre = math.fsum(tl) / n
    s = [v - centre for v in tl]
    powers = [[1.0] * n, s, [v * v for v in s]][: degree + 1]
    gram = [[math.fsum(a * b for a, b in zip(pi, pj)) for pj in powers] for pi in powers]
    rhs = [math.fsum(a * b for a, b in zip(pi, xl)) for pi in powers]
    if degree == 1:
        det = gram[0][0] * gram[1][1] - gram[0][1] * gram[1][0]
        if not det > 1e-300:
            return None
        b0 = (rhs[0] * gram[1][1] - gram[0][1] * rhs[1]) / det
        b1 = (gram[0][0] * rhs[1] - gram[1][0] * rhs[0]) / det
        coef = [b0 - b1 * centre, b1]
        pred = [b0 + b1 * v for v in s]
    elif degree == 2:
        det = _det3(gram)
        if not abs(det) > 1e-300:
            return None
        b = []
        for j in range(3):
            m = [[rhs[i] if k == j else gram[i][k] for k in range(3)] for i in range(3)]
            b.append(_det3(m) / det)
        # b0 + b1 s + b2 s^2 with s = t - centre, in powers of t
        coef = [b[0] - b[1] * centre + b[2] * centre * centre, b[1] - 2.0 * b[2] * centre, b[2]]
        pred = [b[0] + b[1] * v + b[2] * v * v for v in s]
    else:
        raise ValueError(f"degree must be 1 or 2, got {degree}")
    residual = math.fsum((xv - p) ** 2 for xv, p in zip(xl, pred))
    return coef, residual

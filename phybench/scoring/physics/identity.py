"""Identity: the tracked body is the body of the condition frames (issue 48 item 2).

The parser (`phybench.scoring.physics.parse`) finds each body by its colour's brightness line, so a
ball of another hue, another size or another shape in the ball's place used to be tracked as the
ball.  Here each parsed body gets an **identity signature** from the condition frames, read from
the video as it is drawn (after `photometry.normalise`: the model's light undone), and every
generated frame's body is checked against it:

* **colour**: the median of the pixels within `CORE_SHARE` of its radius from its centre, as a
  direction from the background (``background - colour``, the ink it lays down).  Exposure, tints,
  casts and vignettes are gains or small offsets on the light: they barely turn that direction;
  another hue turns it.  A body whose ink turns more than `HUE_DEG` degrees, or whose ink is
  weaker or stronger than the signature's by more than the factor `INK_RATIO`, is another colour.
* **size**: the parsed radius (sqrt(area / pi) of its coverage: blur and codecs keep the area)
  off the signature's median by more than the factor `SIZE_RATIO`.
* **shape**: the body's ink (projected on its signature colour) in a disc of `SHAPE_REACH` radii
  round its centre; its normalised angular harmonics ``|sum w rho^n e^{i n theta}| / sum w rho^n``
  for n = 3, 4, 5 (a triangle, a square, a pentagon) exceed the condition frames' own by more than `SHAPE_TOL`
  (a rasterised disc has a little of each; blur only lowers them).

No frame is checked while another body is within `SHAPE_CLEAR` px of touching the body (its
pixels would be read as this one's; a collision's contact frames).

A frame is checked when the body was found whole, unsplit and in view (the parser's flags) with at least
`MIN_PIECE` of the signature's radius (less is a codec's crumb of colour where the body has left the
view; a body that shrinks that far is the judge's ``area``); a body
is **not this body** from the first checked frame that mismatches, if the next checked frame
mismatches too (one odd frame is a codec's).  From there on it is flagged `MISSING | IDENTITY`
(the velocity metrics treat it as lost: untrackable) and the judge's ``identity`` row names
what changed (`phybench.scoring.judge.identity`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .parse import MISSING, PARTLY_OUT, SPLIT, Parsed, PixelMapping
from .parse_flags import IDENTITY

CORE_SHARE = 0.5  # the colour is read within this share of the radius from the centre
HUE_DEG = 7.0  # degrees the ink's direction may turn
INK_RATIO = 2.5  # the ink may weaken or strengthen by this factor (blur thins a small ball's core)
SIZE_RATIO = 1.2  # the radius may grow or shrink by this factor
SHAPE_REACH = 1.6  # radii: the window the shape is read in
SHAPE_TOL = 0.15  # harmonic amplitude beyond the condition frames' own
HUES = (20, 40, 60, 120, 240, 300)  # the planted kinds' strengths (`phybench.violations_identity`): hue turns, degrees
SIZES = (0.7, 1.4)  # ... radius factors
SHAPES = ("square", "triangle", "pentagon")  # ... shapes of the disc's area
SHAPE_CLEAR = 3.0  # px: no frame is checked while another body is this close to touching
MIN_PIECE = 0.5  # a piece under half the signature's radius is not checked (codec crumbs; `area` sees a shrinking body)
_HARMONICS = (3, 4, 5)
_UNCHECKED = MISSING | PARTLY_OUT | SPLIT

SETTINGS = (f"families that hold identity (TaskFamily.identity_check: the fundamental tasks): each parsed body's signature from the condition frames (its colour: the median of the "
            f"pixels within {CORE_SHARE:g} radii of its centre, as a direction from the background; its radius; "
            f"its shape: angular harmonics 3, 4 and 5 of its ink within {SHAPE_REACH:g} radii); a generated frame's "
            f"body whose ink turns more than {HUE_DEG:g} degrees or changes strength by more than x{INK_RATIO:g}, "
            f"whose radius changes by more than x{SIZE_RATIO:g}, or whose harmonics grow by more than "
            f"{SHAPE_TOL:g}, in two checked frames in a row, is not this body: lost from there on (untrackable; "
            "the judge's identity finding names colour, size or shape)")

__all__ = ["SETTINGS", "Identity", "identity_of", "apply_identity", "checked_parse"]


@dataclass
class Identity:
    """What the check found, per body: the first frame it is not itself (-1: never), and what changed."""

    lost_from: list[int] = field(default_factory=list)
    changed: list[list[str]] = field(default_factory=list)  # per body: "colour", "size", "shape"
    detail: list[str] = field(default_factory=list)  # per body: the numbers, in words


def _crowded(cu: np.ndarray, cv: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """(T, K) bool: another found body is within `SHAPE_CLEAR` px of touching this one (its pixels
    would be read as this body's: no check in such a frame)."""
    K = cu.shape[1]
    out = np.zeros(cu.shape, dtype=bool)
    for k in range(K):
        for j in range(K):
            if j != k:
                with np.errstate(invalid="ignore"):
                    out[:, k] |= np.hypot(cu[:, k] - cu[:, j], cv[:, k] - cv[:, j]) < rad[:, k] + rad[:, j] + SHAPE_CLEAR
    return out


def _measure(video: np.ndarray, cu: float, cv: float, r: float, others: list[tuple[float, float, float]]
             ) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(ink (3,) = background - colour at the body's core; the ink (h, w, 3) round it; the window's
    geometry (rho, dx, dy px; the shape window: within `SHAPE_REACH` radii, less the pixels within
    `SHAPE_CLEAR` px of another body's rim))."""
    H, W = video.shape[:2]
    reach = SHAPE_REACH * r + 1.0
    r0, r1 = max(0, int(cv - reach)), min(H, int(np.ceil(cv + reach)) + 1)
    c0, c1 = max(0, int(cu - reach)), min(W, int(np.ceil(cu + reach)) + 1)
    patch = 255.0 - video[r0:r1, c0:c1].astype(np.float32)  # (h, w, 3) ink
    yy, xx = np.mgrid[r0:r1, c0:c1]
    dy, dx = yy + 0.5 - cv, xx + 0.5 - cu
    rho = np.hypot(dx, dy)
    core = rho <= max(CORE_SHARE * r, 0.75)
    ink = np.median(patch[core], axis=0) if core.any() else np.zeros(3, np.float32)
    window = rho <= SHAPE_REACH * r
    for u, v, q in others:
        window &= np.hypot(xx + 0.5 - u, yy + 0.5 - v) > q + SHAPE_CLEAR
    return ink, patch, (rho, dx, dy, window)


def _harmonics(patch: np.ndarray, geometry: tuple, direction: np.ndarray, r: float) -> np.ndarray:
    """(len(_HARMONICS),) the normalised angular harmonics of the ink along `direction`; NaN when not read."""
    rho, dx, dy, window = geometry
    w = np.clip(patch @ direction, 0.0, 1.0)[window]  # (n,) coverage-like weights
    theta = np.arctan2(dy[window], dx[window])
    p = rho[window] / r
    out = []
    for n in _HARMONICS:
        m = w * p ** n
        total = float(m.sum())
        out.append(float(abs((m * np.exp(1j * n * theta)).sum())) / total if total > 0 else np.nan)
    return np.array(out)


def identity_of(video: np.ndarray, parsed: Parsed, mapping: PixelMapping, condition_frames: int) -> Identity:
    """The identity check of every body of `parsed` on `video` (uint8 (T, H, W, 3), normalised)."""
    T, K = parsed.flags.shape
    W = video.shape[2]
    px = mapping.pixel_size(W)
    cu, cv = mapping.to_pixel(parsed.positions[..., 0], parsed.positions[..., 1], W)  # (T, K) px
    rad = parsed.radii / px  # (T, K) px
    checked = ((parsed.flags & _UNCHECKED) == 0) & np.isfinite(rad) & (rad > 0.5)
    checked &= ~_crowded(cu, cv, rad)
    out = Identity()
    for k in range(K):
        out.lost_from.append(-1), out.changed.append([]), out.detail.append("")
        sig = np.flatnonzero(checked[:condition_frames, k])
        if sig.size == 0:
            continue
        inks, r_sig = [], float(np.median(rad[sig, k]))
        meas: dict[int, tuple[np.ndarray, np.ndarray, tuple]] = {}
        for t in np.flatnonzero(checked[:, k] & (rad[:, k] >= MIN_PIECE * r_sig)):
            others = [(cu[t, j], cv[t, j], rad[t, j]) for j in range(K) if j != k and np.isfinite(rad[t, j])]
            ink, patch, geometry = _measure(video[t], cu[t, k], cv[t, k], rad[t, k], others)
            if t < condition_frames:
                inks.append(ink)
            meas[int(t)] = (ink, patch, geometry)
        ink_sig = np.median(np.array(inks), axis=0)
        norm = float(np.linalg.norm(ink_sig))
        if norm < 20.0:  # a body no darker than the background: no colour to hold it to
            continue
        direction = ink_sig / norm ** 2  # projection: 1 at the signature's full ink
        harm: dict[int, np.ndarray] = {t: _harmonics(m[1], m[2], direction, rad[t, k]) for t, m in meas.items()}
        shapes = [harm[t] for t in sig if t in harm and np.isfinite(harm[t]).all()]
        shape_sig = np.max(np.array(shapes), axis=0) if shapes else np.full(len(_HARMONICS), np.nan)
        _decide(out, k, meas, harm, ink_sig, r_sig, shape_sig, rad[:, k], condition_frames)
    return out


def _changes(ink: np.ndarray, ink_sig: np.ndarray, r: float, r_sig: float, h: np.ndarray, h_sig: np.ndarray
             ) -> tuple[list[str], str]:
    """What differs in one frame, and the numbers."""
    n, n_sig = float(np.linalg.norm(ink)), float(np.linalg.norm(ink_sig))
    cos = float(ink @ ink_sig) / max(n * n_sig, 1e-9)
    angle = float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    ratio = n / n_sig
    what, words = [], []
    if angle > HUE_DEG or not (1 / INK_RATIO <= ratio <= INK_RATIO):
        what.append("colour")
        words.append(f"ink turned {angle:.0f} deg, x{ratio:.2f} strength")
    if not (1 / SIZE_RATIO <= r / r_sig <= SIZE_RATIO):
        what.append("size")
        words.append(f"radius x{r / r_sig:.2f}")
    grow = h - h_sig
    if np.isfinite(grow).all() and grow.max() > SHAPE_TOL:
        what.append("shape")
        words.append(f"harmonic {_HARMONICS[int(np.argmax(grow))]} up {grow.max():.2f}")
    return what, "; ".join(words)


def _decide(out: Identity, k: int, meas: dict, harm: dict, ink_sig: np.ndarray, r_sig: float, shape_sig: np.ndarray,
            rad: np.ndarray, condition_frames: int) -> None:
    frames = sorted(t for t in meas if t >= condition_frames)
    found = [(t, *_changes(meas[t][0], ink_sig, float(rad[t]), r_sig, harm[t], shape_sig)) for t in frames]
    for (t, what, words), nxt in zip(found, found[1:]):
        if what and nxt[1]:
            out.lost_from[k] = int(t)
            out.changed[k] = sorted(set(what) | set(nxt[1]), key=["colour", "size", "shape"].index)
            out.detail[k] = words
            return


def apply_identity(parsed: Parsed, identity: Identity) -> Parsed:
    """`parsed` with each body that is not itself flagged MISSING | IDENTITY (position and radius NaN)
    from its first such frame on; `parsed` itself when every body kept its identity."""
    if all(f < 0 for f in identity.lost_from):
        parsed.identity = identity
        return parsed
    positions, radii, flags = parsed.positions.copy(), parsed.radii.copy(), parsed.flags.copy()
    for k, f in enumerate(identity.lost_from):
        if f >= 0:
            positions[f:, k] = np.nan
            radii[f:, k] = np.nan
            flags[f:, k] |= MISSING | IDENTITY
    return Parsed(positions, radii, flags, identity)


def checked_parse(parsed: Parsed, video: np.ndarray, mapping: PixelMapping, condition_frames: int) -> Parsed:
    """`parsed` of `video` (normalised) after the identity check: what the scorer and the judge read."""
    return apply_identity(parsed, identity_of(video, parsed, mapping, condition_frames))

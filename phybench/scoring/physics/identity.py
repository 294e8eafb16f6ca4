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
  plus the growth of harmonic 2 (an elongated body: a fast ball blended over frames or smeared; a rasterised
  disc has a little of each; blur only lowers them).  Pixels whose ink lies off the body's
  colour line (by more than `OFF_LINE_REL` of their ink, at least `OFF_LINE_MIN` levels) more than a pixel
  outside its radius are another body's (a rim passing under or over it) and are left out.

No frame is checked while another body is within `SHAPE_CLEAR` px of touching the body (its
pixels would be read as this one's; a collision's contact frames).

A frame is checked when the body was found whole, unsplit and in view (the parser's flags; a body cut
by the image's edge only for its colour where its core is in view, and for a visible area already too large,
which a cut can only shrink; so is a body cut by a blank band 1 to `EDGE_BAND` px wide along the edge, a
picture shifted by a pixel or two with a white fill, which the parser sees no border of: `_band_cut`) with at least
`MIN_PIECE` of the signature's radius (less is a codec's crumb of colour where the body has left the
view; a body that shrinks that far is the judge's ``area``); a body
is **not this body** from the first checked frame that mismatches, if the next checked frame
mismatches too (one odd frame is a codec's), or if it is the body's last whole frame and the body then leaves
the view (`_exit`: a ball swapped just before it leaves has no second checked frame).  From there on it is flagged `MISSING | IDENTITY`
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
SIZE_RATIO = 1.25  # the radius may grow or shrink by this factor
SHAPE_REACH = 1.6  # radii: the window the shape is read in
SHAPE_TOL = 0.2  # harmonic amplitude beyond the condition frames' own
HUES = (20, 40, 60, 120, 240, 300)  # the planted kinds' strengths (`phybench.violations_identity`): hue turns, degrees
SIZES = (0.7, 1.4)  # ... radius factors
SHAPES = ("square", "triangle", "pentagon")  # ... shapes of the disc's area
OFF_LINE_REL, OFF_LINE_MIN = 0.35, 40.0  # a pixel farther off the body's colour line than this is another body's
SHAPE_CLEAR = 3.0  # px: no frame is checked while another body is this close to touching
SAMPLE_RADIUS = 6.0  # px: a body this many pixels or more in radius is read on a coarser grid (every r // 6-th pixel)
MIN_PIECE = 0.5  # a piece under half the signature's radius is not checked (codec crumbs; `area` sees a shrinking body)
EDGE_BAND = 3.0  # px: a picture shifted or letterboxed by a blank band this wide cuts a body there (cut, not shrunk)
BAND_CHORD = 0.8  # signature radii: a body's outermost inked row along such a band at least this long is cut by it
BAND_SHRINK = 0.9  # ... if its visible radius is under this share of the signature's (a cut loses area; a square does not)
_HARMONICS = (2, 3, 4, 5)  # 2: elongation (a blended or smeared fast ball), the allowance; 3-5: the shapes

SETTINGS = (f"families that hold identity (TaskFamily.identity_check: the fundamental tasks): each parsed body's signature from the condition frames (its colour: the median of the "
            f"pixels within {CORE_SHARE:g} radii of its centre, as a direction from the background; its radius; "
            f"its shape: angular harmonics 3, 4 and 5 of its ink within {SHAPE_REACH:g} radii); a generated frame's "
            f"body whose ink turns more than {HUE_DEG:g} degrees or changes strength by more than x{INK_RATIO:g}, "
            f"whose radius changes by more than x{SIZE_RATIO:g}, or whose harmonics grow by more than "
            f"{SHAPE_TOL:g} plus the growth of harmonic 2 (elongation), in two checked frames in a row (or in its last whole frame, when it then leaves the view: cut in every later frame it is found in, "
            f"gone by the last), is not this body (within {EDGE_BAND:g} px "
            "of the image's edge a body counts as cut: only a grown size is read there, its colour where its core is clear of that band): "
            "lost from there on (untrackable; "
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
                    d = np.hypot(cu[:, k] - cu[:, j], cv[:, k] - cv[:, j])
                    # two tracks on one body (centres within half a radius) are no contact: that body is checked
                    out[:, k] |= (d < rad[:, k] + rad[:, j] + SHAPE_CLEAR) & (d > 0.5 * np.minimum(rad[:, k], rad[:, j]))
    return out


def _windows(video: np.ndarray, t: np.ndarray, cu: np.ndarray, cv: np.ndarray, half: int, stride: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ink (n, L, L, 3) float32 = background - pixel (0 off the image), dx (n, 1, L), dy (n, L, 1) float32 px
    from the centre) of the windows of every `stride`-th pixel within `half` px round (cu, cv) in frames t."""
    H, W = video.shape[1:3]
    span = np.arange(-half, half + 1, stride)
    rows = np.floor(cv).astype(np.int64)[:, None] + span  # (n, L)
    cols = np.floor(cu).astype(np.int64)[:, None] + span
    pixels = video[t[:, None, None], np.clip(rows, 0, H - 1)[:, :, None], np.clip(cols, 0, W - 1)[:, None, :]]
    inside = ((rows >= 0) & (rows < H))[:, :, None] & ((cols >= 0) & (cols < W))[:, None, :]
    ink = (255.0 - pixels.astype(np.float32)) * inside[..., None]
    ink[~inside] = np.nan  # off the image: no ink read
    dx = (cols + 0.5 - cu[:, None]).astype(np.float32)[:, None, :]
    dy = (rows + 0.5 - cv[:, None]).astype(np.float32)[:, :, None]
    return ink, dx, dy


def _measure(video: np.ndarray, t: np.ndarray, cu: np.ndarray, cv: np.ndarray, r: np.ndarray,
             others: list[tuple[np.ndarray, np.ndarray, np.ndarray]], r_sig: float, before: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """(core ink (n, 3), harmonics (n, len(_HARMONICS)); NaN where not read) of one body in frames t,
    at centres (cu, cv) px and radii r px; `others`: the other bodies' (cu, cv, r) in those frames
    (their pixels, within `SHAPE_CLEAR` px of their rims, are left out of the shape window)."""
    half = int(np.ceil(SHAPE_REACH * 1.05 * max(float(r.max()), r_sig))) + 1
    stride = max(1, int(r_sig // SAMPLE_RADIUS))  # a large body is read on every stride-th pixel: its harmonics do not change
    ink, dx, dy = _windows(video, t, cu, cv, half, stride)
    rho = np.hypot(dx, dy)  # (n, L, L)
    r = r.astype(np.float32)
    core = rho <= np.maximum(CORE_SHARE * r, 0.75)[:, None, None]
    count = core.sum(axis=(1, 2))
    seen = np.isfinite(ink[..., 0])  # (n, L, L) in the image
    core_in = (core & seen).sum(axis=(1, 2)) == count  # the whole core in view (a body cut by the edge may still show it)
    ink = np.nan_to_num(ink, nan=0.0)
    core_ink = np.einsum("nhw,nhwc->nc", core.astype(np.float32), ink) / np.maximum(count, 1)[:, None]
    core_ink[~core_in] = np.nan
    sig = core_ink[before]
    ink_sig = np.median(sig, axis=0) if len(sig) else np.zeros(3, np.float32)
    norm = float(np.linalg.norm(ink_sig))
    window = rho <= (SHAPE_REACH * r)[:, None, None]
    for u, v, q in others:
        with np.errstate(invalid="ignore"):
            away = np.hypot(dx + (cu - u)[:, None, None], dy + (cv - v)[:, None, None]) > (q + SHAPE_CLEAR)[:, None, None]
        window &= away | ~np.isfinite(q)[:, None, None]
    unit = (ink_sig / max(norm, 1e-9)).astype(np.float32)
    along = ink @ unit  # (n, L, L) levels of the body's own ink
    off2 = np.einsum("nhwc,nhwc->nhw", ink, ink) - along * along  # squared ink off the body's colour line
    off = np.sqrt(np.maximum(off2, 0.0))  # (another colour: another body's rim)
    own = (off <= np.maximum(OFF_LINE_MIN, OFF_LINE_REL * along)) | (rho <= (r + 1.0)[:, None, None])
    w = np.clip(along / max(norm, 1e-9), 0.0, 1.0) * (window & own)  # (n, L, L) coverage of this body's colour
    z = ((dx + 1j * dy) / r[:, None, None]).astype(np.complex64)  # rho / r e^{i theta}
    zn = z
    harm = []
    for n in range(2, max(_HARMONICS) + 1):
        zn = zn * z  # (rho / r)^n e^{i n theta}
        if n in _HARMONICS:
            amp = np.einsum("nhw,nhw->n", w.astype(np.complex64), zn)
            total = np.einsum("nhw,nhw->n", w, np.abs(zn))
            with np.errstate(invalid="ignore", divide="ignore"):
                harm.append(np.abs(amp) / total)
    return core_ink, np.stack(harm, axis=1)  # core_ink NaN where the core is not wholly in view


def identity_of(video: np.ndarray, parsed: Parsed, mapping: PixelMapping, condition_frames: int) -> Identity:
    """The identity check of every body of `parsed` on `video` (uint8 (T, H, W, 3), normalised)."""
    T, K = parsed.flags.shape
    W = video.shape[2]
    px = mapping.pixel_size(W)
    cu, cv = mapping.to_pixel(parsed.positions[..., 0], parsed.positions[..., 1], W)  # (T, K) px
    rad = parsed.radii / px  # (T, K) px
    found = ((parsed.flags & (MISSING | SPLIT)) == 0) & np.isfinite(rad) & (rad > 0.5) & ~_crowded(cu, cv, rad)
    checked = found & ((parsed.flags & PARTLY_OUT) == 0)
    cut = found & ~checked  # cut by the image's edge: only a visible area already too large is read (it can only shrink)
    out = Identity()
    for k in range(K):
        out.lost_from.append(-1)
        out.changed.append([])
        out.detail.append("")
        sig = np.flatnonzero(checked[:condition_frames, k])
        if sig.size == 0:
            continue
        r_sig = float(np.median(rad[sig, k]))
        t = np.flatnonzero(found[:, k] & (rad[:, k] >= MIN_PIECE * r_sig))
        if not (t >= condition_frames).any():
            continue
        others = [(cu[t, j], cv[t, j], rad[t, j]) for j in range(K) if j != k]
        before = (t < condition_frames) & checked[t, k]
        ink, harm = _measure(video, t, cu[t, k], cv[t, k], rad[t, k], others, r_sig, before)
        ink_sig = np.median(ink[before], axis=0)  # checked frames: whole bodies, their cores in view
        if float(np.linalg.norm(ink_sig)) < 20.0:  # a body no darker than the background: no colour to hold it to
            continue
        shapes = harm[before][np.isfinite(harm[before]).all(axis=1)]
        shape_sig = shapes.max(axis=0) if len(shapes) else np.full(len(_HARMONICS), np.nan)
        band = _band_cut(video, t, cu[t, k], cv[t, k], rad[t, k], r_sig, ink_sig)  # cut by a band the parser cannot see
        away = ((parsed.flags[:, k] & (MISSING | PARTLY_OUT)) != 0) | ~np.isfinite(rad[:, k])  # (T,) out of view or cut
        _decide(out, k, t, ink, harm, ink_sig, r_sig, shape_sig, rad[:, k], condition_frames, cut[t, k] | band,
                band & _near_edge(cu[t, k], cv[t, k], CORE_SHARE * r_sig, video.shape[1:3]), away)
    return out


def _near_edge(cu: np.ndarray, cv: np.ndarray, reach: float, shape: tuple[int, int]) -> np.ndarray:
    """(n,) bool: a disc of `reach` px round (cu, cv) px comes within `EDGE_BAND` px of the image's edge.  A picture
    shifted by a pixel or two with a blank band (or letterboxed) cuts a body there without touching the border,
    so the parser's PARTLY_OUT cannot say it; the centroid of a cut disc lies within its radius of the cut, so
    the signature's radius round the parsed centre always reaches it."""
    H, W = shape
    with np.errstate(invalid="ignore"):
        return ((cu - reach < EDGE_BAND) | (cu + reach > W - EDGE_BAND)
                | (cv - reach < EDGE_BAND) | (cv + reach > H - EDGE_BAND))


def _band_cut(video: np.ndarray, t: np.ndarray, cu: np.ndarray, cv: np.ndarray, r: np.ndarray, r_sig: float,
              ink_sig: np.ndarray) -> np.ndarray:
    """(n,) bool: in frame t[i] the body at (cu, cv) px, radius r px (from its visible area), is cut by a blank
    band 1 to `EDGE_BAND` px wide along an edge of the image: it has lost area (r under `BAND_SHRINK` of the
    signature's radius) and its ink (at least half the signature's, along its colour) stops at a straight line
    there, the outermost inked row (or column) of a strip `EDGE_BAND` + 1 px deep spanning a chord of at least
    `BAND_CHORD` signature radii.  A whole disc near the edge has only a short chord in its outermost inked row
    (about 2 sqrt(r) px), and a square's flat side there keeps the disc's area, so a ball that shrank or
    turned square near the edge is still read."""
    near = _near_edge(cu, cv, r_sig, video.shape[1:3]) & (r < BAND_SHRINK * r_sig)
    out = np.zeros(len(t), dtype=bool)
    if not near.any():
        return out
    H, W = video.shape[1:3]
    depth, norm = int(EDGE_BAND) + 1, float(np.linalg.norm(ink_sig))
    unit = (ink_sig / max(norm, 1e-9)).astype(np.float32)
    reach = int(np.ceil(1.2 * r_sig))
    for i in np.flatnonzero(near):
        frame = video[t[i]]
        u, v = int(np.floor(cu[i])), int(np.floor(cv[i]))
        cols, rows_ = slice(max(u - reach, 0), u + reach + 1), slice(max(v - reach, 0), v + reach + 1)
        strips = [strip for side, strip in ((v - r_sig < depth, frame[:depth, cols]), (v + r_sig > H - depth, frame[H - depth:, cols][::-1]),
                                            (u - r_sig < depth, frame[rows_, :depth].transpose(1, 0, 2)),
                                            (u + r_sig > W - depth, frame[rows_, W - depth:].transpose(1, 0, 2)[::-1])) if side]
        for strip in strips:  # (depth, L, 3): row 0 the image's edge, inward from there (only the edges it is near)
            inked = ((255.0 - strip.astype(np.float32)) @ unit >= 0.5 * norm).sum(axis=1)  # (depth,) px of ink a row
            rows = np.flatnonzero(inked)
            if rows.size and 1 <= rows[0] <= EDGE_BAND and inked[rows[0]] >= BAND_CHORD * r_sig:
                out[i] = True
    return out


def _changes(ink: np.ndarray, ink_sig: np.ndarray, r: np.ndarray, r_sig: float, harm: np.ndarray,
             shape_sig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per frame (n,): (colour, size, shape differ; the ink's turn in degrees and strength ratio)."""
    n, n_sig = np.linalg.norm(ink, axis=1), float(np.linalg.norm(ink_sig))
    cos = ink @ ink_sig / np.maximum(n * n_sig, 1e-9)
    angle = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    ratio = n / n_sig
    colour = (angle > HUE_DEG) | (ratio < 1 / INK_RATIO) | (ratio > INK_RATIO)
    size = (r < r_sig / SIZE_RATIO) | (r > r_sig * SIZE_RATIO)
    shape = _shape_growth(harm, shape_sig) > SHAPE_TOL
    return colour, size, shape, angle, ratio


def _shape_growth(harm: np.ndarray, shape_sig: np.ndarray) -> np.ndarray:
    """(n,) how far harmonics 3-5 grew over the signature's, less the growth of harmonic 2: a fast ball blended
    or smeared along its path is elongated (harmonic 2, and some of 4 with it), a square or a triangle is not."""
    with np.errstate(invalid="ignore"):
        grow = np.nan_to_num(harm - shape_sig, nan=0.0)
    return grow[:, 1:].max(axis=1) - np.maximum(grow[:, 0], 0.0)


def _decide(out: Identity, k: int, t: np.ndarray, ink: np.ndarray, harm: np.ndarray, ink_sig: np.ndarray,
            r_sig: float, shape_sig: np.ndarray, rad: np.ndarray, condition_frames: int, cut: np.ndarray,
            core_band: np.ndarray, away: np.ndarray) -> None:
    """Body k is lost from the first generated checked frame that mismatches, if the next one does too.
    `cut` (n,): cut by the image's edge or near it; `core_band` (n,): its core near the edge (may be blanked);
    `away` (T,): every frame where the parser found it missing or cut by the edge (`_exit`)."""
    gen = t >= condition_frames
    t, ink, harm, cut, core_band = t[gen], ink[gen], harm[gen], cut[gen], core_band[gen]
    colour, size, shape, angle, ratio = _changes(ink, ink_sig, rad[t], r_sig, harm, shape_sig)
    bad = _bad(colour, size, shape, ink, core_band, cut, rad[t], r_sig)
    both = np.flatnonzero(bad[:-1] & bad[1:])
    i = int(both[0]) if both.size else _exit(bad, cut, t, away)
    if i < 0:
        return
    names = ("colour", "size", "shape")
    out.lost_from[k] = int(t[i])
    out.changed[k] = [name for name, m in zip(names, (colour, size, shape)) if m[i] or m[i + 1]]
    grow = np.nan_to_num(harm[i, 1:] - shape_sig[1:], nan=0.0)
    words = {"colour": f"ink turned {angle[i]:.0f} deg, x{ratio[i]:.2f} strength", "size": f"radius x{rad[t[i]] / r_sig:.2f}",
             "shape": f"harmonic {_HARMONICS[1 + int(np.argmax(grow))]} up {grow.max():.2f}"}
    out.detail[k] = "; ".join(words[name] for name in out.changed[k])


def _bad(colour: np.ndarray, size: np.ndarray, shape: np.ndarray, ink: np.ndarray, core_band: np.ndarray,
         cut: np.ndarray, r: np.ndarray, r_sig: float) -> np.ndarray:
    """(n,) bool: a frame mismatches in what can be read of it: a cut body's colour where its core is in view, its
    size only where already too large (a cut can only shrink it), never its shape.  Changes the masks in place."""
    colour &= np.isfinite(ink).all(axis=1) & ~core_band
    shape &= ~cut
    size &= ~cut | (r > r_sig * SIZE_RATIO)
    return colour | size | shape


def _exit(bad: np.ndarray, cut: np.ndarray, t: np.ndarray, away: np.ndarray) -> int:
    """Index into t of a body's last whole frame where it mismatches and then leaves the view (-1: none).  A ball
    swapped for another body just before it leaves has one whole frame left: no next checked frame can confirm
    it.  Its exit confirms it instead: in every later frame it is cut by the edge (the parser's `partly_out`, or a
    blank band) or missing, cut in the next frame, and it is no whole piece by the video's end (one odd frame of
    a ball that stays in view, or that shrinks away in view, still needs a second).  The exit frame is read at
    the same tolerances as any other: the exit stands in for the second frame's confirmation."""
    whole = np.flatnonzero(~cut)
    if not whole.size or not bad[whole[-1]]:
        return -1
    i, T = int(whole[-1]), len(away)
    out = away.copy()
    out[t[cut]] = True  # cut frames, a blank band's included
    if i + 1 >= len(t) or t[i + 1] != t[i] + 1 or t[-1] >= T - 1 or not out[t[i] + 1:].all():
        return -1
    return i


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

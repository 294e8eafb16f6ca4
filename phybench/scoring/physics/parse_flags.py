"""The parser's flag bits and thresholds (`phybench.scoring.physics.parse`).

One module below every part of the parser, so that each part (`unmix`, `blobs`, `solid_core`,
`discs`) reads the same numbers and the parser's public flags are defined once.
"""
from __future__ import annotations

import numpy as np

# Per-frame, per-object flag bits (uint8).
MISSING = 1  # no pixels of that colour: position and radius are NaN
PARTLY_OUT = 2  # the object touches the image border: centre from a partial view
SPLIT = 4  # its pixels form two or more substantial blobs (e.g. a torn ball)
COLOUR_CHANGED = 8  # its colour is off the expected one by more than the tolerance
NOT_A_BALL = 16  # (always with MISSING) ink of its colour, but no ball: noise, a smear, a frame-wide blob
IDENTITY = 32  # (always with MISSING) another body in its place: colour, size or shape not the condition frames' (`identity`)
_FLAG_NAMES = {
    MISSING: "missing",
    PARTLY_OUT: "partly_out",
    SPLIT: "split",
    COLOUR_CHANGED: "colour_changed",
    NOT_A_BALL: "not_a_ball",
    IDENTITY: "not_this_body",
}

_CORE = 0.15  # coverage that makes a pixel part of a blob; above lossy-video ringing
_MIN_MASS = 0.5  # px^2: less coverage than this in a frame counts as no object
_BLOB_SHARE = 0.1  # a blob holding less than this share of the object's largest is dust
_FREE_FLOOR = 0.25  # un-hide a lower layer only where the upper ones leave this much free
_EXACT_FREE_FLOOR = 0.02  # ... or this much, in a pixel that is an exact layered blend
_EXACT_LEVELS = 1.5  # uint8 levels within which a pixel counts as an exact blend
_CHROMA_WEIGHT = 0.25  # weight of chroma against luma when one colour sets the coverage
_MIN_SHARE = 0.02  # below this chroma signal a pixel is split by plain RGB least squares
_REFINE_MIN_RADIUS = 1.0  # px: smaller blobs keep the centroid
_CUT_MARGIN = 0.05  # px: how far past the image edge a disc must reach to be PARTLY_OUT
_WHOLE_SHARE = 0.9  # a piece on the image border with less of the video's whole-disc area is PARTLY_OUT
_BORDER_GAP = 3  # px: blobs this close to an image edge are judged across that edge only
_MIN_PEAK = 0.45  # a blob with no pixel covered more than this is no ball (a smear)
_MAX_SPREAD = 2.5  # `_spread` above which a whole, unsplit blob is no ball (a disc is 1; blur sigma adds 4 s^2 / R^2)

# BT.601 full-range RGB -> (Y, Cb, Cr), the matrix H.264 decoders use for yuv420p.
_YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]]
)


"""The judge's ``identity`` row: another body in the tracked body's place (issue 48 item 2).

`phybench.scoring.physics.identity` holds each parsed body to the signature the condition frames
give it (colour, size, shape) and flags it lost from the first generated frame it is not itself
(the velocity metrics then call the video untrackable).  This row turns that into a finding that
names what changed.  The scorer hands the judge its own checked parse (`segmented_sample`), so
the finding and the untrackable video agree; a bare `judge` call (the calibrations) parses the
generated video the same way.  Families with `TaskFamily.identity_check` only (the fundamental tasks;
an attribute probe's generated body may change by design), and scenes whose every colour is one
moving body (one with static or same-coloured bodies has no per-colour ball to hold).  Its settings
are the ``identity`` entry of the ``velocity`` block, which every parsed family's results quote.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..physics.identity import HUES, SETTINGS, SHAPES, SIZES, checked_parse
from ..physics.parse import TILE, Parsed, parse_video
from ..physics.photometry import observed_colours
from .findings import Finding

__all__ = ["PLANTED", "SETTINGS", "identity_check", "identity_parse"]

# The planted kinds it claims (`phybench.violations_identity`; tests check they are planted kinds).
PLANTED = (tuple(f"recolour-{d}" for d in HUES) + tuple(f"resize-{f}" for f in SIZES)
           + tuple(f"swap-{s}" for s in SHAPES) + ("identity-swap",))


def identity_parse(video: np.ndarray, colours: list[tuple[int, ...]], condition_frames: int) -> Parsed:
    """The identity-checked parse of a normalised video, as the scorer makes it (`sample._parse`)."""
    scene = [(int(c[0]), int(c[1]), int(c[2])) for c in colours]
    read = observed_colours(video, scene, condition_frames)
    parsed = None
    if read != scene:
        try:
            parsed = parse_video(video, read, TILE)
        except ValueError:  # two colours read as one brightness line: the scene's
            parsed = None
    if parsed is None:
        parsed = parse_video(video, scene, TILE)
    return checked_parse(parsed, video, TILE, condition_frames)


def identity_check(pr: Any, c: tuple[int, ...], name: str) -> list[Finding]:
    """The rule table's check (`pr` a `rules.Segmented`): colour c's body lost its identity."""
    if any(len(s) != 1 or s[0] for s in pr.colours.values()):
        return []  # static bodies or shared colours: not a scene of one ball per colour
    if pr.parsed is False or (pr.parsed is None and pr.video is None):
        return []  # the scorer ran no identity check for this family (`TaskFamily.identity_check`)
    if pr.parsed is None:  # a bare `judge` call (the calibrations): parse as the scorer would
        pr.parsed = identity_parse(pr.video, list(pr.colours), pr.ctx.start)
    ident = pr.parsed.identity
    k = list(pr.colours).index(c)
    if ident is None or k >= len(ident.lost_from) or ident.lost_from[k] < 0:
        return []
    f = ident.lost_from[k]
    return [Finding("identity", name, [f], f"not the body of the condition frames from frame {f} on: "
                                           f"{', '.join(ident.changed[k])} changed ({ident.detail[k]})")]

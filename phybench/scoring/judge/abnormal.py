"""The abnormality judge: does a generated video break what every rigid-body scene keeps?

The paper counts "abnormal" videos by hand (objects that vanish, rigid bars that break, jars
that deform, balls that stop or drift for no reason).  This judge reads pixels, for any family.
It must hold on what real models produce (blurry, compressed, resampled, shifted frames), so
it never thresholds a fixed pixel count against a sharp frame:

* **Segmentation by soft coverage.**  Every pixel away from the background is projected onto
  the line from the background to each object colour of the scene (the row's bodies say which
  colours exist and which are static); it belongs to the colour whose line it lies nearest
  (within a residual), with coverage t in [0, 1].  A colour's *area* is the sum of a
  dead-zoned coverage (t below 0.15 is noise or a colour cast, above 0.85 is full), which blur,
  resampling and codecs preserve; its *pieces* are the 8-connected components of t >= 0.5
  (where a blurred edge crosses the sharp one), with centroids, second moments and bounding
  boxes from one labelling pass per colour and one bincount per moment.
* **Tolerances from the video.**  Each rule's tolerance is a fraction of what it measures
  (area, perimeter, speed), scaled with the resolution, widened by the blur the submission's
  own frames show (the width of its colour edges against the ground truth's), and never
  tighter than the ground truth's own change.  The view's border counts as touched within a
  few pixels, so a picture moved by a pixel or two is not a body leaving.

Rules (per colour; generated frames only, each against the frame before it, the last
condition frame included; `SETTINGS` states every number, and every results file quotes it):

* **area**: vanish / appear / deform / colour change between consecutive frames, unless the
  border explains it; **break**: more pieces than bodies (or than the ground truth shows);
  **teleport**: a piece farther than one step from its colour's pieces in the frame before;
  **merge**: fewer pieces than the ground truth ever shows; **overlap**: a gradual area change
  against the last condition frame ('interpenetration' when another object touches it);
  **shape**: a rigid body keeps its elongation and compactness (second moments);
* **static** / **rest**: a static colour, or a body at rest in the ground truth, stays put
  (smoothed coverage against the last condition frame, after registering a global shift of
  at most 2 px);
* **motion without cause** (`phybench.scoring.judge.motion`), over each body of a dynamic colour,
  followed from its piece in the last condition frame in the generated video and in its
  ground truth, in frames where neither touches anything: **jerk** (per-frame acceleration the ground truth does not have: stutter,
  stop-go), **kink** (a change of velocity over a window: drift, a turn, a reversal in
  mid-air), **gravity** (the free-flight acceleration fitted over the longest free run, of
  the wrong direction or size), **spin** (a bar turning at a rate its ground truth does not),
  **freeze** / **stop** (standing still while the ground truth moves: in mid-air, or dead at a
  contact), **tunnel** (leaving the view through a side where the ground truth stops or
  bounces: through a wall or floor), **rest** per body (a body at rest moves or turns).

Segmentation is `phybench.scoring.judge.segment`; what every rule shares, `phybench.scoring.judge.findings`.

What the judge cannot see (a smooth video at the wrong speed, a changed restitution) is what
the velocity error measures; docs/judge.md's calibration table says which kind each catches.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .findings import Ctx, Finding, Verdict
from .levels import match_levels
from ..physics.photometry import JUDGE_KEEP, normalise, observed_colours
from .motion import GAP
from . import rules
from .rules import (BLUR_PX, BORDER, DUST_REL, PERIMETER_EVERY, SETTINGS, TELEPORT_FACTOR, TELEPORT_MARGIN, ColourView,
                    Segmented, steps, without_dust)
from .segment import BACKGROUND, MIN_PIECE, Layer, Segmentation, Shape, colour_masks, segment, shape_of, track_colour

__all__ = ["SETTINGS", "Finding", "Verdict", "Shape", "Segmented", "judge", "judge_sample", "abnormal", "segment",
           "colour_masks", "shape_of", "track_colour", "BACKGROUND", "rules_help", "segment_pair"]

def rules_help() -> str:
    """The rules of the judge, one line each, for `phybench judge --help` (from `RULES`)."""
    lines = ["rules (in the order they run; docs/judge.md, docs/adding-a-judge-rule.md):"]
    lines += [f"  {r.name:<10} {r.summary or ', '.join(r.settings)}" for r in rules.RULES]
    return "\n".join(lines)


def segment_pair(video: np.ndarray, gt_video: np.ndarray, colours: Sequence[Sequence[int]], static: Sequence[bool],
            condition_frames: int, *, normalised: bool = False) -> Segmented:
    """Segment both videos and derive what every rule needs (blur factor, dust, reach).  The
    generated video is first `photometry.normalise`d (its background, exposure and bad pixels),
    unless `normalised` says it already is."""
    if video.shape != gt_video.shape:
        raise ValueError(f"video {video.shape} and ground truth {gt_video.shape} differ in shape")
    T, H, W = video.shape[:3]
    start = min(max(int(condition_frames), 1), T)
    normal = video if normalised else normalise(video)
    video = match_levels(normal, gt_video, start)  # a washed-out or grey picture is not a grey body
    by_colour: dict[tuple[int, ...], list[bool]] = {}
    for c, s in zip(colours, static):
        by_colour.setdefault(tuple(int(x) for x in c), []).append(bool(s))
    static_colours = [c for c, st in by_colour.items() if all(st)]
    sampled = sorted({start - 1, *range(start, T, PERIMETER_EVERY)})
    gts = segment(gt_video, list(by_colour), soft_only=static_colours, perimeter_frames=sampled)
    gens = _segment_read(video, list(by_colour), static_colours, sampled, start)
    gen_frames = slice(start, T)
    s = W / 128.0
    blur = 1.0 + max(0.0, gens.blur(gen_frames) - gts.blur(gen_frames)) / s / BLUR_PX
    ctx = Ctx(T, H, W, start, s * s, s, blur, BORDER * s, max(1, int(round(GAP * s))))
    dynamic = {c: colour_view(gts.layers[c], gens.layers[c], statics, ctx) for c, statics in by_colour.items()
               if not all(statics)}
    return Segmented(ctx, gens, gts, by_colour, dynamic, video=normal)


def _segment_read(video: np.ndarray, colours: list[tuple[int, ...]], static_colours: list[tuple[int, ...]],
                  sampled: list[int], condition_frames: int) -> Segmentation:
    """`segment` of the generated video with each colour as its condition frames draw it
    (`photometry.observed_colours`; the scene's own for exact and lossy renders), its layers keyed
    by the scene's colours, as the ground truth's are."""
    read = observed_colours(video, colours, condition_frames, keep=JUDGE_KEEP)
    if read == [tuple(int(x) for x in c) for c in colours]:
        return segment(video, colours, soft_only=static_colours, perimeter_frames=sampled)
    as_read = dict(zip(colours, read))
    seg = segment(video, read, soft_only=[as_read[c] for c in static_colours], perimeter_frames=sampled)
    return Segmentation({c: seg.layers[as_read[c]] for c in colours}, seg.owner)


def colour_view(g: Layer, p: Layer, statics: list[bool], ctx: Ctx) -> ColourView:
    """One colour's layers without dust (under a quarter of the ground truth's smallest whole
    piece) and its reach (one step: from the ground truth's fastest move), for the rules and the
    per-body metrics (`phybench.scoring.learned.bodies`, which also follows the static colours' pieces)."""
    whole = [a[e >= ctx.border] for a, e in zip(g.piece_area, g.piece_edge)]
    smallest = min((float(a.min()) for a in whole if len(a)), default=float(g.piece_area[ctx.ref].min(initial=0.0)))
    dust = max(MIN_PIECE * ctx.scale_a, DUST_REL * smallest)
    g, p = without_dust(g, dust, ctx.border), without_dust(p, dust, ctx.border)
    fastest = float(steps(g, 1, 0.0, 1.0).max(initial=0.0))  # the ground truth: only a piece cut by the border may be new
    reach = TELEPORT_FACTOR * fastest + TELEPORT_MARGIN * ctx.scale_l * ctx.blur
    return ColourView(statics, g, p, reach, fastest)



def judge(video: np.ndarray, gt_video: np.ndarray, colours: Sequence[Sequence[int]], static: Sequence[bool],
          condition_frames: int) -> Verdict:
    """The verdict on one generated (T, H, W, 3) uint8 video, its ground truth as the yardstick.

    colours / static: per body of the scene, its colour and whether it is static.
    """
    return judge_segmented(segment_pair(video, gt_video, colours, static, condition_frames))



def judge_segmented(pr: Segmented) -> Verdict:
    """The verdict on a video and its ground truth already segmented (`segment_pair`): every row
    of `RULES` on every colour of its kind, in table order."""
    findings: list[Finding] = []
    for c, statics in pr.colours.items():
        name = ",".join(map(str, c))
        kind = "static" if all(statics) else "dynamic"  # only static bodies have this colour: its pixels never change
        for rule in rules.RULES:
            if rule.colours == kind:
                findings += rule.check(pr, c, name)
    return Verdict(bool(findings), findings)


def segmented_sample(sample: Any) -> Segmented:
    """`segment_pair` on a `phybench.scoring.inputs.Sample`, computed once per sample (the judge and
    the per-body metrics share it)."""
    cached = sample.__dict__.get("_prepared")
    if cached is None:
        from ...data.split import row_scene

        bodies = row_scene(sample.row).bodies
        known = getattr(sample, "normalised", None)
        video = np.asarray(sample.video if known is None else known)
        cached = segment_pair(video, np.asarray(sample.gt_video), [b.colour for b in bodies],
                              [not b.dynamic for b in bodies], sample.condition_frames, normalised=known is not None)
        # the scorer's checked parse (the identity row and untrackable agree), or False: no identity check here
        cached.parsed = sample.parsed if getattr(sample.parsed, "identity", None) is not None else False
        sample.__dict__["_prepared"] = cached
    return cached


def judge_sample(sample: Any) -> Verdict:
    """The verdict on a `phybench.scoring.inputs.Sample` (its row's bodies give colours and statics),
    with a `vanish` where the parser finds no ball the ground truth shows (`phybench.scoring.judge.noball`)."""
    from .noball import no_ball_findings

    verdict = judge_segmented(segmented_sample(sample))
    lost = no_ball_findings(sample)
    return Verdict(True, verdict.findings + lost) if lost else verdict


def abnormal(sample: Any) -> float:
    """1.0 if the judge finds any rule broken, else 0.0 (NaN without a ground truth)."""
    if sample.gt_video is None:
        return float("nan")
    return 1.0 if judge_sample(sample).abnormal else 0.0

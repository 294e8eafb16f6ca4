"""The ambiguity probe's analysis, summary, text and page section (paper section 5.5, Fig. 10).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.ambiguity`; the names below re-export them.

Per generated video, two readings:

- **the outcome, from pixels**: the ball's colour coverage in the last frame (on white,
  (R - max(G, B)) over the ball colour's own, the black bars read 0); its centroid below
  the bars' bottom face is "below" (through the gap, off the bar), above it "above"; less
  than `LOST_AREA` of the ball's area of its colour is "lost" (no outcome: wrong);
- **the judge's verdict** (`phybench.scoring.judge.abnormal`, the scorer's ``abnormal`` column):
  normal or abnormal, against the split's ground truth.

The headline is the paper's "visually plausible but incorrect": the share of videos the
judge calls normal whose outcome differs from the simulator's (the row's ``outcome``), by
|margin| in pixels, with Wilson intervals.

The judge holds each video against its ground truth, and four of its rules compare the
*outcome* itself with the ground truth's (`OUTCOME_RULES`: a ball that stops where the
ground truth's moves on, freezes, tunnels, or moves where it rests).  A ball that stays on
the bars when the simulator's falls through is "stopped dead at a contact" to the judge,
though a viewer without the ground truth sees nothing wrong.  So a second headline,
``plausible_wrong_blind``, counts the wrong outcomes the judge finds normal once those four
rules are set aside: plausibility as the paper means it, judged without the answer.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tasks.probe_families.ambiguity import (  # noqa: F401  re-exported: the probe's family and constants
    AMBIGUITY,
    AMBIGUITY_128,
    KINDS,
    MARGIN_PX,
    THICKNESS,
    AmbiguityFamily,
    ambiguity_scene,
    fell_below,
)
from ..tasks.spec import TaskSpec
from .page import esc, pct, rows_section
from .reading import INK_FLOOR, pct_text, share, split_videos
from .registry import Probe, register_probe
from ..data.documents import Manifest, SplitRow, dof_value

AMBIGUITY_VERDICTS = ("plausible-correct", "plausible-wrong", "abnormal-correct", "abnormal-wrong")
# |margin| bins in pixels at the split's resolution; the last is closed
MARGIN_BINS = ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 3.0))
# the judge's rules that hold the outcome against the ground truth's (set aside for `judge_blind`)
OUTCOME_RULES = ("freeze", "stop", "tunnel", "rest")
LOST_AREA = 0.3  # share of the ball's area: less of its colour in the last frame is no ball
COLUMNS = ["sample_id", "level", "kind", "margin_px", "radius", "barrier_top", "outcome", "positions", "velocities",
           "radii", "colours", "angles", "bodies", "video"]


# ------------------------------------------------------------------ reading
def ball_coverage(frame: np.ndarray, colour: tuple[int, int, int]) -> np.ndarray:
    """Per pixel coverage (H, W) in [0, 1] of a saturated ball colour on white.

    A pixel covered c by the colour (and nothing else) is 255 (1 - c) + colour c per channel,
    so its R - max(G, B) is c times the colour's own: grey and black pixels give 0."""
    f = frame.astype(np.float64)
    own = float(colour[0]) - max(float(colour[1]), float(colour[2]))
    c = np.clip((f[..., 0] - np.maximum(f[..., 1], f[..., 2])) / own, 0.0, 1.0)
    c[c < INK_FLOOR] = 0.0
    return c


def read_outcome(video: np.ndarray, row: SplitRow, world_size: float) -> tuple[str, float]:
    """("below" | "above" | "lost", the ball's centroid y in world units) of the video's last frame."""
    video = np.asarray(video)
    _, H, W, _ = video.shape
    s = world_size / W
    colours = np.asarray(row["colours"]).reshape(-1, 3)
    c = ball_coverage(video[-1], (int(colours[-1, 0]), int(colours[-1, 1]), int(colours[-1, 2])))
    r = float(dof_value(row, "radius"))
    total = float(c.sum())
    if total * s * s < LOST_AREA * math.pi * r * r:
        return "lost", float("nan")
    ys = world_size - (np.arange(H) + 0.5) * s  # image row 0 is the top of the world
    y = float((c.sum(axis=1) * ys).sum() / total)
    bottom = float(dof_value(row, "barrier_top")) - THICKNESS
    return ("below" if y < bottom else "above"), y


def margin_bin(margin_px: float) -> int:
    """Index into `MARGIN_BINS` of |margin| (pixels)."""
    m = abs(float(margin_px))
    for i, (lo, hi) in enumerate(MARGIN_BINS):
        if lo <= m < hi:
            return i
    return len(MARGIN_BINS) - 1


def ambiguity_verdict(outcome: str, read: str, abnormal: bool) -> str:
    """One video's verdict: plausible (the judge: normal) or abnormal, times correct or wrong
    (the read outcome is the simulator's; a lost ball is wrong)."""
    correct = read == outcome
    return f"{'abnormal' if abnormal else 'plausible'}-{'correct' if correct else 'wrong'}"


def judged(row: SplitRow, video: np.ndarray, gt_video: np.ndarray,
           manifest: Manifest) -> tuple[bool, list[str]]:
    """(abnormal, the rules it broke): the judge exactly as the scorer's ``abnormal`` column runs it."""
    from ..scoring.judge.abnormal import judge_sample
    from ..scoring.run.sample import scoring_sample

    verdict = judge_sample(scoring_sample(row, video, gt_video, manifest))
    return bool(verdict.abnormal), sorted({f.rule for f in verdict.findings})


def video_record(row: SplitRow, video: np.ndarray, gt_video: np.ndarray, manifest: Manifest,
                 world_size: float) -> dict[str, Any]:
    """Everything the analysis keeps of one video."""
    outcome = "below" if float(dof_value(row, "outcome")) > 0.5 else "above"
    read, y = read_outcome(video, row, world_size)
    abnormal, rules = judged(row, video, gt_video, manifest)
    blind = any(rule not in OUTCOME_RULES for rule in rules)
    return {"sample_id": row["sample_id"], "kind": dof_value(row, "kind"), "margin_px": float(dof_value(row, "margin_px")),
            "margin_bin": margin_bin(dof_value(row, "margin_px")), "outcome": outcome, "read": read, "ball_y": y,
            "judge": "abnormal" if abnormal else "normal", "judge_blind": "abnormal" if blind else "normal",
            "rules": rules, "verdict": ambiguity_verdict(outcome, read, abnormal),
            "verdict_blind": ambiguity_verdict(outcome, read, blind)}


# ------------------------------------------------------------------ analysis
def by_margin(videos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per |margin| bin: n, and the shares plausible-but-wrong (judge as scored, and blind to
    `OUTCOME_RULES`), wrong, abnormal (Wilson 95%)."""
    out = []
    for i, (lo, hi) in enumerate(MARGIN_BINS):
        vs = [v for v in videos if v["margin_bin"] == i]
        n = len(vs)
        out.append({"lo": lo, "hi": hi, "n": n,
                    "plausible_wrong": share(sum(v["verdict"] == "plausible-wrong" for v in vs), n),
                    "plausible_wrong_blind": share(sum(v["verdict_blind"] == "plausible-wrong" for v in vs), n),
                    "wrong": share(sum(v["verdict"].endswith("-wrong") for v in vs), n),
                    "abnormal": share(sum(v["judge"] == "abnormal" for v in vs), n)})
    return out


def _ambiguity_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    manifest = reader.manifest
    resolution = int(manifest["resolution"])
    videos = []
    for row, video in split_videos(reader, sub, COLUMNS, "ambiguity", progress):
        gt = reader.video(row)
        videos.append(video_record(row, video, gt, manifest, spec.world_size))
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in AMBIGUITY_VERDICTS}
    return {
        "videos_analysed": n, "resolution": resolution, "pixel": spec.world_size / resolution,
        "verdicts": {v: share(counts[v], n) for v in AMBIGUITY_VERDICTS},
        "plausible_wrong": share(counts["plausible-wrong"], n),
        "plausible_wrong_blind": share(sum(v["verdict_blind"] == "plausible-wrong" for v in videos), n),
        "outcome_rules": list(OUTCOME_RULES),
        "wrong": share(counts["plausible-wrong"] + counts["abnormal-wrong"], n),
        "abnormal": share(counts["abnormal-correct"] + counts["abnormal-wrong"], n),
        "lost": share(sum(v["read"] == "lost" for v in videos), n),
        "by_margin": by_margin(videos),
        "margin_bins_px": [list(b) for b in MARGIN_BINS],
        "verdict_meaning": {
            "plausible-correct": "the judge finds nothing abnormal and the outcome read from pixels is the simulator's",
            "plausible-wrong": "the judge finds nothing abnormal but the outcome differs from the simulator's "
                               "(the paper's 'visually plausible but incorrect')",
            "abnormal-correct": "the judge flags the video; the outcome is the simulator's",
            "abnormal-wrong": "the judge flags the video and the outcome differs (or the ball is lost)"},
        "outcome_meaning": {"below": "the ball's centroid ends below the bars' bottom face (through / off)",
                            "above": "it ends above (does not fit / lands on the bar)",
                            "lost": f"less than {LOST_AREA:g} of the ball's area of its colour in the last frame"},
        "videos": videos,
    }


def ambiguity_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "resolution": a["resolution"],
                     "n": a["videos_analysed"], **{v: a["verdicts"][v] for v in AMBIGUITY_VERDICTS},
                     "plausible_wrong": a["plausible_wrong"], "plausible_wrong_blind": a["plausible_wrong_blind"],
                     "wrong": a["wrong"], "abnormal": a["abnormal"],
                     "lost": a["lost"], "by_margin": a["by_margin"]})
    return {"rows": rows}


def render_ambiguity(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']} ({row['resolution']} px), {row['n']} videos")
        lines.append(f"  plausible but wrong   {pct_text(row['plausible_wrong'])}")
        lines.append(f"  ... judge blind to the outcome rules ({', '.join(OUTCOME_RULES)})  "
                     f"{pct_text(row['plausible_wrong_blind'])}")
        lines.append(f"  wrong outcome         {pct_text(row['wrong'])}")
        lines.append(f"  abnormal (judge)      {pct_text(row['abnormal'])}")
        lines.append(f"  ball lost             {pct_text(row['lost'])}")
        lines.append(f"  {'|margin| px':<12}{'n':>5}  {'plausible but wrong':<24}  {'... blind':<24}  wrong outcome")
        for b in row["by_margin"]:
            span = f"[{b['lo']:g}, {b['hi']:g})"
            lines.append(f"  {span:<12}{b['n']:>5}  "
                         f"{pct_text(b['plausible_wrong']):<24}  {pct_text(b['plausible_wrong_blind']):<24}  "
                         f"{pct_text(b['wrong'])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
def _margin_bars(row: dict[str, Any], width: int = 400, height: int = 150) -> str:
    """Plausible-but-wrong share per |margin| bin, with its Wilson interval (whiskers)."""
    bins = row["by_margin"]
    left, bottom, top = 40, height - 24, 8
    step = (width - left - 8) / max(len(bins), 1)

    def y(v: float) -> float:
        return bottom - (bottom - top) * v

    parts = [f'<line x1="{left}" y1="{bottom}" x2="{width - 4}" y2="{bottom}" stroke="#999"/>',
             f'<text x="4" y="{top + 8}" font-size="10">100%</text>',
             f'<text x="{width / 2:.0f}" y="{height - 4}" font-size="10" text-anchor="middle">|margin| (px)</text>']
    for i, b in enumerate(bins):
        x0 = left + i * step + 6
        e = b["plausible_wrong"]
        v = float(e["share"]) if e["share"] is not None and math.isfinite(float(e["share"])) else 0.0
        parts.append(f'<rect class="probe-share" x="{x0:.1f}" y="{y(v):.1f}" width="{step - 12:.1f}" '
                     f'height="{bottom - y(v):.1f}" fill="#d62728"><title>{b["lo"]:g}-{b["hi"]:g} px: '
                     f'{esc(pct(e))}, n = {b["n"]}</title></rect>')
        lo, hi = e["ci95"]
        if lo is not None and hi is not None:
            xc = x0 + (step - 12) / 2
            parts.append(f'<line x1="{xc:.1f}" y1="{y(float(lo)):.1f}" x2="{xc:.1f}" y2="{y(float(hi)):.1f}" '
                         'stroke="#333"/>')
        parts.append(f'<text x="{x0 + (step - 12) / 2:.1f}" y="{bottom + 12}" font-size="10" '
                     f'text-anchor="middle">{b["lo"]:g}-{b["hi"]:g} (n={b["n"]})</text>')
    return f'<svg class="probe-bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">' \
           f'{"".join(parts)}</svg>'


def _ambiguity_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "split", "px", "plausible but wrong", "... judge blind to the outcome", "wrong outcome",
         "abnormal (judge)", "n"], summaries,
        lambda model, row: [esc(model), f"{esc(row['task'])}/{esc(row['split'])}", str(row["resolution"]),
                            *(esc(pct(row[k])) for k in ("plausible_wrong", "plausible_wrong_blind", "wrong",
                                                          "abnormal")), str(row["n"])],
        lambda model, row: f'{_margin_bars(row)}<figcaption>{esc(model)}, {esc(row["task"])}/{esc(row["split"])}: '
                           'visually plausible but physically wrong, by |margin| in pixels (95% Wilson)'
                           '</figcaption>')


register_probe(Probe("ambiguity", "visual ambiguity (section 5.5, Fig. 10): a ball through a gap or past a bar's "
                                  "edge decided within a few pixels; how often is the outcome plausible but wrong",
                     _ambiguity_analyse, ambiguity_summary, render_ambiguity,
                     section=_ambiguity_section,
                     help="a ball and a gap or a bar's edge a few pixels apart: plausible but wrong outcomes by "
                          "|margin|; section 5.5"))

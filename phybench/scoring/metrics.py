"""The metric registry: one `Metric` object per metric, everything else reads it.

A metric's name, direction, kind, label, unit, table format, the block of
`provenance.metric_settings` that states its conventions and the pinned network it runs
are said here, once.  `phybench score` (which metrics to compute, which settings to write),
the results file (`higher_is_better`, the Markdown table, the Parquet details) and the
leaderboard (which settings and weight hashes a results file must match, column labels)
all iterate `METRICS`.  Adding a metric is one `register_metric(Metric(...))` call in one
file (docs/adding-a-metric.md).

Three roles:

* **default** metrics are computed by `phybench score` when `--metrics` is not given
  (``velocity_error``, ``ssim``, ``psnr``, ``lpips``, ``fvd``);
* **optional** metrics (``default=False``) are computed only when named in ``--metrics``;
* **companion** metrics (``companion=True``) come free with the velocity parse and are
  reported whenever the task's family lists them (`family_of(spec).metrics`); they are
  not chosen with ``--metrics`` (``position_error``, ``momentum_error``, ``energy_error``).

Per-video metrics (``kind="video"``) are averaged over videos with a bootstrap interval;
set metrics (``kind="set"``, FVD) are computed on a whole group of videos.  A per-video
metric gives `compute(sample) -> float` (a `Sample`: the row, both videos, the parsed
physics errors); LPIPS (a batched network on a device) and FVD (features of the whole set)
give `batched` instead: the class that batches them (`phybench.scoring.perceptual.batched`),
which the run loop (`phybench.scoring.run.batches`) drives without naming either.

This module imports nothing heavy: settings given as a module name (``"phybench.scoring.perceptual.lpips"``,
whose module imports torch) are read from that module's ``SETTINGS`` on first use.
"""
from __future__ import annotations

import contextlib
import importlib
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..registry import Registry
from .inputs import Sample  # what a per-video metric sees (its own module; plugins may import it from here)
from ..data.documents import Manifest

DIRECTIONS = ("lower", "higher")
KINDS = ("video", "set")


class Metric:
    """One metric: what it is called, how it reads, what states its conventions, how it is computed."""

    def __init__(
        self,
        name: str,
        *,
        direction: str = "lower",
        kind: str = "video",
        label: str | None = None,
        unit: str = "",
        settings_key: str | None = None,
        settings: Mapping[str, Any] | str | None = None,
        weights: str | None = None,
        default: bool = False,
        companion: bool = False,
        fmt: str = ".3g",
        compute: Callable[["Sample"], float | None] | None = None,
        needs_ground_truth: bool = True,
        details: Callable[["Sample"], dict[str, Any]] | None = None,
        summarise: Callable[[Sequence[dict[str, Any]]], dict[str, Any]] | None = None,
        batched: str | None = None,
        bounds: tuple[float | None, float | None] | None = None,
    ) -> None:
        if direction not in DIRECTIONS:
            raise ValueError(f"metric {name!r}: direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        if kind not in KINDS:
            raise ValueError(f"metric {name!r}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if companion and (default or kind != "video"):
            raise ValueError(f"metric {name!r}: a companion metric is a per-video metric that is not a default one")
        if settings is not None and settings_key is None:
            settings_key = name
        self.name = name
        self.direction = direction
        self.kind = kind
        self.label = label if label is not None else name
        self.unit = unit
        self.settings_key = settings_key  # block of provenance.metric_settings
        self._settings = settings  # the dict, or a module name whose SETTINGS it is
        self.weights = weights  # pinned network (phybench.scoring.perceptual.weights), or None
        self.default = default
        self.companion = companion
        self.fmt = fmt
        self.compute = compute
        self.needs_ground_truth = needs_ground_truth
        # Optional: extra per-video fields for the detail row and the samples sidecar (e.g. the
        # fitted law's parameters), and extra summary blocks computed from a group's detail rows.
        self.details = details
        self.summarise = summarise
        # Optional: "module:Class" of the batching a metric needs when `compute(sample)` cannot do
        # (a network on a device, in fixed batches; a set metric over a whole group): the run loop
        # drives it (`phybench.scoring.run.batches`) and names no metric.  Imported on first use.
        self.batched = batched
        # Optional: the values the metric can take, [low, high] (None: unbounded); the board's
        # checks refuse a file outside them (`phybench.leaderboard.verify.checks`).
        self.bounds = bounds

    def batcher(self) -> Any:
        """The class `batched` names (its module imported now: it may import torch)."""
        if self.batched is None:
            raise ValueError(f"metric {self.name!r} is not batched")
        module, _, attr = self.batched.partition(":")
        return getattr(importlib.import_module(module), attr)

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def settings(self) -> Mapping[str, Any] | None:
        """The settings block itself (imports its module on first use; may raise ImportError)."""
        if isinstance(self._settings, str):
            block: Mapping[str, Any] = importlib.import_module(self._settings).SETTINGS
            self._settings = block
        return self._settings

    @property
    def requestable(self) -> bool:
        """Can be named in ``phybench score --metrics``."""
        return not self.companion

    def __repr__(self) -> str:
        return f"Metric({self.name!r}, kind={self.kind!r}, direction={self.direction!r})"


METRICS: Registry[Metric] = Registry("metric")


def register_metric(metric: Metric) -> Metric:
    """Register a metric (an error if the name is taken); returns it."""
    return METRICS.register(metric.name, metric)


def get_metric(name: str) -> Metric:
    return METRICS.get(name)


def all_metrics() -> list[Metric]:
    """Every registered metric, in registration order (the order of tables and reports)."""
    return [m for _, m in METRICS.items()]


def metric_names(kind: str | None = None) -> tuple[str, ...]:
    return tuple(m.name for m in all_metrics() if kind is None or m.kind == kind)


def default_metrics() -> tuple[str, ...]:
    """What `phybench score` computes when `--metrics` is not given."""
    return tuple(m.name for m in all_metrics() if m.default)


def requestable_metrics() -> tuple[str, ...]:
    """What `--metrics` may name, in canonical order."""
    return tuple(m.name for m in all_metrics() if m.requestable)


def companion_metrics() -> tuple[str, ...]:
    return tuple(m.name for m in all_metrics() if m.companion)


def network_metrics() -> tuple[str, ...]:
    """The metrics that run a pinned network (their row names `weights`), in registration order: the
    expensive ones, the only ones a verification may leave out (`leaderboard verify --skip`) and
    the ones the viewer's header quotes beside the image metrics.  Downstream code reads this
    instead of naming them."""
    return tuple(m.name for m in all_metrics() if m.weights)


def network_labels() -> str:
    """The labels of `network_metrics` in words ("A", "A and B", "A, B and C"), for help texts."""
    labels = [METRICS.get(n).label for n in network_metrics()]
    return " and ".join([", ".join(labels[:-1]), labels[-1]]) if len(labels) > 1 else "".join(labels)


def help_text(text: str) -> str:
    """`text` with "{network}" as `network_metrics` ("a,b") and "{NETWORK}" as `network_labels`: the
    command line's help and examples say them without spelling them."""
    return text.replace("{network}", ",".join(network_metrics())).replace("{NETWORK}", network_labels())


def is_video_metric(name: str) -> bool:
    return name in METRICS and METRICS.get(name).kind == "video"


def is_set_metric(name: str) -> bool:
    return name in METRICS and METRICS.get(name).kind == "set"


def higher_is_better(name: str) -> bool:
    return METRICS.get(name).higher_is_better


def settings_blocks(names: Iterable[str]) -> dict[str, Any]:
    """{settings_key: settings} of the named metrics (the `provenance.metric_settings` they need)."""
    out: dict[str, Any] = {}
    for name in names:
        m = METRICS.get(name)
        if m.settings_key is not None and m.settings_key not in out:
            out[m.settings_key] = m.settings
    return out


def settings_for_key(key: str) -> Mapping[str, Any] | None:
    """The settings block a registered metric writes under `key`; None if none does."""
    for m in all_metrics():
        if m.settings_key == key:
            return m.settings
    return None


def _error(attr: str) -> Callable[[Sample], float]:
    def compute(sample: Sample) -> float:
        return getattr(sample.errors, attr)

    compute.__name__ = f"compute_{attr}"
    return compute


PENALISED_SETTINGS: dict[str, Any] = {
    "definition": ("the paper's velocity error of each trackable video; an untrackable video (a ball lost in a "
                   "scored frame) counts as the penalty; excluded videos are not counted"),
    "penalty": ("2 sqrt(2) world_size / frame_interval (282.8 units/s for a 10-unit world at 0.1 s): no two in-view "
                "positions give a larger velocity error, so losing a ball never improves the mean"),
}


def penalty(manifest: Manifest) -> float:
    """The velocity error an untrackable video counts as: the largest any in-view parse allows."""
    return 2.0 * 2.0 ** 0.5 * float(manifest["world_size"]) / float(manifest["frame_interval"])


def _penalised(sample: Sample) -> float:
    errors = sample.errors
    if errors is None or errors.excluded:
        return float("nan")
    if errors.untrackable:
        return penalty(sample.manifest)
    return errors.velocity_error


RANKED_SETTINGS: dict[str, Any] = {
    "definition": ("(1 - f) e + f^2 P per video, the mean over videos that are not excluded; e: the paper's velocity "
                   "error over the scored pairs whose two frames both find the ball (P when none does), f: the share "
                   "of (generated frame, ball) entries with the ground-truth ball fully in view in which the parsed "
                   "ball is missing, P: the penalty below"),
    "penalty": ("2 sqrt(2) world_size / frame_interval (282.8 units/s for a 10-unit world at 0.1 s), the largest "
                "error two in-view positions allow: a video whose ball is lost in every frame scores P, never less "
                "than any video with a ball"),
    "why": ("each lost entry costs f P, so the cost grows with the share lost: one lost frame of 29 costs 0.34 units/s, "
            "a ball lost for 12 of 29 frames 48 units/s (docs/results.md, 'The ranked column')"),
}


def ranked_error(errors: Any, manifest: Manifest) -> float:
    """The ranked column's value of one video (`RANKED_SETTINGS`); NaN when excluded or not parsed."""
    if errors is None or errors.excluded or not errors.scored_pairs:
        return float("nan")
    f = errors.lost_share
    if not f > 0:  # nothing lost (0, or NaN: no in-view generated frame): the paper's error itself
        return errors.velocity_error
    p = penalty(manifest)
    e = errors.tracked_error if errors.tracked_error == errors.tracked_error else p
    return (1.0 - f) * min(e, p) + f * f * p


def _ranked(sample: Sample) -> float:
    return ranked_error(sample.errors, sample.manifest)


def _attribute(name: str) -> Callable[[Sample], float]:
    def compute(sample: Sample) -> float:
        return sample.attributes[name]

    compute.__name__ = f"compute_{name}"
    return compute


def _paper(axis: str) -> Callable[[Sample], float]:
    def compute(sample: Sample) -> float:
        return getattr(sample.paper, axis)

    compute.__name__ = f"compute_paper_{axis}"
    return compute


def _frame(name: str) -> Callable[[Sample], float]:
    def compute(sample: Sample) -> float:
        return sample.frames[name]

    compute.__name__ = f"compute_{name}"
    return compute


def _abnormal(sample: Sample) -> float:
    from .judge.abnormal import abnormal

    return abnormal(sample)


def _body_position(sample: Sample) -> float:
    from .learned.bodies import body_position_error

    return body_position_error(sample)


def _body_details(sample: Sample) -> dict[str, Any]:
    from .learned.bodies import body_details

    return body_details(sample)


def _body_angle(sample: Sample) -> float:
    from .learned.bodies import body_angle_error

    return body_angle_error(sample)


def _law_error(sample: Sample) -> float:
    from .learned.law import law_error

    return law_error(sample)


def _contact_error(sample: Sample) -> float:
    from .learned.law import contact_error

    return contact_error(sample)


def _contact_details(sample: Sample) -> dict[str, Any]:
    from .learned.law import contact_details

    return contact_details(sample)


def _law_details(sample: Sample) -> dict[str, Any]:
    from .learned.law import law_details

    return law_details(sample)


def _law_summary(details: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from .learned.law import summarise_law

    return summarise_law(details)


# ---------------------------------------------------------------- the built-in metrics
# Registration order is report order: results tables, leaderboard columns, `--metrics`.
_VELOCITY = "phybench.scoring.physics.velocity"
_IMAGE = "phybench.scoring.perceptual.image_metrics"

register_metric(Metric(
    "velocity_error", label="Velocity error", unit="world units / s", default=True,
    settings_key="velocity", settings=_VELOCITY, compute=_error("velocity_error"), needs_ground_truth=False,
))
register_metric(Metric(
    "velocity_error_penalised", label="Velocity error (lost ball = worst)", unit="world units / s", companion=True,
    settings_key="ranking", settings=PENALISED_SETTINGS, compute=_penalised, needs_ground_truth=False,
))
register_metric(Metric(
    # The board's ranked column: a blink costs little, a lost ball a lot, losing it all the most.
    "velocity_error_ranked", label="Velocity error (ranked)", unit="world units / s", companion=True,
    settings_key="ranked", settings=RANKED_SETTINGS, compute=_ranked, needs_ground_truth=False,
))
register_metric(Metric(
    "position_error", label="Position error", unit="world units", companion=True,
    settings_key="velocity", settings=_VELOCITY, compute=_error("position_error"), needs_ground_truth=False,
))
register_metric(Metric(
    "momentum_error", label="Momentum error", unit="world units / s", companion=True,
    settings_key="velocity", settings=_VELOCITY, compute=_error("momentum_error"), needs_ground_truth=False,
))
register_metric(Metric(
    "energy_error", label="Energy error", unit="relative", companion=True,
    settings_key="velocity", settings=_VELOCITY, compute=_error("energy_error"), needs_ground_truth=False,
))
_ATTRIBUTES = "phybench.scoring.physics.attributes"
# Companions of the velocity parse: reported for every family that lists them.
register_metric(Metric(
    "trajectory_error", label="Trajectory error", unit="world units", companion=True,
    settings_key="attributes", settings=_ATTRIBUTES, compute=_attribute("trajectory_error"), needs_ground_truth=False,
))
register_metric(Metric(
    "size_error", label="Size error", unit="relative", companion=True,
    settings_key="attributes", settings=_ATTRIBUTES, compute=_attribute("size_error"), needs_ground_truth=False,
))
register_metric(Metric(
    "colour_kept", direction="higher", label="Colour kept", unit="share of frames", fmt=".4f", companion=True,
    settings_key="attributes", settings=_ATTRIBUTES, compute=_attribute("colour_kept"), needs_ground_truth=False,
))
register_metric(Metric(
    # The automatic judge of "abnormal" videos (the paper's Table 2 counted them by hand):
    # cheap, pixel-only, so a companion of every family that lists it.
    "abnormal", label="Abnormal", unit="share of videos", fmt=".3f", companion=True,
    settings_key="abnormal", settings="phybench.scoring.judge.abnormal", compute=_abnormal,
))
_BODIES = "phybench.scoring.learned.bodies"
# Multi-body scenes: every body followed from pixels by the judge's tracker (one segmentation for both).
register_metric(Metric(
    "body_position_error", label="Body position error", unit="world units", companion=True,
    settings_key="bodies", settings=_BODIES, compute=_body_position, details=_body_details,
))
register_metric(Metric(
    "body_angle_error", label="Body angle error", unit="rad", companion=True,
    settings_key="bodies", settings=_BODIES, compute=_body_angle,
))
register_metric(Metric(
    "ssim", direction="higher", label="SSIM", default=True, fmt=".4f",
    settings_key="image", settings=_IMAGE, compute=_frame("ssim"),
))
register_metric(Metric(
    "psnr", direction="higher", label="PSNR", unit="dB", default=True, fmt=".2f",
    settings_key="image", settings=_IMAGE, compute=_frame("psnr"),
))
register_metric(Metric(
    "lpips", label="LPIPS", default=True, settings_key="lpips", settings="phybench.scoring.perceptual.lpips",
    weights="alexnet", batched="phybench.scoring.perceptual.batched:LpipsBatch",  # in batches on a device
    bounds=(0.0, None),  # a distance
))
register_metric(Metric(
    "fvd", kind="set", label="FVD", default=True, settings_key="fvd", settings="phybench.scoring.perceptual.fvd",
    weights="i3d", batched="phybench.scoring.perceptual.batched:FvdBatch",  # features of every video, one distance per group
    # a squared Frechet distance, >= 0 in exact arithmetic; its matrix square root leaves noise of
    # order 1e-4 around 0 when the two sets are the same (the shipped ground-truth rows read -0.0005)
    bounds=(-0.01, None),
))

register_metric(Metric(
    # Law identification (phybench.scoring.learned.law): the family's law fitted with free parameters;
    # the per-video parameters go to the details and the samples sidecar, median / IQR to the summary.
    "law_error", label="Law error", unit="relative", fmt=".3g", companion=True,
    settings_key="law", settings="phybench.scoring.learned.law", compute=_law_error, needs_ground_truth=False,
    details=_law_details, summarise=_law_summary,
))

register_metric(Metric(
    # How two bodies meet (phybench.scoring.physics.contact): gap, overlap, contact time; the law_error's
    # contact aspect and its fallback, and the judge's contact rule, are stated in its block.
    "contact_error", label="Contact error", unit="relative", fmt=".3g", companion=True,
    settings_key="contact", settings="phybench.scoring.physics.contact", compute=_contact_error,
    needs_ground_truth=False, details=_contact_details, bounds=(0.0, None),
))

_PAPER = "phybench.scoring.physics.paper_velocity"
# The paper's own measurement (Figure 3's convention: hard colour masks, px / W, a vanished ball at
# the edge); beside phybench's exact velocity_error, for a number to put next to the paper's.
register_metric(Metric(
    "velocity_error_paper", label="Velocity error, paper's way", unit="units/s (parabola: units)", companion=True,
    settings_key="paper", settings=_PAPER, compute=_paper("x"), needs_ground_truth=False,
))
register_metric(Metric(
    "velocity_error_paper_y", label="Velocity error y, paper's way", unit="units/s (parabola: units)", companion=True,
    settings_key="paper", settings=_PAPER, compute=_paper("y"), needs_ground_truth=False,
))

# The metric whose settings block defines `untrackable` and `excluded` (every video is
# parsed): it is written into every results file, whatever was requested.
TRACKING_METRIC = "velocity_error"


def reported(requested: Sequence[str], family_metrics: Sequence[str]) -> list[str]:
    """The results file's `metrics`: the requested ones, then the family's companions."""
    wanted = list(requested)  # registered: `parse_metrics` checked them
    extra = [m for m in family_metrics if m in METRICS and METRICS.get(m).companion]
    return wanted + [m for m in extra if m not in wanted]


ENTRY_POINT_GROUP = "phybench.metrics"


def load_plugins() -> list[str]:
    """Import every ``phybench.metrics`` entry point (a module that registers metrics); returns the names loaded."""
    from ..registry import load_entry_points

    return load_entry_points(ENTRY_POINT_GROUP, "metric")


load_plugins()
# What a fresh interpreter registers on importing this module: the built-ins and the
# entry points.  `phybench score --workers N` scores in spawned processes, which see only
# these; a metric registered otherwise (a notebook, `temporary_metric`) is scored serially.
_AT_IMPORT: dict[str, Metric] = dict(METRICS.items())


def seen_by_workers(name: str) -> bool:
    """Would a spawned scoring worker have this very metric registered?"""
    return name in METRICS and _AT_IMPORT.get(name) is METRICS.get(name)


@contextlib.contextmanager
def temporary_metric(metric: Metric) -> Iterator[Metric]:
    """Register a metric for a ``with`` block only (tests, notebooks)."""
    register_metric(metric)
    try:
        yield metric
    finally:
        METRICS.unregister(metric.name)

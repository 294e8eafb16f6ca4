"""Reference baselines: valid submissions that bracket what a video model can score.

Each baseline answers one evaluation split with a submission written by
`phybench.submission.write_submission`.  Every baseline but `ground-truth` sees only
what a video model sees: the first `condition_frames` frames of each test video (and
the colours of its balls, see below), never the test row's states.

==================== ==========================================================
ground-truth          the split's own videos: the metric's floor (parser noise)
copy-last             the last condition frame, repeated: a model that learnt nothing
linear-extrapolation  each ball keeps the constant velocity fitted to the
                      condition frames (no gravity, no collisions)
physics-oracle        the initial state read off the condition frames, run through
                      the task's own simulator: a model that learnt the law exactly
nearest-neighbour     the training video whose condition frames are closest in
                      pixels, continued: the paper's "case-based" generalisation
==================== ==========================================================

Colours: the balls' colours (and drawing order) are taken from the row's ``colours``
column.  That is no peek at the answer: a ball's colour is plain to see in frame 0,
and every ball of a task has a fixed colour.  Nothing else of the row is read.

Reading states off pixels (`estimate_initial`): the parser (`phybench.scoring.physics.parse`) gives each
ball's centre and radius per condition frame, to ~1e-4 world units on our renderer.  A
ball that is cut by the image edge in a condition frame (fast or large OOD balls) is
fitted instead: the disc (start, velocity, radius) whose exact pixel coverage best
matches the observed coverage of all condition frames, least squares.  What pixels
cannot tell, no baseline can: a ball seen in only one condition frame has no observable
velocity (the fit returns a guess), and a ball seen in none is left out of the video, so
the scorer counts that video as untrackable.  Measured on the full splits, this is the
only place the physics oracle leaves the floor: collision ood-eval has 385 of 4800
samples with a ball in no condition frame and 39 with a ball in one (id-eval: 1 of 2000);
uniform and parabola have none.

Modules: `estimate` (states off pixels), `videos` (copy-last, linear, oracle), `nearest`
(the nearest-neighbour index); the registry `BASELINES` and `run_baseline` are here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from .._version import __version__
from ..data.frames import decode_video
from ..data.split import SplitError, SplitReader
from ..registry import Registry, RegistryError
from ..submission.writer import submission_meta, write_submission
from ..tasks import family_of
from ..tasks.spec import TaskSpec
from .errors import BaselineError
from .estimate import Estimate, estimate_initial
from .nearest import NN_SIZE, NearestNeighbourIndex, default_cache_dir, nn_features
from .videos import copy_last_video, linear_video, oracle_from_state, oracle_video, row_colours, row_condition
from ..data.documents import Manifest

__all__ = [
    "BASELINES",
    "Baseline",
    "BaselineError",
    "Estimate",
    "NearestNeighbourIndex",
    "copy_last_video",
    "default_cache_dir",
    "estimate_initial",
    "linear_video",
    "nn_features",
    "oracle_video",
    "run_baseline",
]


# ------------------------------------------------------------------ registry and runner
@dataclass
class _Run:
    """What a baseline gets: the split to answer and the options of the run."""

    reader: SplitReader
    train_dir: Path | None
    cache_dir: Path | None
    progress: bool
    model_meta: dict[str, Any] = field(default_factory=dict)  # extra `model` fields, e.g. the training set

    @property
    def spec(self) -> TaskSpec:
        return self.reader.spec

    def bar(self, iterable: Any, desc: str) -> Any:
        from tqdm import tqdm

        return tqdm(iterable, total=len(self.reader), desc=desc, unit="video", disable=not self.progress,
                    mininterval=0.5)

    def inputs(self) -> Iterator[tuple[str, list[tuple[int, int, int]], np.ndarray]]:
        """(sample id, colours, condition frames) per sample: all a baseline may see."""
        for row in self.reader.rows(columns=["sample_id", "colours", "video"]):
            yield row["sample_id"], row_colours(row), row_condition(row, self.spec)


Videos = Iterator[tuple[str, np.ndarray]]


@dataclass(frozen=True)
class Baseline:
    """A reference model: a name, what it does, and how it makes its videos."""

    name: str
    summary: str  # one line: submission.json `notes` and the CLI's help
    make: Callable[[_Run], tuple[dict[str, Any], Videos]]  # -> (sampler settings, videos)
    needs_train: bool = False
    # None when the baseline can answer a task; else why not (e.g. it reads discs off pixels)
    unsupported: Callable[[TaskSpec], str | None] = lambda spec: None


BASELINES: Registry[Baseline] = Registry("baseline")


def _ground_truth(run: _Run) -> tuple[dict[str, Any], Videos]:
    def videos() -> Videos:
        for row in run.bar(run.reader.rows(), "ground-truth"):
            yield row["sample_id"], run.reader.video(row)

    return {}, videos()


def _copy_last(run: _Run) -> tuple[dict[str, Any], Videos]:
    def videos() -> Videos:
        for sample_id, _, frames in run.bar(run.inputs(), "copy-last"):
            yield sample_id, copy_last_video(frames, run.spec.frames)

    return {}, videos()


def _linear(run: _Run) -> tuple[dict[str, Any], Videos]:
    def videos() -> Videos:
        for sample_id, colours, frames in run.bar(run.inputs(), "linear-extrapolation"):
            yield sample_id, linear_video(frames, colours, run.spec)

    return {"fit": "least squares p0 + v t over the condition frames"}, videos()


def _reads_discs(spec: TaskSpec) -> str | None:
    if family_of(spec).object_reader == "discs":
        return None
    return (f"it reads balls off the condition frames, and {spec.name}'s objects are not read back from pixels "
            f"(object reader {family_of(spec).object_reader!r})")


def _oracle(run: _Run) -> tuple[dict[str, Any], Videos]:
    if family_of(run.spec).object_reader != "discs":
        resolution = int(run.reader.manifest["resolution"])

        def from_state() -> Videos:
            for row in run.bar(run.reader.rows(), "physics-oracle"):
                frames = decode_video(row["video"][: run.spec.condition_frames])
                yield row["sample_id"], oracle_from_state(row, run.spec, resolution, frames)

        return {"initial_state": "known: the split's stored frame-0 state (float32), not parsed from pixels",
                "simulator": "phybench.world.simulate.simulate"}, from_state()

    def videos() -> Videos:
        for sample_id, colours, frames in run.bar(run.inputs(), "physics-oracle"):
            yield sample_id, oracle_video(frames, colours, run.spec)

    sampler = {"fit": "least squares p0 + v t - g t^2 / 2 over the condition frames",
               "simulator": "phybench.world.simulate.simulate", "gravity": run.spec.simulator.gravity}
    return sampler, videos()


def _check_train(run: _Run, train: Manifest) -> None:
    test = run.reader.manifest
    here, there = f"{test['task']}/{test['split']}", f"{train['task']}/{train['split']}"
    if train["task"] != test["task"] or train["spec_hash"] != test["spec_hash"]:
        raise BaselineError(
            f"--train-data {run.train_dir} holds {there} (spec {train['spec_hash'][:12]}), but --data "
            f"{run.reader.folder} is {here} (spec {test['spec_hash'][:12]}): nearest-neighbour needs a training "
            f"split of the same task, e.g. `phybench generate {test['task']} --split {run.spec.train_splits[0]} --out DIR`")
    if not run.spec.is_training(train["split"]):
        raise BaselineError(
            f"--train-data {run.train_dir} holds {there}, an evaluation split; give a training split "
            f"({', '.join(run.spec.train_splits)}), e.g. `phybench generate {test['task']} --split "
            f"{run.spec.train_splits[0]} --out DIR`")


def _nearest(run: _Run) -> tuple[dict[str, Any], Videos]:
    if run.train_dir is None:
        raise BaselineError(
            "nearest-neighbour needs a training split to retrieve from: pass --train-data DIR, made with e.g. "
            f"`phybench generate {run.spec.name} --split {run.spec.train_splits[0]} --out DIR`")
    try:
        train = SplitReader(run.train_dir).manifest
    except SplitError as exc:
        raise BaselineError(f"--train-data: {exc}") from None
    _check_train(run, train)
    index = NearestNeighbourIndex(run.train_dir, cache_dir=run.cache_dir, progress=run.progress)
    ids, queries = [], []
    for sample_id, _, frames in run.bar(run.inputs(), "nearest-neighbour: read"):
        ids.append(sample_id)
        queries.append(nn_features(frames))
    winners, _ = index.search(np.stack(queries), progress=run.progress)
    resolution = int(run.reader.manifest["resolution"])
    cf = run.spec.condition_frames

    def videos() -> Videos:
        for (sample_id, _, frames), winner in zip(run.bar(run.inputs(), "nearest-neighbour: write"), winners, strict=True):
            video = index.video(int(winner), resolution)
            video[:cf] = frames  # the submission's condition frames are the test's own
            yield sample_id, video

    run.model_meta = {"train_split": train["split"], "train_size": len(index)}
    sampler = {"train_split": train["split"], "train_split_hash": train["split_hash"],
               "train_samples": len(index), "features": f"ink (255 - luma), {NN_SIZE}x{NN_SIZE} area mean, "
               f"{cf} condition frames", "distance": "exact L2"}
    return sampler, videos()


for _b in (
    Baseline("ground-truth", "the split's own videos: the metric's floor", _ground_truth),
    Baseline("copy-last", "the last condition frame repeated: nothing moves", _copy_last),
    Baseline("linear-extrapolation", "each ball keeps the constant velocity fitted to the condition frames "
             "(no gravity, no collisions)", _linear, unsupported=_reads_discs),
    Baseline("physics-oracle", "the initial state read off the condition frames, simulated with the task's "
             "own laws", _oracle),
    Baseline("nearest-neighbour", "the training video whose condition frames are nearest in pixels (L2), "
             "continued", _nearest, needs_train=True),
):
    BASELINES.register(_b.name, _b)


def run_baseline(
    name: str,
    split_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    train_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    fmt: str = "npz",
    model_name: str | None = None,
) -> Path:
    """Write baseline `name`'s submission for the evaluation split in `split_dir`.

    train_dir: a training split of the same task (nearest-neighbour only).
    cache_dir: where nearest-neighbour caches its index (default `default_cache_dir()`).
    model_name: the submission's model name (default `name`), to show two runs of one
    baseline side by side (e.g. nearest-neighbour over 6 and over 60 templates).
    The submission is written atomically by `write_submission`; the same inputs give
    the same bytes.  Raises BaselineError on anything that prevents the run.
    """
    try:
        baseline = BASELINES.get(name)
    except RegistryError as exc:
        raise BaselineError(str(exc)) from None
    try:
        reader = SplitReader(split_dir)
    except SplitError as exc:
        raise BaselineError(f"--data: {exc}") from None
    manifest = reader.manifest
    if reader.spec.is_training(manifest["split"]):
        raise BaselineError(f"{split_dir} is {manifest['task']}/{manifest['split']}, a training split; baselines "
                            f"answer evaluation splits ({', '.join(reader.spec.eval_splits)})")
    if manifest["spec_hash"] != reader.spec.spec_hash():
        raise BaselineError(f"{split_dir} was made from {manifest['task']} spec {manifest['spec_hash'][:12]}, but "
                            f"this phybench registers {reader.spec.spec_hash()[:12]}: regenerate the split")
    why_not = baseline.unsupported(reader.spec)
    if why_not:
        raise BaselineError(f"{name} cannot answer {manifest['task']}: {why_not}")
    if train_dir is not None and not baseline.needs_train:
        raise BaselineError(f"{name} does not use training data; drop --train-data")
    if Path(out_dir).exists():
        raise BaselineError(f"{out_dir} exists; a submission is never overwritten: choose a new folder or remove it")
    run = _Run(reader, Path(train_dir) if train_dir is not None else None,
               Path(cache_dir) if cache_dir is not None else None, progress)
    sampler, videos = baseline.make(run)
    meta = submission_meta(manifest, model_name or name, sampler={"name": f"baseline:{name}", **sampler},
                           notes=baseline.summary)
    meta["model"]["version"] = __version__
    meta["model"].update(run.model_meta)
    return write_submission(out_dir, meta, videos, fmt=fmt)

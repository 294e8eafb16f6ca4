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

Reading states off pixels (`estimate_initial`): the parser (`phybench.scoring.parse`) gives each
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
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import __version__
from .io import atomic_save_npy
from .data.frames import decode_video
from .scoring.parse import MISSING, PixelMapping, coverage, parse_video
from .registry import Registry, RegistryError
from .world.render import shape_coverage
from .world.scene import Disc
from .world.render import render as render_scene
from .world.scene import Scene
from .tasks.spec import TaskSpec
from .data.split import SplitError, SplitReader, render_row, row_scene, sample_video
from .tasks import family_of
from .submission.writer import submission_meta, write_submission

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

NN_SIZE = 32  # pixels per side of the nearest-neighbour features
NN_CANDIDATES = 8  # float32 shortlist per query, re-ranked exactly in integers
NN_CHUNK = 4096  # training samples per float32 block (~50 MB at 32 px)
NN_FEATURE_VERSION = 1  # bump when the features change: the cache key holds it


class BaselineError(Exception):
    """A baseline cannot run on these inputs; the message says why and what to do."""


# ------------------------------------------------------------------ reading states off pixels
@dataclass(frozen=True)
class Estimate:
    """Initial state (t = 0) of each ball, read from the condition frames.

    positions, velocities: (B, 2) world units, world units / s; radii: (B,) world
    units.  found: (B,) False for a ball seen in no condition frame (its values are
    NaN).  fitted: (B,) True where the pixel-coverage fit replaced the parser's
    estimate (a ball cut by the image edge in some condition frame).
    """

    positions: np.ndarray
    velocities: np.ndarray
    radii: np.ndarray
    found: np.ndarray
    fitted: np.ndarray


def _fit_line(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares y = y0 + v t over frames: y (n, 2), t (n,) -> y0 (2,), v (2,)."""
    if len(t) == 1:
        return y[0], np.zeros(2)
    design = np.stack([np.ones_like(t), t], axis=1)  # (n, 2)
    (y0, v), *_ = np.linalg.lstsq(design, y, rcond=None)
    return y0, v


def _disc_image(position: np.ndarray, radius: float, resolution: int, world_size: float,
                window: tuple[int, int, int, int]) -> np.ndarray:
    """Exact coverage (T, h, w) of a disc at positions (T, 2) in the pixel window
    (row0, col0, h, w) of the image."""
    top, left, h, w = window
    poses = np.zeros((len(position), 3))
    poses[:, :2] = position
    image = np.zeros((len(position), h, w))
    drawn = shape_coverage(Disc(radius), poses, resolution, world_size)
    if drawn is not None:
        cover, row0, col0 = drawn  # (T, ph, pw), (T,), (T,)
        ph, pw = cover.shape[1:]
        for k in range(len(position)):
            r0, c0 = max(row0[k], top), max(col0[k], left)
            r1, c1 = min(row0[k] + ph, top + h), min(col0[k] + pw, left + w)
            if r0 < r1 and c0 < c1:
                image[k, r0 - top : r1 - top, c0 - left : c1 - left] = \
                    cover[k, r0 - row0[k] : r1 - row0[k], c0 - col0[k] : c1 - col0[k]]
    return image


def _fit_disc(
    observed: np.ndarray,
    t: np.ndarray,
    accel: np.ndarray,
    start: np.ndarray,
    world_size: float,
) -> np.ndarray:
    """Least-squares (x0, y0, vx, vy, r) of a disc whose coverage over frames at times
    t (T,) best matches `observed` (T, H, W); start: the initial guess (5,).

    The coverage is the renderer's exact disc area per pixel, smooth in all five
    parameters, so a partial view at the image edge still pins the centre and radius.
    Only the pixels near what was observed (its bounding box over all frames, plus a
    margin) enter the fit.
    """
    from scipy.optimize import least_squares

    resolution = observed.shape[1]
    rows, cols = np.flatnonzero(observed.any(axis=(0, 2))), np.flatnonzero(observed.any(axis=(0, 1)))
    margin = 4  # pixels
    top, left = max(rows[0] - margin, 0), max(cols[0] - margin, 0)
    bottom, right = min(rows[-1] + 1 + margin, resolution), min(cols[-1] + 1 + margin, resolution)
    window = (int(top), int(left), int(bottom - top), int(right - left))
    target = observed[:, top:bottom, left:right].astype(np.float64).ravel()
    gravity_term = 0.5 * accel[None, :] * t[:, None] ** 2  # (T, 2)

    def residual(p: np.ndarray) -> np.ndarray:
        pos = p[None, :2] + p[None, 2:4] * t[:, None] + gravity_term  # (T, 2)
        return _disc_image(pos, abs(float(p[4])), resolution, world_size, window).ravel() - target

    # Levenberg-Marquardt (MINPACK, QR): ~10x faster than the bounded "trf" on these
    # tall Jacobians; the radius enters as |r|, so no bound is needed.
    fit = least_squares(residual, start, method="lm", x_scale=[1, 1, 10, 10, 1], diff_step=1e-6,
                        xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=400)
    x = fit.x.copy()
    x[4] = abs(x[4])
    return x


def estimate_initial(
    frames: np.ndarray,
    colours: Sequence[tuple[int, int, int]],
    *,
    gravity: float,
    frame_interval: float,
    world_size: float = 10.0,
) -> Estimate:
    """Each ball's position and velocity at frame 0 and its radius, from frames alone.

    frames: uint8 (n, H, W, 3), the condition frames (frame k at t = k frame_interval);
    colours: one per ball, in drawing order.  gravity: world units / s^2 pointing down
    that the fit assumes (the physics oracle knows the task's; 0 fits straight lines).
    Each ball is fitted by least squares to p(t) = p0 + v t - g t^2 / 2 (y only) over
    the frames it was found in; exact for exact positions.
    """
    parsed = parse_video(frames, colours, PixelMapping("tile", world_size))
    n, balls = parsed.radii.shape
    t = np.arange(n) * frame_interval  # (n,) seconds
    accel = np.array([0.0, -gravity])  # world units / s^2
    positions = np.full((balls, 2), np.nan)
    velocities = np.full((balls, 2), np.nan)
    radii = np.full(balls, np.nan)
    found = np.zeros(balls, dtype=bool)
    fitted = np.zeros(balls, dtype=bool)
    observed = None
    for b in range(balls):
        seen = (parsed.flags[:, b] & MISSING) == 0
        if not seen.any():
            continue
        found[b] = True
        free = parsed.positions[seen, b] - 0.5 * accel[None, :] * t[seen, None] ** 2  # (m, 2)
        p0, v = _fit_line(t[seen], free)
        clean = parsed.flags[:, b] == 0
        if clean.all():
            positions[b], velocities[b], radii[b] = p0, v, float(np.median(parsed.radii[:, b]))
            continue
        # Cut by the image edge (or lost) in some frame: fit the disc to the pixels.
        if observed is None:
            observed = coverage(frames, colours)  # (B, n, H, W)
        pixel = world_size / frames.shape[1]  # world units
        start = np.array([*p0, *v, max(float(np.nanmax(parsed.radii[seen, b])), pixel)])
        p = _fit_disc(observed[b], t, accel, start, world_size)
        positions[b], velocities[b], radii[b] = p[:2], p[2:4], p[4]
        fitted[b] = True
    return Estimate(positions, velocities, radii, found, fitted)


# ------------------------------------------------------------------ one video each
def _colours(row: dict[str, Any]) -> list[tuple[int, int, int]]:
    return [tuple(int(c) for c in rgb) for rgb in np.asarray(row["colours"])]


def _condition(row: dict[str, Any], spec: TaskSpec) -> np.ndarray:
    """uint8 (condition_frames, H, W, 3): only those PNGs are decoded."""
    return decode_video(row["video"][: spec.condition_frames])


def copy_last_video(frames: np.ndarray, num_frames: int) -> np.ndarray:
    """The condition frames, then the last of them repeated: (num_frames, H, W, 3)."""
    return np.concatenate([frames, np.repeat(frames[-1:], num_frames - len(frames), axis=0)])


def _render(positions: np.ndarray, est: Estimate, colours: Sequence[tuple[int, int, int]],
            frames: np.ndarray) -> np.ndarray:
    """Render the found balls at positions (T, B, 2); the condition frames kept as given."""
    keep = est.found
    scene = Scene.discs(positions[:, keep], None, est.radii[keep], np.array(colours, dtype=np.uint8).reshape(-1, 3)[keep])
    video = render_scene(scene, frames.shape[1])
    video[: len(frames)] = frames
    return video


def linear_video(frames: np.ndarray, colours: Sequence[tuple[int, int, int]], spec: TaskSpec) -> np.ndarray:
    """Each ball moves on at its fitted constant velocity, through the others."""
    est = estimate_initial(frames, colours, gravity=0.0, frame_interval=spec.frame_interval,
                           world_size=spec.world_size)
    if not est.found.any():
        return copy_last_video(frames, spec.frames)
    t = np.arange(spec.frames) * spec.frame_interval  # (T,) seconds
    positions = est.positions[None] + est.velocities[None] * t[:, None, None]  # (T, B, 2)
    return _render(positions, est, colours, frames)


def oracle_video(frames: np.ndarray, colours: Sequence[tuple[int, int, int]], spec: TaskSpec) -> np.ndarray:
    """The initial state read off the frames, run through the task's simulator."""
    est = estimate_initial(frames, colours, gravity=spec.simulator.gravity, frame_interval=spec.frame_interval,
                           world_size=spec.world_size)
    if not est.found.any():
        return copy_last_video(frames, spec.frames)
    keep = est.found
    from .world.simulate import simulate  # Box2D: only this baseline needs it

    initial = Scene.discs(est.positions[keep], est.velocities[keep], est.radii[keep],
                          np.array(colours, dtype=np.uint8).reshape(-1, 3)[keep])
    states = simulate(initial, spec.simulator, spec.frames, spec.frame_interval)
    positions = np.full((spec.frames, len(keep), 2), np.nan)
    positions[:, keep] = states.positions
    return _render(positions, est, colours, frames)


def oracle_from_state(row: dict[str, Any], spec: TaskSpec, resolution: int, frames: np.ndarray) -> np.ndarray:
    """The row's stored frame-0 state (float32, as stored) run through the task's simulator.

    For families whose objects cannot be read back from pixels (shared colours, jars,
    rotated bars).  Objects start at rest there, so frame 0 is the whole initial state;
    the only difference from the ground truth is the float32 rounding of that state, so
    this baseline measures how far the scenes amplify a 1e-7 perturbation."""
    from .world.simulate import simulate  # Box2D: only this baseline needs it

    initial = row_scene(row).frames(slice(0, 1))
    states = simulate(initial, spec.simulator, spec.frames, spec.frame_interval)
    video = render_scene(states, resolution)
    video[: len(frames)] = frames
    return video


# ------------------------------------------------------------------ nearest neighbour
def nn_features(frames: np.ndarray, size: int = NN_SIZE) -> np.ndarray:
    """uint8 (..., n * size * size) "ink" features of condition frames (..., n, H, W, 3).

    Ink is 255 minus the BT.601 luma, so the white background is 0; each size x size
    cell is the area mean of its (H / size)^2 pixels, rounded.  Integer arithmetic
    throughout (channel sums per cell first: the luma is linear), so the features are
    the same bytes on every machine.
    """
    frames = np.asarray(frames, dtype=np.uint8)
    height = frames.shape[-3]
    if height % size or frames.shape[-2] != height:
        raise BaselineError(f"nearest-neighbour features need square frames divisible by {size} px, "
                            f"got {frames.shape[-3:-1]}")
    block = height // size
    lead = frames.shape[:-3]  # (..., n)
    wide = np.uint16 if block * block * 255 <= np.iinfo(np.uint16).max else np.int64
    rows = frames.reshape(*lead, size, block, size * block * 3)
    strip = rows[..., 0, :].astype(wide)  # (..., size, W * 3): sums over each cell's rows
    for i in range(1, block):
        strip += rows[..., i, :]
    cols = strip.reshape(*lead, size, size, block, 3)
    sums = cols[..., 0, :].copy()  # (..., size, size, 3): channel sums per cell
    for i in range(1, block):
        sums += cols[..., i, :]
    sums = sums.astype(np.int64)
    denominator = 1000 * block * block
    ink = 255 * denominator - (299 * sums[..., 0] + 587 * sums[..., 1] + 114 * sums[..., 2])  # x 1000
    cells = (ink + denominator // 2) // denominator
    return cells.astype(np.uint8).reshape(*frames.shape[:-4], -1)


def default_cache_dir() -> Path:
    """$PHYBENCH_CACHE_DIR, else $XDG_CACHE_HOME/phybench, else ~/.cache/phybench."""
    from .io import cache_dir

    return cache_dir()


class NearestNeighbourIndex:
    """Exact L2 nearest neighbour over a training split's condition frames, in pixels.

    Features (`nn_features`) of every training sample's condition frames are built once
    (rendering only those frames) and cached as .npy under
    ``cache_dir/nn-index/``, keyed by the training split hash, resolution and feature
    settings.  A search computes ||q||^2 + ||x||^2 - 2 q.x in float32 by matrix
    products over blocks of the index, keeps a shortlist per query, and re-ranks it
    exactly in integers (ties go to the lower training index), so the answer does
    not depend on the BLAS.
    """

    def __init__(self, train_dir: str | os.PathLike[str], *, size: int = NN_SIZE,
                 cache_dir: str | os.PathLike[str] | None = None, progress: bool = True) -> None:
        from tqdm import tqdm

        self.reader = SplitReader(train_dir)
        self.manifest = self.reader.manifest
        self.size = size
        import pyarrow.parquet as pq

        stored = set(pq.read_schema(self.reader.folder / self.manifest["shards"][0]["file"]).names)
        wanted = ["sample_id", "index", "positions", "velocities", "radii", "colours", "angles", "bodies"]
        self.rows = list(self.reader.rows(columns=[c for c in wanted if c in stored]))
        cf = int(self.manifest["condition_frames"])
        key = (f"{self.manifest['split_hash'][:20]}-{self.manifest['resolution']}px-{cf}f-"
               f"{size}s-v{NN_FEATURE_VERSION}")
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_file = folder / "nn-index" / f"{self.manifest['task']}-{self.manifest['split']}-{key}.npy"
        dim = cf * size * size
        self.built = False
        features = None
        if self.cache_file.is_file():
            try:
                features = np.load(self.cache_file, allow_pickle=False)
            except (OSError, ValueError):
                features = None  # a damaged cache file is rebuilt
            if features is not None and (features.shape != (len(self.rows), dim) or features.dtype != np.uint8):
                features = None
        if features is None:
            resolution = int(self.manifest["resolution"])
            features = np.empty((len(self.rows), dim), dtype=np.uint8)
            bar = tqdm(self.rows, desc=f"index {self.manifest['task']}/{self.manifest['split']}", unit="sample",
                       disable=not progress, mininterval=0.5)
            batch = np.empty((256, cf, resolution, resolution, 3), dtype=np.uint8)  # features in batches
            for i, row in enumerate(bar):
                batch[i % len(batch)] = self._render(row, resolution, slice(0, cf))  # only the condition frames
                if i % len(batch) == len(batch) - 1 or i == len(self.rows) - 1:
                    start = i - i % len(batch)
                    features[start : i + 1] = nn_features(batch[: i + 1 - start], size)
            atomic_save_npy(self.cache_file, features)
            self.built = True
        self.features = features
        self.norms = np.einsum("nd,nd->n", features, features, dtype=np.int64)  # (N,) exact

    def __len__(self) -> int:
        return len(self.rows)

    def search(self, queries: np.ndarray, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Nearest training sample of each query: indices (Q,) int64, squared L2 (Q,) int64.

        queries: uint8 (Q, D) from `nn_features`.
        """
        from tqdm import tqdm

        queries = np.asarray(queries, dtype=np.uint8)
        q = queries.astype(np.float32)  # (Q, D)
        q_norm = (q * q).sum(axis=1)  # (Q,)
        n = len(self.rows)
        k = min(NN_CANDIDATES, n)
        best_d = np.full((len(q), k), np.inf, dtype=np.float32)  # (Q, k) shortlist
        best_i = np.zeros((len(q), k), dtype=np.int64)
        starts = range(0, n, NN_CHUNK)
        for start in tqdm(starts, desc="search", unit="block", disable=not progress or len(starts) < 2):
            block = self.features[start : start + NN_CHUNK].astype(np.float32)  # (C, D), once per block
            x_norm = self.norms[start : start + len(block)].astype(np.float32)  # (C,)
            kk = min(k, len(block))
            for a in range(0, len(q), 1024):  # (1024, C) distances at a time: ~16 MB
                d = q_norm[a : a + 1024, None] + x_norm[None, :] - 2.0 * (q[a : a + 1024] @ block.T)
                top = np.argpartition(d, kk - 1, axis=1)[:, :kk]  # (q, kk) this block's best
                both_d = np.concatenate([best_d[a : a + 1024], np.take_along_axis(d, top, axis=1)], axis=1)
                both_i = np.concatenate([best_i[a : a + 1024], top + start], axis=1)
                pick = np.argpartition(both_d, k - 1, axis=1)[:, :k]
                best_d[a : a + 1024] = np.take_along_axis(both_d, pick, axis=1)
                best_i[a : a + 1024] = np.take_along_axis(both_i, pick, axis=1)
        # Exact integer re-rank of the shortlist; ties go to the lower index.
        exact = np.empty(best_i.shape, dtype=np.int64)  # (Q, k)
        for a in range(0, len(q), 256):  # bounded memory: 256 x k x D int32
            cand = self.features[best_i[a : a + 256]].astype(np.int32)  # (q, k, D)
            diff = cand - queries[a : a + 256, None, :].astype(np.int32)
            exact[a : a + 256] = np.einsum("qkd,qkd->qk", diff, diff, dtype=np.int64)
        key = exact * n + best_i  # distance first, then index: < 2^63 for any split size
        o = key.argmin(axis=1)[:, None]
        winner = np.take_along_axis(best_i, o, axis=1)[:, 0]
        distance = np.take_along_axis(exact, o, axis=1)[:, 0]
        return winner, distance

    def _render(self, row: dict[str, Any], resolution: int, frames: slice | None = None) -> np.ndarray:
        if row.get("positions") is None:  # a parameter-only training row: simulate it
            return sample_video(self.reader.plan, int(row["index"]), frames)
        return render_row(row, resolution, frames)

    def video(self, index: int, resolution: int) -> np.ndarray:
        """The full training video of sample `index`, rendered at `resolution`."""
        return self._render(self.rows[index], resolution)


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
            yield row["sample_id"], _colours(row), _condition(row, self.spec)


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


def _check_train(run: _Run, train: dict[str, Any]) -> None:
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
        for (sample_id, _, frames), winner in zip(run.bar(run.inputs(), "nearest-neighbour: write"), winners):
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
    fmt: str = "npy",
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

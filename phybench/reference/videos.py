"""One video each: copy-last, linear extrapolation and the physics oracle, rendered from estimated states."""
from __future__ import annotations

from typing import Any, Sequence
import numpy as np
from ..data.frames import decode_video
from ..world.render import render as render_scene
from ..world.scene import Scene, rgb
from ..tasks.spec import TaskSpec
from ..data.split import row_scene
from .estimate import Estimate, estimate_initial
from ..data.documents import SplitRow


# ------------------------------------------------------------------ one video each
def row_colours(row: SplitRow) -> list[tuple[int, int, int]]:
    return [rgb(c) for c in np.asarray(row["colours"])]


def row_condition(row: SplitRow, spec: TaskSpec) -> np.ndarray:
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
    from ..world.simulate import simulate  # Box2D: only this baseline needs it

    initial = Scene.discs(est.positions[keep], est.velocities[keep], est.radii[keep],
                          np.array(colours, dtype=np.uint8).reshape(-1, 3)[keep])
    states = simulate(initial, spec.simulator, spec.frames, spec.frame_interval)
    assert isinstance(states, Scene)  # no record_contacts: the scene alone
    positions = np.full((spec.frames, len(keep), 2), np.nan)
    positions[:, keep] = states.positions
    return _render(positions, est, colours, frames)


def oracle_from_state(row: dict[str, Any], spec: TaskSpec, resolution: int, frames: np.ndarray) -> np.ndarray:
    """The row's stored frame-0 state (float32, as stored) run through the task's simulator.

    For families whose objects cannot be read back from pixels (shared colours, jars,
    rotated bars).  Objects start at rest there, so frame 0 is the whole initial state;
    the only difference from the ground truth is the float32 rounding of that state, so
    this baseline measures how far the scenes amplify a 1e-7 perturbation."""
    from ..world.simulate import simulate  # Box2D: only this baseline needs it

    initial = row_scene(row).frames(slice(0, 1))
    states = simulate(initial, spec.simulator, spec.frames, spec.frame_interval)
    assert isinstance(states, Scene)  # no record_contacts: the scene alone
    video = render_scene(states, resolution)
    video[: len(frames)] = frames
    return video

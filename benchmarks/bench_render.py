"""Throughput of `phybench.world.render.render` in videos per second.

Scenes are built directly from random poses (no simulator: this measures the
renderer alone, and depends on nothing in phybench but `scene`):

* uniform: one red disc, radius in [0.7, 1.5] world units, moving in a straight line
  at a random speed, 32 frames; at 128 px and at 256 px;
* collision: a red and a blue disc approaching each other along x at 128 px, their
  paths close enough that their patches overlap near the middle of the video.

Usage: python benchmarks/bench_render.py [--n 2000] [--frames 32] [--seed 0]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from phybench.world.render import render
from phybench.world.scene import BLUE, RED, WORLD_SIZE, Body, Disc, Scene

FPS = 8.0  # frames per simulated second; only sets how far a disc moves per frame


def uniform_scenes(rng: np.random.Generator, n: int, frames: int) -> list[Scene]:
    """One red disc per scene on a straight-line trajectory, random sub-pixel poses."""
    scenes = []
    t = np.arange(frames) / FPS  # (T,)
    for _ in range(n):
        radius = rng.uniform(0.7, 1.5)
        start = rng.uniform(radius, WORLD_SIZE - radius, size=2)
        speed = rng.uniform(0.5, 2.5) * rng.choice([-1.0, 1.0])
        poses = np.zeros((frames, 1, 3))  # (T, B, 3)
        poses[:, 0, 0] = start[0] + speed * t
        poses[:, 0, 1] = start[1]
        scenes.append(Scene((Body(Disc(radius), RED),), poses))
    return scenes


def collision_scenes(rng: np.random.Generator, n: int, frames: int) -> list[Scene]:
    """A red disc and a blue disc moving towards each other, overlapping mid-video."""
    scenes = []
    t = np.arange(frames) / FPS
    duration = (frames - 1) / FPS
    for _ in range(n):
        r1, r2 = rng.uniform(0.7, 1.5, size=2)
        y = rng.uniform(2.0, 8.0)
        meet = rng.uniform(4.0, 6.0)
        v1, v2 = rng.uniform(0.5, 2.0, size=2)
        poses = np.zeros((frames, 2, 3))
        poses[:, 0, 0] = meet - r1 - v1 * (duration / 2 - t)
        poses[:, 1, 0] = meet + r2 + v2 * (duration / 2 - t)
        poses[:, 0, 1] = y
        poses[:, 1, 1] = y + rng.uniform(-0.5, 0.5)
        bodies = (Body(Disc(r1), RED), Body(Disc(r2), BLUE))
        scenes.append(Scene(bodies, poses))
    return scenes


def videos_per_second(scenes: list[Scene], resolution: int, repeats: int = 3) -> float:
    """Best of `repeats` timed passes over `scenes` (after one untimed warm-up)."""
    for scene in scenes[: min(len(scenes), 50)]:
        render(scene, resolution)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for scene in scenes:
            render(scene, resolution)
        best = min(best, time.perf_counter() - start)
    return len(scenes) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="scenes per case")
    parser.add_argument("--frames", type=int, default=32, help="frames per video")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes; best is kept")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    uniform = uniform_scenes(rng, args.n, args.frames)
    collision = collision_scenes(rng, args.n, args.frames)
    cases = [
        ("uniform 1 disc", uniform, 128),
        ("uniform 1 disc", uniform, 256),
        ("collision 2 discs", collision, 128),
    ]
    print(f"n={args.n} frames={args.frames} seed={args.seed}")
    for name, scenes, resolution in cases:
        rate = videos_per_second(scenes, resolution, args.repeats)
        print(f"{name:<18} {resolution:>4} px  {rate:10.1f} videos/s  "
              f"{1e3 / rate:7.3f} ms/video")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

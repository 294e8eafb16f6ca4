"""Per-video sampling noise: each video's noise from (the run's seed, the video's own condition frames).

Why per video, and why this hash: the samplers used to seed one generator per *batch* from
``seed * 2**32 + digest[:4]`` of the whole batch's condition frames.  Two things went wrong
(issue 46): the CPU generator (mt19937) keeps only the low 32 bits of a seed, so the seed's
part was dropped and ``--seed 1`` gave the bytes of ``--seed 0``; and a video's noise depended
on which other videos shared its batch, so a batch of 4 and a batch of 50 gave different
videos.  Here every video gets its own generator, seeded with 63 bits of
SHA-256(domain, the run's seed, the video's condition frames with their shape): every bit of
the run's seed and of the video's identity goes through the hash, so whatever bits a
generator keeps (32 on the CPU, 64 on CUDA) depend on all of them.  The identity is the
video's own condition frames (uint8), which every path has (`phybench run`'s `generate` sees
no sample id), so the same checkpoint and seed give the same video through any command and
any batching.  Generators are CPU generators and the noise is moved to the model's device, so
the noise does not depend on the device either.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import torch

NOISE_SEED_VERSION = b"phybench-video-noise-v1"  # in the hash: a change of recipe changes every video's noise
# Torch threads of CPU sampling.  Each video is rolled out alone (a layer's float sums depend on its
# batch); one video is too little work to split across threads (measured on 2 loaded cores, framear
# 48 px: 16 single-video calls took 0.08 CPU-s on 1 thread, 5.8 CPU-s on 2, spinning at barriers),
# and one thread also makes the bytes independent of the machine's thread count.
SAMPLE_THREADS = 1


def video_seed(seed: int, condition: np.ndarray) -> int:
    """A 63-bit generator seed from the run's seed and one video's uint8 condition frames (c, H, W, 3)."""
    arr = np.ascontiguousarray(condition)
    h = hashlib.sha256(NOISE_SEED_VERSION + b"\0" + str(int(seed)).encode("ascii") + b"\0"
                       + f"{arr.dtype.str} {'x'.join(map(str, arr.shape))}".encode("ascii") + b"\0")
    h.update(arr.tobytes())
    return int.from_bytes(h.digest()[:8], "little") >> 1


def video_generators(seed: int, condition: np.ndarray) -> list[torch.Generator]:
    """One CPU generator per video of a batch of condition frames (B, c, H, W, 3)."""
    return [torch.Generator().manual_seed(video_seed(seed, v)) for v in np.asarray(condition)]


def batch_noise(shape: Sequence[int], generator: torch.Generator | Sequence[torch.Generator] | None,
                device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Gaussian noise of `shape` (batch first).  A list of generators draws row i from generator i
    (on the CPU, then moved to `device`), so a row's noise does not depend on the others; a single
    generator (or None) draws the whole tensor as `torch.randn` does (the trainers' streams)."""
    if generator is None or isinstance(generator, torch.Generator):
        return torch.randn(tuple(shape), generator=generator, device=device, dtype=dtype)
    if len(generator) != shape[0]:
        raise ValueError(f"{len(generator)} generators for a batch of {shape[0]}")
    rows = [torch.randn(tuple(shape[1:]), generator=g, dtype=dtype) for g in generator]
    out = torch.stack(rows)
    return out if device is None else out.to(device)


@contextmanager
def sampling_threads() -> Iterator[int]:
    """Run CPU sampling on `SAMPLE_THREADS` torch threads, then restore the count (yields the count used)."""
    before = torch.get_num_threads()
    torch.set_num_threads(SAMPLE_THREADS)
    try:
        yield SAMPLE_THREADS
    finally:
        torch.set_num_threads(before)

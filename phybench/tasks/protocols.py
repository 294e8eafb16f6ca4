"""Evaluation protocols: which samples of each evaluation split an official result is on.

A protocol is data, like a task: a name, a version and a rule for the number of samples of
each evaluation split.  `full` is every sample; `lite` is the first N (a fixed, stratified
subset: the first N samples of an evaluation split are spread over the whole split, and that
subset has its own split hash), small enough for a CPU CI job: N = the family's `lite_size`
(200; 64 for the 256 px combinatorial scenes, whose set metric costs ~3 s a video on 2 cores).
Anything else (`--limit N`) is a debugging subset, and the leaderboard labels it so.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry
from .family import family_of, get_task
from .spec import TaskSpec


@dataclass(frozen=True)
class Protocol:
    name: str
    version: int
    lite: bool  # True: the family's `lite_size` samples per evaluation split; False: every sample
    description: str

    def size(self, spec: TaskSpec, split: str) -> int:
        full = spec.split_size(split)
        return min(family_of(spec).lite_size, full) if self.lite else full


PROTOCOLS: Registry[Protocol] = Registry("protocol")
PROTOCOLS.register("full", Protocol("full", 1, False, "every sample of every evaluation split"))
PROTOCOLS.register("lite", Protocol("lite", 1, True, "the first lite_size samples of each evaluation split (200 "
                                                     "unless the family says fewer), spread over the split: "
                                                     "fits a CPU CI job"))


def protocol_of(task: str, num_samples: int, full_size: int) -> str:
    """The protocol a split of `num_samples` out of `full_size` is on, or 'limit N' (debugging)."""
    try:
        lite = min(family_of(get_task(task)).lite_size, full_size)
    except Exception:  # an unregistered task: the leaderboard refuses it with its own reason
        lite = None
    if num_samples == full_size:
        return "full"
    if num_samples == lite:
        return "lite"
    return f"limit {num_samples}"

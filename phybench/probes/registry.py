"""The probe registry: a probe is a task family's analysis, its summary, its text and its page section.

Each probe module (`phybench.probes.priority`, ...) registers its family and its `Probe`
itself; `phybench analyze`, the leaderboard's Probes page and the results-file checks read
this registry, so adding a probe is one file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..registry import Registry

SCHEMA = "phybench.probe-analysis"
SCHEMA_VERSION = 1


class ProbeError(Exception):
    """A submission, split or results file the analysis cannot use (a user error)."""


@dataclass(frozen=True)
class Probe:
    """One probe's analysis: a submission on a split -> results; results files -> a summary."""

    name: str
    description: str
    # (SplitReader, Submission, progress, options) -> results; options: e.g. {"train_split": ...}
    analyse: Callable[[Any, Any, bool, dict[str, Any]], dict[str, Any]]
    summarise: Callable[[list[dict[str, Any]]], dict[str, Any]]  # results files -> summary
    render: Callable[[dict[str, Any]], str]  # summary -> text for the terminal
    # {model: summary} -> HTML lines of the probe's section on probes.html (None: the text, preformatted)
    section: Callable[[dict[str, dict[str, Any]]], list[str]] | None = None
    help: str = ""  # one line for `phybench analyze --help`


PROBES: Registry[Probe] = Registry("probe")


def register_probe(probe: Probe) -> Probe:
    return PROBES.register(probe.name, probe)

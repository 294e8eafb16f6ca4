"""The task registry: task families (plug-ins) and the tasks they define.

Built-in families register on import, one module each (`uniform`, `parabola`,
`collision`, `combinatorial`, and the generalisation probes' families in `probe_families`);
external packages add theirs through the ``phybench.families`` entry point group.  See
docs/adding-a-task.md.  Nothing here imports a probe's analysis (`phybench.probes`, above
the scorer).
"""
from __future__ import annotations

from .family import (
    FAMILIES,
    TASKS,
    Placement,
    TaskFamily,
    family_of,
    get_task,
    load_plugins,
    register_family,
    register_task,
    temporary_task,
)
from . import uniform, parabola, collision, combinatorial  # noqa: E402,F401  built-in families register here
# the generalisation probes' families (section 5); their analyses are in `phybench.probes`, above the scorer
from . import probe_families  # noqa: E402,F401

load_plugins()

__all__ = [
    "FAMILIES",
    "TASKS",
    "Placement",
    "TaskFamily",
    "family_of",
    "get_task",
    "load_plugins",
    "register_family",
    "register_task",
    "temporary_task",
]

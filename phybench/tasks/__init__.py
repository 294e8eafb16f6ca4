"""The task registry: task families (plug-ins) and the tasks they define.

Built-in families register on import, one module each (`uniform`, `parabola`,
`collision`, `combinatorial`); external packages add theirs through the ``phybench.families`` entry
point group.  See docs/adding-a-task.md.
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
# the generalisation probes (section 5): one module of `phybench.probes` each (family, analysis, page section)
from ..probes import priority, flip, gaps, holes, composition  # noqa: E402,F401

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

"""The generalisation probes' task families (paper section 5): data, like `phybench.tasks.uniform`.

One module per probe (`priority`, `flip`, `gaps`, `holes`, `composition`, `ambiguity`), each its family
(which names its analysis: ``probe = NAME``) and its tasks, registered on import by
`phybench.tasks`.  The analyses, which use the scorer, and the probes' page sections live
above the scorer in `phybench.probes`; nothing here imports them, so reading a split never
loads the scorer (tests/test_layers.py).
"""
from __future__ import annotations

from . import priority, flip, gaps, holes, composition, ambiguity  # noqa: F401  each registers its family and tasks

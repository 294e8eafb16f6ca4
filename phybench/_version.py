"""phybench's version, at the bottom of the import graph.

Modules that stamp the version into what they write (manifests, results, cards) import it
from here, not from the package facade `phybench`, so that importing them never loads the
facade and the layers run one way (docs/layout.md).  pyproject.toml's ``version`` must
equal it (tests/test_packaging.py).
"""
from __future__ import annotations

__version__ = "0.1.0"

"""The leaderboard's common bottom: the capped reads of a results folder (`files`), text and
number formatting (`format`) and the per-video sidecar as Parquet (`samples_parquet`).

Every other sub-package of `phybench.leaderboard` may import these; they import none of it
(the layer order: docs/layout.md, `tests/test_layers.py`).
"""

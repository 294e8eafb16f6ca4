"""Trainable model baselines: this folder installs as `phybench_baselines` (the `dit` extra)."""

"""Trainable model baselines (not part of the installed phybench package)."""

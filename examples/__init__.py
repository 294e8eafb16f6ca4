"""Small example models for `phybench run --model examples.<module>:<Class>` (run from the repo root)."""

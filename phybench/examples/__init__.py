"""Small example models for `phybench run --model phybench.examples.<module>:<Class>` (installed with phybench)."""

"""phybench inside other evaluation harnesses (lmms-eval: `phybench.harness.lmms`)."""

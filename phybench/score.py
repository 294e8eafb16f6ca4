"""Stable import path for scripts and CI: the scorer lives in `phybench.scoring.score`."""
from .scoring.score import ScoreError, ScoreOutput, score

__all__ = ["ScoreError", "ScoreOutput", "score"]

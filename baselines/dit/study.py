"""Moved to `phybench_baselines.studies.scaling` (issue 50: the studies in one place).

Kept for installs made before the move, whose `phybench.studies` entry point still names this
module (an editable install reads pyproject.toml's entry points only when installed again:
`pip install -e .`); remove once no such install is left.
"""
from ..studies.scaling import HELP, add_arguments, run_from_args  # noqa: F401

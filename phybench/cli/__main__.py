"""`python -m phybench.cli ...`: the same as `phybench ...` (for launchers such as `accelerate launch -m`)."""
import sys

from . import main

sys.exit(main())

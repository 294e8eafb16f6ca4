import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden.json"


@pytest.fixture(scope="session")
def golden() -> dict:
    """Values that must never drift: spec hashes, split hashes, a few trajectories."""
    return json.loads(GOLDEN.read_text())

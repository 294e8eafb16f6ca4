"""Evaluation protocols: full and lite, chosen by name, recognised from a results file's provenance."""
from __future__ import annotations

import json

import pytest

from phybench.cli import main
from phybench.tasks import get_task
from phybench.tasks.protocols import PROTOCOLS, protocol_of


def test_protocol_sizes_per_family():
    uniform, comb = get_task("uniform"), get_task("combinatorial")
    assert PROTOCOLS.get("full").size(uniform, "id-eval") == 1050
    assert PROTOCOLS.get("lite").size(uniform, "id-eval") == 200
    assert PROTOCOLS.get("lite").size(comb, "out-of-template-eval") == 64
    assert protocol_of("uniform", 1050, 1050) == "full"
    assert protocol_of("uniform", 200, 1050) == "lite"
    assert protocol_of("uniform", 64, 1050) == "limit 64"
    assert protocol_of("combinatorial", 64, 1000) == "lite"


@pytest.mark.slow
def test_generate_with_a_protocol(tmp_path, capsys):
    out = tmp_path / "lite"
    assert main(["generate", "uniform", "--split", "id-eval", "--protocol", "lite", "--out", str(out), "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["num_samples"] == 200 and manifest["command"].endswith("--limit 200")
    assert main(["generate", "uniform", "--split", "id-eval", "--protocol", "lite", "--limit", "5",
                 "--out", str(tmp_path / "x")]) != 0
    assert "not both" in capsys.readouterr().err
    assert main(["generate", "uniform", "--split", "id-eval", "--protocol", "nope", "--out", str(tmp_path / "y")]) != 0
    assert main(["generate", "uniform", "--split", "train-30k", "--protocol", "lite", "--out", str(tmp_path / "z")]) != 0

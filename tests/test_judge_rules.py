"""The judge's rules are a table: docs/adding-a-judge-rule.md's example, run as printed, adds a
row that shows in SETTINGS, `phybench judge --help` and the calibration's kinds, and fires on
a planted video; the table never leaks the row into another test."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from phybench.calibration import calibration_kinds
from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.judge import rules
from phybench.scoring.judge.abnormal import SETTINGS, judge
from phybench.tasks import get_task
from phybench.violations import KINDS, plant

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-judge-rule.md"


def _example() -> dict:
    """The doc's one Python block, executed as printed."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], str(DOC), "exec"), namespace)
    return namespace


def test_the_table_names_every_setting_and_known_kinds():
    names = [r.name for r in rules.RULES]
    assert len(names) == len(set(names))
    keys = [k for r in rules.RULES for k in r.settings if r.block == "abnormal"]
    assert len(keys) == len(set(keys)) and set(keys) <= set(SETTINGS)
    assert set(SETTINGS) == set(rules.COMMON) | set(keys) | set(rules.VERDICT)
    from phybench.scoring.metrics import METRICS

    for r in rules.RULES:  # a row quoted by another block: that metric's settings say every one of its numbers
        if r.block != "abnormal":
            block = next(m.settings for _, m in METRICS.items() if m.settings_key == r.block)
            assert all(block[k] == v for k, v in r.settings.items()) and not set(r.settings) & set(SETTINGS)
    claimed = [k for r in rules.RULES for k in r.planted_kinds]
    assert set(claimed) <= set(KINDS)
    assert sorted(calibration_kinds()) == sorted(KINDS) and calibration_kinds()[:len(set(claimed))] == list(
        dict.fromkeys(claimed))


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rule") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=3), folder, progress=False)
    return folder


def test_the_docs_example_rule_is_one_row(split, capsys):
    example = _example()
    row = example["SHRINK"]
    before = json.dumps(SETTINGS, sort_keys=True)
    assert "shrink" not in SETTINGS
    with rules.added(row):
        assert SETTINGS["shrink"] == row.settings["shrink"]  # the same dict every results file quotes
        with pytest.raises(SystemExit):
            main(["judge", "--help"])
        assert "shrink" in capsys.readouterr().out.split("rules (in the order")[1]
        assert "vanish" in calibration_kinds()
        reader = SplitReader(split)
        fired = 0
        for r in reader.rows():
            gt = reader.video(r)
            video, _ = plant("vanish", r, reader.spec, int(reader.manifest["resolution"]), gt)
            if video is None:
                continue
            bodies = row_scene(r).bodies
            v = judge(video, gt, [b.colour for b in bodies], [not b.dynamic for b in bodies],
                      reader.spec.condition_frames)
            fired += any(f.rule == "shrink" for f in v.findings)
            exact = judge(gt, gt, [b.colour for b in bodies], [not b.dynamic for b in bodies],
                          reader.spec.condition_frames)
            assert not exact.abnormal, exact.to_dict()
        assert fired >= 2
    assert row not in rules.RULES and json.dumps(SETTINGS, sort_keys=True) == before
    with pytest.raises(SystemExit):
        main(["judge", "--help"])
    assert "shrink" not in capsys.readouterr().out


def test_a_new_kind_heads_the_calibration_when_a_row_claims_it(monkeypatch):
    example = _example()
    monkeypatch.setitem(KINDS, "shrink-half", KINDS["deform"])
    assert calibration_kinds()[-1] == "shrink-half"  # no rule claims it yet: the velocity error's
    row = rules.Rule("shrink", example["shrink"], {"shrink": "x"}, planted_kinds=("shrink-half",))
    with rules.added(row, before="static"):
        assert calibration_kinds()[0] == "shrink-half" and rules.RULES[0] is row
    assert rules.RULES[0].name == "static"

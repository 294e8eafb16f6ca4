"""Submission cards (phybench/submission/card.py): the schema, the text rules, the stable codes."""
import json

import pytest

from phybench.submission.card import (
    CARD_JSON,
    CARD_LICENSE,
    CARD_MISMATCH,
    CARD_SCHEMA,
    CARD_SIZE,
    CARD_TEXT,
    CARD_URL,
    CODES,
    MAX_CARD_BYTES,
    card_bytes,
    check_card,
    load_card,
    schema,
)

GOOD = {
    "schema_version": 1,
    "model": "my-dit-b",
    "checkpoint_url": "https://huggingface.co/me/my-dit-b",
    "code_url": "https://github.com/me/my-dit",
    "report_url": "https://arxiv.org/abs/2411.02385",
    "input": {"type": "frames+text", "condition_frames": 3},
    "sampling": {"sampler": "ddim", "steps": 50, "guidance_scale": 1.5, "extra": {"eta": 0.0}},
    "seeds": [0, 1, 2],
    "license": "Apache-2.0",
}
META = {"model": {"name": "my-dit-b"}, "condition_frames": 3}


def codes(doc, meta=None) -> list[str]:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return [p.code for p in check_card(data, meta)[1]]


def test_a_good_card_passes_and_round_trips():
    card, problems = check_card(json.dumps(GOOD).encode(), META)
    assert problems == [] and card == GOOD
    assert check_card(card_bytes(card), META) == (GOOD, [])
    assert card_bytes(card) == card_bytes(json.loads(card_bytes(card)))  # canonical bytes
    only_code = {k: v for k, v in GOOD.items() if k not in ("checkpoint_url", "report_url")}
    assert codes(only_code, META) == []
    assert schema()["$id"] == "urn:phybench:schema:card:1"


@pytest.mark.parametrize("change, code, words", [
    ({"code_url": "ftp://example.org/x"}, CARD_URL, "'ftp://example.org/x' is not an http(s) link"),
    ({"report_url": "javascript:alert(1)"}, CARD_URL, "is not an http(s) link"),
    ({"checkpoint_url": "https://"}, CARD_URL, "is not an http(s) link"),
    ({"license": "Apache 2"}, CARD_LICENSE, "is not an SPDX license id"),
    ({"license": "MIT OR Apache-2.0"}, None, ""),
    # issue 36: the pattern alone let these through as SPDX
    ({"license": "Proprietary"}, CARD_LICENSE, "'Proprietary' is not an SPDX license id or expression (unknown license)"),
    ({"license": "Foo-1.0 OR MIT"}, CARD_LICENSE, "is not an SPDX license id"),
    ({"license": "MIT WITH Apache-2.0"}, CARD_LICENSE, "unknown license exception"),
    ({"license": "MIT AND"}, CARD_LICENSE, "is not an SPDX license id"),
    ({"license": "LicenseRef-Proprietary"}, None, ""),
    ({"license": "GPL-2.0-only WITH Classpath-exception-2.0 AND CC-BY-4.0"}, None, ""),
    ({"seeds": []}, CARD_SCHEMA, "card.json at .seeds"),
    ({"seeds": [1, 1]}, CARD_SCHEMA, "non-unique"),
    ({"seeds": [-1]}, CARD_SCHEMA, "less than the minimum"),
    ({"seeds": [1.5]}, CARD_SCHEMA, "not of type 'integer'"),
    ({"input": {"type": "video", "condition_frames": 3}}, CARD_SCHEMA, "card.json at .input.type"),
    ({"input": {"type": "frames"}}, CARD_SCHEMA, "'condition_frames' is a required property"),
    ({"schema_version": 2}, CARD_SCHEMA, "card.json at .schema_version"),
    ({"surprise": 1}, CARD_SCHEMA, "Additional properties are not allowed"),
    ({"model": ""}, CARD_SCHEMA, "card.json at .model"),
    ({"notes": "line one\nline two"}, CARD_TEXT, "card.json at .notes: holds control"),
    ({"sampling": {"prompt\x1b[31m": "x"}}, CARD_TEXT, "(a key)"),
    ({"sampling": {"s": "x" * 2001}}, CARD_TEXT, "2001 characters"),
    ({"sampling": {"a": {"b": {"c": {"d": {"e": 1}}}}}}, CARD_SIZE, "nested deeper"),
    ({"sampling": [1, 2]}, CARD_SCHEMA, "card.json at .sampling"),
])
def test_each_problem_has_its_code_and_one_line(change, code, words):
    problems = check_card(json.dumps({**GOOD, **change}).encode(), META)[1]
    if code is None:
        assert problems == []
        return
    assert [p.code for p in problems] == [code], problems
    assert words in problems[0].message and "\n" not in problems[0].message


def test_a_missing_link_and_a_missing_field():
    doc = {k: v for k, v in GOOD.items() if k not in ("checkpoint_url", "code_url", "seeds")}
    problems = check_card(json.dumps(doc).encode())[1]
    assert sorted(p.message for p in problems) == [
        "card.json: 'seeds' is a required property",
        "card.json: give checkpoint_url or code_url (or both): where the model can be had",
    ]


def test_unparseable_cards():
    assert codes(b"\xff\xfe{}") == [CARD_JSON]
    assert codes(b'{"model": "a", "model": "b"}') == [CARD_JSON]
    assert codes(b'{"seeds": [NaN]}') == [CARD_JSON]
    assert codes(b"[" * 100_000 + b"]" * 100_000) in ([CARD_SIZE], [CARD_JSON])  # too long or too deep
    assert codes(b"[" * 5000 + b"]" * 5000) == [CARD_SIZE]  # nested deeper than Python parses
    assert codes(b" " * (MAX_CARD_BYTES + 1)) == [CARD_SIZE]
    assert codes(b'"a card"') == [CARD_SCHEMA]
    assert codes(b'{"model": "\\ud800"}')[-1] == CARD_TEXT  # a lone surrogate is not text


def test_the_card_must_agree_with_the_submission():
    problems = check_card(json.dumps(GOOD).encode(), {"model": {"name": "other"}, "condition_frames": 4})[1]
    assert [p.code for p in problems] == [CARD_MISMATCH, CARD_MISMATCH]
    assert "model 'my-dit-b', but submission.json names 'other'" in problems[0].message
    assert "input.condition_frames 3, but the submission conditions on 4" in problems[1].message


def test_load_card_reads_files_safely(tmp_path):
    good = tmp_path / "card.json"
    good.write_text(json.dumps(GOOD))
    assert load_card(good, META) == (GOOD, [])
    link = tmp_path / "link.json"
    link.symlink_to(good)
    assert [p.code for p in load_card(link)[1]] == [CARD_JSON]
    assert [p.code for p in load_card(tmp_path / "absent.json")[1]] == [CARD_JSON]
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_CARD_BYTES + 10))
    assert [p.code for p in load_card(big)[1]] == [CARD_SIZE]


def test_codes_are_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "leaderboard.md").read_text()
    assert all(f"`{code}`" in doc for code in CODES), [c for c in CODES if f"`{c}`" not in doc]


def test_two_models_cards_in_one_folder(tmp_path):
    """Issue 49: `card init` wrote one card.json per folder, so the second model's card beside the first
    was refused.  It now gets the model's own card-<model>.json, and `submit` finds each model's card."""
    import numpy as np

    from phybench.leaderboard.hub.submit import prepare_upload
    from phybench.submission import write_submission
    from phybench.submission.card_template import init_card

    meta = {"schema_version": 1, "task": "uniform", "split": "id-eval", "split_hash": "0" * 64, "condition_frames": 3,
            "frames": 32, "resolution": 128, "fps": 10.0, "seeds": [0], "sampler": {}}
    subs = tmp_path / "subs"
    for name in ("Model A", "model-b"):
        write_submission(subs / name.replace(" ", "_"), {**meta, "model": {"name": name}},
                         [("uniform/id-eval/0000000", np.zeros((32, 128, 128, 3), np.uint8))])
    fields = {"code_url": "https://example.org/code", "license": "MIT"}
    first, _ = init_card(subs / "Model_A", **fields)
    second, _ = init_card(subs / "model-b", **fields)
    assert first == subs / "card.json" and second == subs / "card-model-b.json"
    assert json.loads(second.read_text())["model"] == "model-b"
    with pytest.raises(Exception, match="exists"):  # the same model again: never overwritten
        init_card(subs / "model-b", **fields)
    for folder, name in (("Model_A", "Model A"), ("model-b", "model-b")):
        assert prepare_upload(subs / folder).model == name  # each finds its own card

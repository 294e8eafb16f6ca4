"""Condition frames are part of a submission's identity on the board (issue 36, item 3b).

Hostile cases from the issue: condition frames black, mirrored, or another sample's; with them
the judge read abnormal 0.0 for another sample's whole video, the whole video mirrored, and the
ground-truth continuation after black condition frames.  `score` only warned (`validate` said
nothing) and the sync admitted them.  `validate --board` (and the sync) refuses them now:
`condition_frames_differ`; plain `validate` and `score` keep them usable locally.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.submission import submission_meta, write_submission
from phybench.submission.validation import validate
from phybench.tasks import get_task


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cond") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 3, None), out, progress=False)
    return out


def _videos(split: Path) -> list[tuple[str, np.ndarray]]:
    reader = SplitReader(split)
    return [(row["sample_id"], reader.video(row)) for row in reader.rows()]


def _black(videos, cf):
    out = [(s, v.copy()) for s, v in videos]
    out[0][1][:cf] = 0
    return out


def _mirrored(videos, cf):
    return [(s, v[:, :, ::-1].copy()) if i == 0 else (s, v) for i, (s, v) in enumerate(videos)]


def _another_samples(videos, cf):
    return [(videos[0][0], videos[1][1]), *videos[1:]]


@pytest.mark.parametrize("forge", [_black, _mirrored, _another_samples])
def test_condition_frames_not_the_splits_are_refused_for_the_board(split, tmp_path, capsys, forge):
    reader = SplitReader(split)
    cf = int(reader.manifest["condition_frames"])
    sub = write_submission(tmp_path / "sub", submission_meta(reader.manifest, "gamed"), forge(_videos(split), cf))
    local = validate(sub, split)
    assert local.ok, local.to_text()  # usable locally: `score` warns
    board = validate(sub, split, board=True)
    assert not board.ok and board.submission_hash is None
    assert [p.code for p in board.errors] == ["condition_frames_differ"], board.to_text()
    assert board.errors[0].sample_id == _videos(split)[0][0]  # the one forged video, named
    capsys.readouterr()
    assert main(["validate", str(sub), "--data", str(split), "--board"]) == 2
    assert "condition_frames_differ" in capsys.readouterr().out
    assert main(["validate", str(sub), "--data", str(split)]) == 0


def test_the_splits_own_frames_pass_for_the_board(split, tmp_path):
    reader = SplitReader(split)
    sub = write_submission(tmp_path / "sub", submission_meta(reader.manifest, "gt"), _videos(split))
    report = validate(sub, split, board=True)
    assert report.ok and report.submission_hash == validate(sub, split).submission_hash

"""`phybench leaderboard reproduce`: a re-made submission matches a verified row by its videos, not its card."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard.verify.reproduce import ReproduceError, reproduce
from phybench.leaderboard.verify.rescore import verify_one
from phybench.scoring.run.score import score, write_results
from phybench.submission import submission_meta, write_submission
from phybench.submission.format import submission_hash
from phybench.tasks import get_task


def _submission(split: Path, out: Path, card: dict, edit=None) -> Path:
    reader = SplitReader(split)
    meta = submission_meta(reader.manifest, "framear-flow", sampler={"steps": 4}, seeds=[0])
    meta["model"].update(card)
    videos = ((row["sample_id"], np.repeat(reader.video(row)[2:3], 32, axis=0)) for row in reader.rows())
    if edit:
        videos = ((sid, edit(v)) for sid, v in videos)
    write_submission(out, meta, videos)
    return out


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """A verified row (record with its videos hash) and its split."""
    root = tmp_path_factory.mktemp("reproduce")
    split = root / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 4, None), split, progress=False)
    card = {"checkpoint_sha256": "a" * 64, "train_seconds": 812.3, "hardware": "CPU, 1 process(es) x 2 threads"}
    sub = _submission(split, root / "sub", card)
    results = root / "results" / "uniform-id-eval-framear-flow.json"
    write_results(results, score(sub, split, ["velocity_error"], progress=False))
    assert verify_one(results, sub, split, by="tester", date="2026-11-29").verified
    return root, split, results, card


def test_a_remade_submission_reproduces_by_its_videos(shipped, tmp_path, capsys):
    """Same videos, another training time and machine: another submission hash (verify cannot find it),
    but reproduced; the card facts are listed, not verified.  One changed pixel is not reproduced."""
    root, split, results, card = shipped
    remade = _submission(split, tmp_path / "remade", {**card, "train_seconds": 790.1, "hardware": "1x NVIDIA H200"})
    assert submission_hash(remade) != submission_hash(root / "sub")
    found = reproduce(results, remade)
    assert found.reproduced and found.other_fields == []
    assert [line.split(":")[0] for line in found.card_facts] == ["model.hardware", "model.train_seconds"]
    assert main(["leaderboard", "reproduce", str(results), "--submissions", str(remade)]) == 0
    assert "card fact differs (not verified): model.train_seconds: shipped 812.3, re-made 790.1" in capsys.readouterr().out

    def touch(v):
        v = v.copy()
        v[-1, 0, 0, 0] ^= 1
        return v

    other = _submission(split, tmp_path / "other", {**card, "checkpoint_sha256": "b" * 64}, edit=touch)
    found = reproduce(results, other)
    assert not found.reproduced and "not reproduced" in found.lines()[0]
    assert main(["leaderboard", "reproduce", str(results), "--submissions", str(other)]) == 1


def test_reproduce_needs_a_record_with_videos_hash(shipped, tmp_path):
    root, split, results, card = shipped
    bare = tmp_path / results.name
    bare.write_bytes(results.read_bytes())
    with pytest.raises(ReproduceError, match="no verification record"):
        reproduce(bare, root / "sub")
    assert main(["leaderboard", "reproduce", str(bare)]) == 2

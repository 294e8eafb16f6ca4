"""The board says how a row was made: its condition track (issue 28) and lossy sources (issue 24)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

SHIPPED = Path(__file__).parent.parent / "leaderboard" / "results" / "fundamental" / "lite"


def test_the_board_labels_the_condition_track_and_lossy_sources(tmp_path):
    """A results file of an image-to-video model packed partly from mp4 is labelled as such."""
    from phybench.leaderboard import build

    results = tmp_path / "results"
    results.mkdir()
    name = "uniform-id-eval-copy-last"
    doc = json.loads((SHIPPED / f"{name}.json").read_text())
    doc["model"]["conditioning"] = {"inputs": "frames+text", "condition_frames_used": 1}
    doc["model"]["sources"] = {"mp4:h264": 3, "npz": 197}
    (results / f"{name}.json").write_text(json.dumps(doc))
    shutil.copy(SHIPPED / f"{name}.samples.json", results / f"{name}.samples.json")
    build(results, tmp_path / "site")
    md = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "copy-last (frames\\+text, image-to-video) [lossy source: 3 of 200 videos from mp4:h264]" in md
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    meta = data["boards"][0]["rows"][0]["meta"]
    assert meta["track"] == "frames+text, image-to-video" and "mp4:h264" in meta["lossy"]

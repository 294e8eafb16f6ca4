"""One set of videos, one row (issue 36, item 4): a videos-only content hash, and `videos_reused`.

Hostile case from the issue: the same videos under two model names (only `model.name` in
submission.json changed) were both admitted, because the duplicate check keys on the
submission hash, which covers submission.json.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.io import file_sha256
from phybench.leaderboard import LeaderboardError, build
from phybench.leaderboard.verify.signing import load_signer, new_key_pair
from phybench.leaderboard.verify.records import Verification, write_record
from phybench.submission import submission_meta, write_submission
from phybench.submission.format import submission_hash
from phybench.submission.identity import videos_hash
from phybench.tasks import get_task

LITE = Path(__file__).resolve().parents[1] / "leaderboard" / "results" / "fundamental" / "lite"


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vh") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", None, 3, None), out, progress=False)
    return out


def _zip(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(folder).as_posix())
    return out


def test_the_videos_hash_ignores_the_card_the_order_the_archive_and_the_file_format(split, tmp_path):
    reader = SplitReader(split)
    videos = [(row["sample_id"], reader.video(row)) for row in reader.rows()]
    a = write_submission(tmp_path / "a", submission_meta(reader.manifest, "model-a"), videos, fmt="npy")
    # another name, the videos written in reverse order and as .npz: the same videos
    b = write_submission(tmp_path / "b", submission_meta(reader.manifest, "model-b"), videos[::-1], fmt="npz")
    c = write_submission(tmp_path / "c", submission_meta(reader.manifest, "model-a"), videos, fmt="png")
    zipped = _zip(b, tmp_path / "b.zip")
    assert submission_hash(a) != submission_hash(b)  # the submission hash covers submission.json
    h = videos_hash(a)
    assert len(h) == 64 and videos_hash(b) == h and videos_hash(c) == h and videos_hash(zipped) == h
    # one pixel of one video changed: other videos
    changed = [(sid, v.copy()) for sid, v in videos]
    changed[1][1][-1, 0, 0, 0] ^= 1
    d = write_submission(tmp_path / "d", submission_meta(reader.manifest, "model-a"), changed)
    assert videos_hash(d) != h
    # a video moved to another sample id: other videos
    swapped = [(videos[0][0], videos[1][1]), (videos[1][0], videos[0][1]), videos[2]]
    e = write_submission(tmp_path / "e", submission_meta(reader.manifest, "model-a"), swapped)
    assert videos_hash(e) != h


def _row(folder: Path, name: str, model: str, sub_hash: str) -> Path:
    """A copy of a shipped lite row under another model name and submission hash (and its sidecar)."""
    src = LITE / "uniform-id-eval-copy-last.json"
    doc = json.loads(src.read_text())
    doc["model"]["name"] = model
    doc["provenance"]["submission_hash"] = sub_hash
    out = folder / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, sort_keys=True))
    side = json.loads(src.with_name("uniform-id-eval-copy-last.samples.json").read_text())
    side["submission_hash"] = sub_hash
    out.with_name(out.stem + ".samples.json").write_text(json.dumps(side, sort_keys=True))
    return out


def test_build_refuses_one_set_of_videos_under_two_names_across_board_folders(tmp_path):
    kid_dir = tmp_path / "keys"
    new_key_pair(tmp_path / "k.pem", kid_dir)
    signer = load_signer(tmp_path / "k.pem")
    results = tmp_path / "results"
    first = _row(results / "fundamental", "a.json", "copy-last", "a" * 64)
    second = _row(results / "hub", "b.json", "copy-last-renamed", "b" * 64)  # another board folder
    for path, vh in ((first, "1" * 64), (second, "1" * 64)):
        doc = json.loads(path.read_text())
        write_record(path, Verification(
            results_sha256=file_sha256(path), submission_hash=doc["provenance"]["submission_hash"],
            split_hash=doc["provenance"]["split_hash"], phybench_version=doc["provenance"]["phybench_version"],
            verified_by="test", date="2026-11-26", recomputed=tuple(doc["metrics"]), extra={"videos_hash": vh}),
            signer)
    with pytest.raises(LeaderboardError) as err:
        build(results, tmp_path / "site", require_verified=True, keys=[kid_dir])
    got = {r.file: r.code for r in err.value.refused}
    assert got == {"fundamental/a.json": "videos_reused", "hub/b.json": "videos_reused"}, err.value.refused
    assert "one set of videos, one row" in err.value.refused[0].reason
    # other videos: both rows build
    doc = json.loads(second.read_text())
    write_record(second, Verification(
        results_sha256=file_sha256(second), submission_hash=doc["provenance"]["submission_hash"],
        split_hash=doc["provenance"]["split_hash"], phybench_version=doc["provenance"]["phybench_version"],
        verified_by="test", date="2026-11-26", recomputed=tuple(doc["metrics"]), extra={"videos_hash": "2" * 64}),
        signer)
    assert build(results, tmp_path / "site", require_verified=True, keys=[kid_dir]).ok

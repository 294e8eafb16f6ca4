"""Source provenance (issue 24 item 4): `pack` records each video's source; results carry the counts."""
from __future__ import annotations

import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.source import is_lossy, mp4_codec, source_counts
from phybench.data.split import SplitReader, make_plan
from phybench.scoring.run.score import score
from phybench.tasks import get_task


def test_mp4_codec_reads_the_sample_description_and_never_fails():
    iio = pytest.importorskip("imageio.v3")
    video = np.zeros((4, 32, 32, 3), np.uint8)
    assert mp4_codec(iio.imwrite("<bytes>", video, extension=".mp4", fps=10)) == "avc1"
    for junk in (b"", b"not even an mp4", b"\x00\x00\x00\x08moov" * 3, b"\xff\xff\xff\xffmoov" + b"\x00" * 40):
        assert mp4_codec(junk) == "unknown"
    assert not is_lossy("npz") and is_lossy("mp4:avc1")
    assert source_counts({"a": "npy", "b": "mp4:avc1", "c": "npy"}) == {"mp4:avc1": 1, "npy": 2}


def test_pack_records_sources_and_results_carry_them(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    split = tmp_path / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=3), split, progress=False)
    inputs = tmp_path / "inputs"
    assert main(["export-inputs", "--data", str(split), "--out", str(inputs), "--quiet"]) == 0
    reader = SplitReader(split)
    gen = tmp_path / "gen"
    gen.mkdir()
    kinds = {}
    for k, row in enumerate(reader.rows()):
        video, path = reader.video(row), gen / row["sample_id"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if k == 0:
            (path.parent / (path.name + ".mp4")).write_bytes(iio.imwrite("<bytes>", video, extension=".mp4", fps=10))
        else:
            np.save(f"{path}.npy", video)
        kinds[row["sample_id"]] = "mp4:avc1" if k == 0 else "npy"
    sub = tmp_path / "sub"
    assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(sub), "--name", "m", "--quiet"]) == 0
    assert json.loads((sub / "submission.json").read_text())["sources"] == kinds
    results = score(sub, split, ("velocity_error",), progress=False).results
    assert results["model"]["sources"] == {"mp4:avc1": 1, "npy": 2}


def test_pack_and_validate_warn_when_every_source_was_a_lossy_mp4(tmp_path, capsys):
    """The docs promise a warning for mp4; pack repacks losslessly, so the record must carry it (issue 37)."""
    iio = pytest.importorskip("imageio.v3")
    split = tmp_path / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=2), split, progress=False)
    inputs = tmp_path / "inputs"
    assert main(["export-inputs", "--data", str(split), "--out", str(inputs), "--quiet"]) == 0
    reader = SplitReader(split)
    for kind in ("mp4", "npy"):
        gen = tmp_path / f"gen-{kind}"
        for row in reader.rows():
            path = gen / row["sample_id"]
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "mp4":
                (path.parent / (path.name + ".mp4")).write_bytes(
                    iio.imwrite("<bytes>", reader.video(row), extension=".mp4", fps=10))
            else:
                np.save(f"{path}.npy", reader.video(row))
        sub = tmp_path / f"sub-{kind}"
        capsys.readouterr()
        assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(sub), "--name", "m", "--quiet"]) == 0
        packed = capsys.readouterr().err
        assert main(["validate", str(sub), "--data", str(split), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        codes = [p["code"] for p in report["problems"]]
        if kind == "mp4":
            assert "all 2 videos were packed from a lossy mp4 (mp4:avc1 x2" in packed
            assert codes == ["lossy_mp4"]
        else:
            assert "lossy" not in packed and codes == []

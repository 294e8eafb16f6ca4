"""export-inputs / pack: a model runs on plain files in its own environment and becomes a submission."""
from __future__ import annotations

import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.frames import decode_png
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.submission import validate
from phybench.tasks import get_task


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs") / "split"
    generate(make_plan(get_task("uniform"), "id-eval", limit=3), folder, progress=False)
    return folder


def test_export_then_pack_round_trip(split, tmp_path, capsys):
    inputs = tmp_path / "inputs"
    assert main(["export-inputs", "--data", str(split), "--out", str(inputs), "--quiet"]) == 0
    doc = json.loads((inputs / "manifest.json").read_text())
    reader = SplitReader(split)
    rows = list(reader.rows())
    assert doc["sample_ids"] == [r["sample_id"] for r in rows] and doc["frames_to_generate"] == 29
    first = reader.video(rows[0])
    assert np.array_equal(decode_png((inputs / "frames" / rows[0]["sample_id"] / "00002.png").read_bytes()), first[2])
    # the "model": the ground truth, written three ways (full npy, generated-only npz, PNG folder)
    gen = tmp_path / "gen"
    for k, row in enumerate(rows):
        video = reader.video(row)
        path = gen / row["sample_id"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if k == 0:
            np.save(f"{path}.npy", video)
        elif k == 1:
            np.savez(f"{path}.npz", video=video[3:])
        else:
            path.mkdir()
            from phybench.data.frames import encode_png

            for t, frame in enumerate(video):
                (path / f"{t:05d}.png").write_bytes(encode_png(frame))
    sub = tmp_path / "sub"
    assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(sub), "--name", "my-model", "--quiet"]) == 0
    report = validate(sub, split)
    assert report.ok, report.to_text()
    assert json.loads((sub / "submission.json").read_text())["model"]["name"] == "my-model"


def test_pack_names_what_is_missing_and_writes_nothing(split, tmp_path, capsys):
    inputs = tmp_path / "inputs"
    main(["export-inputs", "--data", str(split), "--out", str(inputs), "--quiet"])
    gen = tmp_path / "gen"
    gen.mkdir()
    assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(tmp_path / "sub"), "--name", "m"]) != 0
    assert "3 of 3 sample(s) have no video" in capsys.readouterr().err
    assert not (tmp_path / "sub").exists()
    # hostile input, written here on purpose: pack must refuse a pickled array without unpickling it
    sid = json.loads((inputs / "manifest.json").read_text())["sample_ids"][0]
    (gen / sid).parent.mkdir(parents=True, exist_ok=True)
    np.save(f"{gen / sid}.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    for other in json.loads((inputs / "manifest.json").read_text())["sample_ids"][1:]:
        (gen / other).parent.mkdir(parents=True, exist_ok=True)
        np.save(f"{gen / other}.npy", np.zeros((32, 128, 128, 3), np.uint8))
    assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(tmp_path / "sub"), "--name", "m"]) != 0
    assert "not a plain array" in capsys.readouterr().err
    assert not (tmp_path / "sub").exists()

"""Importing the reference authors' HDF5 data (fixtures made by their own generators)."""
import hashlib
import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from phybench.data.importer import PhyworldImportError, decode_phyworld_mp4, import_phyworld
from phybench.world.laws import fully_in_view
from phybench.scoring.physics.parse import PHYWORLD, parse_video
from phybench.data.split import SplitReader, read_manifest
from phybench.data.verify import verify

FIXTURES = Path(__file__).parent / "fixtures" / "phyworld"  # made by the reference authors' generators
FILES = {"uniform_128": "uniform", "parabola_128": "parabola", "collision_128": "collision", "uniform_256": "uniform"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Every fixture imported once: {name: split folder}."""
    root = tmp_path_factory.mktemp("imported")
    return {name: import_phyworld(FIXTURES / f"{name}.hdf5", task, root / name) for name, task in FILES.items()}


def originals(name):
    with h5py.File(FIXTURES / f"{name}.hdf5", "r") as f:
        return f["position_streams"][()], f["init_streams"][()], [bytes(v) for v in f["video_streams"]]


@pytest.mark.parametrize("name", FILES)
def test_positions_and_parameters_match_exactly(imported, name):
    positions, inits, _ = originals(name)
    reader = SplitReader(imported[name])
    rows = list(reader.rows())
    assert len(rows) == len(positions)
    dofs = reader.manifest["dofs"]
    for i, row in enumerate(rows):
        want = positions[i].reshape(row["positions"].shape)  # (T, 2) or (T, 2, 2) -> (T, B, 2)
        # Box2D values are float32 numbers held in float64: our float32 column keeps them exactly.
        assert np.array_equal(want.astype(np.float32).astype(np.float64), want)
        assert np.array_equal(row["positions"].astype(np.float64), want)
        assert [row[d] for d in dofs] == inits[i].tolist()  # float64, bit for bit
        assert row["index"] == i and row["sample_id"] == f"{FILES[name]}/phyworld-eval/{i:07d}"


@pytest.mark.parametrize("name", FILES)
def test_videos_are_their_decoded_frames(imported, name):
    _, _, videos = originals(name)
    reader = SplitReader(imported[name])
    for row, mp4 in list(zip(reader.rows(), videos))[:3]:
        assert np.array_equal(reader.video(row), decode_phyworld_mp4(mp4))  # PNG storage adds no loss


@pytest.mark.parametrize("name", FILES)
def test_parser_recovers_their_positions_from_imported_videos(imported, name):
    """`parse_video(..., PHYWORLD)` on the decoded frames: <= 1/4 px mean, <= 1/2 px max."""
    reader = SplitReader(imported[name])
    errors = []
    for row in reader.rows():
        video = reader.video(row)
        width = video.shape[2]
        parsed = parse_video(video, [tuple(int(c) for c in rgb) for rgb in row["colours"]], PHYWORLD)
        truth = row["positions"].astype(np.float64)
        view = fully_in_view(truth, row["radii"].astype(np.float64), 10.0)  # (T, B)
        assert (parsed.flags[view] == 0).all() or name.startswith("collision")  # discs overlap at contact
        err = np.linalg.norm(parsed.positions - truth, axis=-1)[view] / PHYWORLD.pixel_size(width)  # px
        errors.append(err)
    err = np.concatenate(errors)
    assert np.isfinite(err).all()
    assert err.mean() <= 0.25 and err.max() <= 0.5, (err.mean(), err.max())


@pytest.mark.parametrize("name", FILES)
def test_imported_split_verifies_and_records_its_source(imported, name):
    folder = imported[name]
    report = verify(folder)
    assert report.ok, report.problems
    m = read_manifest(folder)
    assert m["pixel_mapping"] == "grid" and m["time_offset"] == 0.01
    digest = hashlib.sha256((FIXTURES / f"{name}.hdf5").read_bytes()).hexdigest()
    assert m["imported"]["sha256"] == digest and m["imported"]["source"] == f"{name}.hdf5"
    assert m["split"] == "phyworld-eval" and m["hf_split"] == "phyworld_eval" and m["with_video"]
    assert m["resolution"] == int(name.split("_")[1])


def test_tampered_imported_split_fails_verification(imported, tmp_path):
    folder = shutil.copytree(imported["uniform_128"], tmp_path / "copy")
    m = json.loads((folder / "manifest.json").read_text())
    m["imported"]["sha256"] = "0" * 64  # provenance is not hashed into the data ...
    m["shards"][0]["content_sha256"] = "0" * 64  # ... but content is
    (folder / "manifest.json").write_text(json.dumps(m))
    assert not verify(folder).ok


def test_derived_fields_match_the_fixture_tables(imported):
    uniform = list(SplitReader(imported["uniform_128"]).rows())
    # README table "frames with ball fully inside"
    assert [r["frames_in_view"] for r in uniform] == [21, 19, 25, 20, 32, 32, 25, 25, 25, 32, 32, 16, 15, 14, 16, 32]
    assert [r["level"] for r in uniform] == ["id"] * 8 + ["r", "v", "r+v", "r", "v", "r+v", "r+v", "r+v"]
    collision = list(SplitReader(imported["collision_128"]).rows())
    # README "contact at frame": analytic first contact as a fractional frame index
    frames = [round(r["contact_time"] / 0.1, 1) for r in collision]
    assert frames == [9.6, 12.7, 8.5, 9.4, 8.0, 9.8, 9.3, 10.6, 8.7, 10.4, 14.8, 14.7, 22.2, 17.9, 11.2, 9.6]
    assert [r["level"] for r in collision[8:]] == ["r1", "v1", "v1+v2", "v1+v2", "all", "all", "r1+r2", "v1+v2"]
    for r in collision:
        assert r["colours"].tolist() == [[255, 0, 0], [0, 0, 255]]
        v = r["velocities"]
        assert abs(v[1, 0, 0] - r["velocity_1"]) < 1e-3 and abs(v[1, 1, 0] + r["velocity_2"]) < 1e-3  # before contact


def test_merged_file_gives_the_same_split(imported, tmp_path):
    """Their published files are merged: groups of per-chunk datasets 00000, 00001, ..."""
    merged = tmp_path / "merged.hdf5"
    with h5py.File(FIXTURES / "uniform_128.hdf5", "r") as src, h5py.File(merged, "w") as dst:
        for name in ("video_streams", "position_streams", "init_streams"):
            group = dst.create_group(name)
            data = src[name]
            group.create_dataset("00000", data=data[:10], dtype=data.dtype)
            group.create_dataset("00001", data=data[10:], dtype=data.dtype)
    out = import_phyworld(merged, "uniform", tmp_path / "split", shard_size=6)
    m, ref = read_manifest(out), read_manifest(imported["uniform_128"])
    assert m["imported"]["layout"] == "merged" and m["imported"]["chunks"] == ["00000", "00001"]
    assert len(m["shards"]) == 3
    assert m["split_hash"] == ref["split_hash"]  # same rows in the same order; sharding does not matter
    assert verify(out).ok


def test_imported_ground_truth_scores_near_zero(imported, tmp_path):
    """The scorer reads `pixel_mapping: grid` and parses their videos with their mapping."""
    from phybench.scoring.run.score import score
    from phybench.submission import submission_meta, write_submission

    reader = SplitReader(imported["uniform_128"])
    sub = write_submission(tmp_path / "sub", submission_meta(reader.manifest, "ground-truth"),
                           ((row["sample_id"], reader.video(row)) for row in reader.rows()))
    out = score(sub, imported["uniform_128"], ["velocity_error"], progress=False)
    assert out.results["provenance"]["pixel_mapping"] == "grid"
    assert out.results["summary"]["overall"]["velocity_error"]["mean"] < 0.05  # units/s; lossy H.264 source


def test_refuses_wrong_task_and_occupied_folder(tmp_path):
    with pytest.raises(PhyworldImportError, match="collision"):
        import_phyworld(FIXTURES / "collision_128.hdf5", "uniform", tmp_path / "a")
    assert not (tmp_path / "a").exists()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("keep me")
    with pytest.raises(PhyworldImportError, match="not empty"):
        import_phyworld(FIXTURES / "uniform_128.hdf5", "uniform", tmp_path / "b")
    assert (tmp_path / "b" / "x").read_text() == "keep me"
    with pytest.raises(PhyworldImportError, match="no such file"):
        import_phyworld(tmp_path / "missing.hdf5", "uniform", tmp_path / "c")
    text = tmp_path / "text.hdf5"
    text.write_text("not HDF5")
    with pytest.raises(PhyworldImportError, match="not a readable HDF5 file"):
        import_phyworld(text, "uniform", tmp_path / "e")
    bogus = tmp_path / "bogus.hdf5"
    with h5py.File(bogus, "w") as f:
        f["something"] = np.zeros(3)
    with pytest.raises(PhyworldImportError, match="not a phyworld HDF5"):
        import_phyworld(bogus, "uniform", tmp_path / "d")
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no temporary folders left


def test_limit_takes_a_prefix(imported, tmp_path):
    out = import_phyworld(FIXTURES / "uniform_128.hdf5", "uniform", tmp_path / "four", limit=4)
    m = read_manifest(out)
    assert m["num_samples"] == 4 and m["full_size"] == 16 and "--limit 4" in m["command"]
    full = [r["sample_id"] for r in SplitReader(imported["uniform_128"]).rows()][:4]
    assert [r["sample_id"] for r in SplitReader(out).rows()] == full
    assert verify(out).ok

"""Splits: deterministic bytes and hashes, lossless videos, resume, verify, datasets."""
import shutil

import numpy as np
import pytest

from phybench.data.frames import decode_png, encode_png
from phybench.data.generate import generate, parse_shard_arg
from phybench.data.split import SplitError, SplitReader, make_plan, read_manifest
from phybench.data.verify import verify
from phybench.tasks import TASKS, get_task

from conftest import golden_keys

N = 12


def gen(tmp_path, name, task="uniform", split="id-eval", limit=N, shard_size=5, workers=1, shard=None, resolution=None):
    plan = make_plan(get_task(task), split, resolution, limit, shard_size)
    return generate(plan, tmp_path / name, workers=workers, shard=shard, progress=False)


def test_png_round_trip_is_lossless():
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, (17, 23, 3), dtype=np.uint8)
    assert np.array_equal(decode_png(encode_png(frame)), frame)
    from PIL import Image
    import io

    assert np.array_equal(np.asarray(Image.open(io.BytesIO(encode_png(frame)))), frame)


@pytest.mark.slow
def test_same_bytes_for_any_workers_and_shard_order(tmp_path):
    a = gen(tmp_path, "a").manifest
    b = gen(tmp_path, "b", workers=2).manifest
    # shards written in reverse order by two "machines", then completed
    gen(tmp_path, "c", shard=(1, 2))
    gen(tmp_path, "c", shard=(0, 2))
    c = gen(tmp_path, "c").manifest
    assert a["split_hash"] == b["split_hash"] == c["split_hash"]
    for sa, sb, sc in zip(a["shards"], b["shards"], c["shards"]):
        assert sa["sha256"] == sb["sha256"] == sc["sha256"]
        name = sa["file"]
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()


def test_split_hash_independent_of_shard_size(tmp_path):
    a = gen(tmp_path, "a", shard_size=5).manifest
    b = gen(tmp_path, "b", shard_size=7).manifest
    assert a["split_hash"] == b["split_hash"]


@pytest.mark.parametrize("key", golden_keys("split_hashes"))
def test_golden_split_hash(tmp_path, golden, key):
    task, split, limit = key.split(":")
    assert task in TASKS  # every golden task is registered
    m = gen(tmp_path, key.replace(":", "_"), task=task, split=split, limit=int(limit), shard_size=8).manifest
    assert m["split_hash"] == golden["split_hashes"][key]


def test_samples_regenerate_alone(tmp_path):
    """Sample i of a prefix equals sample i of a longer run: no cross-sample state."""
    gen(tmp_path, "s", limit=4)
    gen(tmp_path, "l", limit=N, shard_size=3)
    short, long = SplitReader(tmp_path / "s"), SplitReader(tmp_path / "l")
    rs, rl = list(short.rows()), list(long.rows())[:4]
    for x, y in zip(rs, rl):
        assert x["sample_id"] == y["sample_id"]
        assert np.array_equal(x["positions"], y["positions"])
        assert np.array_equal(short.video(x), long.video(y))


def test_stored_video_equals_on_the_fly_render(tmp_path):
    gen(tmp_path, "ev", limit=4)
    reader = SplitReader(tmp_path / "ev")
    from phybench.data.split import render_row

    for row in reader.rows():
        stored = reader.video(row)
        assert stored.shape == (32, 128, 128, 3) and stored.dtype == np.uint8
        assert np.array_equal(stored, render_row(row, 128))


def test_training_split_renders_on_the_fly(tmp_path):
    gen(tmp_path, "tr", split="train-30k", limit=6)
    reader = SplitReader(tmp_path / "tr")
    rows = list(reader.rows())
    assert "video" not in rows[0]
    assert reader.video(rows[0]).shape == (32, 128, 128, 3)
    assert verify(tmp_path / "tr").ok


def test_load_dataset_returns_uint8_videos(tmp_path):
    import datasets

    gen(tmp_path, "hf", limit=4)
    ds = datasets.load_dataset(str(tmp_path / "hf"), split="id_eval").with_format("numpy")
    video = ds[0]["video"]
    assert video.dtype == np.uint8 and video.shape == (32, 128, 128, 3)
    reader = SplitReader(tmp_path / "hf")
    assert np.array_equal(video, reader.video(next(reader.rows())))
    assert ds[0]["positions"].shape == (32, 1, 2)


def test_hf_training_split_renders(tmp_path):
    from phybench.data.split import load_hf_dataset

    gen(tmp_path, "hft", split="train-30k", limit=3)
    ds = load_hf_dataset(tmp_path / "hft")
    assert ds[0]["video"].shape == (32, 128, 128, 3)


def test_resolution_256(tmp_path):
    gen(tmp_path, "r", limit=2, resolution=256)
    reader = SplitReader(tmp_path / "r")
    assert reader.video(next(reader.rows())).shape == (32, 256, 256, 3)


def test_resume_after_kill_skips_finished_shards(tmp_path):
    full = gen(tmp_path, "full").manifest
    gen(tmp_path, "k")
    folder = tmp_path / "k"
    # simulate a kill: manifest never written, one shard half-written as a temp file
    (folder / "manifest.json").unlink()
    victim = sorted((folder / "data").glob("shard-00001-*.parquet"))[0]
    victim.unlink()
    (folder / "data" / ".shard-00001-of-00003.x.tmp").write_bytes(b"partial")
    mtime = sorted((folder / "data").glob("shard-00000-*.parquet"))[0].stat().st_mtime_ns
    with pytest.raises(SplitError, match="did not finish"):
        read_manifest(folder)
    result = gen(tmp_path, "k")
    assert result.written == 1 and result.reused == 2
    assert sorted((folder / "data").glob("shard-00000-*.parquet"))[0].stat().st_mtime_ns == mtime
    assert not list((folder / "data").glob(".*.tmp"))
    assert result.manifest["split_hash"] == full["split_hash"]


def test_refuses_to_mix_specs(tmp_path):
    gen(tmp_path, "m")
    with pytest.raises(SplitError, match="refusing to mix"):
        gen(tmp_path, "m", task="parabola")
    with pytest.raises(SplitError, match="refusing to mix"):
        gen(tmp_path, "m", resolution=256)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(SplitError, match="not a phybench split"):
        gen(tmp_path, "other")


def test_verify_reports_what_differs(tmp_path):
    gen(tmp_path, "v")
    folder = tmp_path / "v"
    report = verify(folder, regenerate=3)
    assert report.ok and report.regenerated == 3
    # tamper: replace one shard with another's content
    files = sorted((folder / "data").glob("shard-*.parquet"))
    shutil.copy(files[0], files[1])
    report = verify(folder)
    assert not report.ok
    text = "\n".join(p.message for p in report.problems)
    assert files[1].name in text and "split hash" in text
    # missing shard
    files[2].unlink()
    assert any("missing" in p.message and p.code == "shard_missing" for p in verify(folder).problems)


def test_verify_detects_consistent_forgery(tmp_path):
    """A manifest rewritten to match altered data still fails a regenerate check."""
    import pyarrow.parquet as pq

    gen(tmp_path, "f", limit=3, shard_size=3)
    folder = tmp_path / "f"
    path = sorted((folder / "data").glob("*.parquet"))[0]
    table = pq.read_table(path)
    radius = table.column("radius").to_pylist()
    radius[0] += 0.1
    import pyarrow as pa

    table = table.set_column(table.schema.get_field_index("radius"), "radius", pa.array(radius))
    pq.write_table(table, path)
    report = verify(folder, regenerate=3)
    assert any("fresh simulation" in p.message and p.code == "regenerated_differs" for p in report.problems)


def test_shard_argument_parsing():
    assert parse_shard_arg("1/4") == (1, 4)
    for bad in ("4/4", "x", "1/0", "-1/3", "1/2/3"):
        with pytest.raises(SplitError):
            parse_shard_arg(bad)


def test_bad_plan_arguments():
    spec = get_task("uniform")
    with pytest.raises(SplitError, match="no split 'eval'"):
        make_plan(spec, "eval")
    with pytest.raises(SplitError, match="resolution 100"):
        make_plan(spec, "id-eval", resolution=100)
    with pytest.raises(SplitError, match="--limit"):
        make_plan(spec, "id-eval", limit=0)


def test_id_eval_is_disjoint_from_every_training_grid():
    from phybench.tasks.sampling import draw_params, sample_uniforms

    for name in ("uniform", "collision"):
        spec = get_task(name)
        grids = []
        for ts in spec.training_sets:
            grids.append([np.linspace(*d.id_range, n) for d, n in zip(spec.dofs, ts.grid)])
        for i in range(0, spec.id_eval_size, 7):
            _, params = draw_params(spec, "id-eval", i, sample_uniforms(spec, "id-eval", i))
            for axes in grids:
                # a point is in a grid only if every coordinate is a node of that axis
                on = [np.abs(axis - params[d.name]).min() < 1e-9 for d, axis in zip(spec.dofs, axes)]
                assert not all(on)


def test_ood_levels_draw_from_ood_ranges():
    from phybench.tasks.sampling import draw_params, sample_uniforms

    spec = get_task("collision")
    for i in range(120):
        level, params = draw_params(spec, "ood-eval", i, sample_uniforms(spec, "ood-eval", i))
        lv = next(x for x in spec.ood_levels if x.name == level)
        assert level == spec.ood_levels[i % len(spec.ood_levels)].name
        for d in spec.dofs:
            v = params[d.name]
            in_id = d.id_range[0] <= v <= d.id_range[1]
            in_ood = any(a <= v <= b for a, b in d.ood_ranges)
            assert in_ood if d.name in lv.ood_dofs else in_id
        assert params["velocity_1"] + params["velocity_2"] >= spec.min_approach_speed


def test_the_generate_bar_moves_per_sample(tmp_path):
    """Issue 49: the collision training split's bar sat at 0 for 3 minutes (it moved once per 10,000-sample
    shard).  `write_shard` ticks after every sample, and `generate`'s bar counts each one."""
    from phybench.data.generate import generate
    from phybench.data.split import make_plan, write_shard
    from phybench.tasks import get_task

    plan = make_plan(get_task("uniform"), "train-30k", None, 7, None)
    ticks = []
    (tmp_path / "a" / "data").mkdir(parents=True)
    record = write_shard(plan, tmp_path / "a", 0, tick=lambda: ticks.append(len(ticks)))
    assert len(ticks) == record["stop"] - record["start"] == 7
    import tqdm as tqdm_module

    seen = []
    real = tqdm_module.tqdm.update

    def update(self, n=1):
        seen.append(n)
        return real(self, n)

    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tqdm_module.tqdm, "update", update)
        generate(plan, tmp_path / "b", progress=True)
    assert seen.count(1) >= 7  # one step per sample, then nothing left over

"""The combinatorial family: templates, covering, placement rule, exactness, storage, scoring."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from phybench.data.generate import generate
from phybench.data.split import SplitReader, load_hf_dataset, make_plan, row_scene, sample_video
from phybench.data.verify import verify
from phybench.tasks import get_task
from phybench.tasks.combinatorial import (
    ALL_PAIRS,
    OBJECT_TYPES,
    TEMPLATE_IDS,
    TEMPLATES,
    _minimal_cover,
    in_view,
    pairs_of,
    template_sets,
    template_types,
)
from phybench.tasks.sampling import make_sample, simulate_sample
from phybench.world.render import render
from phybench.world.scene import Body, Scene, body_bounds

SPEC = get_task("combinatorial")
# Pinned: a change to any of these changes what the task generates (bump its version).


def _golden() -> dict:
    from pathlib import Path

    return json.loads((Path(__file__).parent / "golden_combinatorial.json").read_text())


# ------------------------------------------------------------------ templates
def test_seventy_templates_with_stable_ids():
    assert len(TEMPLATES) == 70 == len(set(TEMPLATES))
    assert TEMPLATE_IDS[0] == "t00" and TEMPLATES[0] == (0, 1, 2, 3)
    assert TEMPLATE_IDS[-1] == "t69" and TEMPLATES[-1] == (4, 5, 6, 7)
    assert len(OBJECT_TYPES) == 8 and len(ALL_PAIRS) == 28


def test_template_sets_nest_cover_and_hold_out():
    sets = template_sets(SPEC.base_seed)
    t6, t30, t60, held = sets["train-6t"], sets["train-30t"], sets["train-60t"], sets["out-of-template"]
    assert (len(t6), len(t30), len(t60), len(held)) == (6, 30, 60, 10)
    assert t30[:6] == t6 and t60[:30] == t30  # nested, in order
    assert not set(held) & set(t60) and set(held) | set(t60) == set(TEMPLATE_IDS)
    assert pairs_of(t6) == ALL_PAIRS  # the minimal set covers all 28 pairs of object types


@pytest.mark.slow
def test_six_is_the_minimum_cover():
    # the search that found the 6-cover finds no 5-cover among all 70 templates
    assert _minimal_cover(tuple(range(70)), 5) is None
    assert _minimal_cover(tuple(range(70)), 6) is not None
    # and brute force agrees on a random sample of 5-subsets (the proof is the counting argument)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        five = rng.choice(70, 5, replace=False)
        assert pairs_of([TEMPLATE_IDS[i] for i in five]) != ALL_PAIRS


def test_golden_spec_hash():
    assert SPEC.spec_hash() == _golden()["spec_hash"]


def test_splits_interleave_templates_and_never_reuse_training_scenes():
    it = SPEC.split("in-template-eval")
    t60 = template_sets(SPEC.base_seed)["train-60t"]
    levels = [make_sample(SPEC, "in-template-eval", i).level for i in range(3)]
    assert levels == list(t60[:3])  # sample i is template i mod 60: any --limit covers many templates
    assert it.size == 20 * 60
    # training sets share scenes where they share templates; evaluation scenes are new draws
    a = make_sample(SPEC, "train-6t", 7)
    b = make_sample(SPEC, "train-60t", 7 // 6 * 60 + 7 % 6)
    assert a.level == b.level and np.array_equal(a.initial.poses, b.initial.poses)
    e = make_sample(SPEC, "in-template-eval", 7 % 6)
    assert e.level == a.level and not np.array_equal(e.initial.poses[0], make_sample(SPEC, "train-60t", 7 % 6).initial.poses[0])


# ------------------------------------------------------------------ placement and physics
def _check_scene(sample, scene: Scene) -> None:
    L = SPEC.world_size
    assert scene.bodies[0].name == "red ball"
    kinds = {dict(b.attrs)["type"] for b in scene.bodies[1:]}
    assert kinds == {t.key for t in template_types(sample.level)}
    assert in_view(body_bounds(sample.initial)[0], L, 0.0).all()  # everything in view at the start
    assert 0.0 < sample.contact_time < SPEC.frame_interval * (SPEC.frames - 1)  # an event
    assert np.abs(scene.velocities[0]).max() < 1e-9  # objects start at rest
    static = [i for i, b in enumerate(scene.bodies) if not b.dynamic]
    assert np.array_equal(scene.poses[:, static], np.repeat(scene.poses[:1, static], SPEC.frames, axis=0))
    assert np.all(np.isfinite(scene.poses))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=st.sampled_from(TEMPLATE_IDS), draw=st.integers(0, 10**6),
       split=st.sampled_from(["train-60t", "in-template-eval", "out-of-template-eval", "train-6t"]))
def test_property_any_template_places_an_event(template, draw, split):
    decl = SPEC.split(split)
    sets = template_sets(SPEC.base_seed)
    ids = sets[decl.option("templates")]
    if template not in ids:
        template = ids[draw % len(ids)]
    index = draw * len(ids) + ids.index(template)
    if index >= decl.size:
        index %= decl.size
    sample = make_sample(SPEC, split, index)
    _check_scene(sample, simulate_sample(SPEC, sample))


def _coverage(body: Body, poses: np.ndarray, resolution: int) -> np.ndarray:
    """float (T, H, W): the body's pixel coverage alone on white (drawn black)."""
    alone = Scene((Body(body.shape, (0, 0, 0), body.dynamic),), poses[:, None, :])
    return (255.0 - render(alone, resolution)[..., 0]) / 255.0


@pytest.mark.slow
def test_rigid_bodies_stay_rigid_static_stay_put_and_barely_overlap():
    """Areas constant frame to frame; no two bodies overlap by more than a few pixels.

    Overlap is measured in the render, as a viewer sees it: where two bodies' coverages
    sum to more than 1 (+ uint8 rounding) they must overlap by at least the excess."""
    res = 256
    worst_area, worst_overlap = 0.0, 0.0
    for i in range(0, 40, 4):
        sample = make_sample(SPEC, "out-of-template-eval", i)
        scene = simulate_sample(SPEC, sample)
        inside = in_view(body_bounds(scene), SPEC.world_size, -2 * SPEC.world_size / res)  # (T, B) clear of edges
        covs = [_coverage(b, scene.poses[:, k], res) for k, b in enumerate(scene.bodies)]
        for k, cov in enumerate(covs):
            area = cov.sum(axis=(1, 2))[inside[:, k]]
            if len(area):
                worst_area = max(worst_area, float((area.max() - area.min()) / area.mean()))
        for a, b in itertools.combinations(range(len(covs)), 2):
            excess = np.clip(covs[a] + covs[b] - 1.0 - 2.0 / 255, 0.0, None).sum(axis=(1, 2))
            worst_overlap = max(worst_overlap, float(excess.max()))
    assert worst_area < 0.01  # 1% of a body's area: anti-aliasing and uint8 rounding only
    assert worst_overlap < 1.0  # px^2 at 256 px (measured: see docs/tasks.md, "Combinatorial")


def test_everything_stays_in_view_no_tunnelling():
    counts = [make_sample(SPEC, "in-template-eval", i).frames_in_view for i in range(30)]
    assert min(counts) == SPEC.frames  # walls and floor hold every body; none tunnels out


# ------------------------------------------------------------------ storage
def test_golden_split_hash_and_regeneration(tmp_path):
    golden = _golden()
    plan = make_plan(SPEC, "out-of-template-eval", resolution=128, limit=8)
    generate(plan, tmp_path / "oot", progress=False)
    report = verify(tmp_path / "oot", regenerate=8)
    assert report.ok, report.problems
    assert report.recomputed_hash == golden["out-of-template-eval-8-at-128"]


def test_training_rows_store_parameters_and_load_as_videos(tmp_path):
    plan = make_plan(SPEC, "train-6t", resolution=128, limit=12)
    generate(plan, tmp_path / "t6", progress=False)
    assert verify(tmp_path / "t6", regenerate=3).ok
    reader = SplitReader(tmp_path / "t6")
    assert reader.manifest["with_states"] is False
    rows = list(reader.rows())
    assert "positions" not in rows[0] and rows[0]["template"] == rows[0]["level"]
    # the loader's video is the one an evaluation split would store for the same scene
    sample = make_sample(SPEC, "train-6t", 5)
    from phybench.data.split import render_row, scene_row

    expected = render_row(scene_row(SPEC, simulate_sample(SPEC, sample)), 128)
    assert np.array_equal(reader.video(rows[5]), expected)
    ds = load_hf_dataset(tmp_path / "t6")
    assert np.array_equal(np.asarray(ds[5]["video"]), expected)
    assert np.array_equal(sample_video(reader.plan, 5, slice(0, 1)), expected[:1])


def test_eval_rows_round_trip_ragged_bodies(tmp_path):
    plan = make_plan(SPEC, "in-template-eval", resolution=128, limit=6)
    generate(plan, tmp_path / "it", progress=False)
    reader = SplitReader(tmp_path / "it")
    counts = set()
    for row in reader.rows():
        scene = row_scene(row)
        counts.add(len(scene.bodies))
        assert np.array_equal(reader.video(row), render(scene, 128))
    assert len(counts) > 1  # scenes with different numbers of bodies share a shard


@pytest.mark.slow
def test_workers_give_the_same_split(tmp_path):
    plan = make_plan(SPEC, "out-of-template-eval", resolution=128, limit=8, shard_size=2)
    one = generate(plan, tmp_path / "one", progress=False).manifest["split_hash"]
    two = generate(plan, tmp_path / "two", workers=2, progress=False).manifest["split_hash"]
    assert one == two == _golden()["out-of-template-eval-8-at-128"]


# ------------------------------------------------------------------ baselines, scoring, board
@pytest.mark.slow
def test_baselines_score_and_show_as_table_two(tmp_path):
    from phybench.reference import BaselineError, run_baseline
    from phybench.leaderboard import build
    from phybench.scoring.run.results import results_bytes
    from phybench.scoring.run.score import score

    results = tmp_path / "results"
    results.mkdir()
    train = tmp_path / "train"
    generate(make_plan(SPEC, "train-6t", resolution=128, limit=12), train, progress=False)
    for split in SPEC.eval_splits:
        data = tmp_path / split
        generate(make_plan(SPEC, split, resolution=128, limit=6), data, progress=False)
        with pytest.raises(BaselineError, match="not read back from pixels"):
            run_baseline("linear-extrapolation", data, tmp_path / f"lin-{split}", progress=False)
        for name in ("ground-truth", "copy-last", "physics-oracle", "nearest-neighbour"):
            sub = run_baseline(name, data, tmp_path / f"{name}-{split}", train if name == "nearest-neighbour" else None,
                               progress=False, cache_dir=tmp_path / "cache")
            out = score(sub, data, ("ssim", "psnr"), progress=False)
            (results / f"{split}-{name}.json").write_bytes(results_bytes(out.results))
    summary = lambda n, s: json.loads((results / f"{s}-{n}.json").read_text())["summary"]["overall"]  # noqa: E731
    for split in SPEC.eval_splits:
        assert summary("ground-truth", split)["psnr"]["mean"] == 100.0
        assert summary("physics-oracle", split)["ssim"]["mean"] > summary("copy-last", split)["ssim"]["mean"]
        assert set(summary("ground-truth", split)) >= {"ssim", "psnr"}
    report = build(results, tmp_path / "site")
    assert report.ok, report.refused
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    board = next(b for b in data["boards"] if b["task"] == "combinatorial")
    assert board["layout"] == "splits"
    assert [c["key"] for c in board["levels"]] == ["in-template-eval", "out-of-template-eval"]
    nn = next(r for r in board["rows"] if r["model"] == "nearest-neighbour")
    assert nn["meta"]["train_split"] == "train-6t"
    md = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "Each cell: in-template-eval / out-of-template-eval" in md
    assert "| nearest-neighbour | train-6t \\(12 videos\\) |" in md


def test_tasks_show_prints_the_covering_proof(capsys):
    from phybench.cli import main

    assert main(["tasks", "show", "combinatorial"]) == 0
    out = capsys.readouterr().out
    assert "train-6t covers 28 of 28 pairs of object types (all)" in out
    assert "100 x 10 templates" in out

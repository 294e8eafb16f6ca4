"""The abnormality judge and the planted violations it is calibrated on.

Ground truth is never judged abnormal (every family, both evaluation splits); every planted
kind the judge is meant to see is seen on most videos; every metric moves the right way on
every planted kind; the commands work end to end.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.judge.abnormal import SETTINGS, judge
from phybench.scoring.run.score import score
from phybench.tasks import get_task
from phybench.violations import KINDS, onset_frame, plant, write_violations

SIZES = {"uniform": 8, "collision": 8, "combinatorial": 4}


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("abnormal")
    out = {}
    for task, n in SIZES.items():
        for split in get_task(task).eval_splits:
            folder = root / f"{task}-{split}"
            generate(make_plan(get_task(task), split, limit=n), folder, progress=False)
            out[(task, split)] = folder
    return out


def _verdicts(split_dir, videos=None):
    reader = SplitReader(split_dir)
    cf = int(reader.manifest["condition_frames"])
    out = []
    for row in reader.rows():
        gt = reader.video(row)
        b = row_scene(row).bodies
        video = gt if videos is None else videos[row["sample_id"]]
        out.append(judge(video, gt, [x.colour for x in b], [not x.dynamic for x in b], cf))
    return out


@pytest.mark.slow
def test_ground_truth_is_never_abnormal(splits):
    for key, folder in splits.items():
        bad = [v.to_dict() for v in _verdicts(folder) if v.abnormal]
        assert not bad, (key, bad[:1])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["vanish", "appear", "break", "teleport", "colour", "deform", "reshape"])
def test_planted_object_faults_are_seen(splits, kind):
    """Recall on the small splits here; docs/judge.md's table has it on 100-sample splits."""
    hits = total = 0
    for (task, split), folder in splits.items():
        reader = SplitReader(folder)
        spec, res = reader.spec, int(reader.manifest["resolution"])
        cf = spec.condition_frames
        for row in reader.rows():
            gt = reader.video(row)
            video, label = plant(kind, row, spec, res, gt)
            if video is None:
                continue
            assert label["onset"] >= cf and np.array_equal(video[:label["onset"]], gt[:label["onset"]])
            b = row_scene(row).bodies
            total += 1
            hits += judge(video, gt, [x.colour for x in b], [not x.dynamic for x in b], cf).abnormal
    assert total >= 20
    assert hits / total >= 0.9, (kind, hits, total)


def _rules(row, spec, res, gt, kind):
    video, label = plant(kind, row, spec, res, gt)
    if video is None:
        return None
    b = row_scene(row).bodies
    return {f.rule for f in judge(video, gt, [x.colour for x in b], [not x.dynamic for x in b],
                                  spec.condition_frames).findings}


@pytest.mark.parametrize("kind,rule,tasks,least", [
    ("freeze", "freeze", ("uniform", "collision"), 0.75),  # a body stopped in mid-air
    ("interpenetration", "interpenetration", ("collision",), 0.9),  # balls passing through each other
])
def test_motion_rules_see_their_planted_kind(splits, kind, rule, tasks, least):
    hits = total = 0
    for (task, split), folder in splits.items():
        if task not in tasks:
            continue
        reader = SplitReader(folder)
        for row in reader.rows():
            rules = _rules(row, reader.spec, int(reader.manifest["resolution"]), reader.video(row), kind)
            if rules is not None:
                total += 1
                hits += rule in rules
    assert total >= 8 and hits / total >= least, (kind, hits, total)


def test_a_body_at_rest_that_moves_is_seen():
    """Motion without cause: a ball resting in the ground truth starts to move in the generated video."""
    from phybench.world.render import render
    from phybench.world.scene import Body, Disc, Scene

    red, blue = (255, 0, 0), (0, 0, 255)
    bodies = (Body(Disc(0.8), red), Body(Disc(0.8), blue))
    T = 8
    poses = np.zeros((T, 2, 3))
    poses[:, 0, :2] = [3.0, 5.0]  # rests
    poses[:, 1, :2] = [7.0, 2.0]
    poses[:, 1, 1] += np.arange(T) * 0.2  # moves
    gt = render(Scene(bodies, poses, 10.0), 128)
    moved = poses.copy()
    moved[4:, 0, 0] += 0.1 * np.arange(1, T - 3)  # the resting ball drifts off on its own
    video = render(Scene(bodies, moved, 10.0), 128)
    verdict = judge(video, gt, [red, blue], [False, False], 1)
    assert "rest" in {f.rule for f in verdict.findings}, verdict.to_dict()
    assert not judge(gt, gt, [red, blue], [False, False], 1).abnormal


def test_merge_of_two_bodies_of_one_colour_is_seen():
    """Two grey balls, apart in the ground truth, drawn as one piece in the generated video."""
    from phybench.world.render import render
    from phybench.world.scene import Body, Disc, Scene

    grey = (185, 202, 210)
    bodies = (Body(Disc(0.8), grey), Body(Disc(0.8), grey))
    T = 16
    poses = np.zeros((T, 2, 3))
    poses[:, 0, :2] = [3.0, 5.0]
    poses[:, 1, :2] = [7.0, 5.0]
    poses[:, :, 1] -= np.arange(T)[:, None] * 0.1  # both fall slowly, apart
    gt = render(Scene(bodies, poses, 10.0), 128)
    merged = poses.copy()
    merged[2:, 1, 0] = np.maximum(7.0 - 0.3 * np.arange(1, T - 1), 4.5)  # the second one drifts into the first
    video = render(Scene(bodies, merged, 10.0), 128)
    verdict = judge(video, gt, [grey, grey], [False, False], 1)
    assert "merge" in {f.rule for f in verdict.findings}, verdict.to_dict()
    assert not judge(gt, gt, [grey, grey], [False, False], 1).abnormal


def test_a_static_body_that_moves_is_seen(splits):
    for split in get_task("combinatorial").eval_splits:
        reader = SplitReader(splits[("combinatorial", split)])
        for row in reader.rows():
            gt = reader.video(row)
            video, label = plant("static", row, reader.spec, int(reader.manifest["resolution"]), gt)
            if video is None:
                continue
            b = row_scene(row).bodies
            verdict = judge(video, gt, [x.colour for x in b], [not x.dynamic for x in b], reader.spec.condition_frames)
            assert any(f.rule == "static" for f in verdict.findings), label


@pytest.mark.slow
def test_every_metric_moves_the_right_way_on_every_planted_kind(splits, tmp_path):
    """Scored like any submission: no planted kind improves any metric over the ground truth."""
    folder = splits[("uniform", "ood-eval")]
    kinds = ["vanish", "teleport", "freeze", "speed-1.2", "reverse", "colour"]
    write_violations(folder, tmp_path / "v", kinds, progress=False)
    assert main(["baseline", "ground-truth", "--data", str(folder), "--out", str(tmp_path / "gt"), "--quiet"]) == 0
    metrics = ("velocity_error", "ssim", "psnr")
    truth = score(tmp_path / "gt", folder, metrics, progress=False).results["summary"]["overall"]
    assert truth["abnormal"]["mean"] == 0.0
    for kind in kinds:
        got = score(tmp_path / "v" / kind, folder, metrics, progress=False).results["summary"]["overall"]
        assert got["velocity_error_penalised"]["mean"] > truth["velocity_error_penalised"]["mean"], kind
        assert got["ssim"]["mean"] < truth["ssim"]["mean"] and got["psnr"]["mean"] < truth["psnr"]["mean"], kind
        assert got["abnormal"]["mean"] >= truth["abnormal"]["mean"], kind
        assert got["trajectory_error"]["mean"] >= truth["trajectory_error"]["mean"], kind
    vanished = score(tmp_path / "v" / "vanish", folder, metrics, progress=False).results["summary"]["overall"]
    assert vanished["abnormal"]["mean"] >= 0.5


@pytest.mark.slow
def test_abnormal_is_in_every_results_file_with_its_settings(splits, tmp_path):
    folder = splits[("combinatorial", "in-template-eval")]
    assert main(["baseline", "copy-last", "--data", str(folder), "--out", str(tmp_path / "cl"), "--quiet"]) == 0
    res = score(tmp_path / "cl", folder, ("ssim",), progress=False).results
    assert "abnormal" in res["metrics"]
    assert res["provenance"]["metric_settings"]["abnormal"] == json.loads(json.dumps(SETTINGS))
    assert 0.0 <= res["summary"]["overall"]["abnormal"]["mean"] <= 1.0


def test_commands_end_to_end(splits, tmp_path, capsys):
    folder = splits[("collision", "id-eval")]
    out = tmp_path / "v"
    assert main(["violations", "--data", str(folder), "--kinds", "vanish,freeze", "--out", str(out), "--quiet"]) == 0
    labels = json.loads((out / "labels.json").read_text())
    assert labels["onset_frame"] == onset_frame(get_task("collision")) and set(labels["labels"]) == {"vanish", "freeze"}
    capsys.readouterr()
    assert main(["judge", str(out / "vanish"), "--data", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "ABNORMAL" in text and "rule" not in text.split("ABNORMAL")[0]
    assert main(["judge", str(out / "vanish"), "--data", str(folder), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["abnormal"] >= 1 and doc["settings"] == json.loads(json.dumps(SETTINGS))
    assert main(["violations", "--data", str(folder), "--kinds", "melt", "--out", str(tmp_path / "x")]) == 2
    assert "unknown violation kind(s) melt" in capsys.readouterr().err
    assert main(["violations", "--data", str(folder), "--out", str(out)]) == 2  # never overwrites


def test_kinds_are_documented_and_deterministic(splits):
    folder = splits[("uniform", "id-eval")]
    reader = SplitReader(folder)
    row = next(iter(reader.rows()))
    gt = reader.video(row)
    for kind in KINDS:
        a, la = plant(kind, row, reader.spec, 128, gt)
        b, lb = plant(kind, row, reader.spec, 128, gt)
        assert la == lb and (a is None) == (b is None) and (a is None or np.array_equal(a, b))


@pytest.mark.slow
def test_rescore_recomputes_the_judge_and_keeps_the_rest(splits, tmp_path, capsys):
    """A results file scored under other judge settings, rescored from the same submission,
    equals a fresh full score (but for the `rescored` note); anything else is refused."""
    from phybench.scoring.run.results import results_bytes
    from phybench.scoring.run.rescore import rescore
    from phybench.scoring.run.score import ScoreError

    folder = splits[("collision", "id-eval")]
    assert main(["baseline", "copy-last", "--data", str(folder), "--out", str(tmp_path / "cl"), "--quiet"]) == 0
    assert main(["violations", "--data", str(folder), "--kinds", "vanish", "--out", str(tmp_path / "v"), "--quiet"]) == 0
    fresh = score(tmp_path / "cl", folder, ("ssim", "psnr"), progress=False).results
    stale = json.loads(results_bytes(fresh))
    stale["provenance"]["metric_settings"]["abnormal"] = {"area": "an older judge"}
    stale["summary"]["overall"]["abnormal"]["mean"] = 0.123
    path = tmp_path / "r.json"
    path.write_bytes(results_bytes(stale))
    doc = rescore(path, tmp_path / "cl", folder, ["abnormal"], progress=False)
    assert doc["provenance"].pop("rescored")["metrics"] == ["abnormal"]
    assert results_bytes(doc) == results_bytes(fresh)
    noted = {**doc, "provenance": {**doc["provenance"], "rescored": {"metrics": ["abnormal"], "phybench_version": "0"}}}
    path.write_bytes(results_bytes(noted))
    again = rescore(path, tmp_path / "cl", folder, ["ssim"], progress=False)
    assert again["provenance"]["rescored"]["metrics"] == ["abnormal", "ssim"]  # a second rescore keeps the first named
    path.write_bytes(results_bytes(stale))
    with pytest.raises(ScoreError, match="is not the submission"):
        rescore(path, tmp_path / "v" / "vanish", folder, ["abnormal"], progress=False)
    with pytest.raises(ScoreError, match="only per-video metrics without weights"):
        rescore(path, tmp_path / "cl", folder, ["lpips"], progress=False)
    stale["provenance"]["metric_settings"]["ssim"] = {"window": "another"}
    path.write_bytes(results_bytes(stale))
    with pytest.raises(ScoreError, match="settings of ssim differ"):
        rescore(path, tmp_path / "cl", folder, ["abnormal"], progress=False)
    del stale["provenance"]["metric_settings"]["ssim"]
    path.write_bytes(results_bytes(stale))
    capsys.readouterr()
    assert main(["rescore", str(path), "--submission", str(tmp_path / "cl"), "--data", str(folder), "--quiet"]) == 0
    assert "abnormal" in capsys.readouterr().out
    assert json.loads(path.read_text())["summary"]["overall"]["abnormal"] == fresh["summary"]["overall"]["abnormal"]


@pytest.mark.slow
def test_rescore_refreshes_the_sidecar_law_it_recomputed(splits, tmp_path):
    """`phybench rescore --metrics law_error` rewrites the `.samples.json` sidecar's per-video law with
    the recomputed one (it used to keep the old sidecar, so `leaderboard verify` then refused the file);
    a rescore that does not recompute the law keeps the sidecar's law as it was."""
    from phybench.scoring.run.layout import samples_path
    from phybench.scoring.run.score import scored_files

    folder = splits[("collision", "id-eval")]
    assert main(["baseline", "physics-oracle", "--data", str(folder), "--out", str(tmp_path / "nn"), "--quiet"]) == 0
    path = tmp_path / "r.json"
    files = dict(scored_files(path, score(tmp_path / "nn", folder, ("velocity_error",), progress=False)))
    fresh_sidecar = files[samples_path(path)]
    stale = json.loads(fresh_sidecar)
    for row in stale["samples"]:
        if row.get("law"):
            row["law"]["fit"] = {k: 0.5 for k in row["law"]["fit"]}  # an older law fit
    assert stale != json.loads(fresh_sidecar)
    for p, data in files.items():
        p.write_bytes(data)
    samples_path(path).write_text(json.dumps(stale))
    args = ["rescore", str(path), "--submission", str(tmp_path / "nn"), "--data", str(folder), "--quiet"]
    assert main([*args, "--metrics", "abnormal"]) == 0
    assert json.loads(samples_path(path).read_text())["samples"] == stale["samples"]  # the law not recomputed: kept
    assert main([*args, "--metrics", "law_error"]) == 0
    assert samples_path(path).read_bytes() == fresh_sidecar


@pytest.mark.slow
def test_rescore_adds_a_new_companion_where_a_fresh_score_lists_it(splits, tmp_path):
    """A results file from before a family gained a companion (collision's `contact_error`), rescored
    with it, lists its metrics in a fresh score's order (it used to append it, which verify refused)."""
    from phybench.scoring.run.rescore import rescore
    from phybench.scoring.run.results import results_bytes

    folder = splits[("collision", "id-eval")]
    assert main(["baseline", "physics-oracle", "--data", str(folder), "--out", str(tmp_path / "po"), "--quiet"]) == 0
    fresh = json.loads(results_bytes(score(tmp_path / "po", folder, ("velocity_error",), progress=False).results))
    old = json.loads(json.dumps(fresh))
    assert old["metrics"][-1] != "contact_error"  # not last in a fresh score: the case that matters
    old["metrics"].remove("contact_error")
    del old["higher_is_better"]["contact_error"], old["provenance"]["metric_settings"]["contact"]
    for block in (old["summary"]["overall"], *old["summary"]["levels"].values()):
        block.pop("contact_error", None)
    path = tmp_path / "r.json"
    path.write_bytes(results_bytes(old))
    doc = rescore(path, tmp_path / "po", folder, ["contact_error"], progress=False)
    assert doc["provenance"].pop("rescored")["metrics"] == ["contact_error"]
    assert doc["metrics"] == fresh["metrics"] and results_bytes(doc) == results_bytes(fresh)


@pytest.mark.slow
def test_rescore_of_the_tracking_metric_rewrites_which_videos_were_lost(splits, tmp_path):
    """Rescoring `velocity_error` recomputes the `untrackable` and `excluded` lists and counts too (it
    used to keep the old ones, so a parser that now loses other videos left a file verify refused)."""
    from phybench.scoring.run.rescore import rescore
    from phybench.scoring.run.results import results_bytes

    folder = splits[("uniform", "id-eval")]
    assert main(["baseline", "physics-oracle", "--data", str(folder), "--out", str(tmp_path / "po"), "--quiet"]) == 0
    fresh = json.loads(results_bytes(score(tmp_path / "po", folder, ("velocity_error",), progress=False).results))
    old = json.loads(json.dumps(fresh))
    lost = {"sample_id": old["provenance"].get("x", "0"), "level": "r", "reason": "missing"}
    old["untrackable"] = [lost]  # what an older parser lost
    for block in (old["summary"]["overall"], *old["summary"]["levels"].values()):
        block["untrackable"] = {"count": 1, "rate": 0.5}
    path = tmp_path / "r.json"
    path.write_bytes(results_bytes(old))
    doc = rescore(path, tmp_path / "po", folder, ["velocity_error"], progress=False)
    doc["provenance"].pop("rescored")
    assert results_bytes(doc) == results_bytes(fresh)


def test_shape_descriptors_of_rendered_bodies():
    """The tracker's descriptors: a disc is round and compact; a 2:1 bar is twice as long as wide,
    oriented as drawn, with extents along its axes of its size."""
    from phybench.scoring.judge.abnormal import colour_masks, shape_of
    from phybench.world.render import render
    from phybench.world.scene import Body, Disc, Rect, Scene

    def drawn(shape, angle):
        poses = np.zeros((1, 1, 3))
        poses[0, 0] = [5.0, 5.0, angle]
        video = render(Scene((Body(shape, (255, 0, 0)),), poses, 10.0), 128)
        return shape_of(colour_masks(video, (255, 0, 0))[0])

    disc = drawn(Disc(1.0), 0.0)
    assert abs(disc.elongation - 1.0) < 0.03 and abs(disc.compactness - 1.0) < 0.03
    assert abs(disc.area - np.pi * 12.8 ** 2) < 0.03 * disc.area and disc.centroid == pytest.approx((63.5, 63.5), abs=0.5)
    bar = drawn(Rect(2.5, 1.25), 0.3)
    assert abs(bar.elongation - 2.0) < 0.1 and abs(bar.compactness - 3 / np.pi) < 0.03  # a rectangle's
    assert bar.angle == pytest.approx(-0.3, abs=0.03)  # image rows point down: the world's +0.3 rad reads -0.3
    assert bar.rect[0] == pytest.approx(32, abs=2) and bar.rect[1] == pytest.approx(16, abs=2)
    assert shape_of(np.zeros((8, 8), bool)) is None


def _struck_out_scene(T: int = 10, leave: int = 6):
    """A blue ball resting near the right edge, struck out of the view within one frame at `leave`
    (from where it does not touch the border: the full protocol's collision OOD case)."""
    from phybench.world.scene import Body, Disc, Scene

    blue, red = (0, 0, 255), (255, 0, 0)
    poses = np.zeros((T, 2, 3))
    poses[:, 0, :2] = [9.2, 5.0]
    poses[leave:, 0, 0] = 11.5  # out of the 10-unit view in one frame
    poses[:, 1, :2] = [3.0, 5.0]
    poses[:, 1, 0] += 0.5 * np.arange(T)
    return Scene((Body(Disc(0.4), blue), Body(Disc(0.8), red)), poses, 10.0), [blue, red]


def test_a_ball_the_ground_truth_itself_knocks_out_of_view_in_one_frame_is_no_vanish():
    from phybench.world.render import render

    scene, colours = _struck_out_scene()
    gt = render(scene, 128)
    assert not judge(gt, gt, colours, [False, False], 3).abnormal
    early, _ = _struck_out_scene(leave=5)  # the model's ball vanishes a frame before the ground truth's leaves
    verdict = judge(render(early, 128), gt, colours, [False, False], 3)
    assert "area" in {f.rule for f in verdict.findings}, verdict.to_dict()


def test_levels_are_mapped_back_before_judging_and_only_when_they_moved():
    from phybench.benign import degrade
    from phybench.scoring.judge.levels import LEVELS_TOL, match_levels
    from phybench.world.render import render

    scene, _ = _struck_out_scene()
    gt = render(scene, 128)
    washed = degrade("contrast-0.85", gt, 3, "x")
    assert washed[5, 0, 0].tolist() == [236, 236, 236]  # the white background turned grey
    back = match_levels(washed, gt, 3)
    assert np.abs(back[3:].astype(int) - gt[3:].astype(int)).max() <= 2  # the levels are back within rounding
    assert np.array_equal(back[:3], washed[:3])  # condition frames untouched
    cast = degrade("cast-6", gt, 3, "x")  # moves no level by more than LEVELS_TOL: left alone
    assert 6 <= LEVELS_TOL and match_levels(cast, gt, 3) is cast


def _collision_rows(splits, n=8):
    reader = SplitReader(splits[("collision", "id-eval")])
    return reader, list(reader.rows())[:n]


def test_equal_mass_collision_is_the_closed_form_equal_mass_answer(splits):
    """Box2D re-run with equal masses: the balls leave the contact with the 1-D elastic answer for
    m1 = m2 (they swap velocities), not the unequal-mass one the ground truth shows."""
    from phybench.violations_law import equal_mass, first_contact_frame
    from phybench.world.laws import elastic_1d

    reader, rows = _collision_rows(splits)
    spec, dt = reader.spec, reader.spec.frame_interval
    checked = 0
    for row in rows:
        scene = row_scene(row)
        planted = equal_mass(scene, spec, onset_frame(spec))
        assert planted.scene is not None, planted.note
        f = first_contact_frame(scene, spec)
        if not np.isfinite(f) or f > scene.num_frames - 3:
            continue
        u1, u2 = row["velocity_1"], -row["velocity_2"]
        w1, w2 = elastic_1d(1.0, 1.0, u1, u2)
        after = (planted.scene.poses[-1, :2, 0] - planted.scene.poses[-2, :2, 0]) / dt  # a frame well after the contact
        assert after == pytest.approx([w1, w2], abs=1e-3 * max(abs(u1), abs(u2)))
        truth = elastic_1d(row["radius_1"] ** 2, row["radius_2"] ** 2, u1, u2)
        if abs(row["radius_1"] - row["radius_2"]) > 0.05:  # the planted answer is not the true one
            assert abs(after[0] - truth[0]) > 1e-2
        checked += 1
    assert checked >= 4
    # equal radii: equal masses already, so nothing to plant (and the kind says why)
    scene = row_scene(rows[0])
    same = dataclasses.replace(scene.bodies[1], shape=scene.bodies[0].shape)
    skip = equal_mass(dataclasses.replace(scene, bodies=(scene.bodies[0], same)), spec, 10)
    assert skip.scene is None and "equal radii" in skip.note


def test_momentum_scaled_after_the_first_contact(splits):
    """momentum-1.5: every displacement from the contact frame on is 1.5 times the ground truth's,
    the positions continuous there; the frames before it are the ground truth's."""
    from phybench.violations_law import MOMENTUM_FACTOR, first_contact_frame, momentum_scaled

    reader, rows = _collision_rows(splits)
    spec = reader.spec
    planted_any = 0
    for row in rows:
        scene = row_scene(row)
        p = momentum_scaled(scene, spec, onset_frame(spec))
        if p.scene is None:
            assert "no contact" in p.note
            continue
        f = int(first_contact_frame(scene, spec))
        assert p.onset == f + 1 and spec.condition_frames <= f
        np.testing.assert_array_equal(p.scene.poses[:f + 1], scene.poses[:f + 1])
        steps, true = np.diff(p.scene.poses[f:, :, :2], axis=0), np.diff(scene.poses[f:, :, :2], axis=0)
        np.testing.assert_allclose(steps, MOMENTUM_FACTOR * true, atol=1e-12)
        planted_any += 1
    assert planted_any >= 4
    # a scene whose balls never meet in the generated frames: skipped
    apart = scene.poses.copy()
    apart[:, 1, 0] += 1e3
    far = momentum_scaled(dataclasses.replace(scene, poses=apart, velocities=None), spec, 10)
    assert far.scene is None


@pytest.mark.slow
def test_law_block_names_momentum_for_the_momentum_kinds(splits):
    """Scored like a submission: the law block's `wrong` names momentum wherever the planted
    change moves the momentum exchange by clearly more than the 5% threshold, and restitution
    stays right for equal masses (elastic)."""
    from phybench.scoring.learned.law import WRONG
    from phybench.scoring.run.sample import score_sample

    reader, rows = _collision_rows(splits)
    m = reader.manifest
    seen = 0
    for row in rows:
        gt = reader.video(row)
        assert not score_sample(row, gt, gt, m, ("velocity_error",))["law"].get("wrong")
        m1, m2, u1, u2 = row["radius_1"] ** 2, row["radius_2"] ** 2, row["velocity_1"], -row["velocity_2"]
        scale = m1 * abs(u1) + m2 * abs(u2)
        expected = {"equal-mass": (m1 - m2) * (u2 - u1) / scale, "momentum-1.5": 0.5 * (m1 * u1 + m2 * u2) / scale}
        for kind, change in expected.items():
            video, label = plant(kind, row, reader.spec, int(m["resolution"]), gt)
            if video is None:
                continue
            law = score_sample(row, video, gt, m, ("velocity_error",))["law"]
            assert law["fit"]["momentum_change"] == pytest.approx(change, abs=0.01), (kind, row["sample_id"])
            if abs(change) > 2 * WRONG:
                assert "momentum" in law["wrong"], (kind, row["sample_id"], law)
                seen += 1
            if kind == "equal-mass":
                assert law["fit"]["restitution"] == pytest.approx(1.0, abs=0.01)
                assert law["fit"]["mass_ratio"] == pytest.approx(1.0, abs=0.02)
    assert seen >= 4

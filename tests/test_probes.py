"""Attribute-priority probe: tasks, readers (checked on ground truth), verdicts, ranking, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.split import render_row, scene_row
from phybench import probes
from phybench.probes import composition, gaps, priority
from phybench.probes import flip as flip_probe
from phybench.probes import reading as body_reader
from phybench.tasks import TASKS, family_of
from phybench.probes.priority import COLOURS, SIZE_SETS, VELOCITY_SETS, body_shape
from phybench.tasks.sampling import make_sample, simulate_sample
from phybench.world.render import render
from phybench.world.scene import Body, Scene

GOLDEN = Path(__file__).parent / "golden_probes.json"
PRIORITY = [name for name, spec in TASKS.items() if getattr(family_of(spec), "probe", None) == "priority"]


def _row(spec, split: str, index: int) -> dict:
    sample = make_sample(spec, split, index)
    return {**sample.params, **scene_row(spec, simulate_sample(spec, sample))}


def test_seven_tasks_six_pairs_and_the_ring_variant():
    assert len(PRIORITY) == 7
    pairs = {tuple(sorted(TASKS.get(n).param("pair"))) for n in PRIORITY if TASKS.get(n).param("ranked")}
    assert len(pairs) == 6
    assert sum(not TASKS.get(n).param("ranked") for n in PRIORITY) == 1
    for name in PRIORITY:
        spec = TASKS.get(name)
        train, conflict = set(map(tuple, spec.param("train"))), set(map(tuple, spec.param("conflict")))
        assert not train & conflict
        # every conflict combination shares one value with each training combination
        for c in conflict:
            assert sorted(sum(a == b for a, b in zip(c, t)) for t in train) == [1, 1]
        levels = {make_sample(spec, "conflict-eval", i).level for i in range(4)}
        assert levels == {"+".join(c) for c in conflict}
        assert {make_sample(spec, "train", i).level for i in range(4)} == {"+".join(c) for c in train}


@pytest.mark.slow
@pytest.mark.parametrize("name", PRIORITY)
def test_ground_truth_keeps_both_on_every_video(name):
    """The readers' check: every ground-truth video, both splits and resolutions, "kept both"."""
    spec = TASKS.get(name)
    pair = spec.param("pair")
    for split, n in (("conflict-eval", 24), ("train", 8)):
        for i in range(n):
            row = _row(spec, split, i)
            for res in (128, 256) if i < 3 else (128,):
                reading = body_reader.read_body(render_row(row, res), spec.condition_frames, spec.world_size,
                                           spec.frame_interval)
                got = priority.verdict(pair, priority.conditioned_classes(row), priority.reading_classes(reading))
                assert got == "both", (name, split, i, res, reading)
                # the readings themselves, not only their classes
                assert abs(reading.radius - row["radius"]) / row["radius"] < 0.02
                assert abs(reading.velocity - row["velocity"]) < 0.02
                assert abs(reading.fill - body_reader.FILL[row["shape"]]) < 0.04


def _flipped_video(spec, row: dict, attribute: str) -> np.ndarray:
    """The ground truth's condition frames, then the body with one attribute in its other set."""
    colour, shape, r, v = row["colour"], row["shape"], float(row["radius"]), float(row["velocity"])
    if attribute == "colour":
        colour = "blue" if colour == "red" else "red"
    elif attribute == "shape":
        shape = next(s for s in spec.categorical[1].values if s != shape)
    elif attribute == "size":
        src, dst = (("small", "large") if r < 1.05 else ("large", "small"))
        (a, b), (c, d) = SIZE_SETS[src], SIZE_SETS[dst]
        r = c + (r - a) / (b - a) * (d - c)
    else:
        src, dst = (("slow", "fast") if v < 2.5 else ("fast", "slow"))
        (a, b), (c, d) = VELOCITY_SETS[src], VELOCITY_SETS[dst]
        v = c + (v - a) / (b - a) * (d - c)
    T, cf, dt = spec.frames, spec.condition_frames, spec.frame_interval
    start = row["positions"][cf - 1, 0].astype(np.float64)
    y = float(np.clip(start[1], r + 0.1, spec.world_size - r - 0.1))
    t = (np.arange(T) - (cf - 1)) * dt
    poses = np.zeros((T, 1, 3))
    poses[:, 0, 0], poses[:, 0, 1] = start[0] + v * t, y
    body = Body(body_shape(shape, r), COLOURS[colour])
    video = render(Scene((body,), poses, spec.world_size), 128)
    video[:cf] = render_row(row, 128)[:cf]
    return video


@pytest.mark.parametrize("name", PRIORITY)
def test_readers_see_each_attribute_given_up(name):
    spec = TASKS.get(name)
    first, second = spec.param("pair")
    for i in range(4):
        row = _row(spec, "conflict-eval", i)
        cond = priority.conditioned_classes(row)
        for flip, expected in ((first, "second"), (second, "first")):
            reading = body_reader.read_body(_flipped_video(spec, row, flip), spec.condition_frames, spec.world_size,
                                       spec.frame_interval)
            assert priority.verdict((first, second), cond, priority.reading_classes(reading)) == expected, (flip, i)


def test_a_vanished_body_is_lost_and_wilson_is_exact_at_the_ends():
    spec = TASKS.get(PRIORITY[0])
    video = render_row(_row(spec, "conflict-eval", 0), 128)
    video[spec.condition_frames:] = 255
    reading = body_reader.read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
    assert reading.lost and priority.verdict(spec.param("pair"), {}, priority.reading_classes(reading)) == "lost"
    assert body_reader.wilson(0, 40)[0] == 0.0 and body_reader.wilson(40, 40)[1] == 1.0
    lo, hi = body_reader.wilson(13, 40)
    assert lo < 13 / 40 < hi


def _fake(task: str, first: int, second: int, both: int = 0, model: str = "m") -> dict:
    spec = TASKS.get(task)
    n = first + second + both
    counts = {"both": both, "first": first, "second": second, "neither": 0, "lost": 0}
    return {"probe": "priority", "model": model, "task": task, "analysis": {
        "pair": list(spec.param("pair")), "ranked": spec.param("ranked"), "videos_analysed": n,
        "verdicts": {k: body_reader.share(c, n) for k, c in counts.items()}}}


def test_ranking_from_pairwise_outcomes():
    # the paper's outcome: colour > size > velocity > shape (size-velocity mostly both kept)
    wins = {"colour": 4, "size": 3, "velocity": 2, "shape": 1}
    results = []
    for name in PRIORITY:
        a, b = TASKS.get(name).param("pair")
        if not TASKS.get(name).param("ranked"):
            results.append(_fake(name, 5, 5))
            continue
        results.append(_fake(name, 30, 2, 100) if wins[a] > wins[b] else _fake(name, 2, 30, 100))
    summary = priority.priority_ranking(results)
    assert summary["ranking"] == "colour > size > velocity > shape"
    assert summary["complete"] and summary["pairs_ranked"] == 6
    # a pair with no decisive video is a tie: equal scores are shown as equal
    tied = [_fake(r["task"], 0, 0, 50) if r["analysis"]["ranked"] else r for r in results]
    assert priority.priority_ranking(tied)["ranking"] == "colour = shape = size = velocity"
    with pytest.raises(probes.ProbeError, match="several models"):
        priority.priority_ranking(results[:1] + [_fake(PRIORITY[1], 1, 0, model="other")])


def test_golden_spec_hashes():
    golden = json.loads(GOLDEN.read_text())
    assert {n: TASKS.get(n).spec_hash() for n in PRIORITY} == golden["spec_hashes"]


def test_cli_end_to_end_ground_truth_and_determinism(tmp_path, capsys):
    name = "priority-colour-ring"
    data, sub = tmp_path / "data", tmp_path / "sub"
    assert main(["generate", name, "--split", "conflict-eval", "--out", str(data), "--limit", "12"]) == 0
    manifest = json.loads((data / "manifest.json").read_text())
    assert manifest["split_hash"] == json.loads(GOLDEN.read_text())[f"{name}/conflict-eval-12-at-128"]
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(sub)]) == 0
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["analyze", "priority", str(sub), "--data", str(data), "--out", str(out1)]) == 0
    assert main(["analyze", "priority", str(sub), "--data", str(data), "--out", str(out2), "--json"]) == 0
    assert out1.read_bytes() == out2.read_bytes()
    results = probes.load_results(out1)
    assert results["analysis"]["verdicts"]["both"]["count"] == 12 and results["model"] == "ground-truth"
    capsys.readouterr()
    assert main(["analyze", "priority", str(out1), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pairs"][0]["both"]["share"] == 1.0 and summary["pairs_ranked"] == 0
    # a tampered file is refused; so is a training split and an unknown probe
    tampered = json.loads(out1.read_text())
    tampered["analysis"]["verdicts"]["both"]["count"] = 11
    (tmp_path / "t.json").write_text(json.dumps(tampered))
    assert main(["analyze", "priority", str(tmp_path / "t.json")]) == 2
    assert "do not match" in capsys.readouterr().err
    assert main(["analyze", "gaps", str(out1)]) == 2
    assert main(["analyze", "priority", str(out1), "--out", str(tmp_path / "x.json")]) == 2


def test_leaderboard_probes_page_checks_probe_files(tmp_path):
    from phybench.leaderboard import LeaderboardError, build

    name = "priority-colour-shape"
    data, sub, results = tmp_path / "data", tmp_path / "sub", tmp_path / "results" / "probes"
    assert main(["generate", name, "--split", "conflict-eval", "--out", str(data), "--limit", "8"]) == 0
    assert main(["baseline", "physics-oracle", "--data", str(data), "--out", str(sub)]) == 0
    assert main(["analyze", "priority", str(sub), "--data", str(data), "--out", str(results / "a.json")]) == 0
    report = build(tmp_path / "results", tmp_path / "site")
    assert "probes.html" in report.written and "probes/a.json" in report.accepted
    page = (tmp_path / "site" / "probes.html").read_text()
    assert "<td>physics-oracle</td><td>colour = shape</td>" in page and "priority-colour-shape" in page
    assert '<a href="probes.html">Probes</a>' in (tmp_path / "site" / "index.html").read_text()  # linked
    doc = json.loads((results / "a.json").read_text())
    doc["spec_hash"] = "0" * 64
    (results / "b.json").write_text(json.dumps(doc))
    with pytest.raises(LeaderboardError) as info:
        build(tmp_path / "results", tmp_path / "site2")
    assert [(r.file, r.code) for r in info.value.refused] == [("probes/b.json", "results_format")]


# ------------------------------------------------------------------ flip memorisation
def test_flip_set2_is_set1_and_its_mirror_images():
    spec = TASKS.get("flip-memorisation")
    for k in range(3):
        one = simulate_sample(spec, make_sample(spec, "train-set1", k))
        same = simulate_sample(spec, make_sample(spec, "train-set2", 2 * k))
        mirror = simulate_sample(spec, make_sample(spec, "train-set2", 2 * k + 1))
        assert np.array_equal(one.positions, same.positions)
        np.testing.assert_allclose(spec.world_size - mirror.positions[..., 0], one.positions[..., 0], atol=1e-5)
        assert (mirror.velocities[..., 0] < 0).all() and (one.velocities[..., 0] > 0).all()
    speeds = [make_sample(spec, s, i).params["velocity"] for s in ("train-set1", "eval") for i in range(20)]
    assert min(speeds[:20]) >= 2.5 and max(speeds[20:]) <= 2.5


def test_flip_reader_ground_truth_kept_and_a_reversal_seen():
    spec = TASKS.get("flip-memorisation")
    for i in range(16):
        row = _row(spec, "eval", i)
        video = render_row(row, 128)
        reading = body_reader.read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        assert flip_probe.flip_verdict(float(row["velocity"]), reading) == "kept"
        assert abs(reading.velocity - row["velocity"]) < 0.02
        # the same ball turned back after the condition frames
        cf = spec.condition_frames
        pos = row["positions"][:, 0].astype(np.float64)
        back = pos.copy()
        back[cf:, 0] = pos[cf - 1, 0] - (pos[cf:, 0] - pos[cf - 1, 0])
        turned = render(Scene((Body(body_shape("disc", float(row["radius"])), COLOURS["red"]),),
                              np.concatenate([back, np.zeros((len(back), 1))], axis=1)[:, None]), 128)
        turned[:cf] = video[:cf]
        got = body_reader.read_body(turned, cf, spec.world_size, spec.frame_interval)
        assert flip_probe.flip_verdict(float(row["velocity"]), got) in ("reversed", "lost")
        if not got.lost:
            assert got.velocity < -0.9


def test_flip_cli_and_page(tmp_path, capsys):
    from phybench.leaderboard import build

    data, sub, results = tmp_path / "data", tmp_path / "sub", tmp_path / "results"
    assert main(["generate", "flip-memorisation", "--split", "eval", "--out", str(data), "--limit", "8"]) == 0
    assert json.loads((data / "manifest.json").read_text())["split_hash"] == \
        json.loads(GOLDEN.read_text())["flip-memorisation/eval-8-at-128"]
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(sub)]) == 0
    assert main(["analyze", "flip", str(sub), "--data", str(data), "--out", str(results / "f.json")]) == 0
    assert probes.load_results(results / "f.json")["analysis"]["verdicts"]["kept"]["count"] == 8
    assert main(["analyze", "priority", str(results / "f.json")]) == 2  # another probe's file
    report = build(results, tmp_path / "site")
    page = (tmp_path / "site" / "probes.html").read_text()
    assert "probes.html" in report.written and "ground-truth" in page and "flip-memorisation" in page


def test_golden_other_probes_spec_hashes():
    golden = json.loads(GOLDEN.read_text())["spec_hashes_other"]
    # the ambiguity probe's hashes are pinned in tests/test_probe_ambiguity.py
    others = {n for n, s in TASKS.items() if getattr(family_of(s), "probe", None) not in (None, "priority", "ambiguity")}
    assert {n: TASKS.get(n).spec_hash() for n in golden} == golden and set(golden) == others and len(golden) == 4
    assert TASKS.get("flip-memorisation").spec_hash() == golden[
        "flip-memorisation"]


# ------------------------------------------------------------------ interpolation gaps
def test_gap_sets_have_their_speeds_and_equal_sizes():
    spec = TASKS.get("interpolation-gaps")
    sets = dict(spec.param("gap_sets"))
    assert len(sets) == 5 and len({spec.split_size(n) for n in sets}) == 1
    assert sets["train-gap1"] == ((1.0, 1.25), (3.75, 4.0))  # the paper's set (1)
    for name, ranges in sets.items():
        for i in range(30):
            v = make_sample(spec, name, i).params["velocity"]
            assert gaps.distance_to(ranges, v) == 0.0, (name, i, v)


def test_gaps_reader_ground_truth_held_and_a_snap_seen():
    spec = TASKS.get("interpolation-gaps")
    ranges = dict(spec.param("gap_sets"))["train-gap1"]
    seen = 0
    for i in range(16):
        row = _row(spec, "eval", i)
        v0 = float(row["velocity"])
        video = render_row(row, 128)
        reading = body_reader.read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        assert abs(reading.velocity - v0) < 0.02
        verdict = gaps.gap_verdict(ranges, v0, reading)
        if verdict is None:
            continue
        seen += 1
        assert verdict == "held"
        # the same ball continuing at the nearest training speed: a snap
        cf, pos = spec.condition_frames, row["positions"][:, 0].astype(np.float64)
        target = 1.25 if v0 < 2.5 else 3.75
        snapped = pos.copy()
        snapped[cf:, 0] = pos[cf - 1, 0] + target * spec.frame_interval * np.arange(1, len(pos) - cf + 1)
        video2 = render(Scene((Body(body_shape("disc", float(row["radius"])), COLOURS["red"]),),
                              np.concatenate([snapped, np.zeros((len(pos), 1))], axis=1)[:, None]), 128)
        video2[:cf] = video[:cf]
        got = body_reader.read_body(video2, cf, spec.world_size, spec.frame_interval)
        if gaps.distance_to(ranges, v0) > 0.2:  # a snap of less than SNAP_TOLERANCE is reading noise
            assert gaps.gap_verdict(ranges, v0, got) in ("snapped", "lost")
    assert seen >= 8


def test_gaps_cli_needs_the_training_set(tmp_path, capsys):
    data, sub, out = tmp_path / "data", tmp_path / "sub", tmp_path / "g.json"
    assert main(["generate", "interpolation-gaps", "--split", "eval", "--out", str(data), "--limit", "8"]) == 0
    assert json.loads((data / "manifest.json").read_text())["split_hash"] == \
        json.loads(GOLDEN.read_text())["interpolation-gaps/eval-8-at-128"]
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(sub)]) == 0
    capsys.readouterr()
    assert main(["analyze", "gaps", str(sub), "--data", str(data), "--out", str(out)]) == 2
    assert "--train-split" in capsys.readouterr().err and not out.exists()
    assert main(["analyze", "gaps", str(sub), "--data", str(data), "--out", str(out),
                 "--train-split", "train-gap3"]) == 0
    a = probes.load_results(out)["analysis"]
    assert a["verdicts"]["held"]["count"] == a["in_gap"] and a["train_split"] == "train-gap3"


# ------------------------------------------------------------------ collision holes
def test_holes_sets_equal_sizes_layout_and_hull_classes():
    spec = TASKS.get("collision-holes")
    family = family_of(spec)
    sets = dict(spec.param("hole_sets"))
    squares = dict(spec.param("squares"))
    assert len(sets) == 2 and len({spec.split_size(n) for n in sets}) == 1
    # the contrast: h3 and h4 are outside the hull of set 1, inside that of set 2
    assert family.square_classes(spec, "train-set1") == {"h1": "inside-hull", "h2": "inside-hull",
                                                          "h3": "outside-hull", "h4": "outside-hull", "id": "trained"}
    assert set(family.square_classes(spec, "train-set2").values()) == {"inside-hull", "trained"}
    for name, (rect, holes) in sets.items():
        for i in range(200):
            p = make_sample(spec, name, i).params
            v1, v2 = p["velocity_1"], p["velocity_2"]
            assert rect[0] <= v1 <= rect[1] and rect[2] <= v2 <= rect[3], (name, i)
            assert not any(b[0] < v1 < b[1] and b[2] < v2 < b[3] for b in (squares[h] for h in holes)), (name, i)
    for i in range(10):
        s = make_sample(spec, "eval", i)
        b = squares[s.level]
        assert s.level == list(squares)[i % 5]
        assert b[0] <= s.params["velocity_1"] <= b[1] and b[2] <= s.params["velocity_2"] <= b[3]


def test_holes_cli_ground_truth_planted_failure_and_errors(tmp_path, capsys):
    data, gt, lin = tmp_path / "data", tmp_path / "gt", tmp_path / "lin"
    assert main(["generate", "collision-holes", "--split", "eval", "--out", str(data), "--limit", "10"]) == 0
    assert json.loads((data / "manifest.json").read_text())["split_hash"] == \
        json.loads(GOLDEN.read_text())["collision-holes/eval-10-at-128"]
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(gt)]) == 0
    assert main(["baseline", "linear-extrapolation", "--data", str(data), "--out", str(lin)]) == 0
    capsys.readouterr()
    out = tmp_path / "h.json"
    assert main(["analyze", "holes", str(gt), "--data", str(data), "--out", str(out)]) == 2
    assert "--train-split" in capsys.readouterr().err and not out.exists()
    a1, a2 = tmp_path / "a1.json", tmp_path / "a2.json"
    for path in (a1, a2):
        assert main(["analyze", "holes", str(gt), "--data", str(data), "--train-split", "train-set1",
                     "--out", str(path), "--json"]) == 0
    assert a1.read_bytes() == a2.read_bytes()  # same inputs, same bytes
    a = probes.load_results(a1)["analysis"]
    assert a["verdicts"]["scored"]["count"] == 10
    assert all(v["velocity_error"] < 0.02 for v in a["videos"])  # the reader's floor on ground truth
    assert a["by_hull"]["outside-hull"]["n"] == 4 and a["by_hull"]["inside-hull"]["n"] == 4
    # planted failure: balls that pass through each other (no collision) are far off, or untrackable
    assert main(["analyze", "holes", str(lin), "--data", str(data), "--train-split", "train-set2",
                 "--out", str(tmp_path / "lin.json")]) == 0
    b = probes.load_results(tmp_path / "lin.json")["analysis"]
    assert all(v["verdict"] == "untrackable" or v["velocity_error"] > 1.0 for v in b["videos"])
    assert b["verdicts"]["scored"]["count"] > 0
    assert main(["analyze", "composition", str(a1)]) == 2  # another probe's file
    assert "another probe" in capsys.readouterr().err


# ------------------------------------------------------------------ composition
def test_composition_scenes_are_their_events():
    spec = TASKS.get("composition")
    L = spec.world_size
    for split, n in (("train", 8), ("eval-spatial", 6), ("eval-temporal", 6)):
        for i in range(n):
            s = make_sample(spec, split, i)
            scene = simulate_sample(spec, s)
            vx = scene.velocities[..., 0]  # (T, 3): wall, square, ball
            box = scene.positions[:, 1:]
            half = np.array([scene.bodies[1].shape.width / 2, scene.bodies[2].shape.radius])
            assert ((box - half[None, :, None] >= 0) & (box + half[None, :, None] <= L)).all(), (split, i)
            assert s.level == s.params["event"]
            if s.level == "square-moves":
                assert np.allclose(vx[:, 2], 0) and np.allclose(vx[:, 1], vx[0, 1]) and vx[0, 1] > 0
            elif s.level == "ball-bounces":
                assert np.allclose(vx[:, 1], 0) and vx[0, 2] > 0 and vx[-1, 2] < 0
            elif s.level == "spatial":
                assert np.allclose(vx[:, 1], vx[0, 1]) and vx[0, 2] > 0 and vx[-1, 2] < 0
            else:  # temporal: the square stops at the contact, the ball moves on and bounces
                assert vx[0, 1] > 0 and vx[0, 2] == 0 and abs(vx[-1, 1]) < 1e-3 and vx[-1, 2] < 0
                k = int(np.ceil(s.extra["ball_contact"] / spec.frame_interval)) + 1
                assert np.allclose(vx[k, 2], vx[0, 1], atol=1e-3)
            assert np.isfinite(s.extra["bounce_time"]) == (s.level != "square-moves")


def _comp_row(spec, split, i):
    sample = make_sample(spec, split, i)
    return {**sample.params, **sample.extra, "level": sample.level,
            **scene_row(spec, simulate_sample(spec, sample))}


def _replaced(row, video, spec, *, ball=None, square=None):
    """The row's scene with the ball's / square's positions replaced after the condition frames (None: unchanged,
    "gone": not drawn after the ball's first contact)."""
    from phybench.data.split import row_scene

    scene = row_scene(row)
    poses = scene.poses.copy()
    cf = spec.condition_frames
    if isinstance(square, np.ndarray):
        poses[cf:, 1, :2] = square
    bodies = scene.bodies
    if isinstance(ball, str) and ball == "gone":
        k = int(np.ceil(row["ball_contact"] / spec.frame_interval))
        out = render(Scene(bodies, poses, spec.world_size), 128)
        no_ball = render(Scene(bodies[:2], poses[:, :2], spec.world_size), 128)
        out[k:] = no_ball[k:]
        return out
    if isinstance(ball, np.ndarray):
        poses[cf:, 2, :2] = ball
    out = render(Scene(bodies, poses, spec.world_size), 128)
    out[:cf] = video[:cf]
    return out


def test_composition_ground_truth_succeeds_and_planted_failures_are_seen():
    spec = TASKS.get("composition")
    cf, args = spec.condition_frames, (spec.condition_frames, spec.world_size, spec.frame_interval)
    for split in ("eval-spatial", "eval-temporal"):
        for i in range(4):
            row = _comp_row(spec, split, i)
            for res in (128, 256) if i < 2 else (128,):
                got = composition.composition_verdict(row, render_row(row, res), *args)
                assert got["verdict"] == "both" and got["square_error"] < 0.02 and got["ball_error"] < 0.02, \
                    (split, i, res, got)
            video = render_row(row, 128)
            pos = np.asarray(row["positions"], dtype=np.float64)
            # the ball vanishes after its first contact (Fig. 15)
            assert composition.composition_verdict(row, _replaced(row, video, spec, ball="gone"), *args)["verdict"] \
                == "vanished"
            # the square freezes at the last condition frame
            frozen = np.repeat(pos[cf - 1:cf, 1], len(pos) - cf, axis=0)
            got = composition.composition_verdict(row, _replaced(row, video, spec, square=frozen), *args)
            assert not got["square_ok"] and got["ball_ok"] and got["verdict"] == "ball-only", (split, i)
            # the ball ignores the wall: its x keeps the pre-bounce speed, clipped in view
            t = np.arange(len(pos) - cf + 1) * spec.frame_interval
            through = pos[cf - 1:, 2].copy()
            v0 = (pos[cf - 1, 2, 0] - pos[cf - 2, 2, 0]) / spec.frame_interval
            through[:, 0] = pos[cf - 1, 2, 0] + v0 * t
            if v0 <= 0:  # temporal: the ball is still at rest; it never starts
                through[:, 0] = pos[cf - 1, 2, 0]
            through[:, 0] = np.minimum(through[:, 0], spec.world_size - row["radius"])
            got = composition.composition_verdict(row, _replaced(row, video, spec, ball=through[1:]), *args)
            assert not got["ball_ok"] and got["square_ok"], (split, i, got)


def test_composition_cli_and_page(tmp_path, capsys):
    from phybench.leaderboard import build

    data, sub, results = tmp_path / "data", tmp_path / "sub", tmp_path / "results"
    assert main(["generate", "composition", "--split", "eval-temporal", "--out", str(data), "--limit", "6"]) == 0
    assert json.loads((data / "manifest.json").read_text())["split_hash"] == \
        json.loads(GOLDEN.read_text())["composition/eval-temporal-6-at-128"]
    assert main(["baseline", "ground-truth", "--data", str(data), "--out", str(sub)]) == 0
    assert main(["analyze", "composition", str(sub), "--data", str(data), "--out", str(results / "c.json")]) == 0
    a = probes.load_results(results / "c.json")["analysis"]
    assert a["verdicts"]["both"]["count"] == 6 and a["sub_events"]["ball_vanished"]["count"] == 0
    capsys.readouterr()
    assert main(["analyze", "composition", str(results / "c.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["square"]["share"] == 1.0
    train = tmp_path / "train"
    assert main(["generate", "composition", "--split", "train", "--out", str(train), "--limit", "2"]) == 0
    capsys.readouterr()
    assert main(["analyze", "composition", str(sub), "--data", str(train)]) == 2
    assert "training split" in capsys.readouterr().err
    assert main(["analyze", "holes", str(sub), "--data", str(data)]) == 2  # the split is another probe's
    report = build(results, tmp_path / "site")
    page = (tmp_path / "site" / "probes.html").read_text()
    assert "probes.html" in report.written and 'id="probe-composition"' in page and "probe-share" in page

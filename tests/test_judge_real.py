"""The judge on videos like a model's: benign degradations are never flagged, motion without a
cause is.

Every family gets a small evaluation split; each video is judged exact, degraded by the benign
kinds of `phybench.benign` (blur, H.264, resampling, noise, colour cast, a shifted picture), and
with the planted motion faults of `phybench.violations` (drift, wrong gravity, spin, tunnelling).
docs/judge.md has the same numbers on larger splits (`phybench calibrate-judge`).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from phybench.benign import BENIGN, WHOLE_CLIP, degrade
from phybench.calibration import calibrate, wilson
from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan, row_scene
from phybench.scoring.judge.abnormal import judge
from phybench.tasks import get_task
from phybench.violations import plant

# (task, split, samples, resolution)
SPLITS = [("uniform", "ood-eval", 10, 128), ("parabola", "ood-eval", 10, 128), ("collision", "id-eval", 10, 128),
          ("combinatorial", "in-template-eval", 8, 128), ("combinatorial", "out-of-template-eval", 6, 256)]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge-real")
    out = {}
    for task, split, n, res in SPLITS:
        folder = root / f"{task}-{split}-{res}"
        generate(make_plan(get_task(task), split, limit=n, resolution=res), folder, progress=False)
        out[(task, split, res)] = folder
    return out


def _rows(folder):
    reader = SplitReader(folder)
    for row in reader.rows():
        b = row_scene(row).bodies
        yield reader, row, reader.video(row), [x.colour for x in b], [not x.dynamic for x in b]


def _flagged(folder, kind):
    """(videos judged abnormal, videos) with the ground truth degraded by a benign kind."""
    bad = n = 0
    for reader, row, gt, colours, static in _rows(folder):
        cf = reader.spec.condition_frames
        bad += judge(degrade(kind, gt, cf, row["sample_id"]), gt, colours, static, cf).abnormal
        n += 1
    return bad, n


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["blur-1.0", "h264-28"])
def test_blur_and_h264_are_never_flagged(splits, kind):
    """The issue's two named cases: at most 2% on every family (0 of the few videos here)."""
    for key, folder in splits.items():
        bad, n = _flagged(folder, kind)
        assert bad <= 0.02 * n, (key, kind, bad, n)


@pytest.mark.slow
def test_every_benign_kind_is_rarely_flagged(splits):
    """All 23 benign kinds on every family (contrast, gamma, zoom, a turn, temporal blending,
    JPEG, H.265 and VP9 among them): at most one video in all of them."""
    total = {kind: [0, 0] for kind in BENIGN}
    for folder in splits.values():
        for kind in BENIGN:
            bad, n = _flagged(folder, kind)
            total[kind][0] += bad
            total[kind][1] += n
    assert all(n >= 40 for _, n in total.values())
    assert all(bad <= 1 for bad, _ in total.values()), total


@pytest.mark.slow
def test_benign_kinds_are_deterministic_and_keep_the_condition_frames(splits):
    reader, row, gt, _, _ = next(_rows(splits[("collision", "id-eval", 128)]))
    cf = reader.spec.condition_frames
    for kind in BENIGN:
        a, b = degrade(kind, gt, cf, row["sample_id"]), degrade(kind, gt, cf, row["sample_id"])
        assert a.dtype == np.uint8 and a.shape == gt.shape and np.array_equal(a, b), kind
        assert not np.array_equal(a, gt), kind
        if kind not in WHOLE_CLIP:  # a codec re-encodes the whole clip; the rest change only generated frames
            assert np.array_equal(a[:cf], gt[:cf]), kind
    with pytest.raises(KeyError, match="unknown benign degradation"):
        degrade("sepia", gt, cf, row["sample_id"])


def _recall(splits, kind, tasks):
    hits = n = 0
    for (task, _, _), folder in splits.items():
        if task not in tasks:
            continue
        for reader, row, gt, colours, static in _rows(folder):
            video, _ = plant(kind, row, reader.spec, int(reader.manifest["resolution"]), gt)
            if video is None:
                continue
            n += 1
            hits += judge(video, gt, colours, static, reader.spec.condition_frames).abnormal
    return hits, n


@pytest.mark.slow
@pytest.mark.parametrize("kind,tasks,least", [
    ("drift", ("uniform",), 0.7),  # sideways 0.5 units over the clip, no cause
    ("stutter", ("uniform", "parabola", "collision"), 0.7),  # stop-go: every generated frame twice
    ("reverse-midair", ("uniform", "parabola", "collision"), 0.8),
    ("gravity-reversed", ("parabola", "combinatorial"), 0.8),
    ("gravity-sideways", ("parabola", "combinatorial"), 0.9),
    ("gravity-0.8", ("parabola", "combinatorial"), 0.8),
    ("stop", ("collision", "combinatorial"), 0.8),  # dead at the first contact
    ("tunnel", ("combinatorial",), 0.4),  # through the floor (docs/judge.md: below the 90% target)
    ("spin", ("combinatorial",), 0.3),  # a bar turning with nothing to turn it (below target too)
    # issue 34's blind spots
    # a third of a pixel a frame from the first generated frame: fast OOD balls (checked across their motion) and
    # combinatorial scenes (one still condition frame: checked against the ground truth's start) included
    ("drift-start", ("uniform", "parabola", "combinatorial"), 0.8),
    ("slow-3", ("uniform", "parabola", "collision"), 0.8),  # each move 3% shorter than the one before
    ("curve", ("uniform",), 0.8),  # a smooth sideways drift of 0.5 s^2 units (6.4 px)
    ("square", ("uniform", "parabola", "collision", "combinatorial"), 0.7),  # a ball becomes a square of its area (small OOD balls: below target)
    ("appear-far", ("uniform", "parabola", "collision", "combinatorial"), 0.9),  # a body from nothing, far away
    ("bite", ("uniform", "parabola", "collision", "combinatorial"), 0.9),  # issue 33: the learned model's "Pac-Man" ball
    ("static-slide", ("combinatorial",), 0.9),  # a static body slides 0.02 units a frame
])
def test_motion_without_cause_is_seen(splits, kind, tasks, least):
    """Recall on the small splits here (docs/judge.md has it on larger ones, with intervals)."""
    hits, n = _recall(splits, kind, tasks)
    assert n >= 3, (kind, n)
    assert hits / n >= least, (kind, hits, n)


@pytest.mark.slow
def test_imported_reference_videos_are_not_flagged(tmp_path):
    """The reference authors' own H.264 renders (imported fixtures): small balls whose
    thresholded area jumped under their codec are no longer flagged."""
    folders = []
    for name, task in (("uniform_128", "uniform"), ("parabola_128", "parabola"), ("collision_128", "collision")):
        folder = tmp_path / name
        assert main(["import", "phyworld", f"tests/fixtures/phyworld/{name}.hdf5", "--task", task, "--out",
                     str(folder), "--quiet"]) == 0
        folders.append(folder)
    cal = calibrate(folders, benign=(), planted=(), progress=False)
    assert sum(n for n in cal["splits"].values()) == 48
    assert all(bad == 0 for bad, _ in cal["false_positives"]["exact"].values()), cal["false_positives"]


@pytest.mark.slow
def test_degrade_and_calibrate_commands(splits, tmp_path, capsys):
    folder = splits[("uniform", "ood-eval", 128)]
    out = tmp_path / "deg"
    assert main(["degrade", "--data", str(folder), "--kinds", "blur-1.0,h264-28", "--out", str(out), "--quiet"]) == 0
    labels = json.loads((out / "labels.json").read_text())["labels"]
    assert set(labels) == {"blur-1.0", "h264-28"} and all(x["benign"] for x in labels["h264-28"])
    capsys.readouterr()
    assert main(["judge", str(out / "h264-28"), "--data", str(folder), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().endswith("0 of 10 videos abnormal (0.0%)")
    assert main(["violations", "--data", str(folder), "--kinds", "benign,drift", "--out", str(tmp_path / "v"),
                 "--quiet"]) == 0
    assert (tmp_path / "v" / "noise-8").is_dir() and (tmp_path / "v" / "drift").is_dir()
    assert main(["calibrate-judge", "--data", str(folder), "--kinds", "drift", "--benign", "blur-1.0", "--json",
                 str(tmp_path / "cal.json"), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "| blur-1.0 | 0/10 |" in text and "| drift |" in text
    cal = json.loads((tmp_path / "cal.json").read_text())
    assert cal["false_positives"]["exact"]["uniform/ood-eval@128"] == [0, 10]
    assert main(["calibrate-judge", "--data", str(tmp_path / "nope")]) == 2
    assert main(["degrade", "--data", str(folder), "--kinds", "sepia", "--out", str(tmp_path / "x")]) == 2
    assert "unknown violation kind(s) sepia" in capsys.readouterr().err


def test_wilson_interval():
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(9, 10)
    assert lo == pytest.approx(0.596, abs=1e-3) and hi == pytest.approx(0.982, abs=1e-3)

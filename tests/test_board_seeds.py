"""Seeds behind every verified row (issue 51 item 6), end to end on a small generated split.

A tiny deterministic "learned" model (the split's own videos plus noise drawn from its seed) is
sampled with seeds 0, 1 and 2, each scored by `phybench score` into its own file (seed k's is
``NAME.seed<k>.json``), verified by `phybench leaderboard verify` (signed records with the
videos hash) and built: the row shows 3 runs and is verified; with 2 runs it shows "needs 3 seeds
(has 2)".  A reference baseline's row of one run is verified when the maintainers pinned its
videos hash (re-made by `verify.seeds.remake_pin`); a learned model's card claiming
``baseline:copy-last`` is not exempt (`phybench/leaderboard/verify/seeds.py`).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.leaderboard import build
from phybench.leaderboard.verify import seeds as seeds_rule
from phybench.scoring.run import layout
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

CHEAP = "velocity_error,ssim,psnr"
SPLIT = "uniform-id-eval"


def _noisy(split_dir: Path, out: Path, name: str, seed: int, sampler: dict[str, Any] | None = None) -> Path:
    """The toy learned model: the true frames after the condition frames, plus +-1 level of noise on
    1% of pixels drawn from (seed, sample id): seeds differ, the same seed gives the same bytes."""
    reader = SplitReader(split_dir)
    c = int(reader.manifest["condition_frames"])

    def videos():
        for row in reader.rows():
            video = reader.video(row).astype(np.int16)
            rng = np.random.default_rng([seed, int(row["sample_id"].rsplit("/", 1)[-1])])
            bump = (rng.random(video[c:].shape) < 0.01) * rng.choice([-1, 1], size=video[c:].shape)
            video[c:] = np.clip(video[c:] + bump, 0, 255)
            yield row["sample_id"], video.astype(np.uint8)

    write_submission(out, submission_meta(reader.manifest, name, sampler=sampler, seeds=[seed]), videos())
    return out


def _cli(*argv: Any) -> int:
    return main([str(a) for a in argv])


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """A 6-sample uniform id-eval split; seeds 0, 1, 2 of the toy model, a copy-last baseline and a
    toy run whose card claims to be copy-last, each scored by `phybench score` and verified."""
    from phybench.leaderboard.verify.signing import new_key_pair
    from phybench.reference import run_baseline

    root = tmp_path_factory.mktemp("seeds")
    keys = root / "keys"
    new_key_pair(root / "private.pem", keys, note="tests/test_board_seeds.py")
    data = root / "data"
    generate(make_plan(get_task("uniform"), "id-eval", None, 6, None), data / SPLIT, progress=False)
    subs, results = root / "subs", root / "results"
    for seed in (0, 1, 2):
        _noisy(data / SPLIT, subs / f"toy-{seed}", "toy", seed)
    run_baseline("copy-last", data / SPLIT, subs / "copy-last", progress=False)
    _noisy(data / SPLIT, subs / "fake", "fake", 7, sampler={"name": "baseline:copy-last"})
    results.mkdir()
    for seed in (0, 1, 2):  # the same --out each time: seed k != 0 is written as NAME.seed<k>.json
        assert _cli("score", subs / f"toy-{seed}", "--data", data / SPLIT, "--metrics", CHEAP, "--quiet",
                    "--out", results / f"{SPLIT}-toy.json") == 0
    for name in ("copy-last", "fake"):
        assert _cli("score", subs / name, "--data", data / SPLIT, "--metrics", CHEAP, "--quiet",
                    "--out", results / f"{SPLIT}-{name}.json") == 0
    env = {"PHYBENCH_BOARD_KEYS": str(keys), "PHYBENCH_SIGNING_KEY": str(root / "private.pem")}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert _cli("leaderboard", "verify", results, "--submissions", subs, "--splits", data, "--by", "test",
                    "--date", "2026-11-29") == 0
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    pin = seeds_rule.remake_pin("copy-last", data / SPLIT, root / "remade")  # the maintainers' way to pin
    (root / "pins.json").write_text(json.dumps({"kind": seeds_rule.PINS_KIND, "pins": {pin: "copy-last"}}))
    return {"root": root, "data": data, "results": results, "keys": keys, "pins": root / "pins.json"}


@pytest.fixture
def board(world, monkeypatch):
    monkeypatch.setenv("PHYBENCH_BOARD_KEYS", str(world["keys"]))
    monkeypatch.setenv(seeds_rule.PINS_ENV, str(world["pins"]))
    return world


def _rows(results: Path, out: Path) -> dict[str, dict[str, Any]]:
    report = build(results, out, require_verified=True)
    assert report.ok, report.refused
    doc = json.loads((out / "leaderboard.json").read_text())
    return {r["model"]: r for b in doc["boards"] for r in b["rows"]}


@pytest.mark.slow
def test_three_seeds_make_one_verified_row_two_do_not(board, tmp_path):
    results = board["results"]
    names = sorted(p.name for p in results.glob(f"{SPLIT}-toy*.json") if not layout.is_beside(p))
    assert names == [f"{SPLIT}-toy.json", f"{SPLIT}-toy.seed1.json", f"{SPLIT}-toy.seed2.json"]
    assert all(layout.record_path(results / n).is_file() for n in names)  # each seed verified on its own
    row = _rows(results, tmp_path / "site")["toy"]
    assert row["runs"] == 3 and row["seeds"]["seeds"] == 3 and row["verification"]["verified"]
    entry = row["cells"]["id"]["metrics"]["velocity_error"]
    assert entry["runs"]["n"] == 3 and sorted(map(tuple, entry["runs"]["seeds"])) == [(0,), (1,), (2,)]
    md = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "(3 runs)" in md and " ± " in md

    two = tmp_path / "two"
    shutil.copytree(results, two)
    for p in list(two.glob(f"{SPLIT}-toy.seed2*")):
        p.unlink()
    row = _rows(two, tmp_path / "site2")["toy"]
    assert row["runs"] == 2 and not row["verification"]["verified"]
    assert row["verification"]["text"] == "needs 3 seeds (has 2)"
    assert "needs 3 seeds (has 2)" in (tmp_path / "site2" / "leaderboard.json").read_text()


@pytest.mark.slow
def test_a_pinned_reference_baseline_needs_one_run_and_a_claimed_one_does_not_pass(board, tmp_path, monkeypatch):
    rows = _rows(board["results"], tmp_path / "site")
    assert rows["copy-last"]["runs"] == 1 and rows["copy-last"]["seeds"]["reference"]
    assert rows["copy-last"]["verification"]["verified"]
    fake = rows["fake"]  # verified files, a card that says baseline:copy-last, videos that are not copy-last's
    assert not fake["seeds"]["reference"] and not fake["verification"]["verified"]
    assert fake["verification"]["text"] == "needs 3 seeds (has 1)"
    # without the maintainers' pin the real baseline is not exempt either: the pin, not the card, decides
    monkeypatch.setenv(seeds_rule.PINS_ENV, "")
    rows = _rows(board["results"], tmp_path / "site2")
    assert rows["copy-last"]["verification"]["text"] == "needs 3 seeds (has 1)"

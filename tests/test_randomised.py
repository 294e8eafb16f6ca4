"""The randomised calibration (`phybench.randomised`, issue 48 item 6): seeded draws inside the
published bounds, and the judge's contract on a small fixed-seed draw."""
from __future__ import annotations

import numpy as np
import pytest
from smallsplits import small_split

from phybench import randomised as R
from phybench.data.split import SplitReader


def test_draws_are_seeded_inside_the_bounds_and_in_table_order():
    order = [f.name for f in R.FAMILIES]
    comps = [R.draw(R.rng_for(7, "uniform/id-eval@128", i, 0)) for i in range(200)]
    assert comps == [R.draw(R.rng_for(7, "uniform/id-eval@128", i, 0)) for i in range(200)]  # same seed, same cases
    assert comps != [R.draw(R.rng_for(8, "uniform/id-eval@128", i, 0)) for i in range(200)]  # a new seed, new cases
    assert all(R.in_bounds(c) and 1 <= len(c) <= 3 for c in comps)
    assert all([order.index(n) for n, _ in c] == sorted(order.index(n) for n, _ in c) for c in comps)
    assert {n for c in comps for n, _ in c} == set(order)  # every family is drawn
    assert not R.in_bounds([("blur", {"sigma": 2.0})]) and not R.in_bounds([("vignette", {})])


@pytest.mark.parametrize("family", [f.name for f in R.FAMILIES])
def test_each_family_at_its_bounds_changes_only_generated_frames(family):
    reader = _split_reader()
    row = next(reader.rows())
    gt = reader.video(row)
    fam = R.BY_NAME[family]
    for end in (0, 1):
        params = {k: float(b[end]) for k, b in fam.bounds.items()}
        out = R.apply(gt, 3, row["sample_id"], [(family, params)])
        assert out.shape == gt.shape and out.dtype == np.uint8
        if family != "compression":  # a codec re-encodes the whole clip, as an mp4 submission would
            assert np.array_equal(out[:3], gt[:3])
    heavy = {k: float(b[1]) for k, b in fam.bounds.items()}
    if family not in ("time",):  # a blend of a still start can equal it; every other family changes pixels
        assert not np.array_equal(R.apply(gt, 3, row["sample_id"], [(family, heavy)]), gt)


def _split_reader() -> SplitReader:
    return small_split("uniform", "id-eval", 4)


@pytest.mark.slow
def test_the_contract_on_a_fixed_seed_draw():
    """Within the bounds a correct video keeps its verdict; the planted kinds are still seen."""
    reader = _split_reader()
    cal = R.calibrate_random([str(reader.folder)], seed=20261129, draws=3, planted=3, progress=False)
    assert cal["cases"] == 12
    assert cal["flagged"] == [], cal["flagged"]
    hits = sum(v[0] for per in cal["recall"].values() for v in per.values())
    seen = sum(v[1] for per in cal["recall"].values() for v in per.values())
    assert seen >= 4 and hits >= seen - 1  # kinds that need two bodies are not planted on uniform
    assert "| levels |" in R.random_markdown(cal)

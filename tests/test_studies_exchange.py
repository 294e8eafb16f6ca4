"""`studies.exchange`: does a collision model's momentum exchange depend on the masses?"""
import numpy as np
import pytest

from phybench_baselines.studies.exchange import exchange_report


def _samples(model_after):
    """Elastic 1-D collisions with random masses; the model's fit = truth before contact, `model_after` after."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(40):
        m1, m2, v1, v2 = rng.uniform(1, 3), rng.uniform(1, 3), rng.uniform(1, 4), -rng.uniform(1, 4)
        a1 = ((m1 - m2) * v1 + 2 * m2 * v2) / (m1 + m2)
        a2 = ((m2 - m1) * v2 + 2 * m1 * v1) / (m1 + m2)
        truth = {"velocity_before_1": v1, "velocity_before_2": v2, "velocity_after_1": a1, "velocity_after_2": a2}
        f1, f2 = model_after(v1, v2, a1, a2)
        out.append({"law": {"truth": truth, "fit": {**truth, "velocity_after_1": f1, "velocity_after_2": f2}}})
    out.append({"law": None})  # an untrackable video: skipped
    out.append({"law": {"truth": truth, "fit": {**truth, "velocity_after_1": None}}})  # no fit: skipped
    return {"samples": out}


def test_a_model_that_learned_the_exchange_keeps_its_mass_dependent_part():
    r = exchange_report(_samples(lambda v1, v2, a1, a2: (a1, a2)))
    assert r["videos"] == 40
    assert r["mass_dependent_after_1"]["slope"] == pytest.approx(1.0) and r["velocity_after_1"]["mae"] == 0


def test_a_model_that_ignores_the_masses_shrinks_it_to_zero():
    r = exchange_report(_samples(lambda v1, v2, a1, a2: (v2, v1)))  # equal masses assumed: the balls swap
    assert abs(r["mass_dependent_after_1"]["slope"]) < 1e-9 and r["mass_dependent_after_1"]["model_sd"] < 1e-9
    assert r["velocity_before_1"]["slope"] == pytest.approx(1.0)  # before contact it is right
    assert r["velocity_after_1"]["mae"] > 0.1


def test_too_few_fits_is_an_error():
    with pytest.raises(ValueError, match="too few"):
        exchange_report({"samples": [{"law": None}]})

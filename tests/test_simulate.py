"""Box2D trajectories obey the closed-form laws, for every ID and OOD value.

Tolerances from the foundation issue: uniform motion and the projectile within 1e-3
world units and 1e-3 units/s at every frame; collisions conserve momentum and kinetic
energy to 1e-6 relative, have the 1-D elastic post-collision velocities, positions
within 1e-2 units of the closed form, including contacts slower than 1 unit/s.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phybench.world import laws
from phybench.tasks.sampling import closed_form, make_sample, simulate_sample
from phybench.world.scene import Scene
from phybench.world.scene import BLUE, RED
from phybench.world.simulate import simulate
from phybench.tasks import get_task

from conftest import golden_keys

UNIFORM, PARABOLA, COLLISION = get_task("uniform"), get_task("parabola"), get_task("collision")

radius = st.one_of(st.floats(0.3, 0.6), st.floats(0.7, 1.5), st.floats(1.5, 2.0))
speed = st.one_of(st.floats(0.0, 0.8), st.floats(1.0, 4.0), st.floats(4.5, 6.0))
unit = st.floats(0.0, 1.0)


def one_ball(spec, r, v, x0, y0):
    init = Scene.discs([[x0, y0]], [[v, 0.0]], [r], [RED])
    states = simulate(init, spec.simulator, spec.frames, spec.frame_interval)
    t = laws.frame_times(spec.frames, spec.frame_interval)
    pos, vel = laws.ballistic(init.positions[0, 0], init.velocities[0, 0], spec.simulator.gravity, t)
    return states, pos[:, None], vel[:, None]


@settings(max_examples=150, deadline=None)
@given(r=radius, v=speed, ux=unit, uy=unit)
def test_uniform_motion_is_exact(r, v, ux, uy):
    states, pos, vel = one_ball(UNIFORM, r, v, r + ux * (10 - 2 * r), r + uy * (10 - 2 * r))
    assert np.abs(states.positions - pos).max() < 1e-3
    assert np.abs(states.velocities - vel).max() < 1e-3


@settings(max_examples=150, deadline=None)
@given(r=radius, v=speed, ux=unit, uy=unit)
def test_parabola_is_exact(r, v, ux, uy):
    states, pos, vel = one_ball(PARABOLA, r, v, r + ux * (10 - 2 * r), 5 + uy * (10 - r - 5))
    assert np.abs(states.positions - pos).max() < 1e-3
    assert np.abs(states.velocities - vel).max() < 1e-3


def test_parabola_fixes_euler_offset():
    """Without the g*h/2 correction Box2D lands ~0.04 units off by the last frame."""
    states, pos, _ = one_ball(PARABOLA, 1.0, 2.0, 1.0, 9.0)
    assert np.abs(states.positions[-1, 0, 1] - pos[-1, 0, 1]) < 1e-4
    # frame 0 is t = 0 exactly (the reference records t = 0.01)
    assert np.allclose(states.positions[0, 0], [1.0, 9.0], atol=1e-6)


def test_very_slow_ball_keeps_moving():
    """Stock Box2D stops a ball at v = 0.0082; the time scale keeps it moving."""
    states, pos, vel = one_ball(UNIFORM, 0.48, 0.0082, 3.0, 5.0)
    assert np.abs(states.velocities[:, 0, 0] - 0.0082).max() < 1e-6
    assert np.abs(states.positions - pos).max() < 1e-5


def collide(r1, r2, v1, v2, tc, xc, y=5.0):
    init = Scene.discs(
        [[xc - r1 - v1 * tc, y], [xc + r2 + v2 * tc, y]], [[v1, 0.0], [-v2, 0.0]], [r1, r2], [RED, BLUE]
    )
    states = simulate(init, COLLISION.simulator, COLLISION.frames, COLLISION.frame_interval)
    t = laws.frame_times(COLLISION.frames, COLLISION.frame_interval)
    pos, vel, tc_ = laws.collision(init.positions[0], init.radii, (v1, v2), t)
    return states, pos, vel, tc_


def check_collision(r1, r2, v1, v2, tc, xc):
    states, pos, vel, tc_ = collide(r1, r2, v1, v2, tc, xc)
    m = np.array([r1 * r1, r2 * r2]) * np.pi
    vx = states.velocities[..., 0]  # (T, 2)
    p0, p1 = (m * vx[0]).sum(), (m * vx[-1]).sum()
    e0, e1 = (m * vx[0] ** 2).sum(), (m * vx[-1] ** 2).sum()
    scale_p = (m * np.abs(vx[0])).sum()
    assert abs(p1 - p0) <= 1e-6 * scale_p
    assert abs(e1 - e0) <= 1e-6 * e0
    u1, u2 = laws.elastic_1d(m[0], m[1], v1, -v2)
    assert np.abs(vx[-1] - [u1, u2]).max() <= 1e-6 * max(v1 + v2, 1e-3) + 1e-7
    assert np.abs(states.positions - pos).max() < 1e-2
    assert abs(tc_ - tc) < 1e-9


@settings(max_examples=120, deadline=None)
@given(r1=radius, r2=radius, v1=speed, v2=speed, ut=unit, ux=unit)
def test_collisions_are_elastic_and_on_time(r1, r2, v1, v2, ut, ux):
    if v1 + v2 < 0.05:
        v1 += 0.05
    check_collision(r1, r2, v1, v2, 0.45 + ut * 1.85, 2 * r1 + ux * (10 - 2 * r1 - 2 * r2))


@pytest.mark.parametrize("v1, v2", [(0.4, 0.4), (0.2667, 0.0), (0.0, 0.8), (0.05, 0.0), (1.5, -1.0), (1.0, 0.0)])
def test_slow_collisions_are_elastic(v1, v2):
    """Stock Box2D makes every contact below 1 unit/s stick (REFERENCE section 2)."""
    if v2 < 0:  # catch-up: ball 2 moves right slower than ball 1
        check_catch_up(v1, -v2)
        return
    check_collision(0.7, 0.5, v1, v2, 1.0, 5.0)


def check_catch_up(v1, w2):
    states, pos, vel, _ = collide(1.0, 1.0, v1, -w2, 1.0, 5.0)
    # equal masses exchange velocities: (1.5, 1.0) -> (1.0, 1.5), not (1.25, 1.25)
    assert np.allclose(states.velocities[-1, :, 0], [w2, v1], atol=1e-6)


@pytest.mark.parametrize("split", ["id-eval", "ood-eval", "train-30k"])
@pytest.mark.parametrize("task", ["uniform", "parabola", "collision"])
def test_generated_samples_follow_the_law(task, split):
    spec = get_task(task)
    for index in range(0, spec.split_size(split), max(1, spec.split_size(split) // 40)):
        sample = make_sample(spec, split, index)
        states = simulate_sample(spec, sample)
        pos, vel = closed_form(spec, sample)
        tol = 1e-2 if task == "collision" else 1e-3
        assert np.abs(states.positions - pos).max() < tol, sample.sample_id
        if task == "collision":
            t = np.arange(spec.frames) * spec.frame_interval
            assert spec.earliest_contact <= sample.contact_time
            after = (t > sample.contact_time).sum()
            assert after >= spec.min_frames_after_contact
            assert spec.condition_frames * spec.frame_interval < sample.contact_time
        else:
            assert np.abs(states.velocities - vel).max() < 1e-3
        view = laws.fully_in_view(pos, sample.initial.radii, spec.world_size).all(axis=1)
        assert view.sum() >= sample.frames_in_view
        if split != "ood-eval":  # OOD: big fast balls may not all fit (placement does its best)
            assert view[: spec.condition_frames].all(), sample.sample_id


@pytest.mark.parametrize("key", golden_keys("trajectories"))
def test_golden_trajectory(golden, key):
    """A few stored trajectories that must never drift (to 1e-6 world units)."""
    task, split, index = key.split(":")
    spec = get_task(task)
    states = simulate_sample(spec, make_sample(spec, split, int(index)))
    for frame, expected in golden["trajectories"][key].items():
        assert np.abs(states.positions[int(frame)] - np.array(expected)).max() < 2e-6, (key, frame)


def test_stored_collision_velocities_convention():
    """Stored velocities are Box2D's at the recorded instant; positions are exact.

    Box2D applies the impulse a fraction of a millisecond after the closed-form contact
    instant, so a frame that falls in that gap stores the pre-collision velocities
    (measured: 8 of 2,266 sampled id/ood collision samples, lag <= 0.35 ms).  The scorer
    never reads stored velocities (it differences positions), so no metric depends on it;
    this test pins the convention: only that frame, only within 1 ms of the contact."""
    spec = COLLISION
    t = laws.frame_times(spec.frames, spec.frame_interval)
    odd = 0
    for split in ("id-eval", "ood-eval"):
        for index in range(0, spec.split_size(split), 8):
            sample = make_sample(spec, split, index)
            states = simulate_sample(spec, sample)
            pos, vel = closed_form(spec, sample)
            assert np.abs(states.positions - pos).max() < 1e-2
            wrong = np.flatnonzero(np.abs(states.velocities - vel).max(axis=(1, 2)) > 1e-3)
            for f in wrong:
                odd += 1
                assert f == np.flatnonzero(t >= sample.contact_time)[0], sample.sample_id  # the first frame after
                assert t[f] - sample.contact_time < 1e-3, sample.sample_id
    assert odd < 10

"""Task registry and specs: declared as data, hashed, looked up with helpful errors."""
import pytest

from phybench.registry import Registry, RegistryError
from phybench.tasks.spec import Dof
from phybench.tasks import TASKS, get_task

from conftest import golden_keys

FUNDAMENTAL = ("uniform", "parabola", "collision")


def test_fundamental_tasks_registered_first():
    # per family, not the registry's whole content: a new family never breaks this test
    assert list(TASKS)[:3] == list(FUNDAMENTAL)


@pytest.mark.parametrize("name", FUNDAMENTAL)
def test_paper_ranges(name):
    spec = get_task(name)
    for d in spec.dofs:
        if d.name.startswith("radius"):
            assert d.id_range == (0.7, 1.5)
            assert d.ood_ranges == ((0.3, 0.6), (1.5, 2.0))
        else:
            assert d.id_range == (1.0, 4.0)
            assert d.ood_ranges == ((0.0, 0.8), (4.5, 6.0))
    assert spec.frames == 32 and spec.frame_interval == 0.1
    assert spec.condition_frames == 3 and spec.world_size == 10.0 and spec.resolution == 128
    assert 256 in spec.resolutions


def test_split_sizes_match_paper():
    u, p, c = get_task("uniform"), get_task("parabola"), get_task("collision")
    assert [u.split_size(s) for s in ("train-30k", "train-300k", "train-3m")] == [30_000, 300_000, 3_000_000]
    assert [c.split_size(s) for s in ("train-30k", "train-300k", "train-3m")] == [28_224, 331_776, 3_415_104]
    assert (u.id_eval_size, p.id_eval_size, c.id_eval_size) == (1050, 1100, 2000)
    assert (u.split_size("ood-eval"), p.split_size("ood-eval"), c.split_size("ood-eval")) == (2400, 2502, 4800)
    assert [lv.name for lv in c.ood_levels] == ["r1", "v1", "r1+r2", "v1+v2", "r1+v1", "all"]
    assert [lv.name for lv in u.ood_levels] == ["r", "v", "r+v"]


def test_spec_hash_is_stable_and_sensitive():
    import dataclasses

    spec = get_task("uniform")
    assert spec.spec_hash() == get_task("uniform").spec_hash()
    assert len(spec.spec_hash()) == 64
    changed = dataclasses.replace(spec, base_seed=spec.base_seed + 1)
    assert changed.spec_hash() != spec.spec_hash()
    hashes = {get_task(n).spec_hash() for n in TASKS}
    assert len(hashes) == len(TASKS)  # no two tasks generate the same data


def test_golden_covers_the_fundamental_families(golden):
    assert set(FUNDAMENTAL) <= set(golden["spec_hashes"])


@pytest.mark.parametrize("name", golden_keys("spec_hashes"))
def test_golden_spec_hash(golden, name):
    # per golden task: registered, with its pinned hash (families added later pin their own)
    assert name in TASKS
    assert get_task(name).spec_hash() == golden["spec_hashes"][name]


def test_duplicate_registration_is_an_error():
    reg: Registry[int] = Registry("thing")
    reg.register("a", 1)
    with pytest.raises(RegistryError, match="already registered"):
        reg.register("a", 2)


def test_unknown_name_suggests_closest():
    with pytest.raises(RegistryError, match="did you mean 'collision'"):
        get_task("colision")
    with pytest.raises(RegistryError, match="known: uniform, parabola, collision"):
        get_task("xyz")


def test_dof_validation():
    with pytest.raises(ValueError, match="overlaps"):
        Dof("r", "u", (0.7, 1.5), ((1.0, 2.0),))
    with pytest.raises(ValueError, match="empty ID"):
        Dof("r", "u", (1.5, 0.7), ())

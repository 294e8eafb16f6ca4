"""`phybench_baselines.training`: the pieces both trainers share (one copy, used by both families)."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from phybench_baselines import training  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_stream_is_one_sequence_whatever_the_process_count_and_start():
    one = list(islice(iter(training.StreamSampler(10, 4, 0, 1, seed=3)), 24))  # 6 steps of 4
    two = [list(islice(iter(training.StreamSampler(10, 2, r, 2, seed=3)), 12)) for r in (0, 1)]
    interleaved = [i for s in range(6) for r in (0, 1) for i in two[r][2 * s:2 * s + 2]]
    assert interleaved == one
    assert list(islice(iter(training.StreamSampler(10, 4, 0, 1, seed=3, start=2)), 16)) == one[8:]
    assert sorted(one[:10]) == list(range(10))  # each epoch a permutation


def test_ema_decay_warms_up_only_when_asked():
    assert training.ema_decay(0.995, 0, warmup=True) == 0.1
    assert training.ema_decay(0.995, 0, warmup=False) == 0.995
    assert training.ema_decay(0.995, 10_000, warmup=True) == 0.995


@dataclass
class Cfg:
    lr: float = 1.0
    steps: int = 3
    path: str = ""
    vae: str | None = "x"
    dims: list[int] = field(default_factory=lambda: [1])


def test_set_fields_parses_json_strings_and_none():
    cfg = training.set_fields(Cfg(), ["lr=2", "steps=5", "path=runs/a b", "vae=None", "dims=[1,2]"])
    assert cfg == Cfg(lr=2.0, steps=5, path="runs/a b", vae=None, dims=[1, 2]) and isinstance(cfg.lr, float)
    assert training.set_fields(Cfg(), ["path=None"]).path == "None"  # a str-only field keeps the word
    with pytest.raises(SystemExit, match="unknown config field"):
        training.set_fields(Cfg(), ["nope=1"])
    with pytest.raises(SystemExit, match="not a JSON value"):
        training.set_fields(Cfg(), ["steps=many"])


def test_both_trainers_use_the_shared_pieces_and_neither_borrows_from_the_other():
    """framear took StreamSampler, Counter, update_ema, hardware from `dit.train`; now both import `training`."""
    for family, other in (("dit", "framear"), ("framear", "dit")):
        tree = ast.parse((ROOT / "baselines" / family / "train.py").read_text(encoding="utf-8"))
        froms = {(n.level, n.module) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert (2, "training") in froms, family
        assert not any(m and m.startswith(other) for _, m in froms), f"{family}.train imports {other}"

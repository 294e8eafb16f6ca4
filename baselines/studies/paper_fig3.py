"""The paper's Figure 3 (velocity error of DiT-S / B / L trained on 30K / 300K / 3M videos), as numbers.

The numbers are `phybench.leaderboard.site.paper.FIGURE3` (digitised from the authors' plot file; every
value the paper's text quotes agrees within 0.0005), read through each task family's `paper_quote`.  The paper's own velocity convention (its ground
truth scores 0.0099-0.0210 against itself; phybench's scores 0.0003), so the miniature is compared
with it by direction and ratio, never by level.  (An earlier copy here had the table transposed:
DiT-S read as the 30K column of S, B and L.)
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

SIZES = ("DiT-S", "DiT-B", "DiT-L")
PARAMS = {"DiT-S": 22.5e6, "DiT-B": 89.5e6, "DiT-L": 310.0e6}  # the paper's counts
TRAIN = (30_000, 300_000, 3_000_000)  # training videos

class _ByTask(Mapping[str, Any]):
    """task -> what the paper quotes for it, read from `phybench.leaderboard.site.paper` (the one copy of
    Figure 3, with its approximate points' "~" dropped), through the task family's `paper_quote`: no
    task is named here."""

    def __init__(self, build: Callable[[str], Any]) -> None:
        self._build = build

    def _panel(self, task: str) -> str | None:
        from phybench.leaderboard.site.paper import FIGURE3, quote_of

        panel = quote_of(task)
        return panel if panel in FIGURE3 else None

    def __getitem__(self, task: str) -> Any:
        panel = self._panel(task)
        if panel is None:
            raise KeyError(task)
        return self._build(panel)

    def __iter__(self) -> Iterator[str]:
        from phybench.tasks import TASKS

        return iter([name for name in TASKS if self._panel(name) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _fig3(panel: str) -> dict[str, dict[str, tuple[float, ...]]]:
    from phybench.leaderboard.site.paper import FIGURE3, _value

    rows = FIGURE3[panel]
    return {split: {size: tuple(_value(v)[0] for v in rows[size][k]) for size in SIZES}
            for k, split in enumerate(("id", "ood"))}


def _floor(panel: str) -> float:
    from phybench.leaderboard.site.paper import FLOORS

    return FLOORS[panel][0]


# task -> split ("id" / "ood") -> size -> errors at TRAIN (the paper's 30K, 300K, 3M)
FIG3: Mapping[str, dict[str, dict[str, tuple[float, ...]]]] = _ByTask(_fig3)
GROUND_TRUTH: Mapping[str, float] = _ByTask(_floor)  # Table 3: the ground truth against itself (ID)


def paper_facts(task: str) -> dict[str, object]:
    """What Figure 3 says, computed from its numbers: ID (and OOD) error at the largest over the smallest
    training set per size and at the largest over the smallest size per training set, and the OOD / ID
    ratio range over the cells."""
    fig = FIG3[task]
    with_data = {s: {k: fig[k][s][-1] / fig[k][s][0] for k in ("id", "ood")} for s in SIZES}
    with_size = {n: {k: fig[k][SIZES[-1]][j] / fig[k][SIZES[0]][j] for k in ("id", "ood")} for j, n in enumerate(TRAIN)}
    ratios = [fig["ood"][s][j] / fig["id"][s][j] for s in SIZES for j in range(len(TRAIN))]
    return {"with_data": with_data, "with_size": with_size, "ood_over_id": (min(ratios), max(ratios))}

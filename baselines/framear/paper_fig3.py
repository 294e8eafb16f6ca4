"""The paper's Figure 3 (velocity error of DiT-S / B / L trained on 30K / 300K / 3M videos), as numbers.

Digitised from the authors' plot file (their project page's `scaling_combined.png`); every value
the paper's text quotes agrees within 0.0005.  The paper's own velocity convention (its ground
truth scores 0.0099-0.0210 against itself; phybench's scores 0.0003), so the miniature is compared
with it by direction and ratio, never by level.  Kept here, not read from elsewhere at run time,
so that `phybench study findings --grid` needs nothing but the grid.
"""
from __future__ import annotations

SIZES = ("DiT-S", "DiT-B", "DiT-L")
PARAMS = {"DiT-S": 22.5e6, "DiT-B": 89.5e6, "DiT-L": 310.0e6}  # the paper's counts
TRAIN = (30_000, 300_000, 3_000_000)  # training videos

# task -> split ("id" / "ood") -> size -> errors at TRAIN
FIG3: dict[str, dict[str, dict[str, tuple[float, float, float]]]] = {
    "uniform": {
        "id": {"DiT-S": (0.022, 0.017, 0.015), "DiT-B": (0.018, 0.015, 0.014), "DiT-L": (0.015, 0.0138, 0.012)},
        "ood": {"DiT-S": (0.435, 0.433, 0.378), "DiT-B": (0.293, 0.328, 0.385), "DiT-L": (0.288, 0.358, 0.427)},
    },
    "collision": {
        "id": {"DiT-S": (0.027, 0.030, 0.024), "DiT-B": (0.024, 0.019, 0.016), "DiT-L": (0.023, 0.018, 0.015)},
        "ood": {"DiT-S": (0.188, 0.241, 0.270), "DiT-B": (0.200, 0.167, 0.173), "DiT-L": (0.153, 0.211, 0.161)},
    },
    "parabola": {
        "id": {"DiT-S": (0.051, 0.043, 0.038), "DiT-B": (0.049, 0.039, 0.035), "DiT-L": (0.047, 0.037, 0.033)},
        "ood": {"DiT-S": (0.307, 0.317, 0.314), "DiT-B": (0.285, 0.376, 0.352), "DiT-L": (0.307, 0.288, 0.338)},
    },
}
GROUND_TRUTH = {"uniform": 0.0099, "collision": 0.0117, "parabola": 0.0210}  # Table 3: ground truth against itself


def paper_facts(task: str) -> dict[str, object]:
    """What Figure 3 says, computed from its numbers: ID (and OOD) error at the largest over the smallest
    training set per size and at the largest over the smallest size per training set, and the OOD / ID
    ratio range over the cells."""
    fig = FIG3[task]
    with_data = {s: {k: fig[k][s][-1] / fig[k][s][0] for k in ("id", "ood")} for s in SIZES}
    with_size = {n: {k: fig[k][SIZES[-1]][j] / fig[k][SIZES[0]][j] for k in ("id", "ood")} for j, n in enumerate(TRAIN)}
    ratios = [fig["ood"][s][j] / fig["id"][s][j] for s in SIZES for j in range(len(TRAIN))]
    return {"with_data": with_data, "with_size": with_size, "ood_over_id": (min(ratios), max(ratios))}

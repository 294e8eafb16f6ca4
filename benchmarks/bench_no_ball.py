"""No ball is no ball (issue 34, item 1b): which videos the velocity metric finds untrackable.

For the first N rows of each given split: the exact ground truth and each benign degradation
(`phybench.benign`) must stay trackable; uniform colour noise, a blank (all background) video
and a heavy Gaussian blur of the ground truth (sigma = --heavy-sigma times the row's largest
ball radius in px: the ball's own size blurred away) must be untrackable (the parser finds no ball: `phybench.scoring.physics.parse.NOT_A_BALL`).  Only the
generated frames are replaced; the condition frames stay the split's, as a model's would.

    PYTHONPATH=. python benchmarks/bench_no_ball.py /tmp/l34/uniform-id-eval /tmp/l34/uniform-ood-eval --rows 20

Prints one line per split and kind: untrackable videos / videos (excluded rows left out).
"""
from __future__ import annotations

import argparse
from typing import Callable

import numpy as np

from phybench.benign import BENIGN, degrade
from phybench.data.split import SplitReader
from phybench.scoring.run.sample import score_sample

Make = Callable[[np.ndarray, int, str], np.ndarray]


def _noise(video: np.ndarray, cf: int, sample_id: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(sample_id)) % 2**32)
    out = video.copy()
    out[cf:] = rng.integers(0, 256, out[cf:].shape, dtype=np.uint8)
    return out


def _blank(video: np.ndarray, cf: int, sample_id: str) -> np.ndarray:
    out = video.copy()
    out[cf:] = 255
    return out


def _heavy_blur(sigma: float) -> Make:
    """A Gaussian blur of sigma px of the generated frames."""
    def make(video: np.ndarray, cf: int, sample_id: str) -> np.ndarray:
        from scipy import ndimage

        s = sigma
        out = video.copy()
        blurred = ndimage.gaussian_filter(video[cf:].astype(np.float32), (0, s, s, 0), mode="nearest")
        out[cf:] = np.clip(np.rint(blurred), 0, 255).astype(np.uint8)
        return out

    return make


def kinds(heavy_sigma: float) -> dict[str, tuple[Make, bool]]:
    """{kind: (make, should be untrackable)}; heavy_sigma: the heavy blur's sigma in px."""
    out: dict[str, tuple[Make, bool]] = {"exact": (lambda v, cf, sid: v, False)}
    for name in BENIGN:
        out[name] = ((lambda n: lambda v, cf, sid: degrade(n, v, cf, sid))(name), False)
    out["noise"] = (_noise, True)
    out["blank"] = (_blank, True)
    out["heavy-blur"] = (_heavy_blur(heavy_sigma), True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("splits", nargs="+")
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--heavy-sigma", type=float, default=1.0, help="times the row's largest radius in px")
    args = ap.parse_args()
    for path in args.splits:
        reader = SplitReader(path)
        manifest = reader.manifest
        cf = int(manifest["condition_frames"])
        counts: dict[str, list[int]] = {}
        for row in list(reader.rows())[: args.rows]:
            gt = reader.video(row)
            px = float(np.max(row["radii"])) * gt.shape[2] / float(manifest["world_size"])
            table = kinds(args.heavy_sigma * px)
            for name, (make, _) in table.items():
                d = score_sample(row, make(gt, cf, row["sample_id"]), gt, manifest, ("velocity_error",))
                if d["excluded"]:
                    continue
                c = counts.setdefault(name, [0, 0])
                c[1] += 1
                c[0] += d["untrackable"] is not None
        for name, (untrackable, n) in counts.items():
            want = "all" if name in ("noise", "blank", "heavy-blur") else "none"
            print(f"{manifest['task']}/{manifest['split']} {name}: untrackable {untrackable}/{n} (want {want})")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

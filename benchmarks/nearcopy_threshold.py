"""Measure the near-copy rule (`phybench.leaderboard.hub.nearcopy`) on independent pairs and on near-copies.

For each split: the reference baselines' lite submissions, the framear grid's independently
trained cells (where given), degraded ground truth (`phybench.benign`) and near-copies of
several rows are fingerprinted on the first N samples; every pair of a kind is compared as the
sync would (new = the second, row = the first, truth = the split's own videos) and the per-video
PSNR(S, A), the ratio d(S, A) / min(d(A, G), d(S, G)), the "same" share and the decision are
printed per pair kind.

    python benchmarks/nearcopy_threshold.py --subs /work/pb-lite/submissions --splits /work/pb-lite/data \
        --learned /tmp/h46grid-w/grid/subs -n 60 uniform-id-eval uniform-ood-eval parabola-id-eval collision-ood-eval
"""
from __future__ import annotations

import argparse
import itertools
import resource
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from phybench.benign import degrade
from phybench.leaderboard.hub import nearcopy as nc

BASELINES = ("ground-truth", "physics-oracle", "linear-extrapolation", "copy-last", "nearest-neighbour")
DEGRADED = ("noise-8", "jpeg-40", "h264-18", "h264-28", "blur-1.0", "resample-2x", "gamma-0.8", "contrast-0.85",
            "cast-6")
VERBOSE = "-v" in sys.argv
COPIED = ("ground-truth", "physics-oracle", "copy-last", "nearest-neighbour")  # + the first learned cell


def _one_px(v: np.ndarray, c: int, sid: str) -> np.ndarray:
    out = v.copy()
    out[c, 5, 7, 1] = out[c, 5, 7, 1] + 1 if out[c, 5, 7, 1] < 255 else 254
    return out


def _noise1(v: np.ndarray, c: int, sid: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(sid)) % (2 ** 32))
    out = v.astype(np.int16)
    out[c:] += rng.integers(-1, 2, out[c:].shape, dtype=np.int16)
    return np.clip(out, 0, 255).astype(np.uint8)


def _crop_pad(v: np.ndarray, c: int, sid: str) -> np.ndarray:
    return degrade("shift-1-edge", v, c, sid)  # crop 1 px at the bottom/right, pad 1 px (edge) at the top/left


NEAR = {"copy-1px-1level": _one_px, "copy-noise-1": _noise1, "copy-lossless": lambda v, c, s: v.copy(),
        "copy-crop-pad-1px": _crop_pad, "copy-h264-18": lambda v, c, s: degrade("h264-18", v, c, s),
        "copy-jpeg-40": lambda v, c, s: degrade("jpeg-40", v, c, s)}


def fingerprints(subs: dict[str, Path], ids: list[str], cond: int, perturb: dict[str, list[str]]) -> dict[str, nc.Fingerprint]:
    """Every row's fingerprint, and its perturbed versions (name -> kinds), one video at a time."""
    from phybench.submission.format import Submission

    out = {}
    for name, path in subs.items():
        kinds = perturb.get(name, [])
        rows: dict[str, list[np.ndarray]] = defaultdict(list)
        n = 0
        with Submission(path) as s:
            for sid, v in s.iter_videos(ids):
                rows[name].append((nc.sketch(v, cond), nc.shifted_sketches(v, cond)))
                n = int(np.prod(v[cond:].shape))
                for kind in kinds:
                    fn = NEAR.get(kind) or (lambda v, c, s, k=kind: degrade(k, v, c, s))
                    moved = fn(v, cond, sid)
                    rows[f"{kind}({name})"].append((nc.sketch(moved, cond), nc.shifted_sketches(moved, cond)))
        for key, sk in rows.items():  # every fingerprint can be the new side of a pair: shifted too
            out[key] = nc.Fingerprint(list(ids), np.stack([a for a, _ in sk]), n, {"model": key, "submission_hash": key},
                                      np.stack([b for _, b in sk]))
    return out


def truth(split_dir: Path, ids: list[str], cond: int) -> nc.Fingerprint:
    from phybench.data.split import SplitReader

    reader = SplitReader(split_dir)
    want = set(ids)
    got = {str(r["sample_id"]): reader.video(r) for r in reader.rows() if str(r["sample_id"]) in want}
    return nc.fingerprint(((i, got[i]) for i in ids), cond, model="truth")


def line(kind: str, pairs: list[nc.Pair]) -> str:
    p = np.concatenate([nc.psnr(x.d_sa) for x in pairs])
    ratio = np.concatenate([x.ratio for x in pairs])
    ratio = ratio[np.isfinite(ratio)]
    shares = [x.share for x in pairs]
    refused = sum(x.near_copy for x in pairs)
    if VERBOSE:
        for x in pairs:
            print(f"   {x.row.get('model')} <- ?: share {x.share:.2f} median psnr {np.median(nc.psnr(x.d_sa)):.1f}"
                  f" median ratio {np.median(x.ratio):.2f} median p_ag {np.median(x.p_ag):.3f}", file=sys.stderr)
    q = lambda a, f: f"{np.percentile(a, f):.1f}" if a.size else "-"  # noqa: E731
    fin = p[np.isfinite(p)]
    return (f"| {kind} | {len(pairs)} | {q(fin, 0)} / {q(fin, 50)} / {q(fin, 100)} ({int((~np.isfinite(p)).sum())} inf) "
            f"| {q(ratio, 0)[:5]} / {q(ratio, 50)[:5]} | {min(shares):.2f}-{max(shares):.2f} | "
            f"{sum(int(x.same_pixels.sum()) for x in pairs)} / {sum(int(x.same_mistakes.sum()) for x in pairs)} | "
            f"{refused} of {len(pairs)} refused |")


def table(kinds: dict[str, list[nc.Pair]], title: str) -> None:
    print(f"\n{title}\n\n| pair kind | pairs | PSNR(S, A) dB min / median / max | ratio min / median | same share | "
          "videos same by pixels / by mistakes | decision |")
    print("|---|---|---|---|---|---|---|")
    for kind in sorted(kinds):
        print(line(kind, kinds[kind]), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("splits_names", nargs="+")
    ap.add_argument("--subs", type=Path, required=True)
    ap.add_argument("--splits", type=Path, required=True)
    ap.add_argument("--learned", type=Path)
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("-v", action="store_true", help="one line per pair (stderr)")
    args = ap.parse_args(argv)
    kinds: dict[str, list[nc.Pair]] = defaultdict(list)
    for split in args.splits_names:
        from phybench.data.split import read_manifest
        from phybench.submission.format import Submission

        manifest = read_manifest(args.splits / split)
        cond = int(manifest["condition_frames"])
        subs = {b: args.subs / f"{split}-{b}" for b in BASELINES}
        learned = sorted(p for p in (args.learned.glob(f"{split}-*") if args.learned else []) if p.is_dir())
        subs.update({p.name.removeprefix(f"{split}-"): p for p in learned})
        with Submission(subs["ground-truth"]) as s:
            ids = sorted(s.ids)[:args.n]
        copied = [*COPIED, *[p.name.removeprefix(f"{split}-") for p in learned[:1]]]
        perturb = {name: list(NEAR) for name in copied}
        perturb["ground-truth"] = [*NEAR, *DEGRADED]
        fps = fingerprints(subs, ids, cond, perturb)
        g = truth(args.splits / split, ids, cond)
        names = [*BASELINES, *(p.name.removeprefix(f"{split}-") for p in learned)]
        for a, b in itertools.combinations(names, 2):
            kind = ("baseline vs baseline" if a in BASELINES and b in BASELINES else
                    "learned vs baseline" if a in BASELINES else "learned vs learned (independent cells)")
            kinds[kind].append(nc.compare(fps[b], fps[a], g))
        degraded = [f"{k}(ground-truth)" for k in DEGRADED]
        for d in degraded:
            kinds[f"degraded GT {d.split('(')[0]} vs GT row"].append(nc.compare(fps[d], fps["ground-truth"], g))
            for other in names[1:]:
                kinds["degraded GT vs the other rows"].append(nc.compare(fps[d], fps[other], g))
        for x, y in itertools.combinations(degraded, 2):
            kinds["degraded GT vs degraded GT"].append(nc.compare(fps[y], fps[x], g))
        for name in copied:
            tag = "GT" if name == "ground-truth" else "oracle" if name == "physics-oracle" else "other rows"
            for k in NEAR:
                kinds[f"{k} of {tag}"].append(nc.compare(fps[f"{k}({name})"], fps[name], g))
        print(f"{split}: {len(ids)} samples, {len(fps)} fingerprints", file=sys.stderr, flush=True)
        table(kinds, f"after {split}")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    rc = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"CPU {ru.ru_utime + ru.ru_stime + rc.ru_utime + rc.ru_stime:.0f} s, peak RSS {ru.ru_maxrss / 1024:.0f} MiB",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

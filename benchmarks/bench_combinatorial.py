"""Combinatorial family figures (issue 12).  Not a test: prints figures.

    python benchmarks/bench_combinatorial.py            # ~2 minutes on 2 cores

Figures:
  sim+render    videos/s per process at 256 and 128 px (placement with its rejections,
                Box2D, render), target >= 100 at 256 px
  loader        clips/s over a parameter-only training split at 128 px, torch DataLoader
                with 2 workers (target >= 200 on 2 cores): uint8 clips (the simulate+render
                work alone) and the DiT trainer's ClipDataset (float32 clips, 6 MB each)
  rejections    share of placement attempts rejected, by reason, over N draws
  storage       bytes per scene of a parameter-only training shard (Parquet + sidecar),
                extrapolated to train-60t (6M scenes; target < 1 GB); bytes per stored
                evaluation clip at 256 px (PNG frames in Parquet; target <= 40 KB)
"""
from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path


def bench_sim_render(n: int) -> None:
    from phybench.tasks import get_task
    from phybench.tasks.sampling import make_sample, simulate_sample
    from phybench.world.render import render

    spec = get_task("combinatorial")
    for res in (256, 128):
        t0 = time.perf_counter()
        for i in range(n):
            render(simulate_sample(spec, make_sample(spec, "out-of-template-eval", i)), res)
        print(f"sim+render  {res:>3} px: {n / (time.perf_counter() - t0):7.1f} videos/s  ({n} videos, 1 process)")


def bench_rejections(n: int) -> None:
    from phybench.tasks import get_task
    from phybench.tasks.combinatorial import attempt_uniforms, draw_scene, in_view, template_sets, touching_at_start
    from phybench.world.scene import body_bounds
    from phybench.world.simulate import simulate

    spec = get_task("combinatorial")
    reasons: collections.Counter = collections.Counter()
    templates = template_sets(spec.base_seed)["train-60t"] + template_sets(spec.base_seed)["out-of-template"]
    for k in range(n):
        t = templates[k % len(templates)]
        scene = draw_scene(spec, t, attempt_uniforms(spec, "bench", t, k, 0))
        if not in_view(body_bounds(scene)[0], spec.world_size, 0.0).all():
            reasons["not in view"] += 1
            continue
        if touching_at_start(spec, scene):
            reasons["initial overlap"] += 1
            continue
        _, first = simulate(scene, spec.simulator, spec.frames, spec.frame_interval, record_contacts=True)
        reasons["accepted" if first.min() < spec.frame_interval * (spec.frames - 1) else "no event"] += 1
    print(f"rejections  {n} first attempts: " + ", ".join(f"{k} {v / n:.1%}" for k, v in sorted(reasons.items())))


class _Uint8Clips:
    """The loader's work alone: simulate and render each parameter-only row at 128 px, uint8."""

    def __init__(self, folder: Path) -> None:
        from phybench.data.split import SplitReader

        self.reader = SplitReader(folder)
        self.indices = [int(r["index"]) for r in self.reader.rows(columns=["index"])]

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, j: int):
        import torch

        from phybench.data.split import sample_video

        return torch.from_numpy(sample_video(self.reader.plan, self.indices[j], None, 128))


def _clip_dataset():
    from phybench_baselines.dit.train import ClipDataset

    return ClipDataset


def bench_loader_and_storage(n_train: int, n_eval: int) -> None:
    import torch

    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.tasks import get_task

    spec = get_task("combinatorial")
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train"
        generate(make_plan(spec, "train-60t", resolution=128, limit=n_train), train, progress=False)
        files = sorted((train / "data").iterdir())
        parquet = sum(f.stat().st_size for f in files if f.suffix == ".parquet")
        sidecar = sum(f.stat().st_size for f in files if f.suffix == ".json")
        per = (parquet + sidecar) / n_train
        print(f"storage     train rows: {parquet / n_train:.1f} B parquet + {sidecar / n_train:.1f} B sidecar per scene"
              f" -> train-60t (6M) {per * 6e6 / 1e9:.2f} GB")
        for name, ds in (("uint8 clips", _Uint8Clips(train)),
                         ("DiT ClipDataset (float32)", _clip_dataset()(train, frames=spec.frames, resolution=128))):
            loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=2, shuffle=False)
            it = iter(loader)
            next(it)  # workers started
            t0, count = time.perf_counter(), 0
            for batch in it:
                count += len(batch)
            rate = count / (time.perf_counter() - t0)
            print(f"loader      128 px, 32 frames, 2 workers, {name}: {rate:7.1f} clips/s ({count} clips; "
                  f"{rate / 32:.1f} batches of 32 per s)")
        ev = Path(tmp) / "eval"
        generate(make_plan(spec, "out-of-template-eval", resolution=256, limit=n_eval), ev, progress=False)
        size = sum(f.stat().st_size for f in (ev / "data").glob("*.parquet"))
        print(f"storage     eval clip at 256 px: {size / n_eval / 1024:.1f} KB (PNG frames in Parquet, {n_eval} clips)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="videos for sim+render and rejection figures")
    ap.add_argument("--train", type=int, default=3000, help="training scenes for the loader and storage figures")
    ap.add_argument("--eval", type=int, default=64, help="evaluation clips for the storage figure")
    args = ap.parse_args()
    bench_sim_render(args.n)
    bench_rejections(args.n)
    bench_loader_and_storage(args.train, args.eval)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

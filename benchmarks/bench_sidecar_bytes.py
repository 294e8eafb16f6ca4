"""Bytes per full-protocol model: per-video sidecars as JSON (the package repository) and as
Parquet (the board's Hub dataset repository, `phybench.leaderboard.common.samples_parquet`).

    python benchmarks/bench_sidecar_bytes.py WORK/full/results            # a full-protocol results folder (fundamental.sh WORK full)
    python benchmarks/bench_sidecar_bytes.py /work/fullrun/full/results   # another full-protocol folder

A model's files are every ``*-<model>.json`` of the folder (one per task and split: six for
the fundamental protocol).  For each model it prints the raw bytes of its results files,
JSON sidecars, records, and its Parquet sidecars; the sidecars gzip -9'd (roughly what one
git object costs); and what the model adds to a git pack (`git gc --aggressive` in a
scratch repository holding that model's files only), JSON sidecars against Parquet ones.
Each Parquet file is checked to read back to the JSON sidecar's exact bytes first.
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

from phybench.leaderboard.common.samples_parquet import canonical_json, from_parquet, read_any_sidecar, to_parquet
from phybench.scoring.run.layout import RECORD_SUFFIX, SAMPLES_SUFFIX

MODELS = ("copy-last", "ground-truth", "linear-extrapolation", "nearest-neighbour", "physics-oracle")


def model_of(name: str) -> str | None:
    return next((m for m in MODELS if name.split(".")[0].endswith("-" + m)), None)


def git_pack_bytes(files: dict[str, bytes]) -> int:
    """Bytes of the pack `git gc --aggressive` makes of one commit holding `files`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in files.items():
            (root / name).write_bytes(data)
        run = lambda *a: subprocess.run(["git", "-C", tmp, *a], check=True, capture_output=True)  # noqa: E731
        run("init", "-q")
        run("add", ".")
        run("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "m")
        run("gc", "-q", "--aggressive")
        return sum(p.stat().st_size for p in (root / ".git" / "objects" / "pack").glob("*.pack"))


def measure(folder: Path) -> list[dict[str, int | str]]:
    groups: dict[str, dict[str, Path]] = defaultdict(dict)
    for path in sorted(folder.glob("*.json")):
        model = model_of(path.name)
        if model:
            groups[model][path.name] = path
    rows = []
    for model, paths in sorted(groups.items()):
        json_files = {n: p.read_bytes() for n, p in paths.items()}
        parquet = {}
        for name, data in json_files.items():
            if name.endswith(SAMPLES_SUFFIX):
                pq = to_parquet(read_any_sidecar(paths[name]))
                assert canonical_json(from_parquet(pq)) == data, name  # lossless, byte for byte
                parquet[name.replace(SAMPLES_SUFFIX, ".samples.parquet")] = pq
        sidecars = {n: d for n, d in json_files.items() if n.endswith(SAMPLES_SUFFIX)}
        others = {n: d for n, d in json_files.items() if not n.endswith(SAMPLES_SUFFIX)}
        rows.append({
            "model": model, "files": len(json_files),
            "results": sum(len(d) for n, d in others.items() if not n.endswith(RECORD_SUFFIX)),
            "records": sum(len(d) for n, d in others.items() if n.endswith(RECORD_SUFFIX)),
            "json_sidecars": sum(map(len, sidecars.values())),
            "json_sidecars_gzip9": sum(len(gzip.compress(d, 9)) for d in sidecars.values()),
            "parquet_sidecars": sum(map(len, parquet.values())),
            "git_pack_with_json": git_pack_bytes(json_files),
            "git_pack_with_parquet": git_pack_bytes({**others, **parquet}),
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    args = ap.parse_args()
    if not shutil.which("git"):
        raise SystemExit("git is needed for the packed sizes")
    rows = measure(args.folder)
    keys = [k for k in rows[0] if k != "model"]
    print(f"{'model':22}" + "".join(f"{k:>24}" for k in keys))
    for row in rows:
        print(f"{row['model']:22}" + "".join(f"{row[k]:>24,}" for k in keys))
    mean = {k: sum(int(r[k]) for r in rows) / len(rows) for k in keys}
    print(f"{'mean':22}" + "".join(f"{mean[k]:>24,.0f}" for k in keys))
    print(f"\nper model: JSON sidecars {mean['json_sidecars'] / 1e6:.2f} MB raw -> Parquet "
          f"{mean['parquet_sidecars'] / 1e6:.2f} MB ({mean['json_sidecars'] / mean['parquet_sidecars']:.1f}x); "
          f"git pack {mean['git_pack_with_json'] / 1e6:.2f} MB -> {mean['git_pack_with_parquet'] / 1e6:.2f} MB")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

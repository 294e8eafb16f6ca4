"""`phybench leaderboard sync` of three lite submissions, over real HTTP on the local Hub.

    python benchmarks/bench_sync.py                          # uniform id-eval lite (200 videos)
    python benchmarks/bench_sync.py --limit 50 --work /tmp/pb-sync

Generates the split and three baselines' submissions once under --work (reused later),
starts tests/hubserver.py on 127.0.0.1, opens one pull request per submission with
`phybench submit` (each with its honest `phybench score --out` results as the claim), then
times one `phybench leaderboard sync` over the three (download, validate, score, compare
the claim, write results and records, comment, merge, rebuild the site), and, for scale,
one `phybench score` of one submission alone.  Metrics: the board's lite set
(velocity_error, ssim, psnr and their companions); LPIPS/FVD are left out.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hubserver import HubServer  # noqa: E402

from phybench.cli.data import canonical_command  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.reference import run_baseline  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

METRICS = "velocity_error,ssim,psnr"
BASELINES = ("copy-last", "linear-extrapolation", "physics-oracle")


def _run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "phybench.cli", *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"phybench {' '.join(args[:2])} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return took, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/phybench-bench-sync"))
    ap.add_argument("--limit", type=int, default=None, help="samples (default: the lite protocol's 200)")
    args = ap.parse_args()
    spec = get_task("uniform")
    from phybench.tasks.protocols import PROTOCOLS

    n = args.limit or PROTOCOLS.get("lite").size(spec, "id-eval")
    split = args.work / f"n{n}" / "splits" / "uniform-id-eval"
    if not (split / "manifest.json").is_file():
        plan = make_plan(spec, "id-eval", None, n, None)
        generate(plan, split, progress=False, command=canonical_command(plan))
    subs = {}
    for name in BASELINES:
        out = args.work / f"n{n}" / f"sub-{name}"
        subs[name] = out if (out / "submission.json").is_file() else run_baseline(name, split, out, progress=False)
    run = args.work / f"n{n}" / f"run-{time.time_ns()}"
    run.mkdir(parents=True)
    with HubServer() as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(run / "hf"), HF_HUB_DISABLE_XET="1",
                   HF_HUB_DISABLE_PROGRESS_BARS="1", PYTHONPATH=str(ROOT), HF_TOKEN="hf_test_write")
        subprocess.run([sys.executable, "-c", "from huggingface_hub import HfApi; "
                        "HfApi().create_repo('tester/board', repo_type='dataset')"], env=env, check=True)
        score_s = []
        for name, sub in subs.items():
            card = {"schema_version": 1, "model": name, "code_url": "https://github.com/phybench/phybench",
                    "input": {"type": "frames", "condition_frames": 3}, "sampling": {}, "seeds": [0],
                    "license": "Apache-2.0"}
            (run / f"{name}.card.json").write_text(json.dumps(card))
            took, _ = _run(["score", str(sub), "--data", str(split), "--metrics", METRICS, "--quiet",
                            "--out", str(run / f"{name}.results.json")], env)
            score_s.append(took)
            _run(["submit", str(sub), "--repo", "tester/board", "--card", str(run / f"{name}.card.json"),
                  "--results", str(run / f"{name}.results.json")], dict(env, HF_TOKEN="hf_test_read"))
        took, out = _run(["leaderboard", "sync", "--repo", "tester/board", "--splits", str(split.parent),
                          "--results", str(run / "results"), "--site", str(run / "site"), "--metrics", METRICS], env)
        again, out2 = _run(["leaderboard", "sync", "--repo", "tester/board", "--splits", str(split.parent),
                            "--results", str(run / "results"), "--site", str(run / "site"), "--metrics", METRICS], env)
    print(out.strip().splitlines()[-2])
    print(f"uniform id-eval, {n} videos per submission, {len(subs)} submissions, metrics {METRICS}")
    print(f"phybench score, one submission alone: {', '.join(f'{s:.1f}' for s in score_s)} s")
    print(f"phybench leaderboard sync, 3 pull requests: {took:.1f} s ({took / len(subs):.1f} s per submission)")
    print(f"second sync (nothing open): {again:.1f} s; {out2.strip().splitlines()[-2]}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

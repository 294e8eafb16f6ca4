"""Time `leaderboard publish` and `leaderboard build --from-hub` of a board against the local Hub.

    python benchmarks/bench_hub_board.py                       # the shipped board, leaderboard/results
    python benchmarks/bench_hub_board.py --results DIR

It starts tests/hubserver.py (real HTTP on 127.0.0.1), creates a dataset repository, and runs
the CLI as the maintainers would (fresh processes, HF_ENDPOINT set): publish (one commit),
publish again (nothing changed: no commit), build --from-hub at the published commit, and a
local `build --require-verified` of the same folder for comparison.  It prints the wall time of
each, the files and bytes in the Hub repository, and whether the two sites' data are equal.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    from hubserver import HubServer

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "leaderboard" / "results")
    args = ap.parse_args()
    with HubServer() as hub, tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(Path(tmp) / "home"), HF_HUB_DISABLE_XET="1",
                   HF_HUB_DISABLE_PROGRESS_BARS="1", HF_TOKEN="hf_test_write", PYTHONPATH=str(ROOT))

        def run(*argv: str) -> tuple[float, str]:
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(f"{' '.join(argv[:4])} failed:\n{proc.stderr[-2000:]}")
            return time.perf_counter() - start, proc.stdout

        code = ("from huggingface_hub import HfApi; import json, sys; api = HfApi(); r = sys.argv[1]\n"
                "if sys.argv[2] == 'create': api.create_repo(r, repo_type='dataset'); print('{}')\n"
                "else:\n i = api.repo_info(r, repo_type='dataset', files_metadata=True)\n"
                " print(json.dumps([i.sha, {s.rfilename: s.size for s in i.siblings}]))")
        repo = "bench/board"
        run("-c", code, repo, "create")
        cli = ("-m", "phybench.cli", "leaderboard")
        t_publish, _ = run(*cli, "publish", "--repo", repo, "--results", str(args.results))
        sha, sizes = json.loads(run("-c", code, repo, "info")[1])
        t_again, out = run(*cli, "publish", "--repo", repo, "--results", str(args.results))
        t_hub, _ = run(*cli, "build", "--from-hub", repo, "--revision", sha, "--out", f"{tmp}/hub-site")
        t_local, _ = run(*cli, "build", str(args.results), "--out", f"{tmp}/local-site", "--require-verified")
        same = (Path(f"{tmp}/hub-site/leaderboard.json").read_text()
                == Path(f"{tmp}/local-site/leaderboard.json").read_text())
        parquet = sum(v for k, v in sizes.items() if k.endswith(".parquet"))
        print(f"Hub repository: {len(sizes)} files, {sum(sizes.values()) / 1e6:.2f} MB "
              f"({parquet / 1e6:.2f} MB of them Parquet sidecars); local folder "
              f"{sum(p.stat().st_size for p in args.results.rglob('*.json')) / 1e6:.2f} MB of JSON")
        print(f"publish (one commit)            {t_publish:7.1f} s")
        print(f"publish again (no commit)       {t_again:7.1f} s   {'no commit' if 'already holds' in out else 'COMMITTED'}")
        print(f"build --from-hub --revision     {t_hub:7.1f} s")
        print(f"build --require-verified, local {t_local:7.1f} s")
        print(f"same site data: {same}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

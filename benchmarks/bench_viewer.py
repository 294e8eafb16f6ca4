"""`phybench view`: CPU seconds, peak memory and bytes of a lite viewer, before and after the reuse of scores.

    PYTHONPATH=. python benchmarks/bench_viewer.py                       # the defaults below (uniform and combinatorial lite)
    PYTHONPATH=. python benchmarks/bench_viewer.py --before 87dc159      # "before" = the viewer of that commit
    PYTHONPATH=. python benchmarks/bench_viewer.py --case NAME:SUB:SPLIT:RESULTS ...

Each case is a kept submission, its split and its shipped results file.  For each case the
viewer is built twice, each in a fresh Python process that reports its own CPU seconds
(`resource.getrusage`, the process and its children, user + system), wall seconds and peak
resident memory:

* **before**: ``build_viewer(SUB, SPLIT, OUT, results=RESULTS)`` of the package at ``--before``
  (exported with ``git archive`` into a temporary folder): that viewer scored the cheap metrics
  (velocity error, SSIM, PSNR and their companions) itself and showed the results file's header;
* **after**: the same call on this tree: the numbers come from the results file and its sidecar
  (`phybench.leaderboard.viewer.viewer_sources`); the videos are read for the submission hash, the
  sprites and the parser's tracks (the overlay), and the judge is asked where it fired only for a
  video whose stored verdict is abnormal (none without ``--details``).

It reports the viewer's bytes (the whole folder, ``index.html`` and the media) beside the
times.  docs/leaderboard.md ("Viewer cost") quotes a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LITE = Path("/work/lite-l34/lite")
COMB = Path("/work/comb")
DEFAULT_CASES = (
    f"uniform-lite:{LITE}/submissions/uniform-ood-eval-copy-last:{LITE}/data/uniform-ood-eval:"
    f"leaderboard/results/fundamental/lite/uniform-ood-eval-copy-last.json",
    f"combinatorial-lite:{COMB}/sub/copy-last-in-template-eval:{COMB}/in-template-eval:"
    f"leaderboard/results/combinatorial/in-template-eval-copy-last.json",
)

CHILD = """
import json, os, resource, sys, time
t = time.perf_counter()
from phybench.leaderboard.viewer.viewer import build_viewer
report = build_viewer(sys.argv[1], sys.argv[2], sys.argv[3], results=sys.argv[4])
wall = time.perf_counter() - t
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
out = sys.argv[3]
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
import phybench
print(json.dumps({"package": os.path.dirname(phybench.__file__), "cpu_s": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, "wall_s": wall,
                  "peak_rss_mib": max(own.ru_maxrss, kids.ru_maxrss) / 1024, "folder_bytes": size,
                  "index_bytes": os.path.getsize(os.path.join(out, "index.html")),
                  "media_bytes": report.media_bytes, "with_media": report.with_media, "videos": report.videos}))
"""


def _export(rev: str, dest: Path) -> Path:
    """The package as it was at `rev` (git archive of phybench/), for the "before" build."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", rev, "phybench"], check=True, capture_output=True).stdout
    tar = dest / "before.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(dest / "before", filter="data")
    return dest / "before"


def _build(pythonpath: Path, sub: str, split: str, out: Path, results: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    got = subprocess.run([sys.executable, "-c", CHILD, sub, split, str(out), str(REPO / results)], env=env,
                         cwd=out.parent, capture_output=True, text=True)  # not REPO: -c puts the cwd first on sys.path
    if got.returncode:
        raise SystemExit(f"the build failed ({pythonpath}):\n{got.stderr[-3000:]}")
    report = json.loads(got.stdout.strip().splitlines()[-1])
    assert Path(report["package"]).resolve() == (pythonpath / "phybench").resolve(), report["package"]
    return report


def _line(name: str, when: str, r: dict[str, float]) -> str:
    return (f"| {name} | {when} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} | "
            f"{r['videos']:.0f} ({r['with_media']:.0f} with media) | {r['folder_bytes'] / 1e6:.2f} | "
            f"{r['index_bytes'] / 1e3:.0f} | {r['media_bytes'] / 1e6:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", metavar="NAME:SUB:SPLIT:RESULTS",
                    help="a case (repeatable); default: uniform lite and combinatorial lite copy-last")
    ap.add_argument("--before", default="87dc159", help="the commit whose viewer scored itself (default 87dc159)")
    ap.add_argument("--no-before", action="store_true", help="measure this tree only")
    args = ap.parse_args()
    cases = [c.split(":", 3) for c in (args.case or DEFAULT_CASES)]
    print("| case | viewer | CPU s | wall s | peak RSS MiB | videos | folder MB | index.html kB | media MB |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="pb-bench-viewer-") as tmp:
        work = Path(tmp)
        before = None if args.no_before else _export(args.before, work)
        for name, sub, split, results in cases:
            if before is not None:
                print(_line(name, f"before ({args.before}: scores)", _build(before, sub, split, work / f"{name}-b",
                                                                             results)), flush=True)
            print(_line(name, "after (reuses the results)", _build(REPO, sub, split, work / f"{name}-a", results)),
                  flush=True)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

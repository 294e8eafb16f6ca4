"""`phybench leaderboard build`: time, peak memory and page size at 1x and 10x the shipped results.

    PYTHONPATH=. python benchmarks/board_build.py                        # 1x and 10x leaderboard/results
    PYTHONPATH=. python benchmarks/board_build.py --scales 1,5,10,20     # more points
    PYTHONPATH=. python benchmarks/board_build.py --results R --work /tmp/pb-board
    PYTHONPATH=. python benchmarks/board_build.py --before REV          # also REV's package, same run, same bytes

The board page must stay small (docs/leaderboard.md, "Page size and build memory") and the
build's memory flat as results files are added.  For each scale k the benchmark writes k copies
of every results file under --results (with its samples sidecar) into a temporary folder, each
copy as a distinct model ("<name> x2", ...) with its own submission hash, so the build runs its
real path: the registry check on, nothing refused, no --allow-partial.  The copies carry no
verification record (a record quotes the original's submission hash); the originals keep theirs.
Probe results are copied once (they feed the separate Probes page).  Each build runs in a fresh
Python process, which reports its own peak resident memory (`ru_maxrss`), so the numbers include
the interpreter and the imports (numpy, and torch through the FVD settings the registry check
reads).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIDECAR = ".samples.json"
RECORD = ".verified.json"

CHILD = """
import json, resource, sys, time
t = time.perf_counter()
from phybench.leaderboard import build
report = build(sys.argv[1], sys.argv[2])
seconds = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "cpu_s": use.ru_utime + use.ru_stime, "peak_rss_kib": use.ru_maxrss,
                  "files": len(report.accepted), "models": report.models, "refused": len(report.refused)}))
"""


def _copy_scaled(results: Path, out: Path, copies: int) -> int:
    """`copies` copies of every board results file under `results` (and its sidecar) into `out`;
    returns the number of results files written."""
    from phybench.scoring.run.results import results_bytes

    written = 0
    for path in sorted(results.rglob("*.json")):
        rel = path.relative_to(results)
        if path.name.endswith((SIDECAR, RECORD)):
            continue
        if rel.parts[0] == "probes":  # the Probes page's own files: copied once
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / rel)
            continue
        side = path.with_name(path.name[: -len(".json")] + SIDECAR)
        record = path.with_name(path.name[: -len(".json")] + RECORD)
        for k in range(copies):
            target = out / rel.parent / (path.stem + (f"-x{k + 1}" if k else "") + ".json")
            target.parent.mkdir(parents=True, exist_ok=True)
            if k == 0:  # the shipped file as it is, with its record
                shutil.copyfile(path, target)
                if side.is_file():
                    shutil.copyfile(side, target.with_name(target.stem + SIDECAR))
                if record.is_file():
                    shutil.copyfile(record, target.with_name(target.stem + RECORD))
                written += 1
                continue
            doc = json.loads(path.read_text())
            doc["model"]["name"] = f"{doc['model']['name']} x{k + 1}"
            old = str(doc["provenance"].get("submission_hash"))
            new = hashlib.sha256(f"{old}/copy {k + 1}".encode()).hexdigest()
            doc["provenance"]["submission_hash"] = new
            target.write_bytes(results_bytes(doc))
            if side.is_file():
                sidecar = json.loads(side.read_text())
                sidecar["submission_hash"] = new
                target.with_name(target.stem + SIDECAR).write_text(json.dumps(sidecar))
            written += 1
    return written


def _measure(results: Path, site: Path, package: Path = REPO) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(package)}  # the phybench of this checkout (or of --before)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(results), str(site)], capture_output=True, text=True,
                          env=env, check=False, cwd=site.parent)  # not REPO: -c puts the cwd first on sys.path
    if proc.returncode:
        raise SystemExit(f"build failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _site_digest(site: Path) -> str:
    """sha256 over every file of a site (its name and bytes), in name order."""
    h = hashlib.sha256()
    for p in sorted(site.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(site).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(REPO / "leaderboard" / "results"))
    ap.add_argument("--scales", default="1,10", help="comma-separated copies of the results folder")
    ap.add_argument("--work", default=None, help="where the copies and sites go (default: a temporary folder)")
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also build with the package of this commit (git archive), in the same run, and check "
                         "that both sites have the same bytes")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="pb-board-"))
    packages = [("now", REPO)]
    if args.before:
        data = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "phybench"], check=True,
                              capture_output=True).stdout
        (work / "before").mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            t.extractall(work / "before", filter="data")
        packages.insert(0, (args.before, work / "before"))
    print(f"{'scale':>5} {'package':>8} {'files':>6} {'models':>6} {'seconds':>8} {'CPU s':>6} {'peak RSS MiB':>13} "
          f"{'index.html KB':>14} {'leaderboard.json KB':>20}")
    for scale in (int(s) for s in args.scales.split(",")):
        results = work / f"results-x{scale}"
        shutil.rmtree(results, ignore_errors=True)
        _copy_scaled(Path(args.results), results, scale)
        digests = set()
        for label, package in packages:
            site = work / f"site-x{scale}-{label}"
            shutil.rmtree(site, ignore_errors=True)
            m = _measure(results, site, package)
            if m["refused"]:
                raise SystemExit(f"{m['refused']} file(s) refused at scale {scale}")
            page = (site / "index.html").stat().st_size / 1000
            export = (site / "leaderboard.json").stat().st_size / 1000
            print(f"{scale:>5} {label:>8} {m['files']:>6} {m['models']:>6} {m['seconds']:>8.1f} {m['cpu_s']:>6.1f} "
                  f"{m['peak_rss_kib'] / 1024:>13.0f} {page:>14.0f} {export:>20.0f}", flush=True)
            digests.add(_site_digest(site))
        if len(digests) > 1:
            raise SystemExit(f"the sites built at scale {scale} differ between the packages")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()

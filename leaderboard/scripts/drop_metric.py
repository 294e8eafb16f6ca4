"""Drop a per-video metric from results files whose submissions are gone, saying why.

    python leaderboard/scripts/drop_metric.py --metric abnormal --why "..." leaderboard/results/scaling/*.json

A results file states the settings of every metric it reports, and the board refuses a file
whose settings are not this phybench's.  When a metric's settings change (the judge) and a
file's submission was not kept (the scaling study's DiT videos), the file cannot be re-scored
(`phybench rescore` needs the submission); its other numbers still hold.  This removes the
metric everywhere it appears (metrics, directions, summaries, settings) and records the drop
in `provenance.dropped`, so the file reads as what it is.  Deterministic bytes.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from phybench.io import atomic_write_bytes
from phybench.scoring.run.layout import read as read_results
from phybench.scoring.run.results import results_bytes


def drop(doc: dict, metric: str, why: str) -> dict:
    doc["metrics"] = [m for m in doc["metrics"] if m != metric]
    doc.get("higher_is_better", {}).pop(metric, None)
    doc["provenance"].get("metric_settings", {}).pop(metric, None)
    for part in (doc.get("summary", {}).get("overall", {}), *doc.get("summary", {}).get("levels", {}).values()):
        part.pop(metric, None)
    rescored = doc["provenance"].get("rescored")
    if rescored and metric in rescored.get("metrics", []):
        rescored["metrics"] = [m for m in rescored["metrics"] if m != metric]
        if not rescored["metrics"]:
            doc["provenance"].pop("rescored")
    doc["provenance"].setdefault("dropped", []).append({"metric": metric, "why": why})
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--metric", required=True)
    ap.add_argument("--why", required=True)
    args = ap.parse_args()
    for path in map(Path, args.results):
        doc = read_results(path)
        if doc.get("kind") != "phybench-results" or args.metric not in doc.get("metrics", []):
            continue
        atomic_write_bytes(path, results_bytes(drop(doc, args.metric, args.why)))
        print(f"{path}: {args.metric} dropped")


if __name__ == "__main__":
    main()

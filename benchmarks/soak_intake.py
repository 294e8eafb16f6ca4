"""A chaos soak of the intake (issue 51 item 7): many open pull requests, the sync killed at random
points, re-run until idle; every pull request must end admitted or refused exactly once.

A local Hub (tests/hubserver.py, real HTTP, in this process) gets PRS pull requests on one
3-sample uniform id-eval split, valid and hostile mixed (a valid one: the split's condition
frames, then discs at seeded random places, so every valid submission is independent of the
others; hostile: a bad licence, a near copy (1 px) and an exact copy of an earlier valid PR under
another name, the same model name again, a file outside the folder, a path-traversal archive,
a claim that is no results file).  `phybench leaderboard sync` runs as a child process and is
SIGKILLed KILLS times, each once a random number of PRs (spread over the soak) is closed plus
a random 0-6 s (each kill's point is read from the sync's journal),
then run until a sync finds no open pull request.  Checked at the end: every PR closed with
exactly one comment of the sync's, whose outcome is the expected one; the Hub's main holds
exactly the admitted submissions, the results folder one row per admitted PR, the site exactly
those rows.  Printed: PRs per CPU minute (the syncs' CPU), the kill points, the peak RSS.

    python benchmarks/soak_intake.py --prs 40 --kills 8 --seed 0 --work /tmp/soak
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WRITE, READ = "hf_test_write", "hf_test_read"
CHEAP = "velocity_error,ssim,psnr"
KINDS = ("valid", "valid", "valid", "bad-licence", "near-copy", "exact-copy", "same-name", "outside", "traversal",
         "bad-claim", "valid", "valid")


def card(model: str, **changes: Any) -> bytes:
    doc = {"schema_version": 1, "model": model, "code_url": "https://github.com/phybench/phybench",
           "input": {"type": "frames", "condition_frames": 3}, "sampling": {"sampler": "soak"}, "seeds": [0],
           "license": "Apache-2.0", **changes}
    return json.dumps(doc).encode()


def discs(gt: np.ndarray, rng: np.random.Generator, cond: int) -> np.ndarray:
    """The condition frames of `gt`, then a dark disc at a random place per generated frame."""
    out = gt.copy()
    yy, xx = np.mgrid[0:gt.shape[1], 0:gt.shape[2]]
    for t in range(cond, gt.shape[0]):
        cx, cy, r = rng.uniform(15, gt.shape[2] - 15), rng.uniform(15, gt.shape[1] - 15), rng.uniform(5, 14)
        frame = np.full(gt.shape[1:], 255, np.uint8)
        frame[np.hypot(xx - cx, yy - cy) < r] = rng.integers(0, 200, 3, dtype=np.uint8)
        out[t] = frame
    return out


def folder(base: Path, meta: dict[str, Any], videos: dict[str, np.ndarray], model: str, out: Path) -> Path:
    out.mkdir(parents=True)
    (out / "submission.json").write_text(json.dumps({**meta, "model": {**meta["model"], "name": model}}))
    for sid, v in videos.items():  # a sample id is task/split/index
        path = out / "videos" / f"{sid}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, video=v)
    return out


def make_prs(n: int, rng: np.random.Generator, split: Path, template: Path, work: Path) -> list[dict[str, Any]]:
    """PR specs in number order: {kind, model, files {repo path: bytes}, expect}."""
    from phybench.data.split import SplitReader
    from phybench.leaderboard.hub.intake import model_slug, pack_zip
    from phybench.submission.format import submission_hash

    reader = SplitReader(split)
    gt = {str(r["sample_id"]): reader.video(r) for r in reader.rows()}
    cond = int(reader.manifest["condition_frames"])
    meta = json.loads((template / "submission.json").read_bytes())
    prs: list[dict[str, Any]] = []
    valid: list[tuple[str, dict[str, np.ndarray]]] = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)] if valid else "valid"
        model, expect = f"soak-{i:03d}-{kind}", "refused"
        if kind in ("valid", "bad-licence", "outside", "bad-claim"):
            videos = {sid: discs(v, rng, cond) for sid, v in gt.items()}
            expect = "admitted" if kind == "valid" else "refused"
        elif kind == "near-copy":
            videos = {k: v.copy() for k, v in valid[-1][1].items()}
            for v in videos.values():
                v[-1, 2, 2, 0] ^= 1
        elif kind == "exact-copy":
            videos = valid[-1][1]
        else:  # same-name, traversal: another set of videos under an admitted name / a broken archive
            videos = {sid: discs(v, rng, cond) for sid, v in gt.items()}
            model = valid[-1][0] if kind == "same-name" else model
        sub = folder(split, meta, videos, model, work / f"sub-{i:03d}")
        h12, slug = submission_hash(sub)[:12], model_slug(model)
        base = f"submissions/{slug}/{h12}"
        files = {f"{base}/submission.zip": pack_zip(sub), f"{base}/card.json": card(model)}
        if kind == "bad-licence":
            files[f"{base}/card.json"] = card(model, license="not a licence")
        elif kind == "outside":
            files[".gitattributes"] = b"* -text\n"
        elif kind == "traversal":
            import io
            import zipfile

            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as zf:
                zf.writestr("submission.json", (sub / "submission.json").read_bytes())
                zf.writestr("../../escape.txt", b"x")
            files[f"{base}/submission.zip"] = buf.getvalue()
        elif kind == "bad-claim":
            files[f"{base}/results.json"] = b'{"not": "a results file"}'
        if kind == "valid":
            valid.append((model, videos))
        prs.append({"num": i + 1, "kind": kind, "model": model, "files": files, "expect": expect})
    return prs


def open_prs(repo: str, prs: list[dict[str, Any]]) -> None:
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=READ)
    for pr in prs:
        info = api.create_commit(repo, [CommitOperationAdd(p, d) for p, d in pr["files"].items()],
                                 commit_message=f"Submission {pr['model']}", repo_type="dataset", create_pr=True)
        assert info.pr_num == pr["num"], (info.pr_num, pr["num"])


def journal_point(results: Path) -> str:
    """Where a killed sync was: the steps its journal holds (per PR) and whether a download folder was left."""
    try:
        doc = json.loads((results / ".sync" / "journal.json").read_bytes())
    except (OSError, ValueError):
        doc = {}
    steps = {k: v.get("step") for k, v in (doc.get("prs") or {}).items()} if isinstance(doc, dict) else {}
    left = len(list((results / ".sync").glob(".download.*"))) if (results / ".sync").is_dir() else 0
    return f"journal {steps or '{}'}, {left} download folder(s) left"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prs", type=int, default=40)
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--max-kill-s", type=float, default=6.0, help="the kill comes 0-this many s after its target")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import HubServer

    hub = HubServer().start()  # first: huggingface_hub reads HF_ENDPOINT when it is imported
    os.environ.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
                      HF_HUB_DISABLE_PROGRESS_BARS="1")
    try:
        return soak(args, hub)
    finally:
        hub.stop()


def soak(args: Any, hub: Any) -> int:
    work = args.work
    work.mkdir(parents=True, exist_ok=False)
    from phybench.cli.data import canonical_command
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.leaderboard.verify.signing import REPO_KEYS, new_key_pair
    from phybench.reference import run_baseline
    from phybench.tasks import get_task

    plan = make_plan(get_task("uniform"), "id-eval", None, 3, None)
    split = work / "splits" / "uniform-id-eval"
    generate(plan, split, progress=False, command=canonical_command(plan))
    template = run_baseline("copy-last", split, work / "template", progress=False)
    new_key_pair(work / "private.pem", work / "keys", note="benchmarks/soak_intake.py")
    rng, pick = np.random.default_rng(args.seed), random.Random(args.seed)
    t0 = time.process_time()
    prs = make_prs(args.prs, rng, split, template, work)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(work / "hf"), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", HF_TOKEN=WRITE, PYTHONPATH=str(ROOT),
               PHYBENCH_SIGNING_KEY=str(work / "private.pem"),
               PHYBENCH_BOARD_KEYS=os.pathsep.join([str(REPO_KEYS), str(work / "keys")]))
    from huggingface_hub import HfApi

    repo = "tester/soak"
    HfApi(token=WRITE).create_repo(repo, repo_type="dataset")
    open_prs(repo, prs)
    setup_cpu = time.process_time() - t0
    results, site = work / "results", work / "site"
    cmd = [sys.executable, "-m", "phybench.cli", "leaderboard", "sync", "--repo", repo, "--splits", str(work / "splits"),
           "--results", str(results), "--site", str(site), "--metrics", CHEAP]
    kills, runs, wall0 = [], 0, time.time()
    # spread over the whole soak: run k is killed once `targets[k]` PRs are closed, then a random
    # 0-MAX_KILL_S seconds later (inside the next PR's steps, or between two)
    targets = sorted(pick.sample(range(len(prs)), args.kills)) if args.kills <= len(prs) else [0] * args.kills
    closed = lambda: sum(hub.discussion(repo, p["num"]).status != "open" for p in prs)  # noqa: E731
    for k in range(args.kills):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None and closed() < targets[k]:
            time.sleep(0.2)
        delay = pick.uniform(0.0, args.max_kill_s)
        try:
            proc.wait(timeout=delay)
            kills.append(f"run {k + 1}: finished before its kill ({closed()} PR(s) closed)")
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills.append(f"run {k + 1}: SIGKILL {delay:.1f} s after {targets[k]} PR(s) were closed, {closed()} "
                         f"closed; {journal_point(results)}")
        runs += 1
    while True:
        runs += 1
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        if "0 open pull request(s)" in out.stdout or runs > args.kills + 20:
            break
    wall = time.time() - wall0
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return report(args, hub, repo, prs, results, site, kills, runs, wall, child, setup_cpu)


def report(args: Any, hub: Any, repo: str, prs: list[dict[str, Any]], results: Path, site: Path, kills: list[str],
           runs: int, wall: float, child: Any, setup_cpu: float) -> int:
    import html
    import re

    problems = []
    admitted = set()
    for pr in prs:
        d = hub.discussion(repo, pr["num"])
        mine = [html.unescape(e["data"]["latest"]["raw"]) for e in d.events
                if e["type"] == "comment" and e["author"]["name"] == "tester"]
        outcomes = [m.group(1) for c in mine for m in [re.search(r"outcome=(admitted|refused)", c)] if m]
        if d.status != "closed" or len(mine) != 1 or outcomes != [pr["expect"]]:
            problems.append(f"#{pr['num']} {pr['kind']}: {d.status}, {len(mine)} comment(s), outcomes {outcomes}, "
                            f"expected {pr['expect']}")
        if outcomes == ["admitted"]:
            admitted.add(pr["num"])
    main = hub.files(repo)
    on_main = {p.split("/")[1] for p in main if p.startswith("submissions/") and p.endswith("card.json")}
    want_main = {prs[n - 1]["model"] for n in admitted}
    rows = [p for p in (results / "hub").glob("*.verified.json")]
    row_prs = sorted(json.loads(p.read_bytes())["extra"]["pull_request"] for p in rows)
    board = json.loads((site / "leaderboard.json").read_bytes())
    on_site = sorted(r["model"] for b in board["boards"] for r in b["rows"])
    if on_main != want_main:
        problems.append(f"main holds {sorted(on_main ^ want_main)} beyond/short of the admitted")
    if row_prs != sorted(admitted):
        problems.append(f"results rows of PRs {row_prs} != admitted {sorted(admitted)} (lost or doubled)")
    if on_site != sorted(want_main):
        problems.append(f"site rows {on_site} != admitted {sorted(want_main)}")
    cpu = child.ru_utime + child.ru_stime
    print(f"soak: {len(prs)} PRs ({len(admitted)} admitted, {len(prs) - len(admitted)} refused), {args.kills} kills, "
          f"{runs} sync runs, {wall:.0f} s wall")
    print(f"syncs' CPU {cpu:.0f} s: {len(prs) / (cpu / 60):.1f} PRs per CPU minute; setup (PRs made and opened) "
          f"{setup_cpu:.0f} CPU s; peak RSS of a sync {child.ru_maxrss / 1024:.0f} MiB")
    print("kill points:")
    for k in kills:
        print(f"  {k}")
    print("every PR decided exactly once; the Hub, the results and the site agree" if not problems else
          "PROBLEMS:\n  " + "\n  ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

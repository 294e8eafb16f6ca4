"""The leaderboard: refusals, escaping, exports, determinism, and the page in a real browser.

The browser test drives headless Chromium over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: NUL-separated JSON on file descriptors 3 and 4), so it needs
no websocket package and no network.  It is skipped only when no Chromium binary is found;
CI installs one.  Its screenshot goes to ``$PHYBENCH_ARTIFACTS/leaderboard.png``
(default ``tests/artifacts/``).
"""
from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from phybench import __version__
from phybench.scoring.perceptual.image_metrics import SETTINGS as IMAGE_SETTINGS
from phybench.leaderboard import LeaderboardError, build, csv_safe, markdown_escape, script_json
from phybench.scoring.run.results import build_results, results_bytes
from phybench.tasks import get_task
from phybench.scoring.physics.velocity import SETTINGS as VELOCITY_SETTINGS

EVIL = "<script>alert(1)</script>|x"
N_PER_LEVEL = 16  # videos per level: enough for intervals, fast to bootstrap

# name -> (model fields, velocity error scale ID, OOD factor, untrackable share)
MODELS: dict[str, tuple[dict[str, Any], float, float, float]] = {
    "ground-truth": ({"notes": "the simulator's own frames"}, 0.004, 1.0, 0.0),
    "copy-last": ({"notes": "repeats the last condition frame"}, 2.2, 1.3, 0.0),
    "physics-oracle": ({"notes": "fits the condition frames, extrapolates"}, 0.02, 1.05, 0.0),
    "DiT-S": ({"family": "DiT", "size": "S", "params": 33_000_000, "train_size": 3_000_000}, 0.09, 9.0, 0.0),
    "DiT-B": ({"family": "DiT", "size": "B", "params": 130_000_000, "train_size": 3_000_000}, 0.05, 8.0, 0.06),
    "DiT-L": ({"family": "DiT", "size": "L", "params": 458_000_000, "train_size": 3_000_000}, 0.03, 8.5, 0.0),
    "DiT-B/30k": ({"family": "DiT", "size": "B", "params": 130_000_000, "train_size": "30k"}, 0.3, 4.0, 0.0),
    "DiT-B/300k": ({"family": "DiT", "size": "B", "params": 130_000_000, "train_size": "300k"}, 0.12, 6.0, 0.0),
    EVIL: ({"notes": "=HYPERLINK(\"http://evil\")", "url": "javascript:alert(2)"}, 0.5, 1.5, 0.0),
}
TASK_MODELS = {
    "uniform": list(MODELS),
    "collision": ["ground-truth", "copy-last", "DiT-S", "DiT-B", "DiT-L", EVIL],
    "parabola": ["ground-truth", "DiT-B"],
}
# EVIL has one so that its name lands in server-drawn SVG (a scatter's label and caption), escaped.
SIDECARS = {("uniform", "ground-truth"), ("uniform", "DiT-B"), ("uniform", "copy-last"), ("uniform", EVIL)}


def _seed(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode())


def _slug(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def fake_split_hash(task: str, split: str, resolution: int = 128) -> str:
    return hashlib.sha256(f"{task}/{split}/{resolution}".encode()).hexdigest()


def make_results(model: str, task: str, split: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A results document as `phybench score` would write it, with made-up per-video errors."""
    fields, scale, ood_factor, untrackable = MODELS[model]
    spec = get_task(task)
    rng = np.random.default_rng(_seed(model, task, split))
    levels = ["id"] if split == "id-eval" else [lv.name for lv in spec.ood_levels]
    metrics = ["velocity_error", "ssim", "psnr", "position_error"]
    if spec.scenario == "collision":
        metrics += ["momentum_error", "energy_error"]
    details, samples = [], []
    for li, level in enumerate(levels):
        factor = 1.0 if level == "id" else ood_factor * (1 + 0.25 * li)
        for k in range(N_PER_LEVEL):
            sid = f"{task}/{split}/{li:02d}{k:05d}"
            row: dict[str, Any] = {"sample_id": sid, "level": level, "untrackable": None}
            if rng.random() < untrackable:
                row["untrackable"] = "ball 0 missing in frames 5-9"
            else:
                err = scale * factor * rng.lognormal(0, 0.3)
                row.update(velocity_error=err, position_error=2 * err, ssim=1 - min(err, 0.5) / 2, psnr=40 - 10 * min(err, 3.0))
                if spec.scenario == "collision":
                    row.update(momentum_error=err / 2, energy_error=err / 3)
            details.append(row)
            lo, hi = (1.0, 4.0) if level == "id" else ((0.0, 0.8) if k % 2 else (4.5, 6.0))
            if "v" not in level and level != "id":
                lo, hi = 1.0, 4.0
            true_v = float(rng.uniform(lo, hi))
            gen_v = None if row["untrackable"] else float(
                true_v + rng.normal(0, scale) if level == "id" or scale < 0.05 else np.clip(true_v, 1.0, 4.0) + rng.normal(0, 0.2)
            )
            samples.append({"sample_id": sid, "level": level, "true_velocity": true_v, "generated_velocity": gen_v})
    provenance = {
        "phybench_version": __version__,
        "task_spec_hash": spec.spec_hash(),
        "split_hash": fake_split_hash(task, split),
        "split_num_samples": len(details),
        "split_full_size": len(details),  # every model on the "full" protocol of these made-up splits
        "resolution": 128,
        "pixel_mapping": "tile",
        "submission_hash": hashlib.sha256(f"{model}/{task}/{split}".encode()).hexdigest(),
        "weights": {},
        "metric_settings": {"velocity": VELOCITY_SETTINGS, "image": IMAGE_SETTINGS},
        "results_schema": "docs/results.md",
    }
    manifest = {"task": task, "task_version": spec.version, "split": split}
    results = build_results(model={"name": model, **fields}, manifest=manifest, provenance=provenance,
                            details=details, metrics=metrics)
    results = json.loads(results_bytes(results))
    sidecar = None
    if (task, model) in SIDECARS:
        sidecar = {"kind": "phybench-samples", "schema_version": 1, "dof": "velocity",
                   "submission_hash": provenance["submission_hash"], "split_hash": provenance["split_hash"],
                   "samples": samples}
    return results, sidecar


@pytest.fixture(scope="module")
def documents() -> dict[str, tuple[dict[str, Any], dict[str, Any] | None]]:
    """file name -> (results, sidecar) for every synthetic model, task and split."""
    docs = {}
    for task, models in TASK_MODELS.items():
        for model in models:
            for split in ("id-eval", "ood-eval"):
                docs[f"{task}.{_slug(model)}.{split}.json"] = make_results(model, task, split)
    return docs


def write_dir(folder: Path, docs: dict[str, tuple[dict[str, Any], dict[str, Any] | None]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (results, sidecar) in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(results_bytes(results))
        if sidecar is not None:
            (folder / name.replace(".json", ".samples.json")).write_text(json.dumps(sidecar))
    return folder


@pytest.fixture(scope="module")
def site(documents, tmp_path_factory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("leaderboard")
    report = build(write_dir(root / "results", documents), root / "site")
    return root / "site", report


# ------------------------------------------------------------------ build and exports
def test_build_writes_site(site):
    out, report = site
    assert report.ok and report.boards == 3 and report.models == len(MODELS)
    assert report.written == sorted([".phybench-site", "index.html", "style.css", "leaderboard.js", "leaderboard.md",
                                     "leaderboard.csv", "leaderboard.json"])
    page = (out / "index.html").read_text()
    assert "<title>phybench leaderboard</title>" in page and f"phybench {__version__}" in page
    for link in ("leaderboard.md", "leaderboard.csv", "leaderboard.json"):
        assert f'href="{link}"' in page
    assert page.count("<svg") >= 3 + 2 + 3  # by-level per task, DiT scaling (data, size), 3 scatters
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # no CDN, nothing remote


def test_markdown_export(site):
    md = (site[0] / "leaderboard.md").read_text()
    assert md.startswith("# phybench leaderboard\n")
    for task in ("uniform", "parabola", "collision"):
        assert f"\n## {task}\n" in md
    header = "| model | ID ↓ | OOD overall ↓ | OOD r ↓ | OOD v ↓ | OOD r\\+v ↓ | untrackable |"
    assert header in md
    uniform = md.split("## uniform")[1].split("##")[0]
    rows = [line for line in uniform.splitlines() if line.startswith("| ") and "model" not in line]
    assert len(rows) == len(TASK_MODELS["uniform"])
    assert rows[0].startswith("| ground\\-truth |") or rows[0].startswith("| ground-truth |")  # best ID error first
    evil_row = next(r for r in rows if "alert" in r)
    assert "&lt;script&gt;" in evil_row and "\\|x" in evil_row and "<script>" not in md
    assert evil_row.count(" | ") == rows[0].count(" | ")  # the pipe in the name adds no column


def test_csv_and_json_exports(site):
    out = site[0]
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    uniform_vel = [r for r in rows if r["task"] == "uniform" and r["metric"] == "velocity_error"]
    assert len(uniform_vel) == len(TASK_MODELS["uniform"]) * 5  # ID, OOD overall, r, v, r+v
    gt = next(r for r in uniform_vel if r["model"] == "ground-truth" and r["level"] == "id")
    assert float(gt["ci95_low"]) <= float(gt["mean"]) <= float(gt["ci95_high"]) and gt["count"] == str(N_PER_LEVEL)
    assert gt["higher_is_better"] == "False" and gt["split"] == "id-eval" and len(gt["submission_hash"]) == 64
    dit_b = next(r for r in uniform_vel if r["model"] == "DiT-B" and r["level"] == "id")
    assert dit_b["family"] == "DiT" and float(dit_b["untrackable_rate"]) > 0
    data = json.loads((out / "leaderboard.json").read_text())
    assert data["kind"] == "phybench-leaderboard" and data["phybench_version"] == __version__
    assert [b["task"] for b in data["boards"]] == ["uniform", "parabola", "collision"]
    assert [c["key"] for c in data["boards"][2]["levels"]][:3] == ["id", "ood-overall", "r1"]


def test_escaping(site):
    out = site[0]
    page = (out / "index.html").read_text()
    assert "<script>alert" not in page and "</script>|x" not in page
    assert page.count("<script") == 2  # the data element and leaderboard.js, nothing injected
    data_text = page.split('<script type="application/json" id="phybench-data">')[1].split("</script>")[0]
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e|x" in data_text
    assert json.loads(data_text)["boards"][0]["rows"][0]["model"]  # still valid JSON
    assert "&lt;script&gt;alert(1)&lt;/script&gt;|x" in page  # in SVG titles and legends, as text
    evil = next(r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())) if "alert" in r["model"])
    assert evil["model"] == EVIL
    # helpers, directly
    assert csv_safe("=cmd|'/c calc'!A0") == "'=cmd|'/c calc'!A0" and csv_safe("-1+1") == "'-1+1" and csv_safe(-1.5) == -1.5
    assert markdown_escape("a|b\nc") == "a\\|b c"
    assert "</" not in script_json({"x": "</script><!--"})


def test_deterministic(documents, site, tmp_path):
    again = build(write_dir(tmp_path / "results", dict(reversed(list(documents.items())))), tmp_path / "site")
    for name in again.written:
        assert (tmp_path / "site" / name).read_bytes() == (site[0] / name).read_bytes(), name


# ------------------------------------------------------------------ refusals
def _one(documents, name="uniform.{}.id-eval.json", model="DiT-S"):
    key = name.format(_slug(model))
    return key, copy.deepcopy(documents[key][0])


def test_refuses_bad_spec_hash(documents, tmp_path):
    name, doc = _one(documents)
    doc["provenance"]["task_spec_hash"] = "0" * 64
    write_dir(tmp_path / "r", {name: (doc, None)})
    with pytest.raises(LeaderboardError, match=rf"{name}: task_spec_hash 000000000000 does not match the registered uniform spec") as err:
        build(tmp_path / "r", tmp_path / "s")
    assert [(r.file, r.code, r.entry) for r in err.value.refused] == [(name, "results_registry", name)]
    assert not (tmp_path / "s").exists()  # nothing written


def test_refuses_changed_metric_settings(documents, tmp_path):
    name, doc = _one(documents)
    doc["provenance"]["metric_settings"]["image"]["ssim"]["sigma"] = 1.0
    name2, doc2 = _one(documents, model="DiT-L")
    del doc2["provenance"]["metric_settings"]["image"]
    write_dir(tmp_path / "r", {name: (doc, None), name2: (doc2, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    text = str(err.value)
    assert f"{name}: metric_settings['image'] differ from this phybench's (ssim.sigma)" in text
    assert f"{name2}: metric_settings has no 'image' block, but the file reports psnr, ssim" in text


def test_refuses_weights_not_pinned(documents, tmp_path):
    name, doc = _one(documents)
    doc["metrics"].append("lpips")
    doc["provenance"]["weights"] = {"alexnet": "f" * 64}
    write_dir(tmp_path / "r", {name: (doc, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    text = str(err.value)
    assert name in text and ("weights['alexnet'] hash ffffffffffff is not the pinned" in text
                             or "weight hashes cannot be checked" in text)


def test_refuses_mismatched_split_hash(documents, tmp_path):
    a, doc_a = _one(documents, model="DiT-S")
    b, doc_b = _one(documents, model="DiT-L")
    doc_b["provenance"]["split_hash"] = "ab" * 32
    write_dir(tmp_path / "r", {a: (doc_a, None), b: (doc_b, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    assert {r.file for r in err.value.refused} == {a, b}
    assert {r.code for r in err.value.refused} == {"split_hash_disagrees"}
    assert f"{b}: split hash ababababab" in str(err.value) and "disagrees with" in str(err.value)


def test_split_hash_checked_against_manifests(documents, tmp_path):
    a, doc = _one(documents)
    write_dir(tmp_path / "r", {a: (doc, None)})
    splits = tmp_path / "splits"
    (splits / "uniform-id").mkdir(parents=True)
    manifest = {"task": "uniform", "split": "id-eval", "resolution": 128, "split_hash": fake_split_hash("uniform", "id-eval")}
    (splits / "uniform-id" / "manifest.json").write_text(json.dumps(manifest))
    assert build(tmp_path / "r", tmp_path / "s", splits_dir=splits).ok
    manifest["split_hash"] = "cd" * 32
    (splits / "uniform-id" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(LeaderboardError, match=rf"{a}: split hash [0-9a-f]{{12}} is not the manifest's: uniform-id \(cdcdcdcdcdcd\)") as err:
        build(tmp_path / "r", tmp_path / "s", splits_dir=splits)
    assert [r.code for r in err.value.refused] == ["split_hash_mismatch"]
    shutil.rmtree(splits / "uniform-id")
    with pytest.raises(LeaderboardError, match="no uniform/id-eval split at 128 px") as err:
        build(tmp_path / "r", tmp_path / "s", splits_dir=splits)
    assert [r.code for r in err.value.refused] == ["split_not_found"]


def test_refuses_unknown_schema_and_other_json(documents, tmp_path):
    name, doc = _one(documents)
    doc["schema_version"] = 2
    folder = write_dir(tmp_path / "r", {name: (doc, None)})
    (folder / "notes.json").write_text('{"hello": "world"}')
    (folder / "broken.json").write_text("{not json")
    with pytest.raises(LeaderboardError) as err:
        build(folder, tmp_path / "s")
    text = str(err.value)
    assert f"{name}: schema_version 2 is not one this phybench" in text
    assert "notes.json: not a phybench results file (kind None, expected 'phybench-results')" in text
    assert "broken.json: not valid JSON" in text
    assert len(err.value.refused) == 3
    assert {r.code for r in err.value.refused} == {"results_format"}


def test_refuses_stale_sidecar_and_duplicates(documents, tmp_path):
    name = f"uniform.{_slug('DiT-B')}.id-eval.json"
    doc, side = copy.deepcopy(documents[name])
    side["submission_hash"] = "1" * 64
    dup_name, dup = _one(documents, model="DiT-L")
    write_dir(tmp_path / "r", {name: (doc, side), dup_name: (dup, None), "copy/" + dup_name: (dup, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    text = str(err.value)
    assert f"{name}: {name.replace('.json', '.samples.json')}: submission_hash 111111111111 is not the results file's" in text
    assert f"{dup_name}: model 'DiT-L' on uniform/id-eval at 128 px is also in copy/{dup_name}" in text
    assert {r.file for r in err.value.refused} == {name, dup_name, "copy/" + dup_name}
    assert {r.file: r.code for r in err.value.refused} == {
        name: "results_sidecar", dup_name: "duplicate_model", "copy/" + dup_name: "duplicate_model"}


def test_refuses_a_level_given_twice(documents, tmp_path):
    """An ood-eval file that also gives the "id" level: "id" is not a level of the ood-eval split
    (`checks.check_level_names`), so it is refused before it could clash with the id-eval file."""
    a, doc_a = _one(documents, model="DiT-L")
    b, doc_b = _one(documents, name="uniform.{}.ood-eval.json", model="DiT-L")
    doc_b["summary"]["levels"]["id"] = doc_a["summary"]["overall"]
    with pytest.raises(LeaderboardError, match=rf"{b}: level 'id' is not a level of uniform/ood-eval") as err:
        build(write_dir(tmp_path / "r", {a: (doc_a, None), b: (doc_b, None)}), tmp_path / "s")
    assert [(r.file, r.code) for r in err.value.refused] == [(b, "unknown_level")]


def test_allow_partial_lists_refused_on_page(documents, tmp_path):
    good, doc = _one(documents, model="DiT-L")
    bad, worse = _one(documents, model="copy-last")
    worse["provenance"]["task_spec_hash"] = "0" * 64
    report = build(write_dir(tmp_path / "r", {good: (doc, None), bad: (worse, None)}), tmp_path / "s", allow_partial=True)
    assert report.accepted == [good] and [r.file for r in report.refused] == [bad]
    page = (tmp_path / "s" / "index.html").read_text()
    assert "Refused results (1)" in page and bad in page
    assert report.to_text().count("refused 1 file") == 1
    refused = json.loads((tmp_path / "s" / "leaderboard.json").read_text())["refused"]
    assert refused == [{"file": bad, "reason": report.refused[0].reason, "code": "results_registry"}]


def test_registry_check_can_be_skipped(documents, tmp_path):
    name, doc = _one(documents)
    doc["provenance"]["task_spec_hash"] = "0" * 64
    report = build(write_dir(tmp_path / "r", {name: (doc, None)}), tmp_path / "s", registry_check=False)
    assert report.ok and "Built without the registry check" in (tmp_path / "s" / "index.html").read_text()


@pytest.mark.parametrize("path, value", [
    (("summary",), {}),
    (("summary", "levels", "id", "velocity_error"), {"mean": "0.1<b>", "ci95": "x", "count": -3}),
    (("summary", "levels", "id", "untrackable"), [1, 2]),
    (("summary", "levels", "id", "videos"), "many"),
    (("higher_is_better",), ["velocity_error"]),
    (("metrics",), 7),
    (("model", "seeds"), {"a": 1}),
    (("model", "params"), "big"),
    (("provenance", "weights"), "none"),
    (("provenance", "resolution"), "128"),
    (("provenance", "submission_hash"), {"=x": 1}),
])
def test_junk_values_are_refused_or_neutralised(documents, tmp_path, path, value):
    name, doc = _one(documents)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        report = build(write_dir(tmp_path / "r", {name: (doc, None)}), tmp_path / "s")
    except LeaderboardError as exc:
        assert name in str(exc)
        return
    page = (tmp_path / "s" / "index.html").read_text()
    assert report.ok and "<b>" not in page
    csv_text = (tmp_path / "s" / "leaderboard.csv").read_text()
    assert "0.1<b>" not in csv_text and "\n=" not in csv_text and ",=" not in csv_text


def test_command_line_and_edge_cases(documents, tmp_path, capsys):
    from phybench.cli.leaderboard import main

    good, doc = _one(documents)
    results = write_dir(tmp_path / "r", {good: (doc, None)})
    assert main(["build", str(results), "--out", str(tmp_path / "site")]) == 0
    assert "1 results file(s), 1 model(s), 1 task table(s)" in capsys.readouterr().out
    assert main(["build", str(results), "--out", str(tmp_path / "site")]) == 0  # a site built before is rebuilt
    assert main(["build", str(results), "--out", str(results / "site")]) == 2  # never inside the results
    assert "is inside the results folder" in capsys.readouterr().err
    (results / "x.json").write_text("[]")
    assert main(["build", str(results), "--out", str(tmp_path / "s")]) == 2
    assert "x.json: not a phybench results file (kind 'list'" in capsys.readouterr().err
    assert main(["build", str(results), "--out", str(tmp_path / "s"), "--allow-partial"]) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(empty, tmp_path / "e").ok and "No results yet." in (tmp_path / "e" / "index.html").read_text()
    with pytest.raises(LeaderboardError, match="is not a folder"):
        build(tmp_path / "missing", tmp_path / "m")


# ------------------------------------------------------------------ the page in Chromium
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell")


def find_chromium() -> str | None:
    for env in ("PHYBENCH_CHROMIUM", "CHROME_BIN"):
        if os.environ.get(env) and shutil.which(os.environ[env]):
            return shutil.which(os.environ[env])
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


class Chromium:
    """Headless Chromium spoken to over the DevTools protocol on a pipe (fd 3 in, fd 4 out)."""

    def __init__(self, binary: str, profile: str, timeout: float = 20.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child() -> None:  # runs in the child before exec: put the pipe ends on fds 3 and 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--force-color-profile=srgb", "--font-render-hinting=none", "about:blank"],
            pass_fds=(3, 4), preexec_fn=child, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                self._log.seek(0)
                raise RuntimeError("Chromium closed the pipe:\n" + self._log.read().decode(errors="replace")[-2000:])
            self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self._read()
            if e.get("method") == method:
                return e
            self.events.append(e)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self._log.close()


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("PHYBENCH_ARTIFACTS") or Path(__file__).parent / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chromium_or_skip(tmp_path: Path) -> Chromium:
    """A headless Chromium with a fresh profile, or a skip that says how to get one."""
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium binary found (tried $PHYBENCH_CHROMIUM, $CHROME_BIN, " + ", ".join(CHROMIUM_NAMES)
                    + "); install one, e.g. `apt-get install chromium`")
    return Chromium(binary, str(tmp_path / "profile"))


def open_tab(browser: Chromium) -> tuple[Callable[..., dict[str, Any]], Callable[[str], Any]]:
    """A new tab: (cdp(method, params) for its session, js(expression) -> the value, exceptions fail)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def cdp(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return browser.send(method, params, session)

    def js(expression: str) -> Any:
        result = cdp("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    return cdp, js


@pytest.mark.slow
def test_page_in_headless_chromium(site, tmp_path):
    out = site[0]
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)

        def click(selector: str) -> None:
            """A real mouse click in the middle of the element (scrolled into view first)."""
            box = js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
                     " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
            for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                cdp("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

        for domain in ("Page", "Runtime", "Log"):
            cdp(f"{domain}.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (out / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")

        tables = js("Object.fromEntries([...document.querySelectorAll('table.lb')].map(t => "
                    "[t.dataset.board, [...t.querySelectorAll('tbody tr.main')].map(r => r.dataset.model)]))")
        assert {k: sorted(v) for k, v in tables.items()} == {
            f"{task}-128": sorted(models) for task, models in TASK_MODELS.items()}
        headers = js("[...document.querySelectorAll('#uniform-128 thead th')].map(th => th.innerText.replace(/\\s+/g, ' ').trim())")
        assert headers == ["#", "Model", "ID ↓▲", "OOD overall ↓", "gap OOD/ID ↓", "OOD level r ↓", "OOD level v ↓",
                           "OOD level r+v ↓"]
        assert tables["uniform-128"][0] == "ground-truth"  # sorted by ID error, best first

        # Sorting: clicking a header reorders the rows.
        def order(board: str = "uniform-128") -> list[str]:
            return js(f"[...document.querySelectorAll('#{board} tbody tr.main')].map(r => r.dataset.model)")

        def values(board: str, key: str) -> list[float]:
            index = js(f"[...document.querySelectorAll('#{board} thead th')].findIndex(th => th.dataset.key === {json.dumps(key)})")
            return js(f"[...document.querySelectorAll('#{board} tbody tr.main')].map(r => Number(r.children[{index}].dataset.value))")

        before = order()
        click('#uniform-128 th[data-key="id"] button')
        after = order()
        assert after != before and after == before[::-1]
        click('#uniform-128 th[data-key="v"] button')
        v = values("uniform-128", "v")
        assert v == sorted(v) and order()[0] != after[0]
        click('#uniform-128 th[data-key="model"] button')
        assert order() == sorted(order(), key=str.lower) or order() == sorted(order())

        # The metric switcher redraws the table with the other metric's arrow.
        js("(() => { const s = document.querySelector('#collision-128 select.metric-select'); s.value = 'ssim';"
           " s.dispatchEvent(new Event('change')); })()")
        assert "ID ↑" in js("document.querySelector('#collision-128 th[data-key=\"id\"]').textContent")
        v = values("collision-128", "id")
        assert v == sorted(v, reverse=True)
        js("(() => { const s = document.querySelector('#collision-128 select.metric-select'); s.value = 'velocity_error';"
           " s.dispatchEvent(new Event('change')); })()")

        # Provenance opens under the row; the hostile name is text, not markup.
        click('#uniform-128 th[data-key="id"] button')  # back to ID, best first
        click('#uniform-128 tr.main[data-model="DiT-B"] button.toggle')
        details = js("(() => { const d = document.querySelector('#uniform-128 tr.main[data-model=\"DiT-B\"]').nextElementSibling;"
                     " return [d.hidden, d.textContent]; })()")
        assert details[0] is False
        for text in ("task spec hash", get_task("uniform").spec_hash(), fake_split_hash("uniform", "id-eval"),
                     "submission hash", "id-eval", "ood-eval", __version__):
            assert text in details[1]
        evil = js(f"document.querySelector('#uniform-128 tr.main[data-model={json.dumps(json.dumps(EVIL))[1:-1]}] .name').textContent")
        assert evil == EVIL
        assert js("document.querySelectorAll('script').length") == 2
        assert js("[...document.querySelectorAll('a')].every(a => !a.href.startsWith('javascript:'))")

        # Plots: by level for each task, DiT scaling, per-sample scatters.
        svgs = js("Object.fromEntries([...document.querySelectorAll('section.board')].map(s => [s.id, s.querySelectorAll('svg.plot').length]))")
        assert svgs["uniform-128"] >= 1 + 2 + 3 and svgs["collision-128"] >= 2 and svgs["parabola-128"] >= 1
        # each scatter's dots are one path (`svg.dots`), data-n of them
        assert js("[...document.querySelectorAll('#uniform-128 .scatter svg path.dots')].reduce((n, p) => n + Number(p.dataset.n), 0)") > 100

        # Nothing went wrong on the way.
        problems = [e for e in browser.events if (
            e.get("method") == "Runtime.exceptionThrown"
            or e.get("method") == "Page.javascriptDialogOpening"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert", "warning"))
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")))]
        assert not problems, problems

        # A full-page screenshot for people (CI keeps it as an artifact).
        js("window.scrollTo(0, 0)")
        height = js("Math.ceil(document.documentElement.scrollHeight)")
        shot = cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                               "clip": {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}})
        png = base64.b64decode(shot["data"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000
        folder = artifacts_dir()
        (folder / "leaderboard.png").write_bytes(png)
        shutil.copytree(out, folder / "leaderboard-site", dirs_exist_ok=True)
    finally:
        browser.close()


def test_a_subset_mismatch_is_explained_in_words(documents, tmp_path):
    a, doc_a = _one(documents, model="DiT-S")
    b, doc_b = _one(documents, model="DiT-L")
    doc_b["provenance"]["split_hash"] = "ab" * 32
    doc_a["provenance"].update(split_num_samples=100, split_full_size=1050)
    doc_b["provenance"].update(split_num_samples=64, split_full_size=1050)
    write_dir(tmp_path / "r", {a: (doc_a, None), b: (doc_b, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    text = " ".join(str(err.value).split())
    assert "this file is on a 64-sample subset of 1050 (--limit 64)" in text
    assert "on a 100-sample subset of 1050 (--limit 100)" in text
    assert "score both on the same samples" in text


def test_each_protocol_is_its_own_board(documents, tmp_path):
    """full, lite and a --limit subset of one split never disagree: three boards, each named."""
    files = {}
    for model, n, h in (("DiT-S", 1050, "aa"), ("DiT-L", 200, "bb"), ("DiT-B", 64, "cc")):
        name, doc = _one(documents, model=model)
        doc["provenance"].update(split_num_samples=n, split_full_size=1050, split_hash=h * 32)
        files[name] = (doc, None)
    write_dir(tmp_path / "r", files)
    report = build(tmp_path / "r", tmp_path / "s")
    assert report.ok and report.boards == 3
    boards = json.loads((tmp_path / "s" / "leaderboard.json").read_text())["boards"]
    assert [(b["id"], b["protocol_group"], [r["model"] for r in b["rows"]]) for b in boards] == [
        ("uniform-128-full", "full", ["DiT-S"]), ("uniform-128-lite", "lite", ["DiT-L"]),
        ("uniform-128-debug", "debug", ["DiT-B"])]
    md = (tmp_path / "s" / "leaderboard.md").read_text()
    assert "## uniform · full protocol" in md and "## uniform · lite protocol" in md
    assert "## uniform · debugging subsets" in md and "--limit 64 (a debugging subset, not an official protocol)" in md


def test_a_recorded_protocol_must_match_the_sizes(documents, tmp_path):
    name, doc = _one(documents)
    doc["provenance"]["protocol"] = "lite"  # but every sample of the made-up split was scored: full
    write_dir(tmp_path / "r", {name: (doc, None)})
    with pytest.raises(LeaderboardError) as err:
        build(tmp_path / "r", tmp_path / "s")
    assert "provenance.protocol 'lite' does not match its sizes" in str(err.value)
    doc["provenance"]["protocol"] = "full"
    write_dir(tmp_path / "r2", {name: (doc, None)})
    assert build(tmp_path / "r2", tmp_path / "s2").ok


def test_a_model_field_is_one_table_row(documents, tmp_path, monkeypatch):
    """A board column describing a model is one `ModelField` row: the scorer copies its
    submission.json key, the board keeps it, and the page's script draws it (summary line and
    provenance details) from the table serialised into the page; the row never leaks."""
    from phybench.submission import model_fields
    from phybench.submission.model_fields import MODEL_FIELDS, ModelField, scalar, submission_fields

    rows = [ModelField("licence", scalar("licence"), "summary", "licence", "licence {}", submission_key="licence"),
            ModelField("precision", scalar("precision"), "details", "sampled in")]
    monkeypatch.setattr(model_fields, "MODEL_FIELDS", [*MODEL_FIELDS, *rows])
    assert submission_fields({"licence": "MIT", "notes": "n", "other": 1}) == {"licence": "MIT", "notes": "n"}
    name, doc = _one(documents, model="DiT-B")
    doc["model"].update(licence="MIT-0", precision="bfloat16", unlisted="never shown")
    write_dir(tmp_path / "r", {name: (doc, None)})
    build(tmp_path / "r", tmp_path / "s")
    data = json.loads((tmp_path / "s" / "leaderboard.json").read_text())
    meta = data["boards"][0]["rows"][0]["meta"]
    assert meta["licence"] == "MIT-0" and meta["precision"] == "bfloat16" and "unlisted" not in meta
    assert [f["key"] for f in data["model_fields"]][-2:] == ["licence", "precision"]
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        cdp("Page.enable")
        cdp("Page.navigate", {"url": (tmp_path / "s" / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        line = js("document.querySelector('tr.main[data-model=\"DiT-B\"] .meta').textContent")
        assert line.endswith("· licence MIT-0") and line.startswith("DiT"), line
        js("document.querySelector('tr.main[data-model=\"DiT-B\"] button.toggle').click()")
        details = js("document.querySelector('tr.main[data-model=\"DiT-B\"]').nextElementSibling.textContent")
        assert "sampled in" in details and "bfloat16" in details and "never shown" not in details
    finally:
        browser.close()
    monkeypatch.undo()
    assert [f.key for f in model_fields.MODEL_FIELDS if f.key in ("licence", "precision")] == []

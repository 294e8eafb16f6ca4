"""`phybench leaderboard build` refuses impossible numbers, shows verification, merges repeated runs,
and never writes its site where it should not.

Every case plants one edit in a copy of a shipped lite results file (leaderboard/results/
fundamental/lite/) and asserts the refusal's code, exit code 2 and that nothing was written
to --out (phybench/leaderboard/verify/checks.py; codes in docs/results.md).
"""
from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from phybench import __version__
from phybench.cli.leaderboard import main
from phybench.io import file_sha256
from phybench.leaderboard import SITE_MARKER, LeaderboardError, build
from phybench.leaderboard.verify.records import Verification, write_record
from phybench.scoring.run.layout import record_path

ROOT = Path(__file__).resolve().parents[1] / "leaderboard" / "results"
LITE = ROOT / "fundamental" / "lite"
ID_FILE = "uniform-id-eval-nearest-neighbour.json"  # one level ("id"), 200 videos
OOD_FILE = "uniform-ood-eval-nearest-neighbour.json"  # levels r, v, r+v; untrackable videos at each (identity: another size)
COMBINATORIAL = ROOT / "combinatorial" / "in-template-eval-copy-last.json"  # has the `abnormal` share


@pytest.fixture(scope="module")
def test_key(tmp_path_factory) -> Path:
    """A key pair of the tests' own (the board's private key is not in the repository)."""
    from phybench.leaderboard.verify.signing import new_key_pair

    root = tmp_path_factory.mktemp("keys")
    new_key_pair(root / "private.pem", root / "keys", note="tests/test_board_checks.py")
    return root


@pytest.fixture(autouse=True)
def _sign_with_the_test_key(test_key, monkeypatch):
    """Records these tests write are signed with the test key (`$PHYBENCH_SIGNING_KEY`), and the
    board's keyring is the repository's keys plus it (`$PHYBENCH_BOARD_KEYS`): the shipped
    records verify by the maintainers' key, the planted ones by the test key."""
    from phybench.leaderboard.verify.signing import REPO_KEYS

    monkeypatch.setenv("PHYBENCH_BOARD_KEYS", os.pathsep.join([str(REPO_KEYS), str(test_key / "keys")]))
    monkeypatch.setenv("PHYBENCH_SIGNING_KEY", str(test_key / "private.pem"))


def side(name: str) -> str:
    return name.replace(".json", ".samples.json")


def copy_shipped(folder: Path, names=(ID_FILE, OOD_FILE)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        for n in (name, side(name)):
            if (LITE / n).exists():
                shutil.copy(LITE / n, folder / n)
    return folder


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True))  # NaN stays the literal NaN


def refused_codes(results: Path, out: Path, **kw: Any) -> dict[str, str]:
    """{file: code} of a build that must refuse; also checks nothing reached `out`."""
    with pytest.raises(LeaderboardError) as err:
        build(results, out, **kw)
    assert not out.exists()
    return {r.file: r.code for r in err.value.refused}


def assert_refused(tmp_path: Path, file: str, code: str, capsys) -> None:
    """The command line too: exit 2, the code named, nothing written."""
    results, out = tmp_path / "results", tmp_path / "site"
    assert refused_codes(results, out).get(file) == code
    assert main(["build", str(results), "--out", str(out)]) == 2
    assert f"[{code}]" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_shipped_results_still_build(tmp_path):
    """The public board: every shipped results file verified (a record pinning its bytes), as
    the workflow builds it."""
    report = build(ROOT, tmp_path / "site", require_verified=True)
    shipped = [p for p in ROOT.rglob("*.json") if not p.name.endswith((".samples.json", ".verified.json"))]
    assert report.ok and len(report.accepted) == len(shipped) > 80  # every shipped file on the board
    assert (tmp_path / "site" / SITE_MARKER).is_file()
    board = (tmp_path / "site" / "leaderboard.md").read_text()
    rows = [line for line in board.splitlines() if line.startswith("| ") and not line.startswith(("| model", "|---"))]
    assert rows and not [r for r in rows if r.rstrip(" |").endswith("self-reported")]


# ------------------------------------------------------------------ impossible numbers
def _both(doc: dict[str, Any], metric: str, key: str, value: Any) -> None:
    """Set a metric's `key` in the whole split and in its (only) level alike."""
    doc["summary"]["overall"][metric][key] = value
    for group in doc["summary"]["levels"].values():
        group[metric][key] = copy.deepcopy(value)


def _drop(metric: str) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        for group in [doc["summary"]["overall"], *doc["summary"]["levels"].values()]:
            group.pop(metric, None)
    return change


def _drop_ranking(doc: dict[str, Any]) -> None:
    for m in ("velocity_error", "velocity_error_penalised", "velocity_error_ranked"):
        _drop(m)(doc)
        doc["metrics"] = [x for x in doc["metrics"] if x != m]
        doc["higher_is_better"].pop(m, None)


def _ci(doc: dict[str, Any]) -> None:
    _both(doc, "velocity_error", "ci95", [9.0, 1.0])


def _mean_outside(doc: dict[str, Any]) -> None:
    lo, hi = doc["summary"]["overall"]["velocity_error"]["ci95"]
    _both(doc, "velocity_error", "mean", hi * 2)


def _overall_not_its_level(doc: dict[str, Any]) -> None:
    # inside its interval, so only the levels check can see it
    lo, hi = doc["summary"]["overall"]["velocity_error"]["ci95"]
    doc["summary"]["overall"]["velocity_error"]["mean"] = (lo + hi) / 2 + (hi - lo) / 10


def _videos_not_the_sum(doc: dict[str, Any]) -> None:
    doc["summary"]["overall"]["videos"] += 10


def _unknown_level(doc: dict[str, Any]) -> None:
    levels = doc["summary"]["levels"]
    levels["q"] = levels.pop("v")


def _empty_untrackable(doc: dict[str, Any]) -> None:
    doc["untrackable"] = []


def _untrackable_count(doc: dict[str, Any]) -> None:
    for group in (doc["summary"]["overall"], *doc["summary"]["levels"].values()):  # every level: still consistent
        group["untrackable"]["count"] = 0
        group["untrackable"]["rate"] = 0.0


def _ood_mean_inflated(doc: dict[str, Any]) -> None:
    # the whole-split mean no longer the count-weighted mean of its three levels
    doc["summary"]["overall"]["velocity_error"]["mean"] *= 1.05


CASES = {
    # name: (file, edit, code)
    # NaN is not JSON: the bounded reader (phybench.jsonsafe, json_nonfinite) refuses the file
    # before the checks see it (issue 51; it was value_type when json.loads let NaN through)
    "nan": (ID_FILE, lambda d: _both(d, "velocity_error", "mean", math.nan), "results_format"),
    "null": (ID_FILE, lambda d: _both(d, "velocity_error", "mean", None), "value_type"),
    "string": (ID_FILE, lambda d: _both(d, "velocity_error", "mean", "0.0"), "value_type"),
    "bool-count": (ID_FILE, lambda d: _both(d, "velocity_error", "count", True), "value_type"),
    "null-interval": (ID_FILE, lambda d: _both(d, "velocity_error", "ci95", [None, 1.0]), "value_type"),
    "videos-string": (ID_FILE, lambda d: d["summary"]["overall"].update(videos="200"), "value_type"),
    "negative-error": (ID_FILE, lambda d: (_both(d, "velocity_error", "mean", -5.0),
                                           _both(d, "velocity_error", "ci95", [-6.0, -4.0])), "value_range"),
    "ssim-above-1": (ID_FILE, lambda d: (_both(d, "ssim", "mean", 1.2), _both(d, "ssim", "ci95", [1.1, 1.3])),
                     "value_range"),
    "ssim-below-minus-1": (ID_FILE, lambda d: (_both(d, "ssim", "mean", -1.5), _both(d, "ssim", "ci95", [-1.6, -1.4])),
                           "value_range"),
    "negative-psnr": (ID_FILE, lambda d: (_both(d, "psnr", "mean", -3.0), _both(d, "psnr", "ci95", [-4.0, -2.0])),
                      "value_range"),
    "colour-kept-above-1": (ID_FILE, lambda d: (_both(d, "colour_kept", "mean", 1.5),
                                                _both(d, "colour_kept", "ci95", [1.5, 1.5])), "value_range"),
    "rate-above-1": (ID_FILE, lambda d: [g["untrackable"].update(rate=1.5) for g in
                                         [d["summary"]["overall"], *d["summary"]["levels"].values()]], "value_range"),
    "primary-removed-from-summary": (ID_FILE, _drop("velocity_error_penalised"), "metric_missing"),
    "every-ranking-metric-removed": (ID_FILE, _drop_ranking, "metric_missing"),
    "metric-in-a-level-not-the-whole": (OOD_FILE, lambda d: d["summary"]["overall"].pop("ssim"), "metric_missing"),
    "interval-reversed": (ID_FILE, _ci, "interval_bad"),
    "mean-outside-interval": (ID_FILE, _mean_outside, "interval_bad"),
    "overall-not-its-only-level": (ID_FILE, _overall_not_its_level, "levels_inconsistent"),
    "overall-videos-not-the-sum": (OOD_FILE, _videos_not_the_sum, "levels_inconsistent"),
    "overall-mean-not-the-levels": (OOD_FILE, _ood_mean_inflated, "levels_inconsistent"),
    "unknown-level": (OOD_FILE, _unknown_level, "unknown_level"),
    "untrackable-list-emptied": (OOD_FILE, _empty_untrackable, "untrackable_inconsistent"),
    "untrackable-counts-zeroed": (OOD_FILE, _untrackable_count, "untrackable_inconsistent"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_impossible_numbers_are_refused(case, tmp_path, capsys):
    file, change, code = CASES[case]
    results = copy_shipped(tmp_path / "results")
    edit(results / file, change)
    assert_refused(tmp_path, file, code, capsys)


@pytest.mark.parametrize("case", sorted(CASES))
def test_impossible_numbers_are_refused_without_the_registry_check(case, tmp_path):
    """Whatever is trusted: --no-registry-check skips the provenance checks, never these."""
    file, change, code = CASES[case]
    results = copy_shipped(tmp_path / "results")
    edit(results / file, change)
    assert refused_codes(results, tmp_path / "site", registry_check=False).get(file) == code


def test_abnormal_share_above_one_is_refused(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(COMBINATORIAL, results / COMBINATORIAL.name)
    edit(results / COMBINATORIAL.name, lambda d: [g["abnormal"].update(mean=1.2, ci95=[1.1, 1.3]) for g in
                                                  [d["summary"]["overall"], *d["summary"]["levels"].values()]])
    assert_refused(tmp_path, COMBINATORIAL.name, "value_range", capsys)


def _sidecar_edit(change: Callable[[list[dict[str, Any]]], None]) -> Callable[[Path], None]:
    def plant(results: Path) -> None:
        path = results / side(OOD_FILE)
        doc = json.loads(path.read_text())
        change(doc["samples"])
        path.write_text(json.dumps(doc))
    return plant


def _tracked_velocities(samples: list[dict[str, Any]]) -> None:
    for s in samples:  # forged: the untrackable videos get velocities that "follow the law"
        if s["generated_velocity"] is None:
            s["generated_velocity"] = s["true_velocity"]


def _drop_tracked(samples: list[dict[str, Any]]) -> None:
    # ten tracked videos gone (the untrackable ones kept: their own check would speak first)
    gone = [i for i, s in enumerate(samples) if s["generated_velocity"] is not None][:10]
    samples[:] = [s for i, s in enumerate(samples) if i not in gone]


SIDECAR_CASES = {
    "sidecar-drops-videos": (_sidecar_edit(_drop_tracked), "sidecar_inconsistent"),
    "sidecar-moves-a-level": (_sidecar_edit(lambda s: [x.update(level="v") for x in s if x["level"] == "r+v"
                                                       and x["generated_velocity"] is not None]), "sidecar_inconsistent"),
    "sidecar-duplicates-a-video": (_sidecar_edit(lambda s: s.__setitem__(1, dict(s[0]))), "sidecar_inconsistent"),
    "sidecar-tracks-the-untrackable": (_sidecar_edit(_tracked_velocities), "untrackable_inconsistent"),
}


@pytest.mark.parametrize("case", sorted(SIDECAR_CASES))
def test_forged_sidecars_are_refused(case, tmp_path, capsys):
    plant, code = SIDECAR_CASES[case]
    results = copy_shipped(tmp_path / "results")
    plant(results)
    assert_refused(tmp_path, OOD_FILE, code, capsys)


def test_one_submission_under_two_names_is_refused(tmp_path, capsys):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    twin = "uniform-id-eval-my-model.json"
    shutil.copy(results / ID_FILE, results / twin)
    shutil.copy(results / side(ID_FILE), results / side(twin))
    edit(results / twin, lambda d: d["model"].update(name="my-model"))
    codes = refused_codes(results, tmp_path / "site")
    assert codes == {ID_FILE: "submission_reused", twin: "submission_reused"}
    assert_refused(tmp_path, twin, "submission_reused", capsys)


def test_the_same_submission_twice_under_one_name_is_a_duplicate(tmp_path):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    (results / "again").mkdir()
    shutil.copy(results / ID_FILE, results / "again" / ID_FILE)
    assert refused_codes(results, tmp_path / "site") == {ID_FILE: "duplicate_model", f"again/{ID_FILE}": "duplicate_model"}


# ------------------------------------------------------------------ verification on the board
def _shipped_extra(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """The shipped record's `extra` (its videos hash) for a copy of a shipped file of the same submission:
    what `leaderboard verify` would compute again, so a copied reference baseline keeps its exemption
    from the 3-seed rule (`phybench.leaderboard.verify.seeds`)."""
    shipped = record_path(LITE / path.name)
    if not shipped.is_file():
        return {}
    record = json.loads(shipped.read_text())
    return record.get("extra", {}) if record["submission_hash"] == doc["provenance"]["submission_hash"] else {}


def verify(path: Path, who: str = "test", date: str = "2026-11-25", skipped: tuple[str, ...] = (),
           extra: dict[str, Any] | None = None) -> Verification:
    doc = json.loads(path.read_text())
    record = Verification(results_sha256=file_sha256(path), submission_hash=doc["provenance"]["submission_hash"],
                          split_hash=doc["provenance"]["split_hash"], phybench_version=__version__,
                          verified_by=who, date=date, recomputed=tuple(doc["metrics"]), skipped=skipped,
                          extra=_shipped_extra(path, doc) if extra is None else extra)
    write_record(path, record)
    return record


def site_data(out: Path) -> dict[str, Any]:
    return json.loads((out / "leaderboard.json").read_text())


def the_row(out: Path, model: str = "nearest-neighbour") -> dict[str, Any]:
    (row,) = [r for b in site_data(out)["boards"] for r in b["rows"] if r["model"] == model]
    return row


def test_verified_rows_say_so_everywhere(tmp_path):
    results = copy_shipped(tmp_path / "results")
    records = [verify(results / ID_FILE), verify(results / OOD_FILE)]
    shutil.copy(record_path(results / ID_FILE), results / "orphan.verified.json")
    out = tmp_path / "site"
    report = build(results, out, require_verified=True)
    assert report.ok and sorted(report.accepted) == sorted([ID_FILE, OOD_FILE])  # records are not results files
    assert report.warnings == ["orphan.verified.json: verification record without a results file beside it; ignored"]
    row = the_row(out)
    assert row["verification"]["verified"]
    words = [f"re-scored from submission {r.submission_hash[:12]} with phybench {__version__} on 2026-11-25"
             for r in records]
    assert row["verification"]["text"] == f"verified ({'; '.join(sorted(words))})"
    assert {s["verification"] for s in row["sources"]} == {f"verified ({w})" for w in words}
    md = (out / "leaderboard.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("| nearest-neighbour"))
    assert line.rstrip(" |").endswith(row["verification"]["text"].replace("(", "\\(").replace(")", "\\)"))
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert rows and {r["verification"] for r in rows} == {row["verification"]["text"]}
    assert "verified (re-scored from submission" in (out / "index.html").read_text()


def test_self_reported_rows_and_require_verified(tmp_path, capsys):
    results = copy_shipped(tmp_path / "results")
    verify(results / ID_FILE)
    out = tmp_path / "site"
    build(results, out)
    row = the_row(out)
    assert not row["verification"]["verified"] and row["verification"]["text"] == "self-reported (1 of 2 files verified)"
    assert {r["verification"] for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))} == {
        "self-reported (1 of 2 files verified)"}
    # --require-verified: the unverified file is listed, nothing is written (not even over the old site)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert refused_codes(results, tmp_path / "strict", require_verified=True) == {OOD_FILE: "not_verified"}
    assert main(["build", str(results), "--out", str(out), "--require-verified"]) == 2
    err = capsys.readouterr().err
    assert f"{OOD_FILE}: no verification record" in err and "[not_verified]" in err and ID_FILE not in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("case, code", [
    ("edited-after-verification", "verify-stale"),
    ("forged-submission-hash", "verify-stale"),
    ("record-for-another-submission", "verify-mismatch"),
    ("record-not-json", "verify-malformed"),
])
def test_bad_records_are_refused(case, code, tmp_path, capsys):
    results = copy_shipped(tmp_path / "results")
    path = results / ID_FILE
    verify(path)
    record = record_path(path)
    if case == "edited-after-verification":  # copy-last lowered to look good, say
        edit(path, lambda d: _both(d, "velocity_error", "mean", d["summary"]["overall"]["velocity_error"]["mean"]))
    elif case == "forged-submission-hash":
        edit(path, lambda d: d["provenance"].update(submission_hash="ab" * 32))
        edit(results / side(ID_FILE), lambda d: d.update(submission_hash="ab" * 32))
    elif case == "record-for-another-submission":
        edit(record, lambda d: d.update(submission_hash="cd" * 32))
    else:
        record.write_text("{not json")
    assert_refused(tmp_path, ID_FILE, code, capsys)


# ------------------------------------------------------------------ repeated runs
def _scaled(doc: dict[str, Any], metric: str, factor: float) -> None:
    for group in [doc["summary"]["overall"], *doc["summary"]["levels"].values()]:
        group[metric]["mean"] = float(f"{group[metric]['mean'] * factor:.9g}")
        group[metric]["ci95"] = [float(f"{c * factor:.9g}") for c in group[metric]["ci95"]]


def test_repeated_runs_are_one_row(tmp_path):
    """Three runs (seeds) of one model on the id-eval split: one row, mean over runs +/- their sd."""
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    metric = "velocity_error_penalised"  # the lite files' ranking column
    base = json.loads((results / ID_FILE).read_text())["summary"]["overall"][metric]["mean"]
    files = [ID_FILE]
    for seed, factor in ((1, 1.1), (2, 0.9)):
        name = f"uniform-id-eval-nearest-neighbour-seed{seed}.json"
        h = hashlib.sha256(f"seed {seed}".encode()).hexdigest()
        shutil.copy(results / ID_FILE, results / name)
        shutil.copy(results / side(ID_FILE), results / side(name))
        edit(results / name, lambda d: (d["provenance"].update(submission_hash=h), d["model"].update(seeds=[seed]),
                                        _scaled(d, metric, factor)))
        edit(results / side(name), lambda d: d.update(submission_hash=h))
        files.append(name)
    out = tmp_path / "site"
    report = build(results, out)
    assert report.ok and sorted(report.accepted) == sorted(files)
    row = the_row(out)
    assert row["runs"] == 3 and len(row["sources"]) == 3 and [s["run"] for s in row["sources"]] == [1, 2, 3]
    cell = row["cells"]["id"]
    entry = cell["metrics"][metric]
    values = sorted([base, float(f"{base * 1.1:.9g}"), float(f"{base * 0.9:.9g}")])
    mean = sum(values) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    assert entry["runs"]["n"] == 3 and sorted(entry["runs"]["values"]) == values
    assert entry["mean"] == pytest.approx(mean, rel=1e-8) and entry["runs"]["sd"] == pytest.approx(sd, rel=1e-8)
    assert entry["runs"]["sd"] > 0 and cell["videos"] == 600 and cell["runs"] == 3
    assert entry["ci95"][0] <= entry["mean"] <= entry["ci95"][1]
    md = (out / "leaderboard.md").read_text()
    assert "(3 runs)" in md and " ± " in md
    # a row is verified only if every run is
    assert row["verification"]["text"] == "self-reported"
    vhash = {name: {"videos_hash": hashlib.sha256(name.encode()).hexdigest()} for name in files[1:]}
    for name in files[:2]:
        verify(results / name, extra=vhash.get(name))
    build(results, out)
    assert the_row(out)["verification"]["text"] == "self-reported (2 of 3 files verified)"
    verify(results / files[2], extra=vhash[files[2]])
    build(results, out, require_verified=True)
    assert the_row(out)["verification"]["verified"]
    assert the_row(out)["seeds"] == {"seeds": 3, "needs": 3, "enough": True, "reference": False}
    # two runs of one seed are one seed: seed 2's card says seed 1 -> 2 seeds, no mark, shown with its runs
    edit(results / files[2], lambda d: d["model"].update(seeds=[1]))
    verify(results / files[2], extra=vhash[files[2]])
    build(results, out, require_verified=True)
    row = the_row(out)
    assert not row["verification"]["verified"] and row["verification"]["text"] == "needs 3 seeds (has 2)"
    assert row["runs"] == 3 and row["verification"]["needs_seeds"]


# ------------------------------------------------------------------ where the site goes
def test_out_must_not_touch_the_results(tmp_path, capsys):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    for out, words in ((results, "inside the results folder"), (results / "site", "inside the results folder"),
                       (tmp_path, "contains the results folder")):
        with pytest.raises(LeaderboardError, match=words):
            build(results, out)
        assert main(["build", str(results), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1
    assert not (results / "site").exists() and not (results / "index.html").exists()


def test_out_must_be_empty_new_or_a_site(tmp_path, capsys):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    assert main(["build", str(results), "--out", str(precious)]) == 2
    assert "not a phybench site" in capsys.readouterr().err
    assert sorted(p.name for p in precious.iterdir()) == ["thesis.tex"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(LeaderboardError, match="is not a folder"):
        build(results, tmp_path / "file")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(results, empty).ok and (empty / SITE_MARKER).is_file()
    (empty / "stale.txt").write_text("from an older build")
    assert build(results, empty).ok  # a site built before is rebuilt whole: stale files go
    assert not (empty / "stale.txt").exists()


def test_a_failed_build_leaves_the_old_site(tmp_path, monkeypatch):
    import os

    import phybench.leaderboard as lb

    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    out = tmp_path / "site"
    build(results, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.rename

    def failing(src, dst):  # the swap of the new site into place fails (putting the old one back works)
        if Path(dst) == out and Path(src).name.endswith(".tmp"):  # the new site (io.atomic_folder)
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", failing)  # phybench.io.atomic_folder swaps the site in
    with pytest.raises(OSError, match="disk full"):
        build(results, out)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]  # no temporary folder left

    def broken(*args, **kwargs):  # the page fails to render: nothing new, nothing half-written
        raise RuntimeError("template broken")

    monkeypatch.setattr(lb, "page_html", broken)
    with pytest.raises(RuntimeError):
        build(results, tmp_path / "new")
    assert not (tmp_path / "new").exists()


# ------------------------------------------------------------------ the page
@pytest.mark.slow
def test_page_plots_follow_the_metric_and_lite_rows_are_labelled(tmp_path):
    """In a real browser: the plots under a table are the table's metric (switching the metric switches
    them, each caption names its metric); lite rows carry the lite-protocol label, not "subset"; each row
    says whether it was verified; the page says how to get on the board."""
    from test_leaderboard import chromium_or_skip, open_tab

    results = copy_shipped(tmp_path / "results", (ID_FILE, OOD_FILE, "uniform-id-eval-copy-last.json",
                                                  "uniform-ood-eval-copy-last.json"))
    verify(results / "uniform-id-eval-copy-last.json")
    verify(results / "uniform-ood-eval-copy-last.json")
    out = tmp_path / "site"
    build(results, out)
    browser = chromium_or_skip(tmp_path)
    try:
        cdp, js = open_tab(browser)
        for domain in ("Page", "Runtime"):
            cdp(f"{domain}.enable")
        cdp("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        cdp("Page.navigate", {"url": (out / "index.html").as_uri()})
        browser.wait_for("Page.loadEventFired")
        shown = ("[...document.querySelectorAll('section.board figure[data-metric]')].filter(f => !f.hidden && "
                 "f.getBoundingClientRect().width > 0).map(f => [f.dataset.metric, f.querySelector('figcaption').textContent])")
        select = "document.querySelector('section.board select.metric-select')"
        first = js(f"{select}.value")
        assert first == "velocity_error_ranked"  # the lite files' ranking column
        visible = js(shown)
        assert visible and all(m == first for m, _ in visible)
        assert all("velocity_error_ranked" in caption for _, caption in visible)
        options = js(f"[...{select}.options].map(o => o.value)")
        assert len(options) >= 5
        for metric in options:  # every metric has its own labelled plot, shown when it is picked
            js(f"(() => {{ const s = {select}; s.value = {json.dumps(metric)}; s.dispatchEvent(new Event('change')); }})()")
            visible = js(shown)
            assert visible and all(m == metric for m, _ in visible), (metric, visible)
            assert all(f"({metric}" in caption for _, caption in visible)
            drawn = js("[...document.querySelectorAll('section.board figure[data-metric]')].filter(f => !f.hidden)"
                       ".map(f => f.querySelector('svg').textContent)")
            assert any(js(f"{select}.selectedOptions[0].text").split(" ")[0] in t for t in drawn)
        badges = js("Object.fromEntries([...document.querySelectorAll('tr.main')].map(r => [r.dataset.model, "
                    "[...r.querySelectorAll('.badge')].map(b => b.textContent)]))")
        assert badges == {"copy-last": ["verified", "lite protocol"], "nearest-neighbour": ["self-reported", "lite protocol"]}
        words = js("document.querySelector('tr.main[data-model=\"copy-last\"] .verification').textContent")
        assert words.startswith("verified (re-scored from submission ") and __version__ in words
        assert "phybench submit SUB --repo OWNER/NAME" in js("document.getElementById('how-to-get-on-this-board').textContent")
    finally:
        browser.close()


def _with_laws(results: Path, name: str = ID_FILE) -> None:
    """Give a shipped id-eval file and its sidecar per-video law fits and the summary `law` block
    `phybench score` computes from them (the shipped files predate the law fit)."""
    import numpy as np

    from phybench.scoring.learned.law import LAW_FITS, sidecar_law, summarise_law
    from phybench.scoring.run.results import json_ready

    sidecar = json.loads((results / side(name)).read_text())
    rng = np.random.default_rng(7)
    details = []
    params = LAW_FITS["free_flight"].params
    for s in sidecar["samples"]:
        truth = {p: s["true_velocity"] if p == "velocity_x" else 0.0 for p in params}
        fit = {p: v + float(rng.normal(0, 0.05)) for p, v in truth.items()}
        details.append({"level": s["level"], "law": {"law": "free_flight", "fit": fit, "truth": truth}})
        s["law"] = sidecar_law(details[-1]["law"])
    (results / side(name)).write_text(json.dumps(sidecar))
    block = json_ready(summarise_law(details))["law"]
    edit(results / name, lambda d: [g.update(law=copy.deepcopy(block)) for g in
                                    [d["summary"]["overall"], *d["summary"]["levels"].values()]])


def test_sidecar_law_fits_must_reproduce_the_summary(tmp_path, capsys):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    _with_laws(results)
    assert build(results, tmp_path / "ok").ok  # consistent: accepted
    path = results / side(ID_FILE)
    doc = json.loads(path.read_text())
    for s in doc["samples"][:120]:  # forged: most fits moved onto the truth, the summary left as it was
        s["law"]["fit"]["velocity_x"] = s["law"]["truth"]["velocity_x"] + 0.5
    path.write_text(json.dumps(doc))
    assert_refused(tmp_path, ID_FILE, "sidecar_inconsistent", capsys)


def test_out_may_be_the_current_folder(tmp_path, monkeypatch):
    results = copy_shipped(tmp_path / "results", (ID_FILE,))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert build(results, ".").ok
    assert (here / "index.html").is_file() and (here / SITE_MARKER).is_file()
    assert build(results, ".").ok  # rebuilt in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here", "results"]

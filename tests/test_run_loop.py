"""`phybench run` closes the author's loop (issue 49): its viewers show the judge, it prints numbers beside
the reference rows, and its site links the viewers it built."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import make_plan
from phybench.tasks import get_task


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("loop") / "uniform-id-eval"
    generate(make_plan(get_task("uniform"), "id-eval", limit=4), out, progress=False)
    return out


class Freeze:
    """Every video freezes on its last condition frame: the judge's freeze rule fires on each."""

    def generate(self, condition, num_frames):
        return np.repeat(condition[:, -1:], num_frames, axis=1)


def page_data(out: Path) -> dict:
    text = (out / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', text, flags=re.S)
    assert m, "no inline data"
    return json.loads(m.group(1))


@pytest.mark.slow
def test_run_view_shows_the_judge(split, tmp_path, capsys):
    """`run --view` writes the split's details and hands them to its viewer: judge cards in the gallery,
    the abnormal column filled and the findings per video, as the standalone `view --details` shows."""
    out = tmp_path / "run"
    assert main(["run", "--model", "test_run_loop:Freeze", "--data", str(split), "--out", str(out),
                 "--metrics", "velocity_error", "--view", "--quiet"]) == 0
    work = out / "uniform-id-eval"
    assert (work / "details.parquet").is_file()
    data = page_data(work / "view")
    kinds = {k["kind"]: k for k in data["gallery"]}
    assert "rule:freeze" in kinds, sorted(kinds)
    cells = {v["id"]: v["cells"][0] for v in data["videos"]}
    assert all(c["abnormal"] == 1.0 for c in cells.values())
    for sid in kinds["rule:freeze"]["ids"]:
        assert any(f["rule"] == "freeze" for f in cells[sid]["findings"])


@pytest.mark.slow
def test_run_prints_numbers_beside_reference_rows_and_its_site_links_its_viewers(split, tmp_path, capsys):
    """No shipped row has this 4-video split's hash, so `run` scores the cheap reference rows on it itself,
    prints the ranked column beside them (rounded as the board shows it) with the model's rank, and its
    --site holds those rows and links the viewer it built."""
    out, site = tmp_path / "run", tmp_path / "site"
    assert main(["run", "--model", "test_run_loop:Freeze", "--name", "freeze", "--data", str(split), "--out", str(out),
                 "--metrics", "velocity_error", "--view", "--site", str(site), "--quiet"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("uniform/id-eval (split"):]
    rows = {m.group(2): m.group(1) for m in re.finditer(r"^  (→?)\s+\d+\s+(\S+)", table.split("\n\n")[0], re.M)}
    assert set(rows) >= {"ground-truth", "copy-last", "linear-extrapolation", "freeze"}, table
    assert rows["freeze"] == "→" and rows["copy-last"] == ""
    # a frozen video is copy-last: the two tie and share their rank, behind ground truth and linear extrapolation
    assert "freeze would rank 3 of 4 on uniform/id-eval" in text
    numbers = re.findall(r"\d+\.\d+(?:e-?\d+)?", table.split("\n\n")[0])
    assert numbers and all(float(x) == float(f"{float(x):.3g}") for x in numbers)  # 3 figures, as on the board
    results = sorted((out / "reference" / "results").glob("*-copy-last.json"))
    assert len(results) == 1
    board = json.loads((site / "leaderboard.json").read_text())["boards"][0]
    by_model = {r["model"]: r for r in board["rows"]}
    assert set(by_model) == {"freeze", "ground-truth", "copy-last", "linear-extrapolation"}
    (link,) = by_model["freeze"]["viewers"]
    assert (site / link["href"]).is_file()
    assert "rule:freeze" in {k["kind"] for k in page_data((site / link["href"]).parent)["gallery"]}

    # Against a results folder that holds rows of this split hash: those rows, nothing scored again
    ref = tmp_path / "ref" / "fundamental" / "lite"
    ref.mkdir(parents=True)
    for f in (out / "reference" / "results").glob("*.json"):
        (ref / f.name).write_bytes(f.read_bytes())
    out2 = tmp_path / "run2"
    assert main(["run", "--model", "test_run_loop:Freeze", "--name", "freeze", "--data", str(split), "--out", str(out2),
                 "--metrics", "velocity_error", "--reference", str(tmp_path / "ref"), "--quiet"]) == 0
    assert "freeze would rank 3 of 4 on uniform/id-eval" in capsys.readouterr().out
    assert not (out2 / "reference").exists()
    assert len([p for p in (out2 / "board" / "reference" / "fundamental" / "lite").glob("*-eval-*.json") if not p.name.endswith(".samples.json")]) == 3


def test_reference_rows_are_read_as_a_board_reads_them(tmp_path):
    """A --reference folder is untrusted: a row's escape-sequence name is printed escaped, a linked file is
    never read, and only rows of the run's split hashes are used (shipped rows: the lite ones)."""
    from phybench.leaderboard.site.run_board import (assemble, headline_text, read_board, reference_files,
                                                shipped_results_dir)

    shipped = shipped_results_dir()
    assert shipped is not None  # a checkout: the lite reference rows ship with it
    src = shipped / "fundamental" / "lite" / "uniform-id-eval-copy-last.json"
    doc = json.loads(src.read_text())
    split_hash = doc["provenance"]["split_hash"]
    ref = tmp_path / "ref" / "fundamental" / "lite"
    ref.mkdir(parents=True)
    (ref / "uniform-id-eval-evil.json").write_text(json.dumps({**doc, "model": {**doc["model"], "name": "e\x1b[2Jvil"}}))
    (ref / "uniform-id-eval-link.json").symlink_to(src)
    found = reference_files(tmp_path / "ref", [split_hash])
    assert [p.name for p in found] == ["uniform-id-eval-evil.json"]
    text = headline_text(read_board(assemble([], found, tmp_path / "board", tmp_path / "ref")), ["nobody"])
    assert "\x1b" not in text and "'e\\x1b[2Jvil'" in text
    names = {p.name for p in reference_files(shipped, [split_hash], skip_models=["copy-last"])}
    assert "uniform-id-eval-ground-truth.json" in names and "uniform-id-eval-copy-last.json" not in names
    assert all(n.startswith("uniform-id-eval-") for n in names)


@pytest.mark.slow
def test_a_reference_folder_that_is_not_one_is_refused_after_the_results(split, tmp_path, capsys):
    """--reference names a folder; a file or link there is refused in one line (the results are written)."""
    out = tmp_path / "run"
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path)
    for bad in (tmp_path / "file", tmp_path / "link", tmp_path / "missing"):
        assert main(["run", "--model", "test_run_loop:Freeze", "--data", str(split), "--out", str(out),
                     "--metrics", "ssim", "--reference", str(bad), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "[reference_dir]" in err and "Traceback" not in err
    assert (out / "results" / "uniform-id-eval-Freeze.json").is_file()  # run names a model by its class


@pytest.mark.slow
def test_run_says_its_time_up_front_and_the_models_after_its_first_batch(split, tmp_path, capsys):
    """Issue 49: `run` estimated nothing.  It now says its cost besides the model before it starts
    (measured here), and the model's own after its first batch."""
    assert main(["run", "--model", "test_run_loop:Freeze", "--data", str(split), "--out", str(tmp_path / "run"),
                 "--metrics", "velocity_error", "--batch-size", "1", "--no-reference"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("estimate: about "))
    assert "scoring" in line and "measured here" in line and "the model's own time" in line
    assert re.search(r"Freeze: \S+ s a video on its first batch: about .+ for the 4 video", err), err
    assert err.index("estimate: about") < err.index("on its first batch")

"""The frictions a first-time author met (issue 37 item 6), each pinned by a test that runs the CLI."""
from __future__ import annotations

import shlex

import numpy as np

from phybench.cli import main
from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.tasks import get_task


def _pasted(line: str, after: str) -> list[str]:
    """The words a shell would see if the command printed after `after` were pasted."""
    return shlex.split(line.split(after, 1)[1])


def test_printed_follow_up_commands_survive_paths_with_spaces(tmp_path, capsys):
    """Every command the CLI prints to paste is shell-quoted: a path with spaces stays one word."""
    root = tmp_path / "my runs"
    split, inputs, gen = root / "uni split", root / "the inputs", root / "gen vids"
    generate(make_plan(get_task("uniform"), "id-eval", limit=2), split, progress=False)
    assert main(["export-inputs", "--data", str(split), "--out", str(inputs), "--quiet"]) == 0
    words = _pasted(capsys.readouterr().out, "Then: ")
    assert words[:4] == ["phybench", "pack", "GENERATED", "--inputs"] and words[4] == str(inputs)
    reader = SplitReader(split)
    for row in reader.rows():
        path = gen / row["sample_id"]
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(f"{path}.npy", reader.video(row))
    sub = root / "my sub"
    assert main(["pack", str(gen), "--inputs", str(inputs), "--out", str(sub), "--name", "m", "--quiet"]) == 0
    words = _pasted(capsys.readouterr().out, "check it with: ")
    assert words == ["phybench", "validate", str(sub), "--data", "SPLIT_DIR"]
    gt = root / "ground truth"
    assert main(["baseline", "ground-truth", "--data", str(split), "--out", str(gt), "--quiet"]) == 0
    words = _pasted(capsys.readouterr().out, "score it with: ")
    assert words == ["phybench", "score", str(gt), "--data", str(split)]
    assert main(words[1:] + ["--metrics", "velocity_error", "--quiet"]) == 0  # and the pasted command runs


def test_conditions_doc_says_how_to_use_a_local_folder_and_quotes_the_real_torchvision_line():
    """docs/conditions.md shows `save_pretrained` for a local folder, and the transformers line it calls
    harmless is the one the installed transformers prints (so the doc is rewritten when that changes)."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "conditions.md").read_text()
    assert ".save_pretrained(" in doc and "pipeline=models/svd" in doc
    quoted = re.search(r"``\s*`(\w+)` requires torchvision \(not installed\); falling back to `(\w+)`\s*``", doc)
    assert quoted and quoted.group(2) == quoted.group(1) + "Pil"
    try:
        from importlib.util import find_spec

        spec = find_spec("transformers.utils.import_utils")
    except ImportError:
        spec = None
    if spec is None or spec.origin is None:
        return  # without the diffusers extra there is no line to compare with
    source = Path(spec.origin).read_text()
    assert "requires torchvision (not installed); falling back to" in source


def test_readme_says_what_the_plain_score_line_costs():
    """The README's plain `phybench score` line runs LPIPS and FVD once fetched: the next line says so,
    that an estimate comes first, and how to leave them out."""
    from pathlib import Path

    lines = (Path(__file__).resolve().parent.parent / "README.md").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("phybench score my-sub ") and "--metrics" not in line)
    note = lines[at + 1]
    assert note.startswith("#") and "LPIPS+FVD" in note and "estimate" in note
    assert "--metrics velocity_error,ssim,psnr" in note

"""One definition per public name in `phybench/` and `baselines/` (issue 50 item 6).

A top-level public function or class (no leading underscore) is defined in one module only, so a
reader who meets a name knows which thing it is, and an import of the wrong one cannot pass
unnoticed.  Issue 50 counted 31 such names (50 with `baselines/` and the command conventions);
each was either one concept (one definition kept, the others import it: `file_sha256`,
`bootstrap_ci`, `ema_decay`) or two concepts sharing a name (the less central one renamed to say
what it is: `FamilyFinding`, `scoring_sample`, `read_viewer_record`, `protocol_of_provenance`,
`publishable_files`, `weights_dir`, `escape_line`, `ArchiveEntry`, ...).

Two kinds of repetition stay, both listed here:

* `CONVENTION`: names a command or plug-in protocol fixes (`main` of a ``python -m`` module, a
  command group's `register`, a study's `add_arguments` / `run_from_args`, a registry's
  `load_plugins`, a training script's `parse_args`, and any `cmd_*` handler): allowed anywhere.
* `PINNED`: a name allowed in exactly the modules listed, with the reason; a new module that
  defines it again fails, and so does a listed module that no longer does (the list only shrinks).
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("phybench", "baselines")

CONVENTION = frozenset({"main", "register", "add_arguments", "run_from_args", "load_plugins", "parse_args"})
CONVENTION_PREFIXES = ("cmd_",)

PINNED: dict[str, tuple[frozenset[str], str]] = {
    "DiT": (frozenset({"baselines/dit/models.py", "baselines/dit/runner.py"}),
            "the network, and the `phybench run --model phybench_baselines.dit.runner:DiT` class the docs print"),
    "write_submission": (frozenset({"phybench/submission/writer.py", "baselines/dit/baseline.py"}),
                         "the public writer, and the `phybench.baselines` entry point's hook `write_submission(args)`"),
    # Each model family's own step of the same name: different models and configs, not shared code
    # (what both share is `baselines/training.py`); the same name lets a reader of one family find
    # the other's counterpart.
    "load_run": (frozenset({"baselines/dit/sample.py", "baselines/framear/sample.py"}), "per model family"),
    "rollout": (frozenset({"baselines/dit/sample.py", "baselines/framear/sample.py"}), "per model family"),
    "training_record": (frozenset({"baselines/dit/sample.py", "baselines/framear/sample.py"}), "per model family"),
    "write_run_files": (frozenset({"baselines/dit/train.py", "baselines/framear/train.py"}), "per model family"),
    "make_config": (frozenset({"baselines/dit/train.py", "baselines/framear/config.py"}), "per model family"),
    "summary": (frozenset({"baselines/studies/modality.py", "baselines/studies/scaling.py", "baselines/studies/grid.py"}),
                "each study's summary of its own runs (a study module's convention)"),
}


def definitions(root: Path = ROOT) -> dict[str, list[str]]:
    """{public name: [module paths defining it at top level]} over `FOLDERS`."""
    found: dict[str, list[str]] = defaultdict(list)
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    found[node.name].append(path.relative_to(root).as_posix())
    return found


def duplicates(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """The names defined in two or more modules that neither convention nor `PINNED` allows."""
    out = {}
    for name, paths in sorted(found.items()):
        if len(paths) < 2 or name in CONVENTION or name.startswith(CONVENTION_PREFIXES):
            continue
        if name in PINNED and set(paths) == PINNED[name][0]:
            continue
        out[name] = sorted(paths)
    return out


def test_one_definition_per_public_name():
    dup = duplicates(definitions())
    assert not dup, ("public names defined in more than one module: keep one definition and import it, or rename "
                     f"the less central one to say what it is: {dup}")


def test_pinned_names_are_still_defined_where_listed():
    """The allow-list only shrinks: a pinned module that no longer defines its name leaves the list."""
    found = definitions()
    stale = {name: sorted(mods - set(found.get(name, []))) for name, (mods, _) in PINNED.items()
             if not mods <= set(found.get(name, []))}
    assert not stale, f"remove from PINNED (no longer defined there): {stale}"


def test_the_check_sees_a_planted_duplicate(tmp_path):
    """A second definition of a public name is reported; a private one, a convention name and a
    pinned pair are not."""
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "phybench" / "a.py").write_text("def results_files():\n    pass\n\ndef _private():\n    pass\n"
                                                "def main():\n    pass\n\ndef cmd_x():\n    pass\n")
    (tmp_path / "baselines" / "b.py").write_text("class results_files:\n    pass\n\ndef _private():\n    pass\n"
                                                 "def main():\n    pass\n\ndef cmd_x():\n    pass\n")
    assert duplicates(definitions(tmp_path)) == {"results_files": ["baselines/b.py", "phybench/a.py"]}

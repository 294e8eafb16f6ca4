"""Set metrics are registry rows: outside their rows nothing in `phybench/` names LPIPS or FVD.

Issue 50: the run loop (`phybench.scoring.run`) named "lpips" and "fvd" as string literals in 4
modules (features, loop, score, estimate) and the leaderboard in 5 more; adding a batched metric
meant editing each.  Now a metric row names its batching class (`Metric.batched`) and the loop
drives any such class (`phybench.scoring.run.batches`).  This test reads every module of the
package (`ast`: string constants, docstrings left out) and fails on a literal "lpips" or "fvd"
(any case) outside:

* the metric rows (`phybench/scoring/metrics.py`) and the perceptual modules that implement them
  (`phybench/scoring/perceptual/`);
* a declaration of the metrics something reports by name (a tuple assigned to ``metrics`` or to a
  ``*_METRICS`` name: a task family lists its metrics as data, below the scorer);
* the one declaration of the image metrics by name, `IMAGE_METRICS` in `phybench/tasks/family.py`
  (the tasks stage sits below the registry and cannot read it; every family lists them through it).

The leaderboard's 11 literals (checks, shards, records, rescore, viewer) went too (issue 50 item 6):
downstream code reads the rows (`network_metrics()`, `Metric.bounds`, `batched_metrics`,
`metric_names("set")`).  `test_no_module_spells_lpips_or_fvd` is the stricter check: the two names
as a substring of any string constant (docstrings left out) or identifier, e.g. "--skip lpips,fvd" in a
help text or a `fvd_cache` variable.  `test_no_module_mentions_them_at_all` goes further: no line of
text (docstrings and comments too) names them outside the rows, so a reader of the run loop, the
board or the command line meets "the network metrics", "the batched metrics", "a set metric" and
finds which they are in one place (issue 50: "no module in phybench/ names 'lpips' or 'fvd' outside
the metric rows").  Before: 62 lines in 25 modules; now the `IMAGE_METRICS` line only.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("lpips", "fvd")
ALLOWED = ("phybench/scoring/metrics.py", "phybench/scoring/perceptual/")
DECLARATION = ("phybench/tasks/family.py", "IMAGE_METRICS")  # the one list of them by name below the scorer
SPELT = re.compile("|".join(NAMES), re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def _declarations(tree: ast.AST) -> set[int]:
    """The elements of a tuple or list assigned to `metrics` or `*_METRICS` (a list of names, as data)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)) and any(
                isinstance(t, ast.Name) and (t.id == "metrics" or t.id.endswith("_METRICS")) for t in node.targets):
            out.update(id(e) for e in node.value.elts)
    return out


def named(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every string constant equal to a set metric's name, docstrings and declarations left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _declarations(tree)
    return sorted((n.lineno, n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lower() in NAMES
                  and id(n) not in skip)


def literals(root: Path = ROOT) -> dict[str, list[tuple[int, str]]]:
    """{path: literals} for every module of `phybench/` that names a set metric outside the allowed places."""
    out = {}
    for path in sorted((root / "phybench").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(ALLOWED):
            continue
        found = named(path.read_text(encoding="utf-8"))
        if found:
            out[rel] = found
    return out


def test_no_module_names_lpips_or_fvd_outside_the_metric_rows():
    found = literals()
    assert not found, f"LPIPS / FVD named outside their metric rows (use the registry): {found}"


def _identifiers(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for n in ast.walk(tree):
        for attr in ("id", "attr", "arg", "name", "asname"):
            v = getattr(n, attr, None)
            if isinstance(v, str) and not isinstance(n, ast.Constant):
                out.append((getattr(n, "lineno", 0), v))
        if isinstance(n, ast.ImportFrom) and n.module:
            out.append((n.lineno, n.module))
    return out


def spelt(source: str, declaration: str | None = None) -> list[tuple[int, str]]:
    """(line, text) of every string constant (docstrings left out) or identifier that contains a set
    metric's name in any case; the elements of a tuple assigned to `declaration` left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if declaration and isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and any(
                isinstance(t, ast.Name) and t.id == declaration for t in node.targets):
            skip |= {id(e) for e in node.value.elts}
    strings = [(n.lineno, n.value) for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]
    return sorted((line, text) for line, text in strings + _identifiers(tree) if SPELT.search(text))


def mentions(root: Path = ROOT) -> list[str]:
    """"path:line" of every line outside the rows that mentions LPIPS / FVD, code or prose, in any case
    (the one `IMAGE_METRICS` declaration left out)."""
    out = []
    for path in sorted((root / "phybench").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(ALLOWED):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if SPELT.search(line) and not (rel == DECLARATION[0] and line.startswith(DECLARATION[1] + " = (")):
                out.append(f"{rel}:{n}")
    return out


def test_no_module_mentions_them_at_all():
    """Not even a docstring or a comment: prose says "the network metrics" and points at the rows."""
    found = mentions()
    assert not found, f"LPIPS / FVD mentioned outside their metric rows: {found}"


def test_no_module_spells_lpips_or_fvd():
    """Stricter than the literal check: a substring of any string or identifier, the CLI's help texts too."""
    found = {}
    for path in sorted((ROOT / "phybench").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(ALLOWED):
            continue
        hits = spelt(path.read_text(encoding="utf-8"), DECLARATION[1] if rel == DECLARATION[0] else None)
        if hits:
            found[rel] = hits
    assert not found, f"LPIPS / FVD spelt outside their metric rows (read the registry instead): {found}"


def test_the_strict_check_sees_a_planted_name():
    source = ('"""lpips in a docstring is prose."""\n'
              'IMAGE_METRICS = ("ssim", "lpips")\n'
              'def f(fvd_cache, names):  # fvd in a comment\n'
              '    """fvd here too."""\n'
              '    return "skip lpips,fvd" in names\n')
    assert spelt(source, "IMAGE_METRICS") == [(3, "fvd_cache"), (5, "skip lpips,fvd")]
    assert (2, "lpips") in spelt(source)


def test_the_run_loop_names_no_metric():
    """The scoring loop itself: not one literal, not even in a declaration."""
    for path in sorted((ROOT / "phybench" / "scoring" / "run").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        hits = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and n.value.lower() in NAMES and id(n) not in skip]
        assert not hits, f"{path.name} names {hits}"


def test_the_check_sees_a_planted_literal():
    """A literal is found (any case), a docstring and a list's declaration are not."""
    source = ('"""Mentions lpips in a docstring."""\n'
              'metrics = ("ssim", "lpips", "fvd")\n'
              'def f(names):\n    """fvd here too."""\n    return "FVD" in names or names == ["lpips"]\n')
    assert named(source) == [(5, "FVD"), (5, "lpips")]


def test_the_set_metrics_are_rows_with_a_batching_class():
    """LPIPS and FVD run through their rows' classes; a per-video metric has none."""
    from phybench.scoring.metrics import METRICS, all_metrics
    from phybench.scoring.run.batches import batched_metrics

    batched = [m.name for m in all_metrics() if m.batched is not None]
    assert batched == ["lpips", "fvd"]
    assert batched_metrics(["velocity_error", "fvd", "ssim", "lpips"]) == ("fvd", "lpips")
    for name in batched:
        cls = METRICS.get(name).batcher()
        assert all(callable(getattr(cls, a)) for a in ("add", "flush", "arrays", "empty", "from_features", "cost"))
    assert hasattr(METRICS.get("fvd").batcher(), "set_values") and METRICS.get("fvd").kind == "set"

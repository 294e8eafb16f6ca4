"""How many string-key reads of the core documents mypy can check (issue 50, "typed documents").

    python benchmarks/document_keys.py              # a table; a mypy pass over phybench/ and baselines/
    python benchmarks/document_keys.py --no-mypy    # the count by name only (instant)

It counts two things over every module of ``phybench/`` and ``baselines/``:

* **by name** (the issue's count): reads ``NAME["key"]`` and ``NAME.get("key", ...)``, a string
  literal key, whose subscripted expression is spelt ``manifest`` / ``X.manifest`` (the manifest),
  ``row`` (a split row, or any other row: the name is all it sees), ``results`` / ``doc`` (a
  results file) or ``samples`` / ``sample`` / ``entry`` (a sidecar and its rows).  Plain text
  (`ast`), so it is the same before and after the types: it says where the reads are.
* **by type** (what the gate sees): every ``EXPR["key"]`` / ``EXPR.get("key")`` read in those
  modules, split by the type mypy infers for ``EXPR`` (a full mypy build with its types
  exported): a ``TypedDict`` (checked: a misspelt key is a mypy error; counted per TypedDict)
  or anything else (``dict[str, Any]``, ``Any``: unchecked).  Assignment targets
  (``d["k"] = v``) are not reads and are left out.  Imports from outside the two folders are
  skipped (Any), so a read of a third-party value counts as unchecked.
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("phybench", "baselines")
NAMES = {"manifest": "manifest", "row": "row", "results": "results", "doc": "results",
         "samples": "sidecar", "sample": "sidecar", "entry": "sidecar"}


def files() -> list[Path]:
    return [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]


def _key_read(node: ast.AST) -> tuple[ast.expr, str] | None:
    """(subscripted expression, key) of a ``E["key"]`` load or a ``E.get("key", ...)`` call."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.func.value, node.args[0].value
    return None


def by_name() -> tuple[Counter[str], dict[str, set[str]]]:
    """Reads per document (by the subscripted name) and the files they are in."""
    reads: Counter[str] = Counter()
    where: dict[str, set[str]] = {}
    for path in files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = _key_read(node)
            if found is None:
                continue
            base = found[0]
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if name in NAMES:
                reads[NAMES[name]] += 1
                where.setdefault(NAMES[name], set()).add(str(path.relative_to(ROOT)))
    return reads, where


def by_type() -> Counter[str]:
    """Reads per TypedDict mypy sees ("unchecked": any other type), from a full mypy build."""
    from mypy import build, nodes, types
    from mypy.find_sources import create_source_list
    from mypy.options import Options

    options = Options()
    options.python_version = (3, 10)
    options.ignore_missing_imports = True
    # every module of phybench/ and baselines/ is a source; what they import from elsewhere (torch,
    # numpy, ...) is skipped (Any): the documents' types are all defined here, and a full pass over
    # torch's stubs costs 20 CPU minutes without a cache
    options.follow_imports = "skip"
    options.export_types = True
    options.incremental = False
    options.preserve_asts = True
    result = build.build(create_source_list([str(ROOT / f) for f in FOLDERS], options), options)
    counts: Counter[str] = Counter()

    def kind(types_of: dict[Any, Any], expr: Any) -> str:
        typ = types_of.get(expr)
        typ = types.get_proper_type(typ) if typ is not None else None
        if isinstance(typ, types.TypedDictType):
            return typ.fallback.type.name
        return "unchecked"

    # The build's one map of expression -> type (mypy's compiled visitors cannot be subclassed
    # from Python, so the expressions are taken from the map rather than walked).  With imports
    # skipped it holds the sources' expressions and typeshed's (stubs: no bodies, no key reads).
    # An assignment target is not an expression mypy types: only reads are counted.
    types_of = result.types
    for expr in list(types_of):
        if isinstance(expr, nodes.IndexExpr) and isinstance(expr.index, nodes.StrExpr):
            counts[kind(types_of, expr.base)] += 1
        elif isinstance(expr, nodes.CallExpr) and isinstance(expr.callee, nodes.MemberExpr) \
                and expr.callee.name == "get" and expr.args and isinstance(expr.args[0], nodes.StrExpr):
            counts[kind(types_of, expr.callee.expr)] += 1
    return counts


def main() -> int:
    reads, where = by_name()
    print("by name (string-literal key reads, by the subscripted name):")
    for doc in ("manifest", "row", "results", "sidecar"):
        print(f"  {doc:9} {reads[doc]:4} reads in {len(where.get(doc, ())):3} files")
    if "--no-mypy" in sys.argv[1:]:
        return 0
    counts = by_type()
    checked = sum(n for k, n in counts.items() if k != "unchecked")
    print(f"by type (every string-literal key read in {', '.join(FOLDERS)}/): {checked} checked by a TypedDict, "
          f"{counts['unchecked']} unchecked")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if name != "unchecked":
            print(f"  {name:24} {n:4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

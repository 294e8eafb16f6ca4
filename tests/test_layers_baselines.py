"""`baselines/` (installed as `phybench_baselines`) under the fences `phybench/` has.

The same AST checks as `tests/test_layers.py` (its helpers, pointed at the other folder): no
import cycle, the layers below run one way, the two families (`dit`, `framear`) never import
each other (what they share is `training` and `seeding`) nor the studies (`studies/`, above both),
no function over 80 lines, no module
over 600 lines, no class over `MAX_CLASS_LINES` (150, the limit `tests/test_layers.py` sets for
`phybench/`: a class that long is several jobs: a client, a policy, a runner).  Each check sees a planted violation.

    python tests/test_layers_baselines.py      # modules, edges, cycles, upward imports, sizes
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_layers import MAX_CLASS_LINES, MAX_FUNCTION_LINES, MAX_MODULE_LINES, ROOT, cycles, import_graph, long_functions  # noqa: E402
from test_layers import long_classes as _long_classes  # noqa: E402

PACKAGE, FOLDER = "phybench_baselines", "baselines"

# The layers of baselines/, lowest first: a module imports its own layer and those before it.
# Names are relative to phybench_baselines; every module is listed (a new one must be placed).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("", "seeding", "training", "diffusers_adapter")),  # shared by both families; know no model
    ("networks", ("dit", "dit.autoencoder", "dit.conditioning", "framear", "framear.model")),  # torch modules
    ("model", ("dit.latent", "dit.models", "dit.diffusion", "dit.config", "framear.config", "framear.frames")),
    ("clips", ("dit.clips",)),  # clips <-> tensors and the model a config builds (below train and sample)
    ("sample", ("dit.sample", "framear.sample")),  # a run folder -> videos, a submission
    ("train", ("dit.train", "dit.train_autoencoder", "framear.train", "framear.validate")),  # train evaluates with sample
    ("uses", ("dit.baseline", "dit.runner", "dit.plausibility", "dit.eval_autoencoder", "dit.compact")),  # a trained model put to work
    # the studies, above both families (issue 50: in one place); a study's pieces, then the studies, then the grids
    ("study pieces", ("studies", "studies.cases", "studies.curve", "studies.paper_fig3", "studies.grid_plot")),
    ("studies", ("studies.scaling", "studies.modality", "studies.findings", "studies.floor", "studies.exchange")),
    ("grids", ("studies.grid", "studies.grid_findings")),  # the training-size x model-size grid and its findings
    ("commands", ("studies.findings_command",)),  # `phybench study findings` (with --grid)
)
FAMILIES = ("dit", "framear")
MOVED: tuple[str, ...] = ()  # modules exempt from `families_import_studies` (none since the re-exports went)


def _full(name: str) -> str:
    return f"{PACKAGE}.{name}" if name else PACKAGE


def layer_of(module: str, layers=LAYERS) -> int | None:
    for i, (_, names) in enumerate(layers):
        if module in {_full(n) for n in names}:
            return i
    return None


def graph(root: Path = ROOT):
    return import_graph(root, PACKAGE, FOLDER)


def upward(g, layers=LAYERS) -> list[tuple[str, str]]:
    """(importer, imported) for every import of a later layer."""
    return [(m, t) for m, ts in sorted(g.items()) for t in sorted(ts)
            if (a := layer_of(m, layers)) is not None and (b := layer_of(t, layers)) is not None and b > a]


def across_families(g) -> list[tuple[str, str]]:
    """(importer, imported) where one family imports the other."""
    fam = {f: f"{PACKAGE}.{f}" for f in FAMILIES}
    return [(m, t) for m, ts in sorted(g.items()) for t in sorted(ts) for f, pre in fam.items()
            if (m == pre or m.startswith(pre + ".")) and any(t == q or t.startswith(q + ".")
                                                              for o, q in fam.items() if o != f)]


def families_import_studies(g) -> list[tuple[str, str]]:
    """(importer, imported) where a family module (but the `MOVED` re-exports) imports a study:
    the studies sit above both families, one way."""
    fam = tuple(f"{PACKAGE}.{f}" for f in FAMILIES)
    studies, moved = f"{PACKAGE}.studies", {_full(n) for n in MOVED}
    return [(m, t) for m, ts in sorted(g.items()) for t in sorted(ts)
            if m not in moved and any(m == f or m.startswith(f + ".") for f in fam)
            and (t == studies or t.startswith(studies + "."))]


def long_classes(root: Path, package: str, folder: str | None = None,
                 limit: int = MAX_CLASS_LINES) -> list[tuple[int, str]]:
    """(lines, "module:qualname") for every class (nested ones too) over `limit` lines, longest
    first: `tests/test_layers.py`'s count, pointed at another folder."""
    return sorted(((n, c) for c, n in _long_classes(root, limit, package, folder).items()), reverse=True)


def module_sizes(root: Path = ROOT) -> dict[str, int]:
    from test_layers import modules

    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in modules(root, PACKAGE, FOLDER).items()}


# ------------------------------------------------------------------ the tests
def test_every_module_has_a_layer_and_every_layer_name_a_module():
    g = graph()
    lost = [m for m in g if layer_of(m) is None]
    assert not lost, f"modules of baselines/ in no layer of LAYERS (place them): {lost}"
    stale = [_full(n) for _, names in LAYERS for n in names if _full(n) not in g]
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_layer_imports_a_later_one_and_no_family_the_other():
    found, crossed = upward(graph()), across_families(graph())
    assert not found, "upward imports:\n" + "\n".join(
        f"{a} ({LAYERS[layer_of(a)][0]}) -> {b} ({LAYERS[layer_of(b)][0]})" for a, b in found)
    assert not crossed, f"one family imports the other (share through training/seeding): {crossed}"
    assert not families_import_studies(graph()), "a family imports a study (studies sit above the families)"


def test_no_function_over_80_lines():
    found = long_functions(ROOT, MAX_FUNCTION_LINES, PACKAGE, FOLDER)
    assert not found, "functions over 80 lines: " + ", ".join(f"{f} ({n})" for n, f in found)


def test_no_module_over_600_lines():
    assert not {m: n for m, n in module_sizes().items() if n > MAX_MODULE_LINES}


def test_no_class_over_the_limit():
    """baselines/: no class over the limit `phybench/` has (`tests/test_layers.py` checks `phybench/`)."""
    assert not long_classes(ROOT, PACKAGE, FOLDER)


def test_the_checks_see_planted_violations(tmp_path):
    """A copy of baselines/ with an upward import and a circle (the autoencoder imports the trainer),
    a framear module importing dit, a family importing a study, a function of 81 lines and a class of one line over the limit planted."""
    import shutil

    shutil.copytree(ROOT / FOLDER, tmp_path / FOLDER, ignore=shutil.ignore_patterns("__pycache__"))
    ae = tmp_path / FOLDER / "dit" / "autoencoder.py"
    ae.write_text(ae.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from .train import main  # noqa\n"
                  "    from ..studies import cases  # noqa\n",
                  encoding="utf-8")
    frames = tmp_path / FOLDER / "framear" / "frames.py"
    frames.write_text(frames.read_text(encoding="utf-8") + "\n\nfrom ..dit import models  # noqa\n", encoding="utf-8")
    lines = [f"    x{i} = {i}\n" for i in range(max(79, MAX_CLASS_LINES - 1))]
    (tmp_path / FOLDER / "planted.py").write_text(
        "def long():\n" + "".join(lines[:79]) + "    return 0\n\n\nclass Big:\n" + "".join(lines) + "    y = 0\n",
        encoding="utf-8")
    g = graph(tmp_path)
    assert (f"{PACKAGE}.dit.autoencoder", f"{PACKAGE}.dit.train") in upward(g)
    assert any(f"{PACKAGE}.dit.autoencoder" in c and f"{PACKAGE}.dit.train" in c for c in cycles(g))
    assert (f"{PACKAGE}.framear.frames", f"{PACKAGE}.dit.models") in across_families(g)
    assert (f"{PACKAGE}.dit.autoencoder", f"{PACKAGE}.studies.cases") in families_import_studies(g)
    assert layer_of(f"{PACKAGE}.planted") is None  # a new module must be placed in LAYERS
    assert long_functions(tmp_path, MAX_FUNCTION_LINES, PACKAGE, FOLDER) == [(81, f"{PACKAGE}.planted:long")]
    assert long_classes(tmp_path, PACKAGE, FOLDER) == [(MAX_CLASS_LINES + 1, f"{PACKAGE}.planted:Big")]
    assert not upward(graph()) and not across_families(graph())  # the real tree, unchanged


def _main() -> None:
    g = graph()
    sizes = module_sizes()
    print(f"modules {len(g)}, import edges {sum(len(t) for t in g.values())}, cycles {len(cycles(g))}, "
          f"upward imports {len(upward(g))}, across families {len(across_families(g))}")
    print("largest module:", max((n, m) for m, n in sizes.items()))
    print(f"functions over {MAX_FUNCTION_LINES} lines:",
          ", ".join(f"{f} ({n})" for n, f in long_functions(ROOT, MAX_FUNCTION_LINES, PACKAGE, FOLDER)) or "none")
    for package, folder in ((PACKAGE, FOLDER), ("phybench", None)):
        print(f"classes over {MAX_CLASS_LINES} lines in {package}:",
              ", ".join(f"{c} ({n})" for n, c in long_classes(ROOT, package, folder)) or "none")


if __name__ == "__main__":
    _main()

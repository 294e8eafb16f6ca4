"""The Probes page of the leaderboard site: each probe's verdicts per model, and the ranking.

Probe results files (`phybench.probes`, schema ``phybench.probe-analysis``) may lie
anywhere under the results folder; the main boards skip them and this page checks them
(`load_results`: schema, version, registered task, spec hash, counts that match the per
video verdicts) and draws them.  A file that fails a check is refused like any other.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import probes
from ...probes.page import esc

PAGE = "probes.html"


def files(results_dir: Path, skip: Path | None = None) -> list[Path]:
    """The probe results files under `results_dir` (hidden folders and a site inside skipped;
    regular files only, `files.scan`)."""
    from ..common.files import is_probe_file, scan

    return [p for p in scan(results_dir, skip)[0] if is_probe_file(p)]


def read_probe_results(results_dir: Path, files: list[Path]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """(accepted documents, [(file, reason)] refused), in file order."""
    docs, refused = [], []
    for path in files:
        rel = path.relative_to(results_dir).as_posix()
        try:
            doc = probes.load_results(path)
        except probes.ProbeError as exc:
            refused.append((rel, str(exc).replace(str(path), rel)))
            continue
        doc["_file"] = rel
        docs.append(doc)
    return docs, refused


def _group_figures(parts: list[str]) -> list[str]:
    """Consecutive figures of a probe's section go in one grid (two across at 1400 px).  A part
    may open a figure that later parts close (a figure holding a table): figures are whole."""
    out: list[str] = []
    run: list[str] = []
    depth = 0
    for part in parts:
        if depth == 0 and not part.lstrip().startswith("<figure") and run:
            out.append('<div class="probe-figures">' + "\n".join(run) + "</div>")
            run = []
        if depth > 0 or part.lstrip().startswith("<figure"):
            run.append(part)
            depth += part.count("<figure") - part.count("</figure>")
        else:
            out.append(part)
    if run:
        out.append('<div class="probe-figures">' + "\n".join(run) + "</div>")
    return out


def probes_page_html(docs: list[dict[str, Any]]) -> str:
    """The Probes page: the main page's stylesheet and layout (masthead, nav, bordered tables), no script."""
    out = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'self\' \'unsafe-inline\'; img-src data:">',
           '<title>phybench probes</title><link rel="icon" href="data:,">',
           '<link rel="stylesheet" href="style.css"></head><body class="probe-page">',
           '<header class="masthead"><div class="wrap"><h1>Generalisation probes</h1>',
           '<p class="lede">Targeted splits that ask how a model generalises: does an unseen speed snap to a seen '
           'one, which attribute it copies from its training data first, whether it composes two events.</p>'
           '</div></header>']
    by_probe: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for d in docs:
        by_probe.setdefault(d["probe"], {}).setdefault(d["model"], []).append(d)
    nav = "".join(f'<a href="#probe-{esc(p)}">{esc(p)}</a>' for p in sorted(by_probe))
    out.append(f'<nav class="topnav" aria-label="probes"><div class="wrap"><span class="nav-tasks">'
               f'<a href="index.html">&larr; leaderboard</a>{nav}</span></div></nav><main class="wrap">')
    if not by_probe:
        out.append("<p>No probe results.</p>")
    for probe, models in sorted(by_probe.items()):
        entry = probes.PROBES.get(probe)
        out.append(f'<section id="probe-{esc(probe)}"><h2>{esc(entry.description)}</h2>')  # styled by .probe-page
        summaries = {m: entry.summarise(ds) for m, ds in sorted(models.items())}
        if entry.section is not None:
            out += _group_figures(list(entry.section(summaries)))
        else:  # a probe without a drawing of its own: its text summary
            out += [f"<pre>{esc(entry.render(s))}</pre>" for s in summaries.values()]
        out.append("</section>")
    out.append("</main></body></html>\n")
    return "\n".join(out)

"""The viewer application (``template/viewer.js``, ``viewer.css`` and the HTML shell ``viewer.html``)
kept apart from each viewer's data (issue 50, item 2).

A viewer folder as the board ships and syncs it holds data only: ``viewer-data.json`` (the page's
data, `viewer._data_doc`), ``viewer-record.json`` (`board_viewers`), ``media/`` and the marker.
The application is this package's template, written where the viewer is opened:

* once per site (`write_site_app`): ``SITE/viewers/viewer.js`` and ``viewer.css``, and each
  viewer's ``index.html`` rendered from the shell with its data inline, loading ``../viewer.*``;
  so a change of the template needs a site build, never a rebuild of the viewers' data.  The
  site's viewer folder then keeps its data in its page only (its ``viewer-data.json`` is not
  kept: the site would hold every viewer's data twice, 4.5 MB of the lite board's 16 MB), and
  `read_data` reads a folder's data from its page when it has no ``viewer-data.json``, so
  ``SITE/viewers`` can still be a build's ``--prebuilt-viewers``;
* into one folder on request (`write_standalone`, ``phybench view``'s default): ``index.html``
  loading ``viewer.*`` beside it, so the folder opens alone from ``file://``.

The data stays inline in each page (a ``<script type="application/json">``), not fetched: a page
opened from ``file://`` may not fetch a file beside it.  A data file is untrusted input (a
prebuilt folder): it is parsed with `jsonsafe` and written back with `export.script_json`,
which nothing in it can end.
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

from ... import jsonsafe
from ..site.export import script_json
from ..common.format import escape

TEMPLATE_DIR = "template"
APP_FILES = ("viewer.css", "viewer.js")  # written once per site, or into a standalone folder
PAGE = "index.html"  # rendered from the shell (template/viewer.html), never shipped in a data folder
DATA = "viewer-data.json"  # the page's data: what a data-only viewer folder holds beside its media
INLINE = re.compile(r'<script type="application/json" id="viewer-data">(.*?)</script>', re.S)  # the shell's data element
MAX_DATA_BYTES = 64_000_000  # a shipped viewer's data is about 0.15 MB


class AppError(Exception):
    """A viewer folder whose data cannot be read (missing, malformed, not a viewer's)."""


def template_root() -> Any:
    """The application's folder in the package (a `Traversable`; a test points it at a changed copy)."""
    return resources.files("phybench.leaderboard.viewer") / TEMPLATE_DIR


def template_bytes(name: str) -> bytes:
    """One file of the application, as the package ships it."""
    return (template_root() / name).read_bytes()


def data_bytes(data: dict[str, Any]) -> bytes:
    """``viewer-data.json``: the page's inline JSON as it will appear in the page, one line."""
    return (script_json(data) + "\n").encode("utf-8")


def viewer_page_html(data: dict[str, Any], app: str = "") -> str:
    """A viewer's ``index.html``: the shell, its data inline; `app` is where ``viewer.*`` are
    relative to the page (``""``: beside it, standalone; ``"../"``: the site's ``viewers/``)."""
    main = data["models"][0]["name"]
    title = f"{main} on {data['task']} {data['split']}"
    others = "".join(f" vs {escape(m['name'])}" for m in data["models"][1:])
    template = template_bytes("viewer.html").decode("utf-8")
    values = {"title": escape(title), "model": escape(main), "others": others, "task": escape(data["task"]),
              "split": escape(data["split"]), "version": escape(data["phybench_version"]),
              "data": script_json(data), "app": app}
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


def _data_text(folder: Path) -> tuple[bytes | str, Path]:
    """A viewer folder's data as text and where it came from: its ``viewer-data.json``, else (a
    site's viewer folder) the inline data of its page."""
    path = folder / DATA
    if not path.exists() and not path.is_symlink() and (folder / PAGE).is_file() and not (folder / PAGE).is_symlink():
        page = folder / PAGE
        if page.stat().st_size > 2 * MAX_DATA_BYTES:
            raise AppError(f"{page}: larger than a viewer's page")
        found = INLINE.search(page.read_bytes().decode("utf-8", "replace"))
        if found is None:
            raise AppError(f"{page}: no inline viewer data")
        return found.group(1), page
    if path.is_symlink() or not path.is_file():
        raise AppError(f"{folder}: no {DATA} (a viewer built before its data was shipped apart: rebuild it)")
    with open(path, "rb") as f:
        return f.read(MAX_DATA_BYTES + 1), path


def read_data(folder: Path) -> dict[str, Any]:
    """A viewer folder's data (its ``viewer-data.json``, or its page's inline data where the folder
    is a site's: `write_site_app`), its shape checked as far as the shell needs it (untrusted input)."""
    try:
        text, path = _data_text(folder)
    except OSError as exc:
        raise AppError(f"{folder}: its data cannot be read ({exc})") from None
    try:
        doc = jsonsafe.loads(text, str(path), max_bytes=MAX_DATA_BYTES)
    except ValueError as exc:  # jsonsafe.JSONError is a ValueError
        raise AppError(f"{path}: not readable as JSON ({str(exc)[:200]})") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    ok = (isinstance(doc, dict) and doc.get("kind") == "phybench-viewer" and isinstance(models, list) and models
          and all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in models)
          and all(isinstance(doc.get(k), str) for k in ("task", "split", "phybench_version")))
    if not ok:
        raise AppError(f"{path}: not a phybench viewer's data")
    return doc


def write_standalone(folder: Path) -> list[str]:
    """Make a data-only viewer folder open alone: its page and the application beside it."""
    page = viewer_page_html(read_data(folder), app="")
    (folder / PAGE).write_bytes(page.encode("utf-8"))
    for name in APP_FILES:
        (folder / name).write_bytes(template_bytes(name))
    return [PAGE, *APP_FILES]


def write_site_app(viewers_dir: Path, folders: list[Path]) -> list[str]:
    """The site's copy of the application (``viewers_dir/viewer.*``, once) and each viewer's page,
    which loads it from there and carries the viewer's data inline: the folder's ``viewer-data.json``
    is then removed, so the site holds each viewer's data once (`read_data` reads it back from the
    page).  Returns the files written, relative to `viewers_dir`."""
    for name in APP_FILES:
        (viewers_dir / name).write_bytes(template_bytes(name))
    pages = []
    for folder in folders:
        (folder / PAGE).write_bytes(viewer_page_html(read_data(folder), app="../").encode("utf-8"))
        (folder / DATA).unlink(missing_ok=True)
        pages.append(f"{folder.relative_to(viewers_dir).as_posix()}/{PAGE}")
    return [*APP_FILES, *pages]


def main(argv: list[str] | None = None) -> int:
    """``python -m phybench.leaderboard.viewer.app FOLDER``: make a data-only viewer folder (a copy
    of a shipped one, say) open alone from ``file://``."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m phybench.leaderboard.viewer.app VIEWER_FOLDER", file=sys.stderr)
        return 2
    try:
        written = write_standalone(Path(args[0]))
    except AppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {', '.join(written)} into {args[0]}: open {Path(args[0]) / PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

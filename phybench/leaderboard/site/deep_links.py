"""Deep links from the board's scatter dots to one video in its row's viewer (issue 37, item 3).

A dot of the board's scatters stands for one video of one results file (`scatter` keeps each
point's file).  When that file has a viewer (`board_viewers.write` put ``row["viewers"]``), the
dots' path carries ``data-href`` (the viewer's ``index.html``, relative to the board page) and
``data-prefix`` and ``data-ids`` (each dot's sample id, percent-encoded so it holds no space,
quote or angle bracket, then written as the ids' common beginning once and each id's rest,
space-separated, in the path's order).  The page's script (``leaderboard.js``) finds
the dot nearest a click and opens ``href#v=<id>``; the viewer (``viewer.js``) opens that video
or says it has no such video.  A path's dots are drawn as one path of zero-length strokes
(`svg.dots`), so one link per dot costs only its id's bytes, not an element.

Dots of a file without a viewer are drawn as before, with no attribute: a board built without
viewers has the same bytes as before this module.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable
from urllib.parse import quote

from ..common.format import escape

VIEWER_HREF = re.compile(r"^viewers/[A-Za-z0-9][A-Za-z0-9._-]{0,200}/index\.html$")  # what board_viewers writes
Point = tuple[float, float, str, str]  # (x, y) in the plot's pixels, sample id, results file


def encode_id(sample_id: str) -> str:
    """A sample id as a URL fragment value: every byte but letters, digits and ``_.-~/`` percent-encoded."""
    return quote(sample_id, safe="/")


def fragment(sample_id: str) -> str:
    """The fragment that opens one video in a viewer (``viewer.js`` reads ``#v=``)."""
    return "#v=" + encode_id(sample_id)


def hrefs_of(row: dict[str, Any]) -> dict[str, str]:
    """A board row's viewers by results file; an href of another shape is not linked."""
    return {v["file"]: v["href"] for v in row.get("viewers") or []
            if isinstance(v.get("href"), str) and VIEWER_HREF.match(v["href"])}


def by_viewer(points: Iterable[Point], hrefs: dict[str, str]) -> list[tuple[str | None, list[tuple[float, float]], list[str]]]:
    """The points grouped by the viewer they link to (None: no viewer), in order of first
    appearance, each group's points in their given order: (href, xy, sample ids)."""
    groups: dict[str | None, tuple[list[tuple[float, float]], list[str]]] = {}
    for x, y, sid, file in points:
        xy, ids = groups.setdefault(hrefs.get(file), ([], []))
        xy.append((x, y))
        ids.append(sid)
    return [(href, xy, ids) for href, (xy, ids) in groups.items()]


def link_attrs(href: str | None, ids: list[str]) -> str:
    """The attributes that make a path's dots links (empty without a viewer): the encoded ids'
    common beginning once (``data-prefix``, e.g. ``uniform/id-eval/``), then each id's rest
    (``data-ids``); prefix + rest is the encoded id.  About 7 bytes a dot for the shipped ids."""
    if href is None:
        return ""
    encoded = [encode_id(s) for s in ids]
    prefix = os.path.commonprefix(encoded) if len(encoded) > 1 else ""
    rest = " ".join(e[len(prefix):] for e in encoded)
    return f' data-href="{escape(href)}" data-prefix="{escape(prefix)}" data-ids="{escape(rest)}"'

"""Text formatting at the bottom of the leaderboard package: numbers, HTML and Markdown escaping.

Every other leaderboard module (tables, exports, plots, the law table) formats with these,
so none of them imports another for a helper.
"""
from __future__ import annotations

import html
import re
from typing import Any


def escape(text: Any) -> str:
    """Text safe in HTML, attributes included."""
    return html.escape(str(text), quote=True)


def fmt(x: float | None) -> str:
    """Three significant figures, fixed point where it reads better (mirrors leaderboard.js)."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:.3g}"


def markdown_escape(text: str) -> str:
    """Text safe inside a GitHub Markdown table cell: no pipes, no HTML, no emphasis."""
    text = re.sub(r"[\r\n\t]+", " ", str(text))
    text = re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

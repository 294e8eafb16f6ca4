"""The README is a front door (at most 15 KB) and every relative link in it and in docs/ resolves.

`mkdocs build --strict` (in .ci/run) checks the docs site's links and anchors too; this test
needs no mkdocs, so a plain `pytest` catches a README link that points nowhere."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # not links inside code
    return [m for m in LINK.findall(text) if not re.match(r"^[a-z]+:", m) and not m.startswith("#")]


def test_readme_is_a_front_door():
    assert (ROOT / "README.md").stat().st_size <= 15 * 1024


def test_every_readme_and_docs_link_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "leaderboard").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)}: {link}" for page in pages for link in _relative_links(page)
              if not (page.parent / link.split("#")[0]).exists()]
    assert len(pages) > 10 and broken == []


def test_the_docs_site_lists_every_page():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w.-]+\.md)\s*$", nav, flags=re.M))
    assert listed == {p.name for p in (ROOT / "docs").glob("*.md")}

"""The board's scatter plots draw a bounded, deterministic sample of each row's videos (issue 37 item 4b).

A board page stays small whatever the number of models and videos: per-video data lives in the
results sidecars and the per-row viewers (`phybench view`), not in the page.  The page's two
per-video plots (generated against conditioned velocity, one per row; the learned-law scatter,
fitted against true law parameter, one per board) draw a sample: the videos whose sample id
hashes lowest (sha256), at most `ROW_CAP` per row, for the board's `PLOTTED_ROWS` best-ranked rows
(every row's videos are in its viewer).  Every model of a board answers the same sample
ids, so the sample picks the same videos for every model; and it is fixed by the ids alone, so the
same results give the same bytes.  A page with many rows draws fewer per row, so that all its
scatters together hold at most `PAGE_POINTS` points (`per_row_cap`).  The page's size then grows
with its rows only by each row's table numbers and provenance (a few KB), never by its videos.

The sample is made as each sidecar is read (`reduce`, called by `load.read_all` once the sidecar
has passed its checks; this module imports nothing of `load`, so `load` may import it), so a build never holds every sidecar at once, and merged across the runs
(seeds) of one model (`merge`).  The sample goes into the row (`row["scatter"]`); the page carries it only as the drawn SVG and
``leaderboard.json`` only its counts (`without_points`).
"""
from __future__ import annotations

import hashlib
import sys
from array import array
from typing import Any, Iterable, Iterator, Sequence, overload

ROW_CAP = 200  # points per row's velocity scatter and per model in the law scatter, at most
PAGE_POINTS = 12_000  # points of every scatter on one page together, at most
PLOTTED_ROWS = 12  # rows of a board with a velocity scatter, models in its law scatter: the best-ranked
SAMPLE_WORDS = "the videos whose sample id hashes lowest (sha256), the same videos for every model"


def sample_key(sample_id: str) -> int:
    """Where a video falls in the sample order: the first 7 bytes of its id's sha256, as a number."""
    return int.from_bytes(hashlib.sha256(sample_id.encode("utf-8")).digest()[:7], "big")


def law_headline(task: str) -> str | None:
    """The family's headline law parameter (`TaskFamily.law_headline`); None for a task not installed."""
    try:
        from ...tasks import family_of, get_task

        return getattr(family_of(get_task(task)), "law_headline", None)
    except Exception:
        return None


_SHARED: dict[str, tuple[int, str]] = {}  # sample id -> (its key, the id): one copy per video, however many rows
_SHARED_MAX = 1_000_000  # ids remembered, at most (a long-lived process reading many boards)


def _shared(sample_id: str) -> tuple[int, str]:
    """A video's sample key and id, the same objects for every row that samples it.

    Every model of a board answers the same sample ids, so a build of N results files would
    otherwise hold N copies of each sampled id (and of its key): this keeps one, and the build's
    memory no longer grows with the files by their ids."""
    got = _SHARED.get(sample_id)
    if got is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        sid = sys.intern(sample_id)
        got = _SHARED[sid] = (sample_key(sid), sid)
    return got


Point = tuple[int, str, str, float, float, str]  # (sample key, sample id, level, x, y, results file)


class Points(Sequence[Point]):
    """A row's sampled points kept column by column: the ids and levels as shared strings, x and y
    as doubles in arrays (about 32 bytes a point instead of 130 as tuples of Python floats).  A
    build holds one per results file until the site is written; read back, a point is the
    same tuple (the key from the id, `_shared`), so the page's bytes do not change."""

    __slots__ = ("_ids", "_levels", "_x", "_y", "_files")

    def __init__(self, points: Iterable[Point]) -> None:
        pts = list(points)
        self._ids = tuple(p[1] for p in pts)
        self._levels = tuple(p[2] for p in pts)
        self._x = array("d", (p[3] for p in pts))
        self._y = array("d", (p[4] for p in pts))
        self._files = tuple(sys.intern(p[5]) for p in pts)

    def __len__(self) -> int:
        return len(self._ids)

    def _at(self, i: int) -> Point:
        return _shared(self._ids[i])[0], self._ids[i], self._levels[i], self._x[i], self._y[i], self._files[i]

    @overload
    def __getitem__(self, i: int) -> Point: ...

    @overload
    def __getitem__(self, i: slice) -> list[Point]: ...

    def __getitem__(self, i: int | slice) -> Point | list[Point]:
        if isinstance(i, slice):
            return [self._at(k) for k in range(*i.indices(len(self)))]
        return self._at(range(len(self))[i])

    def __iter__(self) -> Iterator[Point]:
        return (self._at(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def reduce(samples: dict[str, Any], task: str, cap: int = ROW_CAP, file: str = "") -> dict[str, Any]:
    """A checked sidecar (as `load` cleans it) reduced to what the page draws.

    {"dof", "videos": all videos, "measured": videos with a generated velocity, "law_fits":
    videos whose headline parameter was fitted, "points": `Points` of (key, sample_id, level, true, generated, file),
    "laws": `Points` of (key, sample_id, level, truth, fit, file)}: at most `cap` of each, lowest key first (ids,
    keys and levels shared between rows: `_shared`, `sys.intern`).  `file`: the results file the
    sidecar belongs to, so that a drawn point can link to that file's viewer (`deep_links`; a row
    of several runs has one viewer per run).
    """
    measured = [(*_shared(s["sample_id"]), sys.intern(s["level"]), float(s["true_velocity"]),
                 float(s["generated_velocity"]), file) for s in samples["samples"] if s["generated_velocity"] is not None]
    name = law_headline(task)
    fits = []
    for lw in samples.get("laws") or []:
        x, y = lw["truth"].get(name), lw["fit"].get(name)
        # `load` let in only finite numbers or null here, so "not None" is "a number"
        if name is not None and x is not None and y is not None and isinstance(lw.get("sample_id"), str):
            fits.append((*_shared(lw["sample_id"]), sys.intern(lw["level"]), float(x), float(y), file))
    return {"dof": samples.get("dof"), "videos": len(samples["samples"]), "measured": len(measured),
            "law_fits": len(fits), "law_param": name, "points": Points(sorted(measured)[:cap]),
            "laws": Points(sorted(fits)[:cap])}


def merge(a: dict[str, Any] | None, b: dict[str, Any], cap: int = ROW_CAP) -> dict[str, Any]:
    """Two runs' samples (of one model, one board) as one: counts add up, the lowest keys stay."""
    if a is None:
        return b
    return {"dof": a["dof"] or b["dof"], "videos": a["videos"] + b["videos"], "measured": a["measured"] + b["measured"],
            "law_fits": a["law_fits"] + b["law_fits"], "law_param": a["law_param"] or b["law_param"],
            "points": Points(sorted([*a["points"], *b["points"]])[:cap]),
            "laws": Points(sorted([*a["laws"], *b["laws"]])[:cap])}


def export_form(scatter: dict[str, Any]) -> dict[str, Any]:
    """The row's sample as the plots read it: named fields, in sample order (lowest key first)."""
    return {
        "sample": f"the page's scatters draw at most {ROW_CAP} videos per row: {SAMPLE_WORDS}; "
                  "every video is in the results sidecars",
        "dof": scatter["dof"], "videos": scatter["videos"], "measured": scatter["measured"],
        "law_fits": scatter["law_fits"], "law_param": scatter["law_param"],
        "points": [{"sample_id": sid, "level": level, "true_velocity": x, "generated_velocity": y, "file": file}
                   for _, sid, level, x, y, file in scatter["points"]],
        "law_points": [{"sample_id": sid, "level": level, "truth": x, "fit": y, "file": file}
                       for _, sid, level, x, y, file in scatter["laws"]],
    }


def without_points(data: dict[str, Any]) -> dict[str, Any]:
    """The board data as ``leaderboard.json`` carries it: each row's sample keeps its counts and
    words, not its points (per-video values are the results sidecars' business; a board of many
    rows would otherwise write megabytes of them, and hold them twice while writing)."""
    def row_out(row: dict[str, Any]) -> dict[str, Any]:
        if "scatter" not in row:
            return row
        return {**row, "scatter": {k: v for k, v in row["scatter"].items() if k not in ("points", "law_points")}}

    return {**data, "boards": [{**b, "rows": [row_out(r) for r in b["rows"]]} for b in data["boards"]]}


def per_row_cap(boards: list[dict[str, Any]]) -> int:
    """Points each scatter series may draw on a page of these boards: `ROW_CAP`, or less when the
    series drawn (a velocity scatter and a law series for each of a board's `PLOTTED_ROWS`
    best-ranked rows that has them) would pass `PAGE_POINTS` together."""
    series = 0
    for b in boards:
        samples = [r["scatter"] for r in b["rows"] if r.get("scatter")]
        series += min(PLOTTED_ROWS, sum(bool(s["points"]) for s in samples))
        series += min(PLOTTED_ROWS, sum(bool(s["law_points"]) for s in samples))
    return max(1, min(ROW_CAP, PAGE_POINTS // series)) if series else ROW_CAP


def sample_caption(shown: int, total: int) -> str:
    """'all 200 videos' or 'a sample of 300 of 1400 videos (...)': what a scatter draws, in words."""
    if shown >= total:
        return f"all {total} videos"
    return f"a sample of {shown} of {total} videos ({SAMPLE_WORDS})"

"""`leaderboard sync` builds the viewer of each row it admits (issue 37, item 3).

The sync's board takes its viewers from the folder beside its results (``RESULTS/../viewers``,
`board_viewers.shipped_viewers`, the folder ``leaderboard build --prebuilt-viewers`` reads).
When that folder exists the board is built with viewers, and the sync, which holds the
submission and its split only while it admits the row, builds the row's viewer there
(`admitted_viewer`) before it commits the row: a row on the board's main then has its viewer.

The viewer is built as data only (its page and application are the site's, `viewer.app`) in a ``.building-*`` folder inside the viewers folder (`board_viewers`'
build, its record included) and renamed into place whole, so a reader never sees a half-built
viewer.  A sync killed while building leaves the ``.building-*`` folder, removed by the next
sync (`viewers_folder`); it also leaves the row uncommitted (the journal says "scored"), so the
next sync removes the row, admits the pull request again and builds the viewer again.  A viewer
that cannot be built (an `Exception`) is logged and the row admitted without one: the viewer is
a view of the row, never a condition of it.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from ... import jsonsafe
from ...io import file_sha256
from ..viewer.board_viewers import MAX_MB, MAX_VIDEOS, Link, _build_one, shipped_viewers, slug_of
from .submit import ARCHIVES

BUILDING = ".building-"  # a viewer being built; one left behind is a killed sync's


def viewers_folder(results_dir: Path, log: Callable[[str], None] = print) -> Path | None:
    """The folder the sync's board takes its viewers from, or None when it is built without; the
    half-built viewers a killed sync left there are removed."""
    found = shipped_viewers(results_dir)
    if not found:
        return None
    for stale in sorted(found[0].glob(BUILDING + "*")):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
            log(f"removed {stale.name}: a viewer a killed sync was building")
    return found[0]


def admitted_viewer(syncer: Any, results: Path, files: dict[str, Path], work: Path) -> Path | None:
    """Build the viewer of the admitted results file `results` into ``syncer.viewers`` (None: no
    viewers, nothing done) from the archive `intake.Syncer.evaluate` scored (in `work`, named as
    in the pull request) and the split of the results' split hash.  Returns the viewer's folder,
    or None when it could not be built (logged)."""
    folder = syncer.viewers
    if folder is None:
        return None
    file = results.relative_to(syncer.results_dir).as_posix()
    try:
        archive = next(work / Path(p).name for p in sorted(files) if Path(p).name in ARCHIVES)
        split = syncer.splits[jsonsafe.read(results)["provenance"]["split_hash"]]
        return build_into(folder, Link(file, slug_of(file), file_sha256(results), submission=archive, split=split),
                          syncer.results_dir)
    except Exception as exc:  # noqa: BLE001 - the row is admitted without a viewer, and the log says why
        syncer.log(f"no viewer for {file}: {type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
        return None


def build_into(folder: Path, link: Link, results_dir: Path, max_videos: int = MAX_VIDEOS, max_mb: float = MAX_MB) -> Path:
    """Build `link`'s viewer (with its record) in a ``.building-*`` folder inside `folder`, then
    rename it to ``folder/<slug>``; a viewer already there is renamed aside first and removed after."""
    work = Path(tempfile.mkdtemp(prefix=BUILDING, dir=folder))
    try:
        built = work / link.slug
        _build_one(link, built, results_dir, max_videos, max_mb)
        dest = folder / link.slug
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            os.rename(dest, work / "previous")
        os.rename(built, dest)
        return dest
    finally:
        shutil.rmtree(work, ignore_errors=True)

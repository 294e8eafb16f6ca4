"""Files: the one atomic writer (of a file, and of a folder), the one file hasher and the one cache-folder rule.

Every file phybench writes for someone else to read (split shards and manifests,
results, the leaderboard site, weights, caches) goes through `atomic_write_bytes`, so a
reader never sees half a file and a killed run leaves nothing half-written; every folder
written whole (a submission, exported inputs, an imported split, the site, the viewer) goes
through `atomic_folder`.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Iterator, Mapping, Sequence

CACHE_ENV = "PHYBENCH_CACHE_DIR"
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]
_TMP_REST = re.compile(r"^(\d+)-([0-9a-f]{6})\.[^.]+\.tmp$")  # after ".<name>.": pid-host.random.tmp


def tmp_prefix(path: str | os.PathLike[str]) -> str:
    """The name prefix of `path`'s temporary sibling: ``.<name>.<pid>-<host>.``, so that a later
    writer can tell the leftovers of a killed one (its process is gone) from a live one's."""
    return f".{Path(path).name}.{os.getpid()}-{_HOST}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale_tmp(path: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary siblings of `path` that a killed writer on this host left (file or folder).

    Only names this module makes (`tmp_prefix`) whose process no longer runs are touched."""
    path = Path(path)
    removed = []
    head = f".{path.name}."
    for found in glob.glob(glob.escape(str(path.parent / head)) + "*.tmp"):
        m = _TMP_REST.match(os.path.basename(found)[len(head):])
        if not m or m.group(2) != _HOST or _alive(int(m.group(1))):
            continue
        try:
            if os.path.isdir(found) and not os.path.islink(found):
                shutil.rmtree(found)
            else:
                os.unlink(found)
            removed.append(Path(found))
        except OSError:
            pass  # read-only or gone already: the write below reports what matters
    return removed


def mkdirs(folder: str | os.PathLike[str]) -> list[Path]:
    """`folder` and its missing parents, made; returns the ones made (outermost first) for `rmdirs`."""
    folder = Path(folder)
    missing = []
    p = folder
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing[::-1]


def rmdirs(made: Sequence[Path]) -> None:
    """Remove the folders `mkdirs` made, innermost first, where still empty: a failed write leaves no shell."""
    for p in reversed(made):
        try:
            p.rmdir()
        except OSError:
            break


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary sibling, then rename: a reader never sees half a file.

    On any failure (a full disk, a read-only folder, an interrupt) the temporary file and the
    folders made for it are removed, and the error goes on; a killed writer's leftover is
    removed by the next write of the same path (`remove_stale_tmp`)."""
    path = Path(path)
    made = mkdirs(path.parent)
    tmp = None
    try:
        remove_stale_tmp(path)
        fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(path), suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; splits, results and caches are shared
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        rmdirs(made)
        raise


def atomic_write_many(files: Sequence[tuple[str | os.PathLike[str], bytes]]) -> None:
    """Several files as a unit, as far as a file system allows: every one is written to its temporary
    sibling first, and only when all are on disk are they renamed into place (renames do not fail
    for want of space).  On a failure before the renames nothing is changed; the paths are then
    either all new or, if a rename itself fails, the ones already renamed are removed again."""
    staged: list[tuple[Path, str]] = []
    made: list[Path] = []
    done: list[Path] = []
    try:
        for path, data in files:
            path = Path(path)
            made += mkdirs(path.parent)
            remove_stale_tmp(path)
            fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(path), suffix=".tmp", dir=path.parent)
            staged.append((path, tmp))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
        for path, tmp in staged:
            os.replace(tmp, path)
            done.append(path)
    except BaseException:
        for path, tmp in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        for path in done:
            path.unlink(missing_ok=True)
        rmdirs(made)
        raise


def atomic_save_npy(path: str | os.PathLike[str], array) -> None:
    """One array as a plain .npy (never a pickle), written atomically (caches, generated videos)."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir(kind: str = "", override_env: str | None = None) -> Path:
    """Where phybench caches `kind` (weights, verified splits, nearest-neighbour indexes).

    ``$<override_env>`` when given and set (e.g. PHYBENCH_WEIGHTS_DIR); else
    ``$PHYBENCH_CACHE_DIR/<kind>``; else ``$XDG_CACHE_HOME/phybench/<kind>``; else
    ``~/.cache/phybench/<kind>``.
    """
    if override_env and os.environ.get(override_env):
        return Path(os.environ[override_env]).expanduser()
    if os.environ.get(CACHE_ENV):
        base = Path(os.environ[CACHE_ENV]).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "phybench"
    return base / kind if kind else base


@contextlib.contextmanager
def atomic_folder(out_dir: str | os.PathLike[str], replace: bool = False, mode: int = 0o755) -> Iterator[Path]:
    """The one atomic folder write: yields a fresh temporary folder beside `out_dir` to fill; when the
    block ends it becomes `out_dir` in one rename, and on any failure (an interrupt included) it is
    removed with the parent folders made for it, so a reader never sees a partial folder.

    replace=False: `out_dir` must be absent or empty (the caller checks, and says why in its own
    words).  replace=True: an existing `out_dir` is swapped out and deleted only once the new one is
    in place (a failure leaves the previous folder); a process standing in it stands in the new one.
    mode: the finished folder's permissions (`tempfile.mkdtemp` makes it private).
    """
    out = Path(out_dir)
    if replace:
        out = out.resolve()  # "." has no name and is its own parent: work on the absolute path
    made = mkdirs(out.parent)
    try:
        remove_stale_tmp(out)  # a killed earlier write's .<name>.<pid>-<host>.*.tmp/
        tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(out), suffix=".tmp", dir=out.parent))
    except BaseException:
        rmdirs(made)
        raise
    try:
        yield tmp
        os.chmod(tmp, mode)
        if replace:
            _swap_in(tmp, out)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        rmdirs(made)
        raise


def _swap_in(tmp: Path, out: Path) -> None:
    inside = Path.cwd().is_relative_to(out)
    old = None
    try:
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.rename(out, old / "previous")
        try:
            os.rename(tmp, out)
        except OSError:
            if old is not None:
                os.rename(old / "previous", out)
            raise
        if inside:  # the process stood in the old folder: stand in the new one
            os.chdir(out)
    finally:
        if old is not None and out.exists():  # never delete the old folder while nothing replaced it
            shutil.rmtree(old, ignore_errors=True)


def replace_folder(out_dir: str | os.PathLike[str], files: Mapping[str, bytes]) -> None:
    """Write `files` ({relative name: bytes}) as the new `out_dir` (`atomic_folder`, replace=True):
    a failure leaves the previous folder (or nothing), never a partial one.  Used by the leaderboard
    site and the viewer; callers check the names they pass."""
    with atomic_folder(out_dir, replace=True) as tmp:
        for name, data in sorted(files.items()):
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)

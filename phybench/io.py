"""Files: the one atomic writer, the one file hasher and the one cache-folder rule.

Every file phybench writes for someone else to read (split shards and manifests,
results, the leaderboard site, weights, caches) goes through `atomic_write_bytes`, so a
reader never sees half a file and a killed run leaves nothing half-written.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

CACHE_ENV = "PHYBENCH_CACHE_DIR"


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary sibling, then rename: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; splits, results and caches are shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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

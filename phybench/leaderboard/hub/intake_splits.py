"""The splits a sync scores against, by split hash (split from `intake`, which stays under 600 lines)."""
from __future__ import annotations

from pathlib import Path

from ... import jsonsafe
from ...data.manifest_bounds import MAX_MANIFEST_BYTES


def split_index(splits_dir: Path) -> dict[str, Path]:
    """split hash -> split folder, for every manifest.json at most two levels under `splits_dir`
    (the folders `leaderboard build --splits` reads)."""
    found: dict[str, Path] = {}
    files = sorted(set(splits_dir.glob("manifest.json")) | set(splits_dir.glob("*/manifest.json"))
                   | set(splits_dir.glob("*/*/manifest.json")))
    for file in files:
        try:
            found.setdefault(str(jsonsafe.read(file, max_bytes=MAX_MANIFEST_BYTES)["split_hash"]), file.parent)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found

"""A split manifest held to its own declared sizes before any shard is hashed or decoded.

A manifest from the Hub is untrusted, and verifying a split decodes every shard it lists:
a manifest that lists one shard 5,000 times, or claims rows its files cannot hold, would
keep `score --from-hub` hashing and decoding for minutes before the split hash says it is
wrong.  `check_sizes` is cheap (no shard is opened) and runs first: the counts agree with
each other (rows, shard size, number of shards, each shard's [start, stop) range tiling
0..num_samples exactly once), every shard file is named once and has its own bytes, the
numbers are under sane caps, and the files on disk are no larger than the rows they hold
can be (every frame stored as uncompressed RGB, plus room for the states).  A manifest that
fails is refused with one code, ``manifest_sizes`` (docs/submission.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

MANIFEST_SIZES = "manifest_sizes"
MAX_MANIFEST_BYTES = 32 << 20  # a manifest of 100,000 shards is about 30 MB
MAX_SAMPLES = 10_000_000  # rows of one split (the largest training sets are a few million)
MAX_SHARDS = 100_000
MAX_RESOLUTION = 4096
MAX_FRAMES = 10_000
ROW_SLACK = 4 << 20  # bytes per row beyond its raw frames: states, parameters, PNG framing
FILE_SLACK = 16 << 20  # bytes per shard file: Parquet footer and metadata


def _int(manifest: dict[str, Any], key: str, low: int, high: int) -> int:
    value = manifest.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{key} is {str(value)[:40]!r}, not a whole number in {low}..{high:,}")
    return value


def max_shard_bytes(manifest: dict[str, Any], rows: int) -> int:
    """The most bytes a shard of `rows` rows can take: every frame raw RGB (PNG never beats
    that by more than its framing), plus slack for the states and the file's metadata."""
    res, frames = int(manifest["resolution"]), int(manifest.get("frames") or 1)
    return rows * (frames * (res * res * 3 + res + 1024) + ROW_SLACK) + FILE_SLACK


def size_problem(manifest: Any, folder: Path | None = None) -> str | None:
    """Why a manifest's declared sizes cannot be true (the first reason found), or None.

    `folder`: where its shard files are; their byte sizes (lstat, never opened) are held
    to what the declared rows can take."""
    if not isinstance(manifest, dict):
        return "the manifest is not an object"
    try:
        n = _int(manifest, "num_samples", 1, MAX_SAMPLES)
        size = _int(manifest, "shard_size", 1, MAX_SAMPLES)
        _int(manifest, "resolution", 1, MAX_RESOLUTION)
        if "frames" in manifest:
            _int(manifest, "frames", 1, MAX_FRAMES)
    except ValueError as exc:
        return str(exc)
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not shards:
        return "it lists no shards"
    want = -(-n // size)
    if len(shards) != want:
        return (f"it lists {min(len(shards), 10**9):,} shard(s); {n:,} samples in shards of {size:,} make "
                f"{want:,}")
    if want > MAX_SHARDS:
        return f"{want:,} shards; at most {MAX_SHARDS:,}"
    return _shard_problem(manifest, shards, n, size, folder)


def _shard_problem(manifest: dict[str, Any], shards: list[Any], n: int, size: int, folder: Path | None) -> str | None:
    """The shards, in order, tile 0..n once, each names its own file and bytes, and no file is
    larger than its rows can be."""
    names: set[str] = set()
    hashes: set[str] = set()
    expected_start = 0
    for i, entry in enumerate(shards):
        if not isinstance(entry, dict):
            return f"shard {i} is not an object"
        name, digest = entry.get("file"), entry.get("sha256")
        start, stop = entry.get("start"), entry.get("stop")
        if not (isinstance(start, int) and isinstance(stop, int)) or isinstance(start, bool) or isinstance(stop, bool):
            return f"shard {i} ({str(name)[:80]!r}) has no whole-number start and stop"
        if name in names:
            return f"shard file {str(name)[:80]!r} is listed more than once"
        if digest in hashes:
            return f"shard {i} ({str(name)[:80]!r}) has the sha256 of another shard"
        names.add(str(name))
        hashes.add(str(digest))
        if start != expected_start or not start < stop <= min(n, start + size):
            return (f"shard {i} ({str(name)[:80]!r}) holds rows {start}..{stop}; the shards must cover rows "
                    f"0..{n:,} in order, each at most {size:,} rows (expected a shard starting at {expected_start:,})")
        expected_start = stop
        if folder is not None:
            path = folder / str(name)
            try:
                actual = path.stat().st_size  # through the HF cache's link to its blob; never opened
            except OSError:
                continue  # missing: verification reports it
            cap = max_shard_bytes(manifest, stop - start)
            if actual > cap:
                return (f"shard file {str(name)[:80]!r} is {actual:,} bytes; {stop - start:,} rows at "
                        f"{manifest['resolution']} px can take at most {cap:,}")
    if expected_start != n:
        return f"the shards cover rows 0..{expected_start:,}, the manifest declares {n:,} samples"
    return None

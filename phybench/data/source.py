"""Where a packed video came from: a lossless array or image, or a lossy mp4 and its codec.

`phybench pack` writes lossless frames whatever it reads, so without a record an mp4's
coding loss (which moves every score: a perfect video after H.264 already has a velocity
error tens of times the lossless floor) would be invisible downstream.  Pack records each
video's source in submission.json (`sources`, sample id -> source) and `phybench score`
carries the counts into the results (`model.sources`).

Sources: ``npy``, ``npz``, ``png`` (lossless) or ``mp4:<codec>``, the codec the sample
description of the mp4's first track names (``avc1`` H.264, ``hvc1``/``hev1`` H.265,
``av01``, ``vp09``, ``mp4v`` ...; ``unknown`` when the boxes cannot be read).  The mp4 is
walked box by box with bounds checks (no decoder, nothing executed): a crafted file can
only give ``unknown``.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Mapping

LOSSLESS = ("npy", "npz", "png")
_CONTAINERS = (b"moov", b"trak", b"mdia", b"minf", b"stbl")
_MAX_BOXES = 10_000


def mp4_codec(data: bytes) -> str:
    """The fourcc of the first sample description of the first track ('unknown' if not found)."""
    path = list(_CONTAINERS) + [b"stsd"]

    def walk(start: int, end: int, depth: int, budget: list[int]) -> str | None:
        pos = start
        while pos + 8 <= end and budget[0] > 0:
            budget[0] -= 1
            size, kind = struct.unpack(">I4s", data[pos:pos + 8])
            header = 8
            if size == 1 and pos + 16 <= end:
                size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
            elif size == 0:
                size = end - pos
            if size < header or pos + size > end:
                return None
            if kind == path[depth]:
                if kind == b"stsd":  # version/flags 4, entry count 4, then entry: size 4, format 4
                    body = pos + header
                    if body + 16 <= pos + size:
                        fourcc = data[body + 12:body + 16]
                        return fourcc.decode("ascii") if fourcc.isalnum() else None
                    return None
                found = walk(pos + header, pos + size, depth + 1, budget)
                if found is not None:
                    return found
            pos += size
        return None

    return walk(0, len(data), 0, [_MAX_BOXES]) or "unknown"


def video_source(path: str | Path) -> str:
    """The source of one generated video as `pack` finds it: a file or a folder of PNG frames."""
    path = Path(path)
    if path.is_dir():
        return "png"
    suffix = path.suffix.lower().lstrip(".")
    if suffix == "mp4":
        return f"mp4:{mp4_codec(path.read_bytes())}"
    return suffix


def is_lossy(source: str) -> bool:
    return source not in LOSSLESS


def source_counts(sources: Mapping[str, str]) -> dict[str, int]:
    """{source: number of videos}, sorted by source (what a results file carries)."""
    counts: dict[str, int] = {}
    for s in sources.values():
        if isinstance(s, str):
            counts[s] = counts.get(s, 0) + 1
    return dict(sorted(counts.items()))

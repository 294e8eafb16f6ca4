"""A summary's learned-law block cleaned to what a board cell shows.

Apart from `law` (the plots and tables) because `load` slims each results file to its cells as it
reads it, and `law` imports `load`: here it imports neither.
"""
from __future__ import annotations

import math
from typing import Any, TypeGuard


def is_number(x: Any) -> TypeGuard[float]:
    """A finite int or float, not a bool (the board's test for a number from a results file)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


MAX_PARAMS = 16  # parameters kept per law block (a family has at most 8 today)


def _stats(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not is_number(entry.get("median")):
        return None
    iqr = entry.get("iqr")
    iqr = iqr if isinstance(iqr, list) and len(iqr) == 2 and all(is_number(x) for x in iqr) else None
    count = entry.get("count")
    return {"median": float(entry["median"]), "iqr": iqr,
            "count": count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None}


def law_cell(block: Any) -> dict[str, Any] | None:
    """A summary's `law` block, cleaned: {fit, videos, params: {name: {model, truth}}}; None if unusable."""
    if not isinstance(block, dict) or not isinstance(block.get("fit"), str) or not isinstance(block.get("params"), dict):
        return None
    params: dict[str, Any] = {}
    for name, entry in list(block["params"].items())[:MAX_PARAMS]:
        if isinstance(name, str) and isinstance(entry, dict):
            kept = {who: s for who in ("model", "truth") if (s := _stats(entry.get(who))) is not None}
            if kept:
                params[name] = kept
    videos = block.get("videos")
    return {"fit": block["fit"][:40], "videos": videos if isinstance(videos, int) and not isinstance(videos, bool) else None,
            "params": params} if params else None

"""`verify`: recompute a split folder's hashes and say what differs (and, on request, re-simulate samples).

Every row with states also goes through the family checker's row checks, as `generate`
runs them (`phybench.data.split.shard_findings`: every row's frames in view, the closed form
on 1 row in 16), so a split whose hashes are consistent but whose rows lie about themselves
is reported (code ``family_check``).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
import numpy as np
from ..io import file_sha256
from ..problems import Problem, error
from .frames import decode_video
from .arrow import table_rows
from .split import generate_sample, plan_from_manifest, read_manifest, row_digest, shard_findings, split_hash
from .documents import Manifest, ShardEntry, SplitRow


# ------------------------------------------------------------------ verify
@dataclass
class VerifyReport:
    folder: Path
    manifest: Manifest
    problems: list[Problem]  # codes: docs/submission.md, "Problem codes"
    recomputed_hash: str | None
    checked_samples: int
    regenerated: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems
def _decode_row_video(row: SplitRow) -> np.ndarray | None:
    return decode_video(row["video"]) if "video" in row else None


def _row_digests(plan: Any, table: Any, entry: ShardEntry, regen_at: set[int], problems: list[Problem],
                 bar: Any) -> tuple[list[str], list[SplitRow], int]:
    """Each row's digest in one shard (its video decoded), re-simulating those in `regen_at`.

    Returns (digests, rows, how many were regenerated); problems found are appended to `problems`."""
    spec = plan.spec
    shard_digests: list[str] = []
    shard_rows: list[SplitRow] = []
    regenerated = 0
    for row in table_rows(table):
        try:
            video = _decode_row_video(row)
        except Exception as exc:  # a damaged PNG inside a readable Parquet file
            problems.append(error("video_undecodable", f"{entry['file']}: {row['sample_id']}: video does not decode ({exc})",
                                  row["sample_id"], entry["file"]))
            video = np.zeros((0,), np.uint8)  # digest of nothing: the split hash will differ
        shard_rows.append(row)
        d = row_digest(spec, row, video).hex()
        shard_digests.append(d)
        if row["index"] in regen_at:
            fresh_row, fresh_video = generate_sample(plan, int(row["index"]))
            if row_digest(spec, fresh_row, fresh_video).hex() != d:
                problems.append(error("regenerated_differs", f"{row['sample_id']}: stored sample differs from a "
                                      "fresh simulation and render", row["sample_id"], entry["file"]))
            regenerated += 1
        bar.update(1)
    return shard_digests, shard_rows, regenerated


def verify(folder: str | os.PathLike[str], regenerate: int = 0, progress: bool = False) -> VerifyReport:
    """Recompute every hash of a split and say what differs.

    regenerate: also re-simulate and re-render this many samples (evenly spaced) and
    compare them with what is stored: catches a consistent but wrong split.
    """
    import pyarrow.parquet as pq
    from tqdm import tqdm

    folder = Path(folder)
    manifest = read_manifest(folder)
    problems: list[Problem] = []
    try:
        plan = plan_from_manifest(manifest)
    except KeyError as exc:
        return VerifyReport(folder, manifest, [error("unknown_task", f"manifest names an unknown task: {exc}")], None, 0)
    spec = plan.spec
    if manifest.get("imported"):
        regenerate = 0  # imported data (phybench.data.importer) were not simulated by us: nothing to regenerate
    if manifest.get("spec_hash") != spec.spec_hash():
        problems.append(error(
            "spec_mismatch",
            f"split was made from {spec.name} spec {str(manifest.get('spec_hash'))[:12]}, but this "
            f"phybench registers spec {spec.spec_hash()[:12]} (version {spec.version})",
        ))
    digests: list[str] = []
    checked = 0
    expected_shards = plan.num_shards
    shards = manifest.get("shards", [])
    if len(shards) != expected_shards:
        problems.append(error("shard_count", f"manifest lists {len(shards)} shards, the layout needs {expected_shards}"))
    bar = tqdm(total=plan.num_samples, desc="verify", disable=not progress, unit="sample")
    regen_at = set(np.linspace(0, plan.num_samples - 1, regenerate).round().astype(int).tolist()) if regenerate else set()
    regenerated = 0
    for entry in shards:
        path = folder / entry["file"]
        if not path.is_file():
            problems.append(error("shard_missing", f"{entry['file']}: missing", entry=entry["file"]))
            digests.extend(["00" * 32] * (entry["stop"] - entry["start"]))
            continue
        if file_sha256(path) != entry["sha256"]:
            problems.append(error("file_changed", f"{entry['file']}: file sha256 differs from the manifest (file changed)",
                                  entry=entry["file"]))
        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for corrupt files
            problems.append(error("shard_unreadable", f"{entry['file']}: unreadable ({exc})", entry=entry["file"]))
            digests.extend(["00" * 32] * (entry["stop"] - entry["start"]))
            continue
        if table.num_rows != entry["stop"] - entry["start"]:
            problems.append(error("row_count", f"{entry['file']}: {table.num_rows} rows, manifest says "
                                  f"{entry['stop'] - entry['start']}", entry=entry["file"]))
        shard_digests, shard_rows, n_regen = _row_digests(plan, table, entry, regen_at, problems, bar)
        regenerated += n_regen
        checked += len(shard_rows)
        for finding in shard_findings(spec, shard_rows, closed_form=not manifest.get("imported")):
            problems.append(error("family_check", f"{entry['file']}: {finding}", finding.sample_id, entry["file"]))
        content = hashlib.sha256(b"".join(bytes.fromhex(d) for d in shard_digests)).hexdigest()
        if content != entry.get("content_sha256"):
            problems.append(error("content_changed", f"{entry['file']}: content differs from the manifest's content hash",
                                  entry=entry["file"]))
        digests.extend(shard_digests)
    bar.close()
    recomputed = split_hash(plan.identity(), digests)
    if recomputed != manifest.get("split_hash"):
        problems.append(error("split_hash", f"split hash: manifest {manifest.get('split_hash')}, recomputed {recomputed}"))
    return VerifyReport(folder, manifest, problems, recomputed, checked, regenerated)

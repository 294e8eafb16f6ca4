"""Import the reference authors' data (phyworld HDF5) as a phybench split.

The phyworld generators (github.com/phyworld/phyworld, Kang et al. 2024) write one HDF5
file per 1000-scene chunk with three datasets, and `merge_files` turns each name into a
group of per-chunk datasets ``00000``, ``00001``, ...::

    video_streams     (N,) vlen uint8    one complete H.264 MP4 file per row
    position_streams  (N, T, 2)          ball centre, world units   (collision: (N, T, 2, 2))
    init_streams      (N, 2)  [r, v]     radius, speed along +x     (collision: (N, 4) [r1, r2, v1, v2])

Their world is ours: the square [0, 10]^2, x right, y up, origin bottom-left, so positions
are stored as they are (their values are float32 numbers held in float64, so our float32
column keeps them exactly).  Two things differ and are recorded in the manifest:

- time: their frame k is the state at t = 0.01 + 0.1 k s, ours at 0.1 k s.  Frames are still
  0.1 s apart, so velocities are unaffected; ``time_offset: 0.01`` records the shift, and
  ``contact_time`` is measured from frame 0, as in our splits.
- pixels: their renderer puts pixel column j at x = 10 j / (W - 1) (pixel centres on a
  grid), ours tiles the square.  ``pixel_mapping: "grid"`` tells the scorer which mapping
  to parse the videos with (`phybench.scoring.physics.parse.PHYWORLD`).

Videos are decoded once (H.264 decoding is bit-exact) and stored losslessly as PNG
frames: they are already lossy at the source, and a second lossy pass would move scores.

What they do not store, we derive, and say so in ``imported.derived``: ``velocities``
(central differences of the stored positions, one-sided at the ends), ``frames_in_view``
(frames with every ball wholly inside the square), ``contact_time`` (collision: first
contact of the two discs at their initial speeds, from frame 0's gap) and ``level``
("id" when every DoF is inside the authors' ID range, else the OOD level named by which
DoFs are outside it; the HDF5 keeps no level names).

An imported split cannot be regenerated; its manifest has ``imported: {source, sha256,
...}`` (sha256 of the HDF5 file) and its split hash covers the stored rows exactly as for
a generated split, so `phybench verify` checks it the same way.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
import json
import os
from pathlib import Path
from shlex import quote
from typing import Any, Iterator

import numpy as np

from .._version import __version__
from .frames import encode_video
from .documents import SplitRow, split_row
from ..world.laws import fully_in_view
from ..tasks import family_of
from ..tasks.sampling import make_sample
from ..tasks.spec import TaskSpec
from ..io import atomic_folder, atomic_write_bytes, file_sha256
from .arrow import rows_to_table
from .split import (
    DATA_DIR,
    EVAL_SHARD_SIZE,
    MANIFEST,
    SplitError,
    SplitPlan,
    card_text,
    hf_split_name,
    row_digest,
    split_hash,
)
from .documents import Manifest, ShardEntry

SOURCE_FORMAT = "phyworld-hdf5"
DEFAULT_SPLIT = "phyworld-eval"
TIME_OFFSET = 0.01  # s: their frame k is at t = 0.01 + 0.1 k (recorded after 10 k + 1 Box2D steps)
PIXEL_MAPPING = "grid"  # their column j is at x = L j / (W - 1); see phybench.scoring.physics.parse.PixelMapping

_SHORT = {"radius": "r", "velocity": "v", "radius_1": "r1", "radius_2": "r2", "velocity_1": "v1", "velocity_2": "v2"}
_RANGE_SLACK = 1e-9  # their grid values come from linspace: an end point may be off by an ulp


class PhyworldImportError(SplitError):
    """The HDF5 file is not phyworld data for the asked task, or the output folder is in the way."""

    code = "import_refused"


# ------------------------------------------------------------------ reading
def _open(path: str | os.PathLike[str]):
    import h5py

    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise PhyworldImportError(f"{path} is not a readable HDF5 file: {exc}") from None


def _chunks(f: Any) -> list[tuple[str | None, Any, Any, Any]]:
    """[(chunk id or None, videos, positions, inits)] for an un-merged or a merged file."""
    names = ("video_streams", "position_streams", "init_streams")
    missing = [n for n in names if n not in f]
    if missing:
        raise PhyworldImportError(
            f"{f.filename} is not a phyworld HDF5 file: no {', '.join(missing)} "
            f"(found {', '.join(sorted(f.keys())) or 'nothing'})"
        )
    import h5py

    _refuse_links_and_external(f)
    kinds = {isinstance(f[n], h5py.Group) for n in names}
    if len(kinds) != 1:
        raise PhyworldImportError(f"{f.filename}: mixes merged groups and plain datasets")
    if kinds == {False}:  # one chunk, as the generators write it
        return [(None, f["video_streams"], f["position_streams"], f["init_streams"])]
    ids = sorted(f["video_streams"].keys())
    for n in names[1:]:
        if sorted(f[n].keys()) != ids:
            raise PhyworldImportError(f"{f.filename}: the groups {names} hold different chunk ids")
    return [(c, f["video_streams"][c], f["position_streams"][c], f["init_streams"][c]) for c in ids]


MAX_ROWS = 100_000  # rows per chunk (the authors write 1,000): more is not phyworld data, and would not fit


def _refuse_links_and_external(f: Any) -> None:
    """The file is untrusted: its datasets must hold their own bytes.  HDF5 can point a dataset
    at another file on this machine (external storage, virtual datasets) or a name at another
    file or path (external and soft links); any of these would import bytes the file does not
    contain, so each is refused."""
    import h5py

    def walk(group: Any, prefix: str) -> None:
        for name in group:
            link = group.get(name, getlink=True)
            where = f"{prefix}{name}"
            if isinstance(link, (h5py.ExternalLink, h5py.SoftLink)):
                raise PhyworldImportError(f"{f.filename}: {where} is a link ({type(link).__name__}) to "
                                          f"{getattr(link, 'filename', '') or link.path}; a phyworld file holds its own data")
            item = group[name]
            if isinstance(item, h5py.Group):
                walk(item, where + "/")
            elif isinstance(item, h5py.Dataset) and (item.external or item.is_virtual):
                what = "external storage" if item.external else "a virtual dataset"
                raise PhyworldImportError(f"{f.filename}: {where} uses {what} (bytes in another file); "
                                          "a phyworld file holds its own data")

    walk(f, "")


def id_ranges(spec: TaskSpec) -> dict[str, tuple[float, float]]:
    """The reference authors' ID ranges for a task (its family says), which decide a row's level.

    They differ from the paper's (our tasks' ranges): r max 1.4 for one ball, r in
    [0.5, 1.5] for collision.
    """
    ranges = family_of(spec).phyworld_id_ranges
    if ranges is None:
        raise PhyworldImportError(f"task {spec.name!r} has no phyworld counterpart to import")
    return ranges


@lru_cache(maxsize=8)
def _bodies(spec: TaskSpec) -> np.ndarray:
    """(B, 3) uint8 colours of the task's balls, in the order of its DoFs (`radius` or `radius_k`)."""
    first = spec.splits[0].name
    return make_sample(spec, first, 0).initial.colours


def _check_shapes(spec: TaskSpec, chunk: str | None, videos: Any, positions: Any, inits: Any) -> None:
    where = f"chunk {chunk}" if chunk is not None else "the file"
    balls, dofs = len(_bodies(spec)), len(spec.dofs)
    n = videos.shape[0]
    if n > MAX_ROWS:
        raise PhyworldImportError(f"{where}: video_streams declares {n:,} rows; a phyworld chunk has at most {MAX_ROWS:,}")
    want_pos = (n, spec.frames, 2) if balls == 1 else (n, spec.frames, balls, 2)
    if tuple(positions.shape) != want_pos:
        hint = ""
        if positions.ndim != len(want_pos):
            hint = f" (is it {'a collision' if positions.ndim == 4 else 'a one-ball'} file?)"
        raise PhyworldImportError(
            f"{where}: position_streams has shape {tuple(positions.shape)}, task {spec.name!r} needs {want_pos}{hint}"
        )
    if tuple(inits.shape) != (n, dofs):
        raise PhyworldImportError(
            f"{where}: init_streams has shape {tuple(inits.shape)}, task {spec.name!r} needs {(n, dofs)}"
        )


def decode_phyworld_mp4(data: bytes) -> np.ndarray:
    """uint8 (T, H, W, 3) from the bytes of one MP4 file (phybench's one decoder, `phybench.data.video`)."""
    from .video import LimitExceeded
    from .video import decode_mp4 as _decode

    try:
        video = _decode(bytes(data))
    except (ValueError, LimitExceeded) as exc:
        raise PhyworldImportError(f"an MP4 stream does not decode: {exc or 'too large'}") from None
    if video.ndim != 4 or video.shape[-1] != 3 or video.dtype != np.uint8:
        raise PhyworldImportError(f"decoded video has shape {video.shape} {video.dtype}, expected (T, H, W, 3) uint8")
    return video


# ------------------------------------------------------------------ rows
def classify_level(spec: TaskSpec, params: dict[str, float]) -> str:
    """"id" inside the authors' ID ranges, else our OOD level with those DoFs outside ("r+v", "v1+v2", ...)."""
    ranges = id_ranges(spec)
    outside = tuple(
        d.name for d in spec.dofs
        if not ranges[d.name][0] - _RANGE_SLACK <= params[d.name] <= ranges[d.name][1] + _RANGE_SLACK
    )
    if not outside:
        return "id"
    for level in spec.ood_levels:
        if set(level.ood_dofs) == set(outside):
            return level.name
    return "+".join(_SHORT.get(n, n) for n in outside)  # a combination our task has no level for


def contact_time_at_frame0(positions: np.ndarray, radii: np.ndarray, v1: float, v2: float) -> float:
    """s after frame 0 when the discs first touch, moving at +v1 and -v2; NaN if they never close."""
    closing = v1 + v2  # world units / s
    if not closing > 0:
        return float("nan")
    gap = (positions[0, 1, 0] - positions[0, 0, 0]) - (radii[0] + radii[1])  # world units, at frame 0
    return float(gap / closing)


def _velocities(positions: np.ndarray, frame_interval: float) -> np.ndarray:
    """(T, B, 2): central differences of positions, one-sided at the ends (world units / s)."""
    return np.gradient(positions, frame_interval, axis=0)


def build_row(spec: TaskSpec, split: str, index: int, positions: np.ndarray, init: np.ndarray) -> SplitRow:
    """One split row (numpy values) from a phyworld row's positions and init values."""
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim == 2:
        pos = pos[:, None, :]  # (T, 1, 2)
    init = np.asarray(init, dtype=np.float64)
    if not (np.isfinite(pos).all() and np.isfinite(init).all()):
        raise PhyworldImportError(f"row {index}: positions or init values are not finite (NaN or inf)")
    params = {d.name: float(v) for d, v in zip(spec.dofs, init)}
    bad = [k for k, v in params.items() if k.startswith("radius") and not v > 0]
    if bad:
        raise PhyworldImportError(f"row {index}: {', '.join(f'{k} = {params[k]:g}' for k in bad)}; a radius must be positive")
    colours = _bodies(spec)
    suffixes = [""] if len(colours) == 1 else [f"_{b + 1}" for b in range(len(colours))]
    radii = np.array([params[f"radius{s}"] for s in suffixes])
    tc = float("nan")
    if len(colours) == 2:  # two balls approaching on one line: their first contact
        tc = contact_time_at_frame0(pos, radii, params["velocity_1"], params["velocity_2"])
    view = fully_in_view(pos, radii, spec.world_size).all(axis=1)  # (T,) every ball wholly inside
    return split_row({
        "sample_id": f"{spec.name}/{split}/{index:07d}",
        "index": index,
        "level": classify_level(spec, params),
        **params,
        "contact_time": tc,
        "frames_in_view": int(view.sum()),
        "positions": pos.astype(np.float32),
        "velocities": _velocities(pos, spec.frame_interval).astype(np.float32),
        "radii": radii.astype(np.float32),
        "colours": colours,
    })


def iter_phyworld(path: str | os.PathLike[str], spec: TaskSpec, split: str = DEFAULT_SPLIT,
                  limit: int | None = None) -> Iterator[tuple[SplitRow, np.ndarray]]:
    """(row, decoded video) for each row of a phyworld file, chunks in id order."""
    index = 0
    with _open(path) as f:
        for chunk, videos, positions, inits in _chunks(f):
            _check_shapes(spec, chunk, videos, positions, inits)
            pos_all, init_all = positions[()], inits[()]
            for i in range(videos.shape[0]):
                if limit is not None and index >= limit:
                    return
                video = decode_phyworld_mp4(videos[i])
                if video.shape[1] != video.shape[2] or video.shape[1] not in spec.resolutions:
                    raise PhyworldImportError(
                        f"row {index}: the video is {video.shape[2]}x{video.shape[1]} px; task {spec.name!r} has "
                        f"{' or '.join(f'{r}x{r}' for r in spec.resolutions)}")
                if video.shape[0] != spec.frames:
                    raise PhyworldImportError(
                        f"row {index}: the video has {video.shape[0]} frames, task {spec.name!r} has {spec.frames}"
                    )
                yield build_row(spec, split, index, pos_all[i], init_all[i]), video
                index += 1


def count_rows(path: str | os.PathLike[str]) -> int:
    with _open(path) as f:
        return sum(int(v.shape[0]) for _, v, _, _ in _chunks(f))


# ------------------------------------------------------------------ write
def _write_shard(spec: TaskSpec, folder: Path, name: str, rows: list[SplitRow],
                 pngs: list[list[bytes]]) -> str:
    import pyarrow.parquet as pq

    path = folder / DATA_DIR / f"{name}.parquet"
    pq.write_table(rows_to_table(spec, rows, pngs), path, compression="zstd", compression_level=9,
                   row_group_size=max(1, len(rows)))
    return file_sha256(path)


def _write_rows(spec: TaskSpec, task: str, tmp: Path, src: Path, split: str, n: int, shard_size: int,
                progress: bool) -> tuple[int, list[ShardEntry], list[str], dict[str, int]]:
    """Write the first `n` rows of `src` into `tmp`'s shards; returns (resolution, shards, row digests, levels).

    Every frame must be square and of one size across the file."""
    from tqdm import tqdm

    resolution: int | None = None
    plan_shards = max(1, -(-n // shard_size))
    shards: list[ShardEntry] = []
    digests: list[str] = []
    levels: dict[str, int] = {}
    rows: list[SplitRow] = []
    pngs: list[list[bytes]] = []
    shard_digests: list[bytes] = []
    bar = tqdm(total=n, desc=f"import {task}", unit="video", disable=not progress)

    def flush() -> None:
        k = len(shards)
        name = f"shard-{k:05d}-of-{plan_shards:05d}"
        sha = _write_shard(spec, tmp, name, rows, pngs)
        shards.append({
            "file": f"{DATA_DIR}/{name}.parquet",
            "start": k * shard_size,
            "stop": k * shard_size + len(rows),
            "sha256": sha,
            "content_sha256": hashlib.sha256(b"".join(shard_digests)).hexdigest(),
        })
        rows.clear()
        pngs.clear()
        shard_digests.clear()

    for row, video in iter_phyworld(src, spec, split, limit=n):
        h, w = video.shape[1:3]
        if h != w:
            raise PhyworldImportError(f"row {row['index']}: frames are {w}x{h}; phybench splits are square")
        if resolution is None:
            resolution = w
        elif w != resolution:
            raise PhyworldImportError(f"row {row['index']}: frames are {w} px, earlier rows {resolution} px")
        digest = row_digest(spec, row, video)
        digests.append(digest.hex())
        shard_digests.append(digest)
        levels[row["level"]] = levels.get(row["level"], 0) + 1
        rows.append(row)
        pngs.append(encode_video(video))
        if len(rows) == shard_size:
            flush()
        bar.update(1)
    if rows:
        flush()
    bar.close()
    assert resolution is not None
    return resolution, shards, digests, levels


def _imported_record(spec: TaskSpec, src: Path, source_sha256: str, n: int) -> dict[str, Any]:
    """The manifest's `imported` entry: where the rows came from and how each derived field was made."""
    with _open(src) as f:
        chunk_ids = [c for c, *_ in _chunks(f)]
    layout = "chunk" if chunk_ids == [None] else "merged"
    return {
        "source": src.name,
        "format": SOURCE_FORMAT,
        "sha256": source_sha256,
        "size": src.stat().st_size,
        "layout": layout,
        "chunks": [c for c in chunk_ids if c is not None],
        "rows": n,
        "reference": "github.com/phyworld/phyworld (Kang et al. 2024, arXiv:2411.02385)",
        "video": "H.264 MP4 decoded with imageio-ffmpeg, stored as lossless PNG frames",
        "id_ranges": {k: list(v) for k, v in id_ranges(spec).items()},
        "derived": {
            "velocities": "central differences of positions, one-sided at the ends",
            "frames_in_view": "frames with every ball wholly inside the square",
            "contact_time": "collision: frame-0 gap / (v1 + v2), s after frame 0",
            "level": "id inside id_ranges, else the OOD level of the DoFs outside them",
        },
    }


def _check_import(spec: TaskSpec, src: Path, split: str, shard_size: int, out: Path) -> None:
    """Refuse a missing source, a training split name, a bad shard size or a used `out` before any work."""
    if not src.is_file():
        raise PhyworldImportError(f"{src}: no such file")
    if spec.is_training(split):
        raise PhyworldImportError(
            f"split name {split!r} marks a states-only training split; imported splits hold videos"
        )
    if shard_size < 1:
        raise PhyworldImportError(f"shard size must be positive, got {shard_size}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PhyworldImportError(f"{out} exists and is not empty; choose a new folder")


def import_phyworld(
    hdf5_file: str | os.PathLike[str],
    task: str,
    out_dir: str | os.PathLike[str],
    *,
    split: str = DEFAULT_SPLIT,
    limit: int | None = None,
    shard_size: int = EVAL_SHARD_SIZE,
    progress: bool = False,
) -> Path:
    """Convert a phyworld HDF5 file (one chunk or merged) into a phybench split folder.

    The folder is built next to `out_dir` and renamed into place once complete, so it is
    either absent or whole.  Refuses an `out_dir` that exists and is not empty.
    Returns `out_dir`.
    """
    from ..tasks import get_task

    spec = get_task(task)
    src = Path(hdf5_file)
    out = Path(out_dir)
    _check_import(spec, src, split, shard_size, out)
    total = count_rows(src)
    n = total if limit is None else min(limit, total)
    if n < 1:
        raise PhyworldImportError(f"{src} holds no rows")
    source_sha256 = file_sha256(src)

    umask = os.umask(0)
    os.umask(umask)
    with atomic_folder(out, mode=0o777 & ~umask) as tmp:  # the split is an ordinary folder (not private)
        (tmp / DATA_DIR).mkdir()
        resolution, shards, digests, levels = _write_rows(spec, task, tmp, src, split, n, shard_size, progress)
        plan = SplitPlan(spec, split, resolution, n, shard_size)
        command = f"phybench import phyworld {quote(src.name)} --task {task} --split {split}"
        if limit is not None and n < total:
            command += f" --limit {n}"
        manifest: Manifest = {
            **plan.identity(),
            "phybench_version": __version__,
            "full_size": total,
            "frames": spec.frames,
            "frame_interval": spec.frame_interval,
            "condition_frames": spec.condition_frames,
            "world_size": spec.world_size,
            "dofs": [d.name for d in spec.dofs],
            "hf_split": hf_split_name(split),
            "levels": dict(sorted(levels.items())),
            "command": command,
            "pixel_mapping": PIXEL_MAPPING,
            "time_offset": TIME_OFFSET,
            "imported": _imported_record(spec, src, source_sha256, n),
            "shards": shards,
            "split_hash": split_hash(plan.identity(), digests),
        }
        card = card_text(plan) + (
            f"\nImported from the reference authors' data `{src.name}` (sha256 `{source_sha256}`), "
            "made by github.com/phyworld/phyworld (Kang et al. 2024, arXiv:2411.02385).  Their frame k is "
            f"at t = {TIME_OFFSET} + {spec.frame_interval} k s and their pixel mapping is the grid one "
            "(`pixel_mapping: grid`); the videos are their decoded H.264 frames.\n"
        )
        atomic_write_bytes(tmp / "README.md", card.encode())
        atomic_write_bytes(tmp / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
    return out  # `atomic_folder` renamed it onto `out` (absent or empty: checked above)

"""Splits on disk: sharded Parquet that `datasets.load_dataset` reads as it is.

Layout of a split folder::

    DIR/
      README.md                      minimal dataset card: `configs` -> data/*.parquet
      manifest.json                  task, spec hash, split, counts, shards, split hash
      data/shard-00000-of-00004.parquet
      data/shard-00000-of-00004.json sidecar: the shard's hashes (resume, verify)

One row schema for every task family: ``sample_id``, ``index``, ``level``, one column
per DoF (float; categorical DoFs as strings), ``contact_time``, the family's
`extra_columns` (float), ``frames_in_view``, the object-level trajectory (per-frame
``positions`` and ``velocities`` (T, B, 2) float32, ``radii`` (B,) float32: each body's
bounding radius, ``colours`` (B, 3) uint8; families with `stores_bodies` add ``angles``
(T, B) float32 and ``bodies``, the JSON of each body's shape, colour and attributes)
and, for evaluation splits, ``video``: one lossless PNG per frame (``List(Image())``).
Training splits store states only; `SplitReader.video` renders them on the fly,
bit-identical to a stored video.  `row_scene` turns any row back into a `Scene`.

Hashes: each sample has a sha256 digest of its canonical content (decoded pixels, not
PNG bytes, so it does not depend on the compressor); the split hash is the sha256 of a
header plus the ordered sample digests, so it does not depend on how the split was
sharded or how many workers wrote it.  File sha256s are kept too, to find a changed file.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, cast
import numpy as np
from .._version import __version__
from .. import jsonsafe
from ..io import atomic_write_bytes, file_sha256
from .frames import decode_video, encode_video
from .manifest_bounds import MANIFEST_SIZES, MAX_MANIFEST_BYTES, size_problem
from ..world.render import render
from ..tasks import family_of
from ..tasks.check import FamilyFinding, FamilyCheckError, check_deterministic, check_trajectory, disc_frames_in_view
from ..tasks.sampling import make_sample, simulate_sample
from ..tasks.spec import TaskSpec
from ..world.scene import Body, Scene
from .arrow import BODY_COLUMNS, STATE_COLUMNS, rows_to_table, table_rows
from .documents import Manifest, PlanIdentity, RowStates, SplitRow, dof_value, split_row


FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA_DIR = "data"
EVAL_SHARD_SIZE = 250  # samples; ~4 MB of PNG per shard at 128 px
TRAIN_SHARD_SIZE = 50_000  # samples; states only, ~25 MB in memory per shard


class SplitError(Exception):
    """A split folder is missing, malformed, or not what was asked for.

    `code` names the case for scripts and tests (docs/submission.md): the class's default, or
    the one given (``SplitError(message, code="manifest_path")``)."""

    code = "split_invalid"

    def __init__(self, *args: object, code: str | None = None) -> None:
        super().__init__(*args)
        if code is not None:
            self.code = code


# ------------------------------------------------------------------ plan
@dataclass(frozen=True)
class SplitPlan:
    """Which samples go where.  Everything that identifies the split's bytes."""

    spec: TaskSpec
    split: str
    resolution: int
    num_samples: int
    shard_size: int

    @property
    def with_video(self) -> bool:
        return not self.spec.is_training(self.split)

    @property
    def with_states(self) -> bool:
        """Rows keep the trajectory (False: training rows of a family too large to store states)."""
        return not self.spec.is_training(self.split) or family_of(self.spec).stores_training_states

    @property
    def num_shards(self) -> int:
        return max(1, -(-self.num_samples // self.shard_size))

    def shard_range(self, shard: int) -> tuple[int, int]:
        start = shard * self.shard_size
        return start, min(start + self.shard_size, self.num_samples)

    def shard_name(self, shard: int) -> str:
        return f"shard-{shard:05d}-of-{self.num_shards:05d}"

    def identity(self) -> PlanIdentity:
        """What must match for two runs to write into one folder."""
        identity: PlanIdentity = {
            "format_version": FORMAT_VERSION,
            "task": self.spec.name,
            "task_version": self.spec.version,
            "spec_hash": self.spec.spec_hash(),
            "split": self.split,
            "resolution": self.resolution,
            "num_samples": self.num_samples,
            "shard_size": self.shard_size,
            "with_video": self.with_video,
        }
        if not self.with_states:  # only then: the identities (and split hashes) of other splits never change
            identity["with_states"] = False
        return identity


def make_plan(
    spec: TaskSpec,
    split: str,
    resolution: int | None = None,
    limit: int | None = None,
    shard_size: int | None = None,
) -> SplitPlan:
    """Validate the arguments of a split and fix its layout."""
    if split not in spec.split_names:
        raise SplitError(
            f"task {spec.name!r} has no split {split!r}; splits: {', '.join(spec.split_names)}"
        )
    resolution = spec.resolution if resolution is None else resolution
    if resolution not in spec.resolutions:
        raise SplitError(
            f"resolution {resolution} is not supported by {spec.name!r}; "
            f"choose one of {', '.join(map(str, spec.resolutions))}"
        )
    full = spec.split_size(split)
    if limit is not None and not 1 <= limit:
        raise SplitError(f"--limit must be a positive number of samples, got {limit}")
    n = full if limit is None else min(limit, full)
    default = TRAIN_SHARD_SIZE if spec.is_training(split) else EVAL_SHARD_SIZE
    shard_size = default if shard_size is None else shard_size
    if shard_size < 1:
        raise SplitError(f"shard size must be positive, got {shard_size}")
    return SplitPlan(spec, split, resolution, n, shard_size)


# ------------------------------------------------------------------ rows
_STATE_DTYPES = (("positions", "<f4"), ("velocities", "<f4"), ("radii", "<f4"), ("colours", "u1"))


def row_scene(row: RowStates | Mapping[str, Any]) -> Scene:
    """The trajectory of a stored row, exactly as the renderer must see it."""
    positions = np.asarray(row["positions"], dtype=np.float64)  # (T, B, 2)
    velocities = np.asarray(row["velocities"], dtype=np.float64)
    if row.get("bodies") is not None:
        bodies = tuple(Body.from_dict(b) for b in jsonsafe.loads(row["bodies"], "a row's bodies"))
        poses = np.concatenate([positions, np.asarray(row["angles"], dtype=np.float64)[..., None]], axis=-1)
        return Scene(bodies, poses, velocities=velocities)
    return Scene.discs(positions, velocities, np.asarray(row["radii"], dtype=np.float64),
                       np.asarray(row["colours"], dtype=np.uint8))


def render_row(row: RowStates | Mapping[str, Any], resolution: int, frames: slice | None = None) -> np.ndarray:
    """uint8 (T, H, W, 3): the one way phybench turns a stored row into a video."""
    scene = row_scene(row)
    return render(scene if frames is None else scene.frames(frames), resolution)


def _digest_update(h: "hashlib._Hash", name: str, data: bytes | memoryview) -> None:
    h.update(name.encode() + b"\0" + memoryview(data).nbytes.to_bytes(8, "little"))
    h.update(data)


def sample_digest(
    row: SplitRow,
    dof_names: tuple[str, ...],
    video: np.ndarray | None,
    extra_columns: tuple[str, ...] = (),
    categorical: tuple[str, ...] = (),
) -> bytes:
    """sha256 of a sample's canonical content (little-endian, fixed dtypes).

    Fields a family does not use (extra columns, categorical DoFs, body shapes) add
    nothing, so the digests of plain-disc tasks are those of format version 1.
    """
    h = hashlib.sha256()
    _digest_update(h, "sample_id", row["sample_id"].encode())
    _digest_update(h, "level", row["level"].encode())
    params = np.array([dof_value(row, n) for n in dof_names] + [row["contact_time"]]
                      + [dof_value(row, n) for n in extra_columns], dtype="<f8")
    _digest_update(h, "params", params.tobytes())
    if categorical:
        _digest_update(h, "categorical", json.dumps([dof_value(row, n) for n in categorical]).encode())
    _digest_update(h, "frames_in_view", int(row["frames_in_view"]).to_bytes(4, "little"))
    for key, dtype in _STATE_DTYPES:
        if row.get(key) is not None:  # parameter-only training rows have no states
            _digest_update(h, key, np.ascontiguousarray(dof_value(row, key), dtype=dtype).tobytes())
    if row.get("bodies") is not None:
        _digest_update(h, "angles", np.ascontiguousarray(row["angles"], dtype="<f4").tobytes())
        _digest_update(h, "bodies", row["bodies"].encode())
    if video is not None:
        _digest_update(h, "video", np.ascontiguousarray(video, dtype=np.uint8).data.cast("B"))
    return h.digest()


def digest_fields(spec: TaskSpec) -> dict[str, tuple[str, ...]]:
    """The keyword arguments of `sample_digest` beyond the row and video, for a task."""
    return {
        "dof_names": tuple(d.name for d in spec.dofs),
        "extra_columns": family_of(spec).extra_columns,
        "categorical": tuple(c.name for c in spec.categorical),
    }


def row_digest(spec: TaskSpec, row: SplitRow, video: np.ndarray | None) -> bytes:
    return sample_digest(row, video=video, **digest_fields(spec))


def scene_row(spec: TaskSpec, scene: Scene) -> RowStates:
    """The trajectory columns of a row (float32 as stored)."""
    row: RowStates = {
        "positions": scene.positions.astype(np.float32),
        "velocities": np.asarray(scene.velocities).astype(np.float32),
        "radii": scene.radii.astype(np.float32),
        "colours": scene.colours,
    }
    if family_of(spec).stores_bodies:
        row["angles"] = scene.angles.astype(np.float32)
        row["bodies"] = json.dumps([b.to_dict() for b in scene.bodies], sort_keys=True, separators=(",", ":"))
    return row


def generate_sample(plan: SplitPlan, index: int) -> tuple[SplitRow, np.ndarray | None]:
    """One row (numpy values) and its rendered video (None for training splits)."""
    spec = plan.spec
    sample = make_sample(spec, plan.split, index)
    if not plan.with_states:
        return _identity_row(spec, index, sample), None
    scene = simulate_sample(spec, sample)
    row = split_row({**_identity_row(spec, index, sample), **scene_row(spec, scene)})
    video = None
    if plan.with_video:
        # Render from the float32 states we store, so that re-rendering a stored row
        # gives exactly the stored video.
        video = render_row(row, plan.resolution)
    return row, video


def _identity_row(spec: TaskSpec, index: int, sample: Any) -> SplitRow:
    return split_row({
        "sample_id": sample.sample_id,
        "index": index,
        "level": sample.level,
        **sample.params,
        "contact_time": sample.contact_time,
        **{name: sample.extra[name] for name in family_of(spec).extra_columns},
        "frames_in_view": sample.frames_in_view,
    })


def sample_video(plan: SplitPlan, index: int, frames: slice | None = None, resolution: int | None = None) -> np.ndarray:
    """The video of any sample of a split, re-simulated and rendered as generation does.

    For rows without states (parameter-only training rows): bit-identical to the video an
    evaluation split would store for the same scene (rendered from float32 states)."""
    spec = plan.spec
    sample = make_sample(spec, plan.split, index)
    return render_row(scene_row(spec, simulate_sample(spec, sample)), resolution or plan.resolution, frames)


def row_findings(spec: TaskSpec, row: SplitRow, closed_form: bool = True) -> list[FamilyFinding]:
    """The family checker's row-level checks on a stored row (`phybench.tasks.check`).

    Rows without states (parameter-only training rows) have no trajectory to check."""
    if row.get("positions") is None:
        return []
    scene = row_scene(row)
    return check_trajectory(spec, str(row["sample_id"]), int(row["frames_in_view"]), scene, closed_form=closed_form)


CLOSED_FORM_EVERY = 16  # generate and verify compare 1 row in 16 with the family's closed form


def shard_findings(spec: TaskSpec, rows: list[SplitRow], closed_form: bool = True) -> list[FamilyFinding]:
    """The row checks `generate` and `verify` run on a shard, at a cost they do not notice.

    Every row's ``frames_in_view`` claim is checked (rows of plain discs all at once, others
    one by one); the closed form on every `CLOSED_FORM_EVERY`-th index (closed_form=False:
    none, for data the family did not simulate)."""
    stated = [r for r in rows if r.get("positions") is not None]
    plain = [r for r in stated if r.get("bodies") is None]
    suspects = [r for r in stated if r.get("bodies") is not None]
    if plain and len({np.shape(r["positions"]) for r in plain}) == 1:
        counts = disc_frames_in_view(spec, np.stack([r["positions"] for r in plain]), np.stack([r["radii"] for r in plain]))
        suspects += [r for r, n in zip(plain, counts) if n < int(r["frames_in_view"])]
    else:
        suspects += plain
    findings = [f for r in suspects for f in row_findings(spec, r, closed_form=False)]
    return findings + [f for r in stated if closed_form and int(r["index"]) % CLOSED_FORM_EVERY == 0
                       for f in row_findings(spec, r) if f.check == "closed_form"]


def refuse_failing_rows(plan: SplitPlan, rows: list[SplitRow], start: int) -> None:
    """Raise `SplitError` (code ``family_check``) before a shard whose rows break the family's promises is written.

    `shard_findings` checks the rows, and the shard's first sample is made twice (determinism)."""
    findings = shard_findings(plan.spec, rows)
    if rows:
        findings += check_deterministic(plan.spec, plan.split, start)[1]
    if findings:
        bad = len({f.sample_id for f in findings})
        where = f"{plan.spec.name}/{plan.split}: {bad} of the {len(rows)} rows from index {start}"
        raise SplitError(f"{FamilyCheckError(findings, where)}; this shard was not written (fix the family, "
                         "then generate again)", code="family_check")


# ------------------------------------------------------------------ files
def write_shard(plan: SplitPlan, out: Path, shard: int, tick: Callable[[], Any] | None = None) -> dict[str, Any]:
    """Generate and write one shard atomically; returns its sidecar record.  `tick` is called after each
    sample (a progress bar: a training shard of 10,000 collision samples takes minutes)."""
    import pyarrow.parquet as pq

    start, stop = plan.shard_range(shard)
    rows: list[SplitRow] = []
    pngs: list[list[bytes]] | None = [] if plan.with_video else None
    digests: list[bytes] = []
    for index in range(start, stop):
        row, video = generate_sample(plan, index)
        digests.append(row_digest(plan.spec, row, video))
        rows.append(row)
        if tick is not None:
            tick()
        if video is not None:
            assert pngs is not None  # a video comes with plan.with_video only
            pngs.append(encode_video(video))
    refuse_failing_rows(plan, rows, start)
    table = rows_to_table(plan.spec, rows, pngs, plan.with_states)
    data_dir = out / DATA_DIR
    name = plan.shard_name(shard)
    final = data_dir / f"{name}.parquet"
    buf = io.BytesIO()  # then the one atomic writer: a full disk or a kill leaves no half shard
    pq.write_table(table, buf, compression="zstd", compression_level=9, row_group_size=max(1, len(rows)))
    atomic_write_bytes(final, buf.getvalue())
    record = {
        **plan.identity(),
        "shard": shard,
        "file": f"{DATA_DIR}/{name}.parquet",
        "start": start,
        "stop": stop,
        "sha256": file_sha256(final),
        "level_counts": _count([r["level"] for r in rows]),
        "sample_digests": [d.hex() for d in digests],
    }
    atomic_write_bytes(data_dir / f"{name}.json", json.dumps(record, indent=1).encode())
    return record


def _count(items: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))


def split_hash(plan_identity: PlanIdentity, digests: list[str]) -> str:
    h = hashlib.sha256()
    header = {k: v for k, v in plan_identity.items() if k != "shard_size"}
    h.update(json.dumps(header, sort_keys=True, separators=(",", ":")).encode())
    for d in digests:
        h.update(bytes.fromhex(d))
    return h.hexdigest()


def hf_split_name(split: str) -> str:
    """`datasets` split names allow only word characters."""
    return split.replace("-", "_")


def build_manifest(plan: SplitPlan, records: list[dict[str, Any]], command: str | None) -> Manifest:
    records = sorted(records, key=lambda r: r["shard"])
    digests = [d for r in records for d in r["sample_digests"]]
    levels: dict[str, int] = {}
    for r in records:
        for level, count in r["level_counts"].items():
            levels[level] = levels.get(level, 0) + count
    spec = plan.spec
    return {
        **plan.identity(),
        "phybench_version": __version__,
        "full_size": spec.split_size(plan.split),
        "frames": spec.frames,
        "frame_interval": spec.frame_interval,
        "condition_frames": spec.condition_frames,
        "world_size": spec.world_size,
        "dofs": [d.name for d in spec.dofs],
        "hf_split": hf_split_name(plan.split),
        "levels": dict(sorted(levels.items())),
        "command": command,
        "shards": [
            {"file": r["file"], "start": r["start"], "stop": r["stop"], "sha256": r["sha256"],
             "content_sha256": hashlib.sha256(b"".join(bytes.fromhex(d) for d in r["sample_digests"])).hexdigest()}
            for r in records
        ],
        "split_hash": split_hash(plan.identity(), digests),
    }


def card_text(plan: SplitPlan) -> str:
    """A minimal dataset card so `load_dataset(DIR)` finds the data and names the split."""
    spec = plan.spec
    return (
        "---\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        f"  - split: {hf_split_name(plan.split)}\n"
        f"    path: {DATA_DIR}/*.parquet\n"
        "---\n\n"
        f"# phybench `{spec.name}` / `{plan.split}`\n\n"
        f"{spec.description}\n\n"
        f"{plan.num_samples} samples at {plan.resolution} px, task version {spec.version}, "
        f"spec hash `{spec.spec_hash()}`.  See `manifest.json` for the split hash.\n"
    )


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    folder = Path(path)
    if not folder.is_dir():
        raise SplitError(f"{folder} is not a folder")
    file = folder / MANIFEST
    if not file.is_file():
        sidecars = list((folder / DATA_DIR).glob("shard-*.json")) if (folder / DATA_DIR).is_dir() else []
        if sidecars:
            raise SplitError(
                f"{folder} holds {len(sidecars)} shard(s) but no {MANIFEST}: the generation did "
                "not finish; run the same `phybench generate` command again to complete it"
            )
        raise SplitError(f"{folder} is not a phybench split (no {MANIFEST})")
    try:
        manifest = jsonsafe.read(file, max_bytes=MAX_MANIFEST_BYTES)
    except jsonsafe.JSONError as exc:
        raise SplitError(f"{file} is not valid JSON ({exc.code}): {exc}", code="invalid_json") from None
    if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
        raise SplitError(f"{file}: unsupported split format {manifest.get('format_version') if isinstance(manifest, dict) else '?'}")
    _check_shard_paths(folder, file, manifest)
    _check_declared_sizes(file, manifest)
    return cast(Manifest, manifest)  # its keys' values are checked as far as the checks above go


def _check_declared_sizes(file: Path, manifest: Mapping[str, Any]) -> None:
    """Before any shard is hashed or decoded, by every reader (`validate`, `verify`, `score`, the
    loaders): the shards tile the declared rows once each (a shard listed 5,000 times made
    `verify` decode for minutes and `validate` say OK), the counts and shard bytes are within
    what the rows can take (`manifest_bounds`), and the rows are no more than the task's split
    holds under the full protocol.  Refused with ``manifest_sizes``."""
    why = size_problem(manifest, file.parent) or _protocol_problem(manifest)
    if why is not None:
        raise SplitError(f"{file}: its declared sizes do not add up: {why}; refusing it before reading any shard",
                         code=MANIFEST_SIZES)


def _protocol_problem(manifest: Mapping[str, Any]) -> str | None:
    """More rows than the registered task's split has (the full protocol's size), or None; an
    unregistered task or split is left to the reader that needs it (it refuses it by name)."""
    from ..tasks import get_task

    task, split = str(manifest.get("task"))[:80], str(manifest.get("split"))[:80]
    try:
        full = get_task(task).split_size(split)
    except (KeyError, ValueError, LookupError):
        return None
    if manifest["num_samples"] > full:  # an int: `size_problem` checked it
        return f"{manifest['num_samples']:,} samples; {task!r} {split!r} has {full:,} (the full protocol)"
    return None


_SHARD_FILE = re.compile(rf"^{DATA_DIR}/[A-Za-z0-9][A-Za-z0-9._-]*\.parquet$")


def _check_shard_paths(folder: Path, file: Path, manifest: Mapping[str, Any]) -> None:
    """A manifest names its shards; it is untrusted, so each must be a plain data/<name>.parquet
    of the folder (no absolute path, no '..'), as the Hub loader requires.  (The file itself may
    be a link: the Hugging Face cache links every file to its blob.)"""
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not all(isinstance(e, dict) and isinstance(e.get("file"), str) for e in shards):
        raise SplitError(f"{file}: 'shards' must be a list of entries with a 'file' name", code="manifest_path")
    for entry in shards:
        name = entry["file"]
        if not _SHARD_FILE.match(name):
            raise SplitError(f"{file}: shard {name!r} is not a file data/<name>.parquet inside the split folder; "
                             "refusing to read it", code="manifest_path")


def plan_from_manifest(manifest: Manifest) -> SplitPlan:
    from ..tasks import get_task

    spec = get_task(manifest["task"])
    return SplitPlan(spec, manifest["split"], int(manifest["resolution"]), int(manifest["num_samples"]), int(manifest["shard_size"]))


# ------------------------------------------------------------------ read
class SplitReader:
    """Read a split folder: rows with numpy arrays, videos decoded or rendered."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        self.plan = plan_from_manifest(self.manifest)

    def __len__(self) -> int:
        return int(self.manifest["num_samples"])

    @property
    def spec(self) -> TaskSpec:
        return self.plan.spec

    def rows(self, columns: list[str] | None = None) -> Iterator[SplitRow]:
        import pyarrow.parquet as pq

        for entry in self.manifest["shards"]:
            yield from table_rows(pq.read_table(self.folder / entry["file"], columns=columns))

    def video(self, row: SplitRow) -> np.ndarray:
        """uint8 (T, H, W, 3): decoded if stored, else rendered from the row's states."""
        if "video" in row:
            return decode_video(row["video"])
        if row.get("positions") is None:  # parameter-only training row: simulate it
            return sample_video(self.plan, int(row["index"]))
        return render_row(row, self.plan.resolution)


def load_hf_dataset(folder: str | os.PathLike[str]):
    """The split as a `datasets.Dataset`, videos as uint8 (T, H, W, 3) numpy arrays.

    Evaluation splits: one `load_dataset` call (PNG frames decode to uint8).  Training
    splits store states only; a transform renders each video on access.
    """
    import datasets

    folder = Path(folder)
    manifest = read_manifest(folder)
    ds = datasets.load_dataset(str(folder), split=manifest["hf_split"])
    if manifest["with_video"]:
        return ds.with_format("numpy")
    resolution = int(manifest["resolution"])
    if manifest.get("with_states", True) is False:  # parameters only: simulate and render each scene
        plan = plan_from_manifest(manifest)

        def _simulate(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
            return {**batch, "video": [sample_video(plan, int(i)) for i in batch["index"]]}

        return ds.with_transform(_simulate)

    def _render(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        arrays = STATE_COLUMNS + ("angles",)
        out = {k: [np.asarray(x) for x in v] if k in arrays else v for k, v in batch.items()}
        keys = [k for k in STATE_COLUMNS + BODY_COLUMNS if k in batch]
        out["video"] = [
            render_row({k: batch[k][i] for k in keys}, resolution) for i in range(len(batch["sample_id"]))
        ]
        return out

    return ds.with_transform(_render)

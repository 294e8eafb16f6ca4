"""Near-copies refused: a submission whose videos are another admitted row's, lightly perturbed.

The exact twin (same decoded pixels) is refused by ``videos_reused`` (the videos-only hash,
`phybench.submission.identity`).  A hash changes with one pixel, so the ground truth's videos
with one pixel changed by one level were admitted as a second row with identical numbers
(issue 51).  This module measures how close a new submission's videos are to each admitted
row's on the same split, in bounded time and space, and the sync refuses one that is nearly
identical on most samples (``videos_near_reused``).

**The fingerprint (why a sketch, not a perceptual hash or the videos).**  Independent rows can
be very close in pixels: on uniform motion the physics oracle and linear extrapolation both
follow the law, differ from the ground truth by +-1-2 levels on ~0.1% of the values
(PSNR 71-86 dB) and from each other on ~15 values.  Telling a copy from such a pair needs the
full-resolution squared difference, which a downsampled perceptual hash throws away; keeping
every admitted archive and decoding it for every new pull request is not bounded.  So each
video's generated frames (``t >= condition_frames``; the condition frames are everyone's) are
reduced to a *CountSketch* of ``K`` integers: every value goes, with a fixed pseudo-random
sign, into one of ``K`` buckets.  The sketch is linear, so ``sketch(S) - sketch(A)`` is the
sketch of ``S - A`` and its squared norm is an unbiased estimate of ``||S - A||^2`` (exact for
a difference on one value; about sqrt(2/K) = 9% relative spread for a dense one, 0.4 dB).
K = 256 int32 per video, and as many for the 4x4-pooled frames: 2 KiB a video, ~300 KB a lite
row on disk, computed once per row.

**The rule, per sample** (S the new video, A an admitted row's, G the split's own video; d the
RMS difference in levels, from the sketches):

- *same pixels*: PSNR(S, A) >= ``SAME_DB`` (100 dB: at most ~9 values off by one level at
  128 px) -- closer than the physics oracle ever is to the ground truth (<= 89.3 dB);
- *same mistakes*: ``d(S, A) <= RATIO * min(d(A, G), d(S, G))`` on 4x4-pooled frames, with
  both farther than ``TRUTH_FLOOR`` from the truth: S sits far closer to A than either is to
  the truth, i.e. it reproduces A's deviation from the truth.  Two independent models may agree
  where both are right; they do not share their errors.  A video within the floor of the truth
  (the physics oracle's: <= 0.04 levels pooled RMS; the learned and other baselines' >= 2.3) is
  judged by the first rule alone: the truth is public (anyone can generate the evaluation
  split), so a noisy rendering of it is a degraded ground truth, not a copy of a row; and on
  uniform motion the physics oracle and linear extrapolation render the same law to within
  ~15 values of one level (~98 dB), which the floor keeps apart.

For the second rule the new submission is also cropped and padded by one pixel in each of the 8
directions (``SHIFTS``; its closest version counts), so a copy moved by a pixel lines up with
its row's mistakes again.

A submission is a near-copy of row A when more than ``MOST`` of the samples both answer are
"same" by either rule.  A row of the same model name (the board's one row per model and split:
a resubmission is declared by submitting under the same name, and the maintainers replace the
row) is skipped: that case is ``intake-duplicate``'s.  The measured distributions behind the
constants are in docs/leaderboard.md ("Near-copies"; `benchmarks/nearcopy_threshold.py`).

Fingerprints live in ``RESULTS/.sync/nearcopy/`` (hidden: the build never reads them), one
``.npz`` per admitted row (``np.load(allow_pickle=False)``), written when the row is admitted;
the split's own fingerprint is cached there too.  A row admitted before this check, or on a
fresh checkout without the cache, is fingerprinted from its archive on the Hub's ``main``
(`backfill`).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ... import jsonsafe

CODE = "videos_near_reused"
K = 256  # sketch buckets per video (and as many again for the pooled frames)
POOL = 4  # the pooled half: block sums of POOL x POOL px
SHIFTS = ((0, 0), *((dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)))  # px: crop-and-pad
SEED = 51_2026  # the buckets' and signs' generator: fixed, so every row's sketch is comparable
VERSION = "nearcopy-v1"
SAME_DB = 100.0  # PSNR(S, A) at or above which two videos are the same pixels
RATIO = 0.25  # d(S, A) <= RATIO * min(d(A, G), d(S, G)): the same mistakes
TRUTH_FLOOR = 0.25  # levels (pooled RMS): a video this close to the truth is judged by SAME_DB alone
MOST = 0.5  # a near-copy: "same" on more than this share of the common samples
FOLDER = "nearcopy"  # under RESULTS/.sync/
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@lru_cache(maxsize=4)
def _hashing(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(bucket int32 (n,), sign float64 (n,)) for videos of n values: a pure function of (SEED, n)."""
    rng = np.random.default_rng([SEED, n])
    bucket = rng.integers(0, K, n, dtype=np.int32)
    sign = rng.integers(0, 2, n, dtype=np.int8).astype(np.float64) * 2.0 - 1.0
    return bucket, sign


def _count_sketch(values: np.ndarray) -> np.ndarray:
    bucket, sign = _hashing(values.size)
    out = np.bincount(bucket, weights=values.astype(np.float64) * sign, minlength=K)  # |sum| < 2**31 up to 256 px
    return np.rint(out).astype(np.int64).astype(np.int32)


def _pooled(frames: np.ndarray) -> np.ndarray:
    """int64 block sums (T, H/POOL, W/POOL, 3) of uint8 frames (T, H, W, 3)."""
    t, h, w, c = frames.shape
    hp, wp = h - h % POOL, w - w % POOL
    return frames[:, :hp, :wp].reshape(t, hp // POOL, POOL, wp // POOL, POOL, c).sum(axis=(2, 4), dtype=np.int64)


def sketch(video: np.ndarray, condition_frames: int) -> np.ndarray:
    """int32 (2K,): the CountSketch of a uint8 (T, H, W, 3) video's generated frames, then that of
    their POOL x POOL block sums (codec noise moves a block sum far less than a misplaced object
    does: the "same mistakes" rule reads this half)."""
    frames = np.ascontiguousarray(video[condition_frames:])
    return np.concatenate([_count_sketch(frames.reshape(-1)), _count_sketch(_pooled(frames).reshape(-1))])


def shifted_sketches(video: np.ndarray, condition_frames: int) -> np.ndarray:
    """int32 (len(SHIFTS), K): the pooled half of `sketch` for the picture cropped and padded (edge)
    by each of SHIFTS, so that a copy moved by a pixel lines up with its row's mistakes again.  Only
    a new submission is shifted (a row stores SHIFTS[0], its own picture); the pooled half alone,
    a sixteenth of the values, keeps this to ~3x one full sketch."""
    frames = np.ascontiguousarray(video[condition_frames:])
    h, w = frames.shape[1:3]
    padded = np.pad(frames, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
    return np.stack([_count_sketch(_pooled(padded[:, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]).reshape(-1))
                     for dy, dx in SHIFTS])


@dataclass
class Fingerprint:
    """One row's (or the split's own) sketches by sample id, and what the row is."""

    ids: list[str]
    sketches: np.ndarray  # int32 (N, 2K): full resolution, then pooled
    values: int  # n: values per video's generated frames, for RMS
    meta: dict[str, Any] = field(default_factory=dict)  # model, submission_hash, split_hash, row
    shifted: np.ndarray | None = None  # int32 (N, len(SHIFTS), K), pooled: a new submission's, never stored

    def by_id(self) -> dict[str, np.ndarray]:
        return dict(zip(self.ids, self.sketches))


def fingerprint(videos: Iterable[tuple[str, np.ndarray]], condition_frames: int, shifts: bool = False,
                **meta: Any) -> Fingerprint:
    """Sketch every (sample id, video); videos are read one at a time (bounded memory).  With
    `shifts` (a new submission), every crop-and-pad of SHIFTS too."""
    ids, rows, moved, n = [], [], [], 0
    for sample_id, video in videos:
        ids.append(str(sample_id))
        rows.append(sketch(video, condition_frames))
        if shifts:
            moved.append(shifted_sketches(video, condition_frames))
        n = int(np.prod(video[condition_frames:].shape))
    arr = np.stack(rows) if rows else np.zeros((0, 2 * K), np.int32)
    shifted = (np.stack(moved) if moved else np.zeros((0, len(SHIFTS), K), np.int32)) if shifts else None
    return Fingerprint(ids, arr, n, dict(meta), shifted)


def submission_fingerprint(archive: Path, split_dir: Path, shifts: bool = False, **meta: Any) -> Fingerprint:
    """A submission's fingerprint (its videos decoded once, by phybench's capped reader)."""
    from ...data.split import read_manifest
    from ...submission.format import Submission

    manifest = read_manifest(split_dir)
    with Submission(archive, manifest=manifest) as opened:
        return fingerprint(opened.iter_videos(), int(manifest.get("condition_frames", 0)), shifts,
                           split_hash=manifest.get("split_hash"), **meta)


def split_fingerprint(split_dir: Path) -> Fingerprint:
    """The split's own videos (the truth) fingerprinted."""
    from ...data.split import SplitReader

    reader = SplitReader(split_dir)

    def videos() -> Iterator[tuple[str, np.ndarray]]:
        for row in reader.rows():
            yield str(row["sample_id"]), reader.video(row)

    return fingerprint(videos(), int(reader.manifest.get("condition_frames", 0)),
                       split_hash=reader.manifest.get("split_hash"), model="(the split's own videos)")


# ------------------------------------------------------------------ the rule
def rms(a: np.ndarray, b: np.ndarray, n: int, pooled: bool = False) -> np.ndarray:
    """RMS difference in levels per row, from sketches (N, 2K) of videos of n values: at full
    resolution, or (pooled) of the POOL x POOL block means."""
    half = slice(K, 2 * K) if pooled else slice(0, K)
    return _rms(a[:, half], b[:, half], n, POOL * POOL if pooled else 1)


def _rms(a: np.ndarray, b: np.ndarray, n: int, scale: int) -> np.ndarray:
    """RMS of the difference of (N, K) sketches of n values, `scale` values summed per sketched value."""
    d = a.astype(np.float64) - b.astype(np.float64)
    return np.sqrt(np.maximum((d * d).sum(axis=-1), 0.0) / max(n // scale, 1)) / scale


def psnr(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(d > 0, 20.0 * np.log10(255.0 / np.maximum(d, 1e-300)), math.inf)


@dataclass
class Pair:
    """A new submission against one admitted row: per common sample, the distances and the verdict."""

    row: dict[str, Any]
    ids: list[str]
    d_sa: np.ndarray  # RMS levels at full resolution, (M,)
    p_sa: np.ndarray  # RMS levels of the pooled frames: S to A, A to the truth, S to the truth
    p_ag: np.ndarray
    p_sg: np.ndarray

    @property
    def same_pixels(self) -> np.ndarray:
        return psnr(self.d_sa) >= SAME_DB

    @property
    def ratio(self) -> np.ndarray:
        """d(S, A) / min(d(A, G), d(S, G)) on the pooled frames; inf where either is the truth."""
        den = np.minimum(self.p_ag, self.p_sg)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, self.p_sa / np.maximum(den, 1e-300), math.inf)

    @property
    def same_mistakes(self) -> np.ndarray:
        """S reproduces A's deviation from the truth, where both deviate from it (TRUTH_FLOOR)."""
        return (self.ratio <= RATIO) & (np.minimum(self.p_ag, self.p_sg) > TRUTH_FLOOR)

    @property
    def same(self) -> np.ndarray:
        return self.same_pixels | self.same_mistakes

    @property
    def share(self) -> float:
        return float(self.same.mean()) if self.ids else 0.0

    @property
    def near_copy(self) -> bool:
        return bool(self.ids) and self.share > MOST


def compare(new: Fingerprint, row: Fingerprint, truth: Fingerprint) -> Pair:
    """Distances of `new` to `row` (and both to the truth) on the samples all three have."""
    a, b, g = new.by_id(), row.by_id(), truth.by_id()
    ids = sorted(set(a) & set(b) & set(g))
    n = new.values
    if not ids or len({new.values, row.values, truth.values}) != 1:
        return Pair(row.meta, [], *(np.zeros(0),) * 4)
    s, r, t = (np.stack([m[i] for i in ids]) for m in (a, b, g))
    p_sa = rms(s, r, n, True)
    if new.shifted is not None:  # the closest crop-and-pad of the new videos to the row's (pooled)
        where = {i: k for k, i in enumerate(new.ids)}
        moved = new.shifted[[where[i] for i in ids]]  # (M, len(SHIFTS), K)
        p_sa = np.min([_rms(moved[:, j], r[:, K:], n, POOL * POOL) for j in range(moved.shape[1])], axis=0)
    return Pair(row.meta, ids, rms(s, r, n), p_sa, rms(r, t, n, True), rms(s, t, n, True))


def refusal(pair: Pair) -> str:
    """The refusal line naming the row."""
    meta = pair.row
    return (f"[{CODE}] these videos are nearly identical to the admitted row of "
            f"{str(meta.get('model'))[:80]!r} (submission {str(meta.get('submission_hash'))[:12]}, "
            f"{str(meta.get('row'))[:160]}) on {int(pair.same.sum())} of {len(pair.ids)} samples "
            f"(median PSNR {float(np.median(psnr(pair.d_sa))):.1f} dB to it); a lightly changed copy of a row is "
            "not a new entry")


# ------------------------------------------------------------------ the store
class Store:
    """The fingerprints of a results folder's admitted rows, under RESULTS/.sync/nearcopy/."""

    def __init__(self, results_dir: Path) -> None:
        from .journal import WORK_DIR

        self.folder = Path(results_dir) / WORK_DIR / FOLDER

    def _path(self, key: str) -> Path:
        return self.folder / (_NAME.sub("-", key).strip("-.")[:180] + ".npz")

    def save(self, key: str, fp: Fingerprint) -> Path:
        from ...io import atomic_write_bytes
        import io

        buf = io.BytesIO()
        meta = json.dumps({**fp.meta, "version": VERSION, "values": fp.values}, sort_keys=True).encode("utf-8")
        np.savez_compressed(buf, ids=np.array(fp.ids, dtype=str), sketches=fp.sketches.astype(np.int32),
                            meta=np.frombuffer(meta, dtype=np.uint8))
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buf.getvalue())
        return path

    @staticmethod
    def read(path: Path) -> Fingerprint | None:
        """One stored fingerprint, or None when it is not one of this version (never unpickled)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = jsonsafe.loads(bytes(z["meta"].astype(np.uint8)).decode("utf-8"))
                ids, sketches = [str(i) for i in z["ids"]], np.asarray(z["sketches"], dtype=np.int32)
        except (OSError, ValueError, KeyError, UnicodeDecodeError):
            return None
        if not isinstance(meta, dict) or meta.get("version") != VERSION or sketches.shape != (len(ids), 2 * K):
            return None
        return Fingerprint(ids, sketches, int(meta.get("values", 0)), meta)

    def get(self, key: str) -> Fingerprint | None:
        path = self._path(key)
        return self.read(path) if path.is_file() else None

    def rows(self, split_hash: str) -> list[Fingerprint]:
        """Every admitted row's fingerprint on that split (the split's own is not a row)."""
        if not self.folder.is_dir():
            return []
        out = []
        for path in sorted(self.folder.glob("*.npz")):
            if path.name.startswith("split-"):
                continue
            fp = self.read(path)
            if fp is not None and fp.meta.get("split_hash") == split_hash:
                out.append(fp)
        return out

    def truth(self, split_dir: Path, split_hash: str) -> Fingerprint:
        """The split's own fingerprint, cached."""
        key = f"split-{split_hash[:16]}"
        cached = self.get(key)
        if cached is not None:
            return cached
        fp = split_fingerprint(split_dir)
        self.save(key, fp)
        return fp


def row_key(row: str) -> str:
    """The store's key of a row: its results file's path under RESULTS (``row-``: never a split's own)."""
    return "row-" + row.removesuffix(".json")


def near_copies(new: Fingerprint, rows: Iterable[Fingerprint], truth: Fingerprint) -> list[str]:
    """Refusal lines for every admitted row `new` nearly copies; a row of the same model (the
    board's resubmission) and the submission itself (an interrupted sync) are skipped."""
    problems = []
    for row in rows:
        if row.meta.get("submission_hash") == new.meta.get("submission_hash"):
            continue
        if row.meta.get("model") == new.meta.get("model"):
            continue  # one row per model and split: intake-duplicate's case
        pair = compare(new, row, truth)
        if pair.near_copy:
            problems.append(refusal(pair))
    return problems


def _on_board(results_dir: Path, row: Any) -> bool:
    """The row a fingerprint names is a results file in RESULTS now (a row a killed sync wrote
    and `recover` removed is not; nothing outside RESULTS is ever named)."""
    if not isinstance(row, str) or not row or Path(row).is_absolute() or ".." in Path(row).parts:
        return False
    return (results_dir / row).is_file()


def _admitted_rows(results_dir: Path, repo: str, split_hash: str) -> Iterator[tuple[str, str, str]]:
    """(row path under RESULTS, submission hash, model) of every row this board's sync admitted
    on that split: a record (`verify.records.read_record`, checked against its results file)
    whose ``extra.repo`` is `repo`."""
    from ...scoring.run.layout import is_record, results_of
    from ..common.files import UnsafeFile, read_regular, scan
    from ..verify.records import VerificationError, read_record

    for path in scan(results_dir)[0]:
        if not is_record(path):
            continue
        results = results_of(path)
        try:
            record = read_record(results)
            if record is None or record.split_hash != split_hash or record.extra.get("repo") != repo:
                continue
            model = jsonsafe.loads(read_regular(results, 64 << 20))["model"]["name"]
        except (VerificationError, UnsafeFile, OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        yield results.relative_to(results_dir).as_posix(), record.submission_hash, str(model)


def backfill(syncer: Any, store: Store, split_dir: Path, split_hash: str, main_files: dict[str, Any],
             work: Path) -> None:
    """Fingerprint every admitted row on the split that has none (a fresh checkout: the workflow
    pulls the rows, not this cache) from its archive on the Hub's ``main``: once per row."""
    import shutil

    from .submit import ARCHIVES, SUBMISSIONS_DIR

    for row, digest, model in _admitted_rows(syncer.results_dir, syncer.repo, split_hash):
        if store.get(row_key(row)) is not None:
            continue
        found = [p for p in main_files if p.startswith(f"{SUBMISSIONS_DIR}/") and p.split("/")[2:3] == [digest[:12]]
                 and p.rsplit("/", 1)[-1] in ARCHIVES]
        if len(found) != 1:
            syncer.log(f"near-copy check: no archive of {row} on main; that row is not compared")
            continue
        try:
            local = syncer.client.download(found[0], "main", main_files[found[0]], work)
            archive = work / f"backfill-{digest[:12]}-{found[0].rsplit('/', 1)[-1]}"
            shutil.copyfile(local, archive)
            store.save(row_key(row), submission_fingerprint(archive, split_dir, model=model, submission_hash=digest,
                                                            row=row))
            archive.unlink()
        except Exception as exc:  # noqa: BLE001 - a row that cannot be fingerprinted is logged, not fatal
            syncer.log(f"near-copy check: {row} not fingerprinted ({type(exc).__name__}); not compared")


def check_intake(syncer: Any, archive: Path, split_dir: Path, meta: dict[str, Any], submission_hash: str, out: Path,
                 main_files: dict[str, Any], work: Path) -> list[str]:
    """The sync's hook: refusal lines if the submission nearly copies an admitted row on its split;
    otherwise its fingerprint is stored (it counts once its row is on the board)."""
    results = Path(syncer.results_dir)
    store, split_hash = Store(results), str(meta["split_hash"])
    row = out.relative_to(results).as_posix()
    new = submission_fingerprint(archive, split_dir, True, model=meta["model"]["name"],
                                 submission_hash=submission_hash, row=row)
    backfill(syncer, store, split_dir, split_hash, main_files, work)
    rows = [fp for fp in store.rows(split_hash) if _on_board(results, fp.meta.get("row"))]
    problems = near_copies(new, rows, store.truth(split_dir, split_hash)) if rows else []
    if not problems:
        store.save(row_key(row), new)
    return problems

"""A DiT submission at the model's own resolution: one small file that rebuilds the submission bit for bit.

A 32 px DiT's 128 px submission is its frames nearest-upsampled 4x, with the split's condition
frames pasted in (`sample.complete_clips`), so 15/16 of its bytes say nothing new: 200 videos
are about 38 MB of npz, too big to bring back from a device machine (8 files of 16 MB).
`pack_compact` keeps the generated frames at the model's resolution (uint8, losslessly compressed),
the submission.json and the sha256 of every video array; `unpack` re-reads the condition
frames from the split, upsamples and writes the submission again, and refuses it unless every
video hashes as it did where it was sampled.

    python -m phybench_baselines.dit.compact pack SUB PACK.npz [--model-resolution 32] [--parts 2]
    python -m phybench_baselines.dit.compact unpack PACK-0.npz PACK-1.npz --data SPLIT --out SUB
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import numpy as np

from phybench.data.split import SplitReader
from phybench.submission import Submission, write_submission
from phybench.io import atomic_write_bytes
from phybench.submission.format import hash_lines
from phybench.submission.identity import video_digest


def stride_downsample(video: np.ndarray, factor: int) -> np.ndarray:
    """(T, R, R, 3) -> (T, R/f, R/f, 3) by taking every f-th pixel; exact when the video is nearest-upsampled."""
    return np.ascontiguousarray(video[:, ::factor, ::factor])


def nearest_upsample(frames: np.ndarray, factor: int) -> np.ndarray:
    """(T, r, r, 3) -> (T, r*f, r*f, 3), nearest: what `clips.tensor_to_clip` does for an integer factor."""
    return np.repeat(np.repeat(frames, factor, axis=1), factor, axis=2)


def pack_compact(submission: str | Path, out: str | Path, model_resolution: int, parts: int = 1) -> list[Path]:
    """Write OUT (or OUT-0.npz ... OUT-{parts-1}.npz, each under the device's 16 MB a file).

    Refuses a video whose generated frames are not a nearest upsampling of r px."""
    ids, hashes, small = [], [], []
    with Submission(submission) as sub:  # one decode per video: checked, hashed and cut down in one pass
        meta = sub.meta
        R, c = int(meta["resolution"]), int(meta["condition_frames"])
        if R % model_resolution:
            raise ValueError(f"the submission's {R} px is not a multiple of the model's {model_resolution} px")
        f = R // model_resolution
        for sample_id, video in sub.iter_videos():  # uint8 (T, R, R, 3)
            low = stride_downsample(video[c:], f)
            if not np.array_equal(nearest_upsample(low, f), video[c:]):
                raise ValueError(f"{sample_id}: the generated frames are not a {f}x nearest upsampling; "
                                 "this submission cannot be packed losslessly")
            ids.append(sample_id)
            hashes.append(video_digest(video))
            small.append(low)
    whole = hash_lines(dict(zip(ids, hashes, strict=True)))  # = identity.videos_hash, from the digests just made
    out = Path(out)
    written = []
    for k, part in enumerate(np.array_split(np.arange(len(ids)), parts)):
        header = {"submission": meta, "sample_ids": [ids[i] for i in part], "video_sha256": [hashes[i] for i in part],
                  "videos_hash": whole, "factor": f, "part": k, "parts": parts}
        path = out if parts == 1 else out.with_name(f"{out.stem}-{k}.npz")
        buf = io.BytesIO()
        np.savez_compressed(buf, frames=np.stack([small[i] for i in part]),  # uint8 (n, T - c, r, r, 3)
                            header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
        atomic_write_bytes(path, buf.getvalue())
        written.append(path)
    return written


def _read_packs(packed: list[str | Path]) -> tuple[dict, list[str], list[str], list[np.ndarray]]:
    """(header of part 0, sample ids, video digests, frames) of every part, in part order; all parts present."""
    heads, ids, hashes, frames = [], [], [], []
    for path in packed:
        with np.load(path, allow_pickle=False) as z:
            heads.append((json.loads(z["header"].tobytes().decode()), z["frames"]))
    heads.sort(key=lambda h: h[0].get("part", 0))
    parts = heads[0][0].get("parts", 1)
    if [h.get("part", 0) for h, _ in heads] != list(range(parts)) or len({h["videos_hash"] for h, _ in heads}) != 1:
        raise ValueError(f"the packs are not the {parts} parts of one submission")
    for header, low in heads:
        ids += header["sample_ids"]
        hashes += header["video_sha256"]
        frames += list(low)
    return heads[0][0], ids, hashes, frames


def unpack(packed: list[str | Path], data: str | Path, out: str | Path) -> Path:
    """Rebuild the submission from its packs and the split's condition frames; every video hash must match."""
    header, ids, hashes, frames = _read_packs(packed)
    reader = SplitReader(data)
    meta = header["submission"]
    local = reader.manifest.get("split_hash")
    if meta.get("split_hash") != local:
        # Another machine's build of the same split (its PNG bytes can differ with the Pillow/zlib
        # version): fine only if every rebuilt video, condition frames included, hashes as sampled,
        # which the loop below enforces, so the model saw these very pixels.
        print(f"note: sampled on a build of the split with hash {str(meta.get('split_hash'))[:12]}, "
              f"{data} has {str(local)[:12]}; accepted only if every video's pixels match")
        meta = {**meta, "split_hash": local}
    if hash_lines(dict(zip(ids, hashes, strict=True))) != header["videos_hash"]:
        raise ValueError(f"{packed[0]}: the parts' video digests do not make the sampled submission's videos hash")
    c, f = int(meta["condition_frames"]), int(header["factor"])
    rows = {row["sample_id"]: row for row in reader.rows(columns=["sample_id", "video"])}
    if set(ids) - set(rows):
        raise ValueError(f"{packed[0]}: sample ids not in {data} (e.g. {sorted(set(ids) - set(rows))[0]})")

    def videos():
        for sample_id, low, expected in zip(ids, frames, hashes, strict=True):
            video = np.concatenate([reader.video(rows[sample_id])[:c], nearest_upsample(low, f)])
            if video_digest(video) != expected:
                raise ValueError(f"{sample_id}: the rebuilt video differs from the one sampled "
                                 "(another split, or a changed packer)")
            yield sample_id, video

    # every video hashes as sampled and the digests make the header's videos hash: so does the result
    return write_submission(out, meta, videos(), fmt="npz")


def main(argv=None) -> Path:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("pack", help="submission -> PACK.npz")
    a.add_argument("submission")
    a.add_argument("out")
    a.add_argument("--model-resolution", type=int, default=32)
    a.add_argument("--parts", type=int, default=1, help="files to spread the videos over (OUT-k.npz)")
    b = sub.add_parser("unpack", help="PACK.npz + split -> submission (hashes checked)")
    b.add_argument("packed", nargs="+", help="every part of one submission's pack")
    b.add_argument("--data", required=True)
    b.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if args.cmd == "pack":
        return pack_compact(args.submission, args.out, args.model_resolution, args.parts)[-1]
    return unpack(args.packed, args.data, args.out)


if __name__ == "__main__":
    print(main())

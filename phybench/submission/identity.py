"""A submission's generations, identified by their pixels: the videos-only content hash.

`submission_hash` covers submission.json too, so the same videos under another model name
(only ``model.name`` changed) hash differently and were admitted as a second row (issue 36).
`videos_hash` identifies the videos alone: each video is decoded (uint8 ``(T, H, W, 3)``) and
hashed with its shape, and the per-sample digests are combined as ``sha256sum``-style lines
sorted by sample id.  So it does not depend on submission.json, on the order the videos are
stored in, on the archive (folder, zip, tar) or on the file format that holds the same pixels
(``.npy``, ``.npz``, PNG frames; a lossless mp4 decoding to the same pixels too).  The board
keeps it in each verification record (``extra.videos_hash``, signed) and refuses a second row
with the same videos (`videos_reused`).
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

from .format import Submission, hash_lines
from ..data.documents import Manifest

VIDEOS_HASH_VERSION = "videos-v1"  # in each line's digest input: a change of recipe changes every hash


def video_digest(video: np.ndarray) -> str:
    """sha256 of one decoded video: its shape and dtype, then its bytes (C order)."""
    arr = np.ascontiguousarray(video)
    h = hashlib.sha256(f"{VIDEOS_HASH_VERSION} {arr.dtype.str} {'x'.join(map(str, arr.shape))}\n".encode("ascii"))
    h.update(arr.tobytes())
    return h.hexdigest()


def videos_hash(sub: Submission | str | os.PathLike[str], *, manifest: Manifest | None = None) -> str:
    """The videos-only content hash of a submission (a folder, an archive or an open `Submission`).

    Raises `SubmissionError` when a video cannot be read (validate the submission first)."""
    if not isinstance(sub, Submission):
        with Submission(sub, manifest=manifest) as opened:
            return videos_hash(opened)
    return hash_lines({sample_id: video_digest(video) for sample_id, video in sub.iter_videos()})

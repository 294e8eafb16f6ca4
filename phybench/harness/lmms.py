"""phybench's tasks as lmms-eval tasks: condition frames in, generated frames out, phybench's metrics.

lmms-eval (PyPI ``lmms-eval``) is the one evaluation harness that runs video *generation*
models: a task's ``doc_to_visual`` hands the model its visual inputs, the model's
``generate_until`` answers each request with a string (for generators: the path of the file it
wrote) and the task's ``process_results`` turns that answer into per-document metric values,
which lmms-eval aggregates.  Its VBench port stops at "a video was generated"; here phybench's
scorer runs inside ``process_results``, so a phybench split is scored end to end in the harness:

* `write_task(split, out)` writes an lmms-eval task folder for one phybench split: the task
  YAML (``dataset_path: json``: the docs are an index of sample ids pinned to the split's hash),
  and a three-line ``phybench_lmms_utils.py`` that re-exports the functions below (lmms-eval's
  ``!function`` tags import from the YAML's own folder);
* `doc_to_visual(doc)`: the sample's condition frames, as PIL images, in frame order;
* `process_results(doc, results)`: reads the generated video (``.npy`` uint8 (T, H, W, 3),
  condition frames included, size-capped, no pickle, only inside the folder the backend
  wrote), scores it with `phybench.scoring.run.sample.score_sample` against the split row and
  returns phybench's per-video values; `nanmean` aggregates them the way `phybench score` does
  (videos without a value, e.g. untrackable ones for ``velocity_error``, are left out);
* `PhybenchLMMS` (in `lmms_backend`) is the model side: any phybench model
  (``MODULE:CLASS`` with ``generate(condition, num_frames)``, as `phybench run` takes) as an
  lmms-eval model named ``phybench``, registered through the ``lmms_eval.models`` entry point;
* `outputs_to_submission` packs the generated files into a phybench submission, so the same
  videos also give a full phybench results file (`phybench score`): the harness's numbers and
  phybench's are the same numbers (tests/test_lmms_adapter.py checks it).

lmms-eval itself is not a dependency: it requires torchvision, which phybench's pinned CPU
torch cannot import beside it (docs/harnesses.md says how it was run).
"""
from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .._version import __version__
from ..data.documents import Manifest
from ..data.documents import SplitRow

UTILS_MODULE = "phybench_lmms_utils"
METRICS = ("velocity_error_ranked", "velocity_error", "untrackable", "abnormal", "ssim", "psnr")
LOWER_IS_BETTER = {"velocity_error_ranked": True, "velocity_error": True, "untrackable": True, "abnormal": True,
                   "ssim": False, "psnr": False}
MAX_VIDEO_BYTES = 64 << 20  # a 32-frame 256 px uint8 video is 6.3 MB
OUTPUT_ROOT_ENV = "PHYBENCH_LMMS_OUTPUTS"  # process_results reads generated files only under this folder


class HarnessError(Exception):
    """A task folder or generated file phybench refuses; `code` names why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


def task_name(manifest: Manifest) -> str:
    """``phybench_<task>_<split>`` with only the characters lmms-eval task names use."""
    return f"phybench_{manifest['task']}_{manifest['split']}".replace("-", "_")


def write_task(split_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, limit: int | None = None,
               name: str | None = None) -> Path:
    """An lmms-eval task folder for one phybench split; returns the YAML's path.

    Pass the folder to lmms-eval with ``--include_path``.  The index pins every doc to the
    split's hash, so `process_results` refuses a doc of another split."""
    from ..data.split import SplitReader
    from ..io import atomic_write_many

    split_dir = Path(split_dir).resolve()
    manifest = SplitReader(split_dir).manifest
    name = name or task_name(manifest)
    if not name.replace("_", "").isalnum():
        raise HarnessError("harness_name", f"task name {name[:80]!r}: letters, digits and _ only")
    ids = [row["sample_id"] for row in SplitReader(split_dir).rows(["sample_id"])]
    ids = ids[:limit] if limit else ids
    index = "".join(json.dumps({"sample_id": sid, "split_dir": str(split_dir), "split_hash": manifest["split_hash"]},
                               sort_keys=True) + "\n" for sid in ids)
    out = Path(out_dir).resolve()
    fn = f"!function {UTILS_MODULE}"
    metrics = "".join(f"  - metric: {m}\n    aggregation: {fn}.nanmean\n    higher_is_better: "
                      f"{str(not LOWER_IS_BETTER[m]).lower()}\n" for m in METRICS)
    text = (f"# an lmms-eval task written by phybench {__version__} for split {manifest['task']}/{manifest['split']}\n"
            f"task: {name}\n"
            f"dataset_path: json\n"
            f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(out / f'{name}.jsonl'))}\n"
            f"test_split: test\n"
            f"output_type: generate_until\n"
            f"doc_to_visual: {fn}.doc_to_visual\n"
            f"doc_to_text: {fn}.doc_to_text\n"
            f"doc_to_target: sample_id\n"
            f"generation_kwargs:\n  max_new_tokens: 1\n  num_frames: {int(manifest['frames'])}\n  do_sample: false\n"
            f"process_results: {fn}.process_results\n"
            f"metric_list:\n{metrics}"
            f"metadata:\n  version: 1\n  phybench_split_hash: {manifest['split_hash']}\n")
    shim = ('"""lmms-eval imports this module by name from the task YAML\'s folder (written by phybench)."""\n'
            "from phybench.harness.lmms import doc_to_text, doc_to_visual, nanmean, process_results  # noqa: F401\n")
    atomic_write_many([(out / f"{name}.yaml", text.encode()), (out / f"{name}.jsonl", index.encode()),
                       (out / f"{UTILS_MODULE}.py", shim.encode())])
    return out / f"{name}.yaml"


@lru_cache(maxsize=8)
def _split(split_dir: str, split_hash: str) -> tuple[Any, dict[str, SplitRow]]:
    """(reader, rows by sample id) of a split whose manifest has `split_hash`, read once per process."""
    from ..data.split import SplitReader

    reader = SplitReader(split_dir)
    if reader.manifest["split_hash"] != split_hash:
        raise HarnessError("harness_split_hash", f"{split_dir} is not the split the task was written for "
                                                  f"({reader.manifest['split_hash'][:12]} != {split_hash[:12]})")
    return reader, {row["sample_id"]: row for row in reader.rows()}


def _row(doc: dict[str, Any]) -> tuple[Any, SplitRow]:
    reader, rows = _split(str(doc["split_dir"]), str(doc["split_hash"]))
    if doc["sample_id"] not in rows:
        raise HarnessError("harness_sample", f"sample {str(doc['sample_id'])[:80]!r} is not in {doc['split_dir']}")
    return reader, rows[doc["sample_id"]]


def condition_frames(doc: dict[str, Any]) -> np.ndarray:
    """uint8 (condition_frames, H, W, 3): what the model is given."""
    reader, row = _row(doc)
    return reader.video(row)[: int(reader.manifest["condition_frames"])]


def doc_to_visual(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> list[Any]:
    """The condition frames as PIL images, first frame first (lmms-eval's image convention)."""
    from PIL import Image

    return [Image.fromarray(frame) for frame in condition_frames(doc)]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    reader, _ = _row(doc)
    m = reader.manifest
    return (f"Continue the video: the first {m['condition_frames']} of {m['frames']} frames "
            f"({m['resolution']}x{m['resolution']}, {1 / float(m['frame_interval']):g} fps) are given; "
            f"generate all {m['frames']} frames, the given ones first.")


def _output_root() -> Path | None:
    root = os.environ.get(OUTPUT_ROOT_ENV)
    return Path(root).resolve() if root else None


def read_video(path: str | os.PathLike[str], expected: tuple[int, int, int]) -> np.ndarray:
    """A generated ``.npy`` video: a regular file under $PHYBENCH_LMMS_OUTPUTS (when set), at most
    64 MiB, uint8 (frames, H, W, 3) of the split's shape, read without pickle."""
    p = Path(path)
    if p.suffix != ".npy":
        raise HarnessError("harness_output", f"{str(path)[:200]!r} is not a .npy video (the backend's answer)")
    resolved = p.resolve()
    root = _output_root()
    if root is not None and root not in resolved.parents:
        raise HarnessError("harness_output", f"{p.name}: outside {root}")
    if p.is_symlink() or not resolved.is_file() or resolved.stat().st_size > MAX_VIDEO_BYTES:
        raise HarnessError("harness_output", f"{p.name}: not a regular file of at most {MAX_VIDEO_BYTES >> 20} MiB")
    video = np.load(resolved, allow_pickle=False)
    if video.dtype != np.uint8 or video.shape != (*expected[:1], expected[1], expected[2], 3):
        raise HarnessError("harness_output", f"{p.name}: {video.dtype} {video.shape}, expected uint8 "
                                             f"({expected[0]}, {expected[1]}, {expected[2]}, 3)")
    return video


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """phybench's per-video values for one generated video (NaN where a metric has none: an
    untrackable ball's velocity error, a video that could not be read)."""
    from ..scoring.run.sample import score_sample

    nan = {m: math.nan for m in METRICS}
    answer = results[0] if results else None
    answer = getattr(answer, "text", answer)  # lmms-eval's GenerationResult or a plain string
    if not isinstance(answer, str) or answer.startswith("["):  # "[GENERATION_FAILED] ..." and the like
        return {**nan, "untrackable": 1.0, "abnormal": 1.0}
    reader, row = _row(doc)
    m = reader.manifest
    video = read_video(answer, (int(m["frames"]), int(m["resolution"]), int(m["resolution"])))
    detail = score_sample(row, video, reader.video(row), m, ("velocity_error", "ssim", "psnr", "abnormal"))
    out = {"untrackable": 0.0 if detail.get("untrackable") is None else 1.0}  # None, or why the ball was lost
    for name in (m for m in METRICS if m != "untrackable"):
        value = detail.get(name)
        out[name] = float(value) if isinstance(value, (int, float, bool, np.bool_, np.number)) else math.nan
    if detail.get("excluded"):
        out = {**nan}
    return out


def nanmean(values: Iterable[float]) -> float:
    """The mean over documents that have a value (phybench's convention for per-video means)."""
    kept = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(kept) / len(kept) if kept else math.nan


def outputs_to_submission(task_yaml: str | os.PathLike[str], outputs: dict[str, str], out: str | os.PathLike[str],
                          model_name: str, sampler: dict[str, Any] | None = None) -> Path:
    """A phybench submission of the harness's generated files (sample id -> .npy path), so
    `phybench score` writes a full results file of the same videos."""
    from ..submission.writer import submission_meta, write_submission

    from .. import jsonsafe

    index = Path(task_yaml).with_suffix(".jsonl")
    docs = [jsonsafe.loads(line, index.name) for line in index.read_text().splitlines() if line]
    reader, _ = _row(docs[0])
    m = reader.manifest
    shape = (int(m["frames"]), int(m["resolution"]), int(m["resolution"]))
    meta = submission_meta(m, model_name, sampler=sampler or {"name": "lmms-eval"})
    videos = ((d["sample_id"], read_video(outputs[d["sample_id"]], shape)) for d in docs if d["sample_id"] in outputs)
    return write_submission(out, meta, videos)


def manifests() -> Any:
    """The ``lmms_eval.models`` entry point: phybench's backend as the lmms-eval model ``phybench``."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="phybench", simple_class_path="phybench.harness.lmms_backend.PhybenchLMMS")

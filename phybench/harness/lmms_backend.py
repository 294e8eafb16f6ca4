"""The lmms-eval model ``phybench``: any phybench model run by lmms-eval on phybench's tasks.

Loaded by lmms-eval through the ``lmms_eval.models`` entry point (`phybench.harness.lmms.manifests`),
never by phybench itself: importing this module imports lmms-eval.  The generation loop is
`generate_request`, which needs no lmms-eval and is what the tests drive.

    lmms-eval --model phybench --model_args model=phybench.examples.shift:Model,output_dir=OUT \\
        --tasks phybench_uniform_id_eval --include_path TASKS --output_path RESULTS
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from lmms_eval.api.model import lmms  # noqa: E402 - the base class lmms-eval's registry expects

from .lmms import OUTPUT_ROOT_ENV, HarnessError

PLAIN = re.compile(r"[A-Za-z0-9._-]{1,128}")


def generate_request(model: Any, visuals: Sequence[Any], num_frames: int, sample_id: str, out_dir: Path) -> str:
    """Run `model` on one request's condition frames; write ``<out_dir>/<sample_id>.npy`` (the id's parts as folders) and return its path.

    visuals: the task's condition frames (PIL images or uint8 (H, W, 3) arrays), first first."""
    condition = np.stack([np.asarray(v.convert("RGB") if hasattr(v, "convert") else v, dtype=np.uint8)
                          for v in visuals])  # (C, H, W, 3)
    video = np.asarray(model.generate(condition[None], num_frames))[0]  # phybench's API is batched: (B, C, ...) -> (B, T, ...)
    if video.dtype != np.uint8 or video.ndim != 4 or video.shape[0] != num_frames:
        raise HarnessError("harness_model", f"generate returned {video.dtype} {video.shape}; expected uint8 "
                                            f"({num_frames}, H, W, 3), condition frames included")
    parts = sample_id.split("/")  # e.g. uniform/id-eval/0000000: one folder per part, as a submission lays it out
    if not all(PLAIN.fullmatch(p) and p not in (".", "..") for p in parts):
        raise HarnessError("harness_sample", f"sample id {sample_id[:80]!r} is not a path of plain names")
    path = out_dir.joinpath(*parts[:-1], f"{parts[-1]}.npy")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(video), allow_pickle=False)
    return str(path)


class PhybenchLMMS(lmms):
    """``--model_args model=MODULE:CLASS,output_dir=DIR[,key=value...]``: the other keys go to the
    class, as `phybench run --model-args` gives them."""

    def __init__(self, model: str = "phybench.examples.shift:Model", output_dir: str = "phybench-lmms-outputs",
                 **model_args: Any) -> None:
        super().__init__()
        from ..pipeline import load_model

        model_args = {k: v for k, v in model_args.items() if k not in ("batch_size", "device", "max_batch_size")}
        self.model = load_model(model, model_args)
        self.output_dir = Path(output_dir).resolve()
        os.environ.setdefault(OUTPUT_ROOT_ENV, str(self.output_dir))  # process_results reads only under it

    def generate_until(self, requests: list[Any]) -> list[str]:
        from tqdm import tqdm

        out = []
        for req in tqdm(requests, desc="phybench generate"):
            _ctx, gen_kwargs, doc_to_visual, doc_id, task, split = req.args
            doc = self.task_dict[task][split][doc_id]
            visuals: Callable[[Any], Sequence[Any]] = doc_to_visual
            try:
                out.append(generate_request(self.model, visuals(doc), int(gen_kwargs.get("num_frames", 32)),
                                            str(doc["sample_id"]), self.output_dir / task))
            except HarnessError as exc:
                out.append(f"[GENERATION_FAILED] {exc}")
        return out

    def loglikelihood(self, requests: list[Any]) -> list[Any]:
        raise NotImplementedError("phybench's tasks are generation tasks: no loglikelihood")

    def generate_until_multi_round(self, requests: list[Any]) -> list[str]:
        raise NotImplementedError("phybench's tasks are single-round generation tasks")

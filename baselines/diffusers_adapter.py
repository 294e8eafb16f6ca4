"""Run any `diffusers` image-to-video or video-to-video pipeline as a phybench model.

    phybench run --model phybench_baselines.diffusers_adapter:Pipeline \\
        --model-args pipeline=stabilityai/stable-video-diffusion-img2vid-xt,steps=25,guidance=3,seed=0,height=576,width=1024,fps=7 \\
        --tasks uniform --protocol lite --out runs/svd

`pipeline` is a local folder (`save_pretrained` layout) or a Hub id; it is loaded with
``DiffusionPipeline.from_pretrained(..., use_safetensors=True)`` (no pickled weights), on the
GPU in bfloat16 when there is one, else on the CPU in float32 (``device=``, ``dtype=`` override).

**What the pipeline is given** (read from its ``__call__`` signature, so one adapter serves
Stable Video Diffusion, CogVideoX, LTX-Video, Wan, ...):

* ``frames=last`` (default, image-to-video): the last condition frame as ``image``;
  ``frames=all`` (video-to-video): every condition frame as ``video``.  The submission
  records which (``condition_frames_used`` 1 or all).
* the sample's plain-words prompt (``prompts.csv``, `phybench.data.conditions`) as
  ``prompt`` when the pipeline takes one and ``text=1`` (default); the run is then on the
  frames+text track.  A pipeline without ``prompt`` (SVD), or ``text=0`` (an empty prompt),
  is on the frames track.
* ``steps`` as ``num_inference_steps``; ``guidance`` as ``guidance_scale``, or as
  ``max_guidance_scale`` for a pipeline that ramps guidance over frames (SVD);
  ``num_frames``, ``height``, ``width`` and a ``generator`` per sample; any other
  model-arg the pipeline's ``__call__`` names (``fps=7``, ``motion_bucket_id=127``,
  ``negative_prompt=...``) is passed through as is; a name it does not take is an error.

**Geometry.**  The square condition frame is padded with the white background to the
pipeline's aspect ratio (``width`` x ``height``; default: the clip's resolution rounded up
to a multiple of 16, square) and resized to it with PIL bicubic, so distances scale the same
along x and y and a velocity stays a velocity.  Each output frame is cropped back to that
square and resized to the clip's resolution with PIL bicubic (anti-aliased when shrinking).

**Frames.**  Output frame 0 is taken to show the last condition frame (``frames=last``) or the
first one (``frames=all``); clip frame t is output frame round((t - that frame's index) x
``stride``).  ``stride`` (default 1) is output frames per clip frame: 1 when the model's frame
rate is the clip's (10 fps), e.g. 0.7 for a 7 fps model.  The pipeline is asked for just enough
frames (``num_frames`` overrides: some models need 4k+1); past the last output frame the last
frame is held.  Only the frames after the condition frames are returned; `phybench run` puts
the true condition frames in front.

**Seeds.**  Each sample's generator is seeded with ``seed`` plus a hash of its condition
frames, so a video does not depend on batching, sharding or resuming.  ``batch`` (default:
the runner's ``--batch-size``) caps the samples per pipeline call; pipelines that cannot
batch images take ``batch=1``.
"""
from __future__ import annotations

import hashlib
import inspect
import math
from typing import Any, Sequence

import numpy as np

_GUIDANCE_NAMES = ("guidance_scale", "max_guidance_scale")
_OWN_ARGS = {"pipeline", "steps", "guidance", "seed", "frames", "text", "stride", "num_frames", "height", "width",
             "batch", "device", "dtype"}


class AdapterError(ValueError):
    """The pipeline or the model-args cannot be used; the message says why."""


def _load(pipeline: Any, device: str, dtype: str) -> tuple[Any, str]:
    """(pipeline object on its device, device) from a path, a Hub id or an already built pipeline."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
    torch_dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}.get(dtype)
    if torch_dtype is None:
        raise AdapterError(f"dtype={dtype!r}: choose auto, bfloat16, float16 or float32")
    if isinstance(pipeline, str):
        from diffusers import DiffusionPipeline

        try:
            pipeline = DiffusionPipeline.from_pretrained(pipeline, torch_dtype=torch_dtype, use_safetensors=True)
        except (OSError, ValueError, EnvironmentError) as exc:
            raise AdapterError(f"pipeline={pipeline!r} does not load as a diffusers pipeline: {exc}") from None
    if hasattr(pipeline, "to"):
        pipeline = pipeline.to(device)
    if hasattr(pipeline, "set_progress_bar_config"):
        pipeline.set_progress_bar_config(disable=True)
    return pipeline, device


def output_indices(generated: int, first_clip_frame: int, condition_frames: int, stride: float,
                   available: int) -> list[int]:
    """Output frame index of each generated clip frame (clip frames condition_frames .. +generated-1).

    Output frame 0 shows clip frame `first_clip_frame`; clip frame t is output frame
    round((t - first_clip_frame) * stride), held at the last available frame.
    """
    return [min(int(math.floor((t - first_clip_frame) * stride + 0.5)), available - 1)
            for t in range(condition_frames, condition_frames + generated)]


def frames_needed(generated: int, first_clip_frame: int, condition_frames: int, stride: float) -> int:
    """Output frames the pipeline must make so that no generated clip frame is held."""
    return output_indices(generated, first_clip_frame, condition_frames, stride, 1 << 30)[-1] + 1


def _to_pil(frame: np.ndarray, width: int, height: int):
    """Pad a square uint8 frame with white to width:height, then resize it (bicubic)."""
    from PIL import Image

    r = frame.shape[0]
    if width >= height:
        w, h = int(round(r * width / height)), r
    else:
        w, h = r, int(round(r * height / width))
    canvas = np.full((h, w, 3), 255, np.uint8)
    y0, x0 = (h - r) // 2, (w - r) // 2
    canvas[y0:y0 + r, x0:x0 + r] = frame
    return Image.fromarray(canvas).resize((width, height), Image.Resampling.BICUBIC)


def _from_output(frame: np.ndarray, resolution: int) -> np.ndarray:
    """Crop the central square of an output frame (uint8 H x W x 3) and resize it to the clip's resolution."""
    from PIL import Image

    h, w = frame.shape[:2]
    s = min(h, w)
    y0, x0 = (h - s) // 2, (w - s) // 2
    img = Image.fromarray(np.ascontiguousarray(frame[y0:y0 + s, x0:x0 + s]))
    return np.asarray(img.resize((resolution, resolution), Image.Resampling.BICUBIC), dtype=np.uint8)


def _as_uint8_videos(out: Any, batch: int) -> list[np.ndarray]:
    """A pipeline's output (np, torch or PIL frames; in .frames or not) as uint8 (F, H, W, 3) videos."""
    frames = out.frames if hasattr(out, "frames") else out[0] if isinstance(out, tuple) else out
    if hasattr(frames, "detach"):  # a torch tensor
        frames = frames.detach().float().cpu().numpy()
    videos = []
    for video in list(frames)[:batch]:
        if isinstance(video, (list, tuple)):  # PIL frames
            video = np.stack([np.asarray(f.convert("RGB")) for f in video])
        video = np.asarray(video)
        if video.dtype != np.uint8:
            video = np.clip(np.rint(video.astype(np.float64) * 255.0), 0, 255).astype(np.uint8)
        if video.ndim != 4 or video.shape[-1] != 3:
            raise AdapterError(f"the pipeline returned a video of shape {video.shape}; expected (frames, H, W, 3)")
        videos.append(video)
    if len(videos) != batch:
        raise AdapterError(f"the pipeline returned {len(videos)} videos for {batch} inputs; try batch=1")
    return videos


def sample_seed(seed: int, condition: np.ndarray) -> int:
    """seed plus a hash of the sample's condition frames: the same video however the run is batched."""
    digest = hashlib.sha256(np.ascontiguousarray(condition).tobytes()).digest()
    return (int(seed) + int.from_bytes(digest[:7], "little")) % (1 << 63)


class Pipeline:
    """A `diffusers` video pipeline as a phybench model (see the module docstring for the arguments)."""

    def __init__(self, pipeline: Any, steps: int = 25, guidance: float | None = None, seed: int = 0,
                 frames: str = "last", text: int = 1, stride: float = 1.0, num_frames: int | None = None,
                 height: int | None = None, width: int | None = None, batch: int | None = None,
                 device: str = "auto", dtype: str = "auto", **call_args: Any) -> None:
        if frames not in ("last", "all"):
            raise AdapterError(f"frames={frames!r}: choose last (image-to-video) or all (video-to-video)")
        if not stride > 0:
            raise AdapterError(f"stride={stride!r} must be positive")
        self.pipe, self.device = _load(pipeline, device, dtype)
        params = inspect.signature(self.pipe.__call__).parameters
        self.call_params = set(params)
        self.input_name = "image" if frames == "last" else "video"
        if self.input_name not in params:
            raise AdapterError(f"{type(self.pipe).__name__} takes no `{self.input_name}`: frames={frames} needs an "
                               f"{'image' if frames == 'last' else 'video'}-to-video pipeline")
        unknown = sorted(set(call_args) - self.call_params)
        if unknown:
            raise AdapterError(f"--model-args {', '.join(unknown)}: neither an adapter argument ({', '.join(sorted(_OWN_ARGS))}) "
                               f"nor a parameter of {type(self.pipe).__name__}.__call__")
        self.steps, self.guidance, self.seed, self.stride = int(steps), guidance, int(seed), float(stride)
        self.num_frames, self.height, self.width, self.batch = num_frames, height, width, batch
        self.call_args = call_args
        self.frames_mode = frames
        # what the submission records: image-to-video reads one frame, video-to-video all of them
        self.condition_frames_used = 1 if frames == "last" else None
        self.takes_prompt = bool(text) and "prompt" in params
        # The runner passes prompts only to a generate that names them, so the recorded track is what
        # the pipeline really gets: a pipeline without `prompt` keeps the frames-only signature.
        self.generate = self._generate_with_prompts if self.takes_prompt else self._generate

    # ------------------------------------------------------------------ generate
    def _generate_with_prompts(self, condition: np.ndarray, num_frames: int, prompts: Sequence[str] | None = None
                               ) -> np.ndarray:
        return self._run(condition, num_frames, prompts)

    def _generate(self, condition: np.ndarray, num_frames: int) -> np.ndarray:
        return self._run(condition, num_frames, None)

    def _run(self, condition: np.ndarray, num_frames: int, prompts: Sequence[str] | None) -> np.ndarray:
        condition = np.asarray(condition)
        B = condition.shape[0]
        step = self.batch or B
        out = []
        for a in range(0, B, step):
            out.extend(self._call(condition[a:a + step], num_frames,
                                  None if prompts is None else list(prompts[a:a + step])))
        return np.stack(out)

    def _call(self, condition: np.ndarray, num_frames: int, prompts: list[str] | None) -> list[np.ndarray]:
        import torch

        B, C, R = condition.shape[0], condition.shape[1], condition.shape[2]
        generated = num_frames - C
        height = self.height or int(math.ceil(R / 16) * 16)
        width = self.width or height
        first = C - 1 if self.frames_mode == "last" else 0
        want = self.num_frames or frames_needed(generated, first, C, self.stride)
        if self.frames_mode == "last":
            inputs: list[Any] = [_to_pil(c[-1], width, height) for c in condition]
        else:
            inputs = [[_to_pil(f, width, height) for f in c] for c in condition]
        gen_device = self.device if str(self.device).startswith("cuda") else "cpu"
        kwargs: dict[str, Any] = {
            self.input_name: inputs if B > 1 else inputs[0],
            "generator": [torch.Generator(gen_device).manual_seed(sample_seed(self.seed, c)) for c in condition],
            "output_type": "np",
            **self.call_args,
        }
        optional = {"num_inference_steps": self.steps, "num_frames": want, "height": height, "width": width}
        kwargs.update({k: v for k, v in optional.items() if k in self.call_params and k not in self.call_args})
        if self.guidance is not None:
            name = next((n for n in _GUIDANCE_NAMES if n in self.call_params), None)
            if name is None:
                raise AdapterError(f"guidance={self.guidance}: {type(self.pipe).__name__} takes no guidance scale")
            kwargs[name] = float(self.guidance)
        if "prompt" in self.call_params and "prompt" not in self.call_args:
            texts = prompts if self.takes_prompt and prompts is not None else [""] * B
            kwargs["prompt"] = texts if B > 1 else texts[0]
        with torch.inference_mode():
            result = self.pipe(**kwargs)
        videos = _as_uint8_videos(result, B)
        out = []
        for video in videos:
            idx = output_indices(generated, first, C, self.stride, len(video))
            out.append(np.stack([_from_output(video[i], R) for i in idx]))
        return out

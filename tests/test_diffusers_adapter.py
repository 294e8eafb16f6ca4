"""The diffusers adapter: a tiny random Stable Video Diffusion pipeline, loaded by path, through
`phybench run`, pack and score; a prompt-taking stand-in for what it passes and how it resamples."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("diffusers")
pytest.importorskip("transformers")

from phybench.cli import main  # noqa: E402
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.tasks import get_task  # noqa: E402
from phybench_baselines.diffusers_adapter import AdapterError, Pipeline, frames_needed, output_indices  # noqa: E402


def tiny_svd(folder) -> None:
    """A randomly initialised StableVideoDiffusionPipeline built from config, saved to `folder`."""
    import torch
    from diffusers import (AutoencoderKLTemporalDecoder, EulerDiscreteScheduler, StableVideoDiffusionPipeline,
                           UNetSpatioTemporalConditionModel)
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    torch.manual_seed(0)
    unet = UNetSpatioTemporalConditionModel(
        sample_size=4, in_channels=8, out_channels=4,
        down_block_types=("CrossAttnDownBlockSpatioTemporal", "DownBlockSpatioTemporal"),
        up_block_types=("UpBlockSpatioTemporal", "CrossAttnUpBlockSpatioTemporal"),
        block_out_channels=(32, 64), addition_time_embed_dim=4, projection_class_embeddings_input_dim=12,
        layers_per_block=1, cross_attention_dim=8, transformer_layers_per_block=1, num_attention_heads=(2, 2),
        num_frames=8)
    vae = AutoencoderKLTemporalDecoder(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 3,
                                       block_out_channels=(32, 32, 32), layers_per_block=1, latent_channels=4)
    # SVD resizes its image to 224 px for CLIP: a 4 x 4 grid of 56 px patches keeps the encoder tiny
    encoder = CLIPVisionModelWithProjection(CLIPVisionConfig(
        hidden_size=8, projection_dim=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
        image_size=224, patch_size=56))
    scheduler = EulerDiscreteScheduler(prediction_type="v_prediction", use_karras_sigmas=True,
                                       timestep_spacing="leading")
    StableVideoDiffusionPipeline(vae=vae, image_encoder=encoder, unet=unet, scheduler=scheduler,
                                 feature_extractor=CLIPImageProcessor(crop_size=224, size=224)).save_pretrained(folder)


@pytest.fixture(scope="module")
def uniform_split(tmp_path_factory):
    root = tmp_path_factory.mktemp("diffusers")
    generate(make_plan(get_task("uniform"), "id-eval", limit=2), root / "split", progress=False)
    return root / "split"


@pytest.mark.slow
def test_a_tiny_svd_pipeline_runs_through_phybench_run(uniform_split, tmp_path):
    from phybench.data.split import SplitReader

    tiny_svd(tmp_path / "svd")
    out = tmp_path / "run"
    args = ["run", "--model", "phybench_baselines.diffusers_adapter:Pipeline", "--model-args",
            f"pipeline={tmp_path / 'svd'},steps=2,guidance=2,seed=0,height=64,width=64",
            "--data", str(uniform_split), "--out", str(out), "--metrics", "velocity_error,ssim,psnr", "--quiet"]
    assert main(args) == 0
    work = out / "uniform-id-eval"
    meta = json.loads((work / "submission" / "submission.json").read_text())
    # SVD takes no prompt: an image-to-video run on the frames track, one condition frame read
    assert meta["conditioning"] == {"inputs": "frames", "condition_frames_used": 1}
    results = json.loads((out / "results" / "uniform-id-eval-diffusers_adapter.json").read_text())
    assert results["summary"]["overall"]["videos"] == 2 and results["model"]["conditioning"] == meta["conditioning"]
    reader = SplitReader(uniform_split)
    for row in reader.rows():
        generated = np.load(work / "generated" / f"{row['sample_id']}.npy")
        assert generated.shape == (29, 128, 128, 3) and generated.dtype == np.uint8
        assert generated.std() > 0  # a random network draws noise, not a copy of its input
        with np.load(work / "submission" / "videos" / f"{row['sample_id']}.npz") as z:
            packed = z["video"]
        truth = reader.video(row)
        assert (packed[:3] == truth[:3]).all() and (packed[3:] == generated).all()  # true condition frames first
    assert main(["leaderboard", "build", str(out / "results"), "--out", str(tmp_path / "site")]) == 0
    # the row is shown in its condition track
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["boards"][0]
    assert board["rows"][0]["meta"]["track"] == "frames, image-to-video"
    assert "frames, image-to-video" in (tmp_path / "site" / "leaderboard.md").read_text()


class FakeImageToVideo:
    """Stands in for a prompt-taking image-to-video pipeline: output frame j is the input image
    darkened by j grey levels, so which output frame went where can be read back."""

    def __init__(self):
        self.calls = []

    def __call__(self, image, prompt=None, num_frames=49, num_inference_steps=50, guidance_scale=6.0,
                 height=480, width=720, generator=None, output_type="pil", negative_prompt=None):
        images = image if isinstance(image, list) else [image]
        self.calls.append(dict(image=images, prompt=prompt, num_frames=num_frames, steps=num_inference_steps,
                               guidance=guidance_scale, height=height, width=width, generators=len(generator),
                               negative_prompt=negative_prompt))
        frames = np.stack([[np.asarray(im, np.float32) / 255.0 - j / 255.0 for j in range(num_frames)]
                           for im in images])
        return type("Out", (), {"frames": np.clip(frames, 0, 1)})()


def test_prompt_taking_pipeline_gets_the_prompts_and_is_resampled():
    from phybench.conditioning import track

    fake = FakeImageToVideo()
    model = Pipeline(pipeline=fake, steps=3, guidance=5, stride=2, height=64, width=96, negative_prompt="blurry")
    assert track(model) == "frames+text" and model.condition_frames_used == 1
    cond = np.zeros((2, 3, 32, 32, 3), np.uint8)
    cond[:, -1] = 200  # the last condition frame, the one fed in
    cond[1, -1, :, :16] = 100
    videos = model.generate(cond, 10, prompts=["first", "second"])
    call = fake.calls[-1]
    assert call["prompt"] == ["first", "second"] and call["negative_prompt"] == "blurry"
    assert (call["steps"], call["guidance"], call["height"], call["width"]) == (3, 5.0, 64, 96)
    assert call["num_frames"] == frames_needed(7, 2, 3, 2.0) == 15 and call["generators"] == 2
    image = np.asarray(call["image"][0])
    assert image.shape == (64, 96, 3)
    assert (image[:, :8] == 255).all() and (image[:, -8:] == 255).all()  # padded with white, not stretched
    assert abs(int(image[32, 48, 0]) - 200) <= 1
    assert videos.shape == (2, 7, 32, 32, 3) and videos.dtype == np.uint8
    # clip frame t (3..9) is output frame round((t - 2) * 2) = 2, 4, ..., 14: darkened by that many levels
    assert [200 - int(v[16, 16, 0]) for v in videos[0]] == [2, 4, 6, 8, 10, 12, 14]
    assert abs(int(videos[1, 0, 16, 4, 0]) - 98) <= 1 and abs(int(videos[1, 0, 16, 28, 0]) - 198) <= 1

    quiet = Pipeline(pipeline=fake, text=0, batch=1)  # no prompt: frames track, an empty prompt, one per call
    assert track(quiet) == "frames"
    quiet.generate(cond, 10)
    assert [c["prompt"] for c in fake.calls[-2:]] == ["", ""] and fake.calls[-1]["num_frames"] == 8


def test_frame_choice_and_bad_arguments():
    assert output_indices(4, 2, 3, 1.0, 100) == [1, 2, 3, 4]
    assert output_indices(4, 0, 3, 1.0, 5) == [3, 4, 4, 4]  # video-to-video; past the end the last frame is held
    assert output_indices(3, 2, 3, 0.7, 100) == [1, 1, 2]
    with pytest.raises(AdapterError, match="nope"):
        Pipeline(pipeline=FakeImageToVideo(), nope=1)
    with pytest.raises(AdapterError, match="takes no `video`"):
        Pipeline(pipeline=FakeImageToVideo(), frames="all")

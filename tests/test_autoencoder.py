"""The (2+1)D video autoencoder: shapes, causality, nearest-neighbour init, save/load, training."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from phybench_baselines.dit import train_autoencoder  # noqa: E402
from phybench_baselines.dit.autoencoder import (  # noqa: E402
    AEConfig,
    PixelShuffleUpsample,
    VideoAutoencoder,
    load_autoencoder,
    save_autoencoder,
)
from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import make_plan  # noqa: E402
from phybench.tasks import get_task  # noqa: E402


def micro(**overrides) -> AEConfig:
    base = dict(channels=(8, 8, 8, 8), blocks=1, norm="group", groups=4)
    base.update(overrides)
    if "spatial" in overrides and "channels" not in overrides:
        base["channels"] = (8,) * (int(overrides["spatial"]).bit_length())
    return AEConfig(**base)


def randomised(cfg: AEConfig, seed: int = 0) -> VideoAutoencoder:
    """A model whose zero-initialised temporal convs are random too, so causality is tested."""
    torch.manual_seed(seed)
    model = VideoAutoencoder(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("spatial,temporal,norm", [pytest.param(8, 4, "group", marks=pytest.mark.slow),
                                                   pytest.param(4, 2, "channel", marks=pytest.mark.slow), (2, 1, "group")])
def test_shapes_and_compression(spatial, temporal, norm):
    model = VideoAutoencoder(micro(spatial=spatial, temporal=temporal, norm=norm, latent_channels=4))
    x = torch.rand(2, 3, 8, 32, 32) * 2 - 1
    with torch.no_grad():
        z = model.encode(x)
        y = model.decode(z)
    assert z.shape == (2, 4, 8 // temporal, 32 // spatial, 32 // spatial)
    assert y.shape == x.shape
    with pytest.raises(ValueError, match="divisible"):
        model.encode(torch.zeros(1, 3, 8 + temporal // 2 if temporal > 1 else 8, 33, 32))


def test_config_rejects_bad_shapes():
    with pytest.raises(ValueError, match="stages"):
        AEConfig(spatial=8, channels=(8, 8))
    with pytest.raises(ValueError, match="powers of 2"):
        AEConfig(spatial=8, temporal=3)


def test_encoder_and_decoder_are_causal():
    model = randomised(micro())  # 8x space, 4x time
    x = torch.rand(1, 3, 16, 16, 16) * 2 - 1
    with torch.no_grad():
        z = model.encode(x)  # (1, 4, 4, 2, 2)
        y = model.decode(z)
        for t in range(1, 16):  # change frames >= t: latent groups ending before t must not move
            x2 = x.clone()
            x2[:, :, t:] = torch.rand_like(x2[:, :, t:])
            z2 = model.encode(x2)
            done = t // 4  # groups 0 .. done-1 hold only frames < t
            assert torch.equal(z2[:, :, :done], z[:, :, :done]), t
            assert not torch.allclose(z2[:, :, done], z[:, :, done]), t  # the group holding t does move
        for g in range(1, 4):  # change latent groups >= g: frames before g * 4 must not move
            z2 = z.clone()
            z2[:, :, g:] += 1.0
            y2 = model.decode(z2)
            assert torch.equal(y2[:, :, :4 * g], y[:, :, :4 * g]), g
            assert not torch.allclose(y2[:, :, 4 * g], y[:, :, 4 * g]), g


def test_upsampler_starts_as_nearest_interpolation():
    up = PixelShuffleUpsample(5)
    x = torch.randn(3, 5, 7, 6)
    assert torch.equal(up.nearest(x), F.interpolate(x, scale_factor=2, mode="nearest"))
    model = VideoAutoencoder(micro())
    z = torch.randn(1, 8, 2, 4, 4)
    assert torch.equal(model.dec_up[0].space.nearest(z[:, :, 0]), F.interpolate(z[:, :, 0], scale_factor=2))


@pytest.mark.slow
def test_save_load_round_trip_and_tamper(tmp_path):
    model = randomised(micro())
    model.scale.fill_(0.37)
    save_autoencoder(model, tmp_path / "ae", info={"steps": 0})
    loaded = load_autoencoder(tmp_path / "ae")
    assert not loaded.training and not any(p.requires_grad for p in loaded.parameters())
    assert float(loaded.scale) == pytest.approx(0.37)
    x = torch.rand(1, 3, 8, 16, 16) * 2 - 1
    with torch.no_grad():
        assert torch.equal(loaded.encode(x), model.encode(x))
        assert torch.equal(loaded.decode(model.encode(x)), model.decode(model.encode(x)))
    weights = tmp_path / "ae" / "autoencoder.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256"):
        load_autoencoder(tmp_path / "ae")


@pytest.mark.slow
def test_training_lowers_the_loss(tmp_path):
    train = tmp_path / "train"
    generate(make_plan(get_task("uniform"), "train-30k", None, 64, None), train, progress=False)
    # 4x / 2x: small enough to leave the mean-image plateau within 40 CPU steps
    sets = ["spatial=4", "temporal=2", "channels=[8,16,16]", "crop=32", "frames=4", "batch_size=4", "lr=0.002",
            "warmup_steps=1"]
    args = ["--train-data", str(train), "--config", "tiny", "--scale-clips", "1", "--no-progress", "--set", *sets]
    train_autoencoder.main(args + ["--out", str(tmp_path / "ae0"), "--steps", "1"])  # ~ the initial model
    history = train_autoencoder.main(args + ["--out", str(tmp_path / "ae"), "--steps", "40"])
    assert len(history) == 40
    held_out = train_autoencoder.ClipSampler(train, 4, 32, seed=123).batch(8)  # a fixed batch

    def loss(folder):
        model = load_autoencoder(folder)
        with torch.no_grad():
            return train_autoencoder.loss_fn(model(held_out), held_out, model.cfg.edge_weight).item()

    assert loss(tmp_path / "ae") < 0.5 * loss(tmp_path / "ae0")
    model = load_autoencoder(tmp_path / "ae")
    assert 0 < float(model.scale) < 1e3 and model.cfg.crop == 32

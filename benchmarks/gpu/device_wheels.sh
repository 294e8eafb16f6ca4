#!/usr/bin/env bash
# The wheels the GPU machine's image lacks, for `paper_scale.sh` there (no internet on that machine).
# The image's python3 is CPython 3.12 with torch, accelerate, numpy, pyarrow, scipy, numba, h5py,
# safetensors, huggingface_hub, jinja2, imageio, pillow, tqdm and torchmetrics; phybench needs these
# besides (imageio-ffmpeg only for mp4, left out).  Run here, with PyPI reachable:
#
#   bash benchmarks/gpu/device_wheels.sh .gpuwheels     # ~16 MB; keep the folder out of git (.git/info/exclude)
#
# then, on the device (carry the folder), before the script (the 2026-11-29 run, docs/baselines.md):
#
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpuwheels/*.whl
#   mkdir -p .pp && ln -sfn $PWD/baselines .pp/phybench_baselines
#   export PYTHONPATH=/tmp/site:$PWD:$PWD/.pp
#   TRAIN_S=240 SAMPLE_PRECISION=bf16 PYTHON=python3 bash benchmarks/gpu/paper_scale.sh $OUT
set -euo pipefail
DEST=${1:?usage: device_wheels.sh DEST}
python -m pip download --dest "$DEST" --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --no-deps \
    box2d==2.3.10 zlib-ng jsonschema jsonschema-specifications referencing rpds-py datasets dill multiprocess \
    diffusers importlib-metadata cryptography cffi pycparser
ls "$DEST"

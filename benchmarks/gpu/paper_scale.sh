#!/usr/bin/env bash
# The DiT at the paper's token count on one GPU, end to end, in about 9 minutes of wall time:
# generate the uniform splits on the machine's CPUs, train a pixel-space DiT-B for a fixed
# time budget in bf16 (HF Accelerate, `phybench_baselines.dit.train`), sample the lite ID and
# OOD splits, and write into OUT at most 8 files (each well under 16 MB):
#   pack-id-{0,1}.npz, pack-ood-{0,1}.npz   the submissions at the model's 32 px, two files a
#                 split (200 noisy videos can reach 18 MB); rebuilt elsewhere bit for bit with
#                 `python -m phybench_baselines.dit.compact unpack pack-id-*.npz --data SPLIT --out SUB`
#   timing.json   steps, steps/s, counted FLOPs, achieved TFLOP/s, MFU, the measured matmul rate
#   run.json      the training config, training split, split hashes and software
#   log.jsonl     the training loss every 25 steps
#
#   bash benchmarks/gpu/paper_scale.sh OUT                  # one H100 (16 CPU cores beside it)
#   TINY=1 bash benchmarks/gpu/paper_scale.sh OUT           # the CPU check: same steps, tiny sizes (~1 min)
#
# Why these sizes.  The paper's DiT-B sees 32 frames at 128 px through a VAE with 8x spatial
# and (about) 4x temporal compression and 2x2 patches: about 8 x 8 x 8 = 512 tokens a clip.
# Without a pretrained VAE on the machine (training one would take the whole budget) the run
# diffuses pixels at 32 px with 4x4 patches on 8-frame windows: 8 x 8 x 8 = 512 tokens, the
# same sequence, rolled out 5 frames a window at sampling time (`sample.rollout`).  Knobs:
# TRAIN_S (training-loop seconds, default 300), STEPS_CAP, BATCH, LR, WORKERS, SAMPLE_STEPS,
# EXTRA_SET (more config overrides, e.g. "compile=true"), SKIP_SAMPLE=1 (a throughput run only),
# SAMPLE_PRECISION (fp32, the default; or bf16: bf16 autocast was not why the first run's samples
# were colour noise, docs/baselines.md "Why the first GPU run gave colour noise").
set -euo pipefail
OUT=${1:?usage: paper_scale.sh OUT}
W=${WORK:-$(mktemp -d)}
TINY=${TINY:-0}
PY=${PYTHON:-python3}
mkdir -p "$OUT" "$W/data"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
t_start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t_start ))s] $*"; }

if [ "$TINY" = 1 ]; then
  LIMIT="--limit 8"; TRAIN_LIMIT="--limit 64"; WORKERS=${WORKERS:-0}
  SET="depth=2 width=64 heads=2 steps=${STEPS_CAP:-3} batch_size=${BATCH:-4} max_seconds=${TRAIN_S:-60} sample_steps=${SAMPLE_STEPS:-2}"
  GEN_WORKERS=1
else
  LIMIT="--protocol lite"; TRAIN_LIMIT=""; WORKERS=${WORKERS:-12}
  SET="size=B steps=${STEPS_CAP:-100000} batch_size=${BATCH:-256} max_seconds=${TRAIN_S:-300} sample_steps=${SAMPLE_STEPS:-50}"
  GEN_WORKERS=${GEN_WORKERS:-14}
fi
# shared: pixel space, 32 px, 4x4 patches, 8-frame windows (512 tokens), DDPM (zero-SNR) schedule,
# AdamW 3e-4 after 100 warm-up steps, and the issue-46 recipe (docs/baselines.md, "Why the first GPU
# run gave colour noise"): the frames to generate carry the last condition frame in their condition
# channels (cond_fill=last), the network predicts the clean clip as that frame plus a residual with
# the loss on the clean clip (prediction=x0_residual: at init it is copy-last, not noise), cells that
# move weigh 21x (change_weight=20), and the EMA 0.995 warms up (ema_warmup: no share of the init)
COMMON="vae=None resolution=32 patch=4 frames=8 windows=true lr=${LR:-3e-4} warmup_steps=100 ema_decay=0.995
        ema_warmup=true cond_fill=last prediction=x0_residual change_weight=20
        num_workers=$WORKERS log_every=25 ckpt_every=1000000 eval_every=0 keep_checkpoints=1"

env=$($PY -c "import torch, sys, os; print('python', sys.version.split()[0], 'torch', torch.__version__,
  torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu', os.cpu_count(), 'cpus')")
stamp "$env"

stamp "generate"
$PY -m phybench.cli generate uniform --split train-30k --out "$W/data/uniform-train-30k" \
    --workers "$GEN_WORKERS" --quiet $TRAIN_LIMIT
for s in id-eval ood-eval; do
  $PY -m phybench.cli generate uniform --split $s --out "$W/data/uniform-$s" --workers "$GEN_WORKERS" --quiet $LIMIT
done

stamp "train ($SET)"
$PY -m phybench_baselines.dit.train --config paper --train-data "$W/data/uniform-train-30k" \
    --out "$W/run" --set $COMMON $SET ${EXTRA_SET:-} > "$W/train.log" 2>&1 || { tr '\r' '\n' < "$W/train.log" | tail -40; exit 1; }
tr '\r' '\n' < "$W/train.log" | grep -v '^ *$' | tail -3
cp "$W/run/log.jsonl" "$OUT/"
$PY - "$W" "$env" > "$OUT/run.json" <<'PYEOF'
import json, sys, pathlib
w = pathlib.Path(sys.argv[1])
print(json.dumps({"config": json.loads((w / "run/config.json").read_text()),
                  "train_split": json.loads((w / "run/train_split.json").read_text()),
                  "splits": {p.name: json.loads((p / "manifest.json").read_text())["split_hash"]
                             for p in sorted((w / "data").iterdir())},
                  "env": sys.argv[2]}, indent=2))
PYEOF

stamp "timing"
matmul=""; [ "$TINY" = 1 ] || matmul="--matmul"
$PY "$(dirname "$0")/mfu.py" "$W/run" $matmul > "$OUT/timing.json"
cat "$OUT/timing.json"

[ "${SKIP_SAMPLE:-0}" = 1 ] && { stamp "done (no sampling)"; exit 0; }
for s in id ood; do
  stamp "sample $s"
  $PY -m phybench_baselines.dit.sample --checkpoint "$W/run" --data "$W/data/uniform-$s-eval" \
      --out "$W/sub-$s" --batch-size 200 --quiet --name "dit-B-pixels32-gpu" --precision "${SAMPLE_PRECISION:-fp32}"
  # the log says at once whether the videos hold a ball (the first run's bf16 samples were colour noise)
  $PY -m phybench.cli score "$W/sub-$s" --data "$W/data/uniform-$s-eval" --metrics velocity_error --quiet \
      --workers "${SCORE_WORKERS:-8}" | grep -E "^\| (group|overall)" || true
  $PY -m phybench_baselines.dit.compact pack "$W/sub-$s" "$OUT/pack-$s.npz" --model-resolution 32 --parts 2 > /dev/null
done
ls -l "$OUT"
stamp "done"

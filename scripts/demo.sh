#!/usr/bin/env bash
# The demo: a 4-rank data-parallel training job (real PyTorch, CPU, gloo) records its profiled
# steps with torch.profiler, and rankscope reads every rank's trace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

OUT=${1:-out/demo}
BIN=${RANKSCOPE_BIN:-rankscope}
rm -rf "$OUT" && mkdir -p "$OUT"
echo "demo: training 4 ranks with torchrun (gloo, CPU), profiling 4 steps -> $OUT/traces"
OMP_NUM_THREADS=1 python3 -m torch.distributed.run --nproc_per_node=4 workloads/ddp_train.py \
  --steps 8 --profile-dir "$OUT/traces" 2> "$OUT/torchrun.log" | tail -1
"$BIN" info "$OUT/traces"

#!/usr/bin/env bash
# Ingest benchmark: throughput (MB/s of JSON, events/s) single thread and all threads, peak RSS,
# on the real traces and on a >= 1 GB trace assembled from them, and the ratio to Holistic Trace
# Analysis (HTA) on the same files. Reports numbers; passes or fails nothing.
#
#   bench/run_ingest_bench.sh [--with-hta]      (HTA goes into its own venv under build/)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=build/dev/bench/rankscope_ingest_bench
SHARED=${RANKSCOPE_SHARED:-../shared}
BIG=${RANKSCOPE_BIG_TRACE:-build/bench/big.pt.trace.json}

cmake --build build/dev --target rankscope_ingest_bench rankscope_micro_bench >/dev/null
mkdir -p "$(dirname "$BIG")"
if [ ! -f "$BIG" ]; then
  python3 bench/make_big_trace.py --size-mb 1100 --out "$BIG" --shared "$SHARED"
fi
if [ ! -f "$BIG.gz" ]; then
  gzip -6 -k -c "$BIG" > "$BIG.gz"
fi

echo "== assembled trace, one thread"
"$BENCH" --threads 1 --repeat 5 "$BIG" | tail -1
"$BENCH" --threads 1 --repeat 5 "$BIG.gz" | tail -1
echo "== the shared corpus (16 gzip traces), 1 and $(nproc) threads"
"$BENCH" --threads 1 --repeat 5 "$SHARED/traces" | tail -1
"$BENCH" --threads "$(nproc)" --repeat 5 "$SHARED/traces" | tail -1
echo "== components"
build/dev/bench/rankscope_micro_bench --benchmark_min_time=1 2>/dev/null | tail -4

if [ "${1:-}" = "--with-hta" ]; then
  VENV=build/hta-venv
  [ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q holistictraceanalysis; }
  echo "== rankscope vs HTA (HTA $("$VENV/bin/pip" show holistictraceanalysis | grep ^Version | cut -d' ' -f2))"
  python3 bench/compare_hta.py --hta-python "$VENV/bin/python" \
    "$SHARED/traces/hta/nccl_2rank_a100/nccl_data.json.gz" \
    "$SHARED/traces/hta/trace_diff_control_a100/control.json.gz" \
    "$SHARED/traces/kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz"
fi

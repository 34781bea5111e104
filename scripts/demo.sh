#!/usr/bin/env bash
# The demo: a live 4-rank DDP training job (real PyTorch, CPU, gloo) with one slow rank,
# captured from all ranks through the node daemon, then read back by rankscope.
#
#   1. start rankscoped (the node daemon) on a private socket and a free port
#   2. start the job with `rankscope run` (zero-code collector), rank 2 does 60 ms of extra
#      compute per step
#   3. `rankscope ps`, then `rankscope trace --steps 5 --wait`: 5 aligned steps of every rank
#   4. `rankscope analyze` on the captured directory: the diagnosis names the straggler (rank 2),
#      where its time goes (forward, the extra matmuls) and what fixing it is worth
#
# Usage: scripts/demo.sh [output directory, default out/demo]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps >/dev/null

OUT=${1:-out/demo}
rm -rf "$OUT"
mkdir -p "$OUT"

# The freshly built binaries when there is a build tree, else the installed ones.
if [ -x build/dev/src/rankscope/cli/rankscope ] && [ -x build/dev/src/rankscope/daemon/rankscoped ]; then
  RANKSCOPE=$PWD/build/dev/src/rankscope/cli/rankscope
  RANKSCOPED=$PWD/build/dev/src/rankscope/daemon/rankscoped
elif command -v rankscope >/dev/null && command -v rankscoped >/dev/null; then
  RANKSCOPE=$(command -v rankscope)
  RANKSCOPED=$(command -v rankscoped)
else
  echo "demo: building rankscope (first run only)"
  cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/dev --target rankscope rankscoped
  RANKSCOPE=$PWD/build/dev/src/rankscope/cli/rankscope
  RANKSCOPED=$PWD/build/dev/src/rankscope/daemon/rankscoped
fi

SOCKET="@rankscope-demo-$$"
DAEMON_PID=""
JOB_PID=""
cleanup() {
  # torchrun forwards SIGTERM to its workers and waits for them.
  if [ -n "$JOB_PID" ] && kill -0 "$JOB_PID" 2>/dev/null; then kill -TERM "$JOB_PID" 2>/dev/null || true; wait "$JOB_PID" 2>/dev/null || true; fi
  if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then kill -TERM "$DAEMON_PID" 2>/dev/null || true; wait "$DAEMON_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

echo "== 1. node daemon"
"$RANKSCOPED" --out-dir "$OUT/traces" --port 0 --ready-file "$OUT/daemon.ready" --socket "$SOCKET" --no-kineto \
  2>"$OUT/rankscoped.log" &
DAEMON_PID=$!
for _ in $(seq 100); do [ -s "$OUT/daemon.ready" ] && break; sleep 0.1; done
PORT=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['port'])" "$OUT/daemon.ready")
"$RANKSCOPE" status --port "$PORT"

echo
echo "== 2. training job: 4 ranks, rank 2 is a straggler (+60 ms of compute per step)"
OMP_NUM_THREADS=1 "$RANKSCOPE" run --socket "$SOCKET" -- \
  python3 -m torch.distributed.run --standalone --nproc_per_node=4 workloads/ddp_train.py \
    --steps 1000000 --step-sleep-ms 20 --fault slow-forward:2:60 >"$OUT/job.log" 2>&1 &
JOB_PID=$!
for _ in $(seq 120); do
  n=$("$RANKSCOPE" ps --port "$PORT" --json | python3 -c "import json,sys; print(sum(1 for p in json.load(sys.stdin)[0]['processes'] if p.get('step', 0) >= 3))")
  [ "$n" -ge 4 ] && break
  kill -0 "$JOB_PID" 2>/dev/null || { echo "demo: the job died:"; tail -20 "$OUT/job.log"; exit 1; }
  sleep 0.5
done
"$RANKSCOPE" ps --port "$PORT"

echo
echo "== 3. capture 5 steps of every rank"
"$RANKSCOPE" trace --port "$PORT" --steps 5 --wait --with-stack --id demo | tee "$OUT/trace.txt"
DIR=$(find "$OUT/traces" -mindepth 2 -maxdepth 2 -type d -name demo)

echo
echo "== 4. diagnosis"
"$RANKSCOPE" analyze "$DIR" --json "$OUT/report.json"
echo
echo "demo: traces of every rank in $DIR; the JSON report in $OUT/report.json"

#!/bin/bash
# Real GPU captures for the accuracy benchmark and the tests (docs/cluster.md, "Real GPU runs").
#
#   bench/gpu/capture.sh ground-truth BUNDLE WORK DEVICE   # torch.profiler traces of every scenario
#   bench/gpu/capture.sh daemon       BUNDLE WORK DEVICE   # rankscoped: zero-code and Kineto-daemon
#                                                           # captures with NVML telemetry
#   bench/gpu/capture.sh trigger      BUNDLE WORK DEVICE   # step times for the auto-trigger
#   bench/gpu/capture.sh scale        BUNDLE WORK          # MPI speed-up and the single-file read
#                                                           # on the device's cores (run from the
#                                                           # repository root; WITH_MPI=1 bundle)
#
# BUNDLE holds bin/ (rankscope, rankscoped), lib/ (their non-system libraries), python/ (the
# rankscope package) and workloads/; WORK is scratch space; DEVICE is cuda (or cpu, to try the
# script on a machine without a GPU). Ranks share one GPU with gloo (CUDA tensors); NCCL runs one
# rank. Every job runs in its own session (setsid) and is killed as a process group, so that
# nothing outlives the script.
set -u
MODE=$1 BUNDLE=$(realpath "$2") WORK=$3 DEVICE=${4:-cuda}
mkdir -p "$WORK"
PORT=${PORT:-8383}
export RANKSCOPE_SOCKET=${RANKSCOPE_SOCKET:-@rankscoped}
KINETO_ARGS=(); [ -n "${KINETO_IPC_SOCKET_DIR:-}" ] && KINETO_ARGS=(--kineto-socket-dir "$KINETO_IPC_SOCKET_DIR")
RS() { local cmd=$1; shift; LD_LIBRARY_PATH="$BUNDLE/lib" "$BUNDLE/bin/rankscope" "$cmd" --port "$PORT" "$@"; }
TORCHRUN="python3 -m torch.distributed.run --standalone"
W="$BUNDLE/workloads"
NPROC=${NPROC:-4}
MODEL="--device $DEVICE --model ${MODEL_NAME:-transformer}"
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

kill_tree() {  # kills a process and every descendant, by id (torchrun puts workers in sessions of their own)
  local kids; kids=$(ps -o pid= --ppid "$1" 2>/dev/null)
  kill -STOP "$1" 2>/dev/null
  for k in $kids; do kill_tree "$k"; done
  kill -KILL "$1" 2>/dev/null
}

if [ "$MODE" = ground-truth ]; then
  # Every kind at three magnitudes (share of the fault-free step), faulty ranks rotating; a clean
  # run every few scenarios (what-if measurements use the nearest one).
  S=(--scenario clean0:none:-:0)
  i=0
  for kind in ${KINDS:-slow-forward host-sleep host-stall slow-data slow-collective slow-backward slow-optimizer slow-kernel-shapes cpu-hog node}; do
    for pct in ${PCTS:-5 10 25}; do
      r=$(( (i % (NPROC - 1)) + 1 )); i=$((i + 1))
      if [ $kind = node ]; then S+=(--scenario "node$pct:slow-forward:2,3:$pct%")
      else S+=(--scenario "$kind$pct:$kind:$r:$pct%"); fi
    done
    S+=(--scenario "clean$i:none:-:0")
  done
  echo "${S[@]}" > "$WORK/scenarios.txt"
  # 12 profiled steps (4 until round 5: too few to tell a 5 % fault from the ranks' spread) and
  # 48 + 48 measured ones; about 5 s per scenario on an H200.
  ( cd "$W" && setsid timeout 420 $TORCHRUN --nproc_per_node=$NPROC ground_truth.py --out "$WORK/gt" $MODEL \
      --with-stack --steps ${STEPS:-12} --measure-steps ${MEASURE_STEPS:-48} "${S[@]}" > "$WORK/gt.log" 2>&1 )
  echo "ground truth: rc $?"
  # Scored here: 37 scenarios of 12 steps are over 100 MB of traces, more than a device call brings
  # back. The table and every row (bench/accuracy/run_accuracy.py --parts gpu) are small.
  mkdir -p "$WORK/gt_score"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$BUNDLE/lib" "$BUNDLE/bin/rankscope" > "$WORK/gt_score/rankscope"
  chmod +x "$WORK/gt_score/rankscope"
  python3 "$BUNDLE/accuracy/run_accuracy.py" --parts gpu --gpu "$WORK/gt" --rankscope "$WORK/gt_score/rankscope" \
      --json "$WORK/gt_score/rows.json" --markdown "$WORK/gt_score/table.md" > "$WORK/gt_score/scored.txt" 2>&1
  echo "scored: rc $?"
  cp "$WORK/gt/truth.json" "$WORK/scenarios.txt" "$WORK/gt_score/" 2>/dev/null
  if [ "$DEVICE" = cuda ] && [ "${NCCL:-1}" = 1 ]; then  # NCCL=0: skip the one-rank NCCL job
    ( cd "$W" && setsid timeout 150 $TORCHRUN --nproc_per_node=1 ground_truth.py --out "$WORK/nccl1" $MODEL \
        --backend nccl --steps 4 --scenario clean:none:-:0 --scenario forward:slow-forward:0:25% > "$WORK/nccl1.log" 2>&1 )
    echo "nccl: rc $?"
  fi
  exit 0
fi

if [ "$MODE" = scale ]; then
  # Issue 15's CPU figures on a 16-core machine (bench/README.md): `mpirun -np P rankscope analyze
  # --mpi` over semi-synthetic full traces, then one 1 GB trace read with the gzip inflate on its
  # own thread and without. The bundle's libraries are set for its binaries only (wrappers).
  mkdir -p "$WORK/bin"
  M=$BUNDLE/ompi
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$M/libs" "$M/bin/mpirun" > "$WORK/bin/mpirun"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:%s exec %s "$@"\n' "$BUNDLE/lib" "$M/libs" "$BUNDLE/bin/rankscope" > "$WORK/bin/rankscope"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$BUNDLE/lib" "$BUNDLE/bin/rankscope_ingest_bench" > "$WORK/bin/ingest_bench"
  chmod +x "$WORK"/bin/*
  if [ "${MPI:-1}" = 1 ]; then  # MPI=0: the single-file part only
    export OPAL_PREFIX=$M OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_hwloc_base_binding_policy=none
    PATH="$WORK/bin:$PATH" RANKSCOPE_BIN="$WORK/bin/rankscope" RANKSCOPE_SHARED="$BUNDLE/shared" \
      python3 bench/scale_bench.py --skip reduce,sizes,node --mpi-ranks ${MPI_RANKS:-128} \
        --mpi-procs ${MPI_PROCS:-1,2,4,8} --mpi-source-mb ${MPI_SOURCE_MB:-0} --runs 2 > "$WORK/mpi.txt" 2>&1
    echo "mpi: rc $?"
  fi
  [ "${SINGLE_MB:-1000}" = 0 ] && exit 0  # SINGLE_MB=0: the MPI part only
  # One big trace: read on one thread (--no-pipeline), with the inflate on its own thread
  # (pipelined), and parsed on P threads besides (--parse-threads P), alternately, twice each.
  python3 bench/make_long_trace.py --trace "$BUNDLE/shared/traces/hta/nccl_2rank_a100/nccl_data.json.gz" \
    --size-mb ${SINGLE_MB:-1000} --out "$WORK/long.pt.trace.json" > /dev/null && gzip -6 -k -f "$WORK/long.pt.trace.json"
  for i in 1 2; do
    for mode in --no-pipeline ${PARSE_THREADS:-1 2 3 4 6 8}; do
      flag=$mode; [ $mode = --no-pipeline ] || flag="--parse-threads $mode"
      for file in long.pt.trace.json.gz long.pt.trace.json; do
        echo "== $file $flag" >> "$WORK/single_file.txt"
        "$WORK/bin/ingest_bench" --threads 1 --repeat 1 $flag "$WORK/$file" 2>&1 | tail -1 >> "$WORK/single_file.txt"
      done
    done
  done
  for threads in 1 2 4 8; do  # the whole analysis of the one file (the engine gives spare threads to the parse)
    TIMEFORMAT="rankscope analyze --threads $threads: wall %R s, user %U s, sys %S s"
    { time "$WORK/bin/rankscope" analyze --threads $threads "$WORK/long.pt.trace.json.gz" > /dev/null 2>&1; } 2>> "$WORK/single_file.txt"
  done
  rm -f "$WORK/long.pt.trace.json.gz" "$WORK/long.pt.trace.json"
  echo "single file: done"
  exit 0
fi

if [ "$MODE" = trigger ]; then
  # Step times of healthy runs and of runs whose steps become 20 % slower half-way, with an idle
  # Tracker whose auto-trigger is off (its traces would slow the steps that follow: replaying the
  # series through the trigger is what it does live; tests/python/test_trigger.py), then one run
  # with the trigger on, to see it live.
  for spec in "1 1000 healthy" "1 1000 healthy-b" "1 1000 slow20" "$NPROC 600 healthy" "$NPROC 600 slow20"; do
    set -- $spec; n=$1 steps=$2 run=$3
    extra=""; [ "$run" = slow20 ] && extra="--fault host-sleep:all:20% --fault-from $((steps / 2))"
    ( cd "$W" && RANKSCOPE_AUTO_TRIGGER=0 RANKSCOPE_SOCKET=@rankscope-nobody PYTHONPATH="$BUNDLE/python" \
        setsid timeout 240 $TORCHRUN --nproc_per_node=$n train_loop.py $MODEL --tracker --steps $steps \
        --out "$WORK/trigger/${DEVICE}${n}_$run" $extra > "$WORK/trigger_${n}_$run.log" 2>&1 )
    echo "trigger $n $run: rc $?"
  done
  ( cd "$W" && RANKSCOPE_AUTO_TRIGGER=1 RANKSCOPE_SOCKET=@rankscope-nobody RANKSCOPE_OUT_DIR="$WORK/auto" \
      PYTHONPATH="$BUNDLE/python" setsid timeout 240 $TORCHRUN --nproc_per_node=1 train_loop.py $MODEL --tracker \
      --steps 1000 --out "$WORK/trigger/${DEVICE}1_live" > "$WORK/trigger_live.log" 2>&1 )
  echo "trigger live: rc $?"
  exit 0
fi

# ---- daemon mode
rm -f "$WORK/ready"
LD_LIBRARY_PATH="$BUNDLE/lib" setsid "$BUNDLE/bin/rankscoped" --out-dir "$WORK/caps" --port "$PORT" --ready-file "$WORK/ready" \
  --socket "$RANKSCOPE_SOCKET" "${KINETO_ARGS[@]}" --kineto-staging "/tmp/rankscoped-staging-$PORT" --gpu-interval-ms 100 > "$WORK/rankscoped.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -f "$WORK/ready" ] && break; sleep 0.1; done
echo "daemon: $(cat "$WORK/ready" 2>/dev/null)"

wait_ranks() {  # CLIENT N MIN_STEP: until N ranks of that client kind are past MIN_STEP
  for _ in $(seq 240); do
    n=$(RS ps --json 2>/dev/null | python3 -c "
import json,sys
procs=json.load(sys.stdin)[0]['processes']
print(sum(1 for p in procs if p['rank']>=0 and '$1' in p['clients'] and p.get('step',$3)>=$3))" 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.5
  done
  return 1
}

# C: zero-code collector (`rankscope run`), rank 1 sleeps 25 % of the step before each forward.
cd "$W"
RANKSCOPE_JOB=zerocode PYTHONPATH="$BUNDLE/python" RANKSCOPE_AUTO_TRIGGER=0 LD_LIBRARY_PATH="$BUNDLE/lib" \
  setsid "$BUNDLE/bin/rankscope" run -- $TORCHRUN --nproc_per_node=$NPROC train_loop.py $MODEL \
  --fault host-sleep:1:25% --fault-from 30 > "$WORK/run.log" 2>&1 &
JPID=$!
wait_ranks collector $NPROC 60 && RS trace --job zerocode --steps 4 --with-stack --wait --timeout-s 120 --json > "$WORK/trace_run.json"
echo "zero-code trace: rc $?"
kill_tree $JPID; wait $JPID 2>/dev/null

# D: plain PyTorch in Kineto daemon mode (no rankscope code): rank 2 runs extra GEMMs in forward.
RANKSCOPE_JOB=kinetodaemon KINETO_USE_DAEMON=1 setsid $TORCHRUN --nproc_per_node=$NPROC train_loop.py $MODEL \
  --fault slow-forward:2:25% --fault-from 30 > "$WORK/kineto.log" 2>&1 &
JPID=$!
wait_ranks kineto $NPROC 0 && sleep 8 && RS trace --job kinetodaemon --steps 4 --wait --timeout-s 120 --json > "$WORK/trace_kineto.json"
echo "kineto trace: rc $?"
kill_tree $JPID; wait $JPID 2>/dev/null

curl -s "localhost:$PORT/metrics" > "$WORK/metrics.txt"
for d in "$WORK"/caps/*/*/; do
  LD_LIBRARY_PATH="$BUNDLE/lib" "$BUNDLE/bin/rankscope" telemetry "$d" --json > "$WORK/telemetry_$(basename "$(dirname "$d")").json" 2>&1
done
kill -TERM $DPID; sleep 1; kill_tree $DPID; wait $DPID 2>/dev/null
echo done

#!/usr/bin/env bash
# Fuzzes rankscope's parsers with libFuzzer (ASan + UBSan) for a bounded time:
#   the trace reader (default 60 s), seeded from the small real traces, gzipped and plain;
#   the daemon's inputs — Kineto IPC datagrams, collector heartbeats, HTTP request bodies, API
#   tokens, --hosts and --peers files (20 s);
#   the hang analysis's inputs — pickled and JSON Flight Recorder dumps, stack snapshots, and the
#   analysis of a fuzzed rank beside a healthy one (HANG_SECONDS; default the daemon's time, at
#   most 30 s);
#   the rank summary format (.rsum, docs/scale.md): files, bare payloads, and traces analysed and
#   encoded, each round-tripped (SUMMARY_SECONDS; default as the hang inputs).
# Exits non-zero on a crash; the crashing input is left in build/fuzz/crashes/.
#   scripts/fuzz.sh [READER_SECONDS] [DAEMON_SECONDS] [HANG_SECONDS] [SUMMARY_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
READER_SECONDS=${1:-60}
DAEMON_SECONDS=${2:-20}
BUILD=build/fuzz
SHARED=${RANKSCOPE_SHARED:-../shared}

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRANKSCOPE_BUILD_FUZZ=ON -DRANKSCOPE_BUILD_TESTS=OFF -DRANKSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD" --target fuzz_kineto_reader fuzz_daemon_inputs fuzz_hang_inputs fuzz_summary

run() {  # name seconds seeds
  mkdir -p "$BUILD/corpus/$1" "$BUILD/crashes"
  echo "fuzz: $1, $(ls "$3" | wc -l) seeds, ${2}s"
  "$BUILD/fuzz/$1" -max_total_time="$2" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$BUILD/crashes/$1-" "$BUILD/corpus/$1" "$3" 2>&1 | tail -6
}

SEEDS="$BUILD/seeds/reader"
rm -rf "$BUILD/seeds" && mkdir -p "$SEEDS"
for f in $(find "$SHARED/traces" -name '*.json.gz' -size -100k | sort); do
  name=$(basename "$f" .json.gz)
  cp "$f" "$SEEDS/$name.gz"
  { gzip -dc "$f" || true; } | head -c 65536 > "$SEEDS/$name.json"
done
# gloo point-to-point with record_shapes: c10d's send/recv name their peer in "Concrete Inputs".
cat > "$SEEDS/p2p_peers.json" <<'JSON'
{"distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 4, "pg_config": [{"pg_name": "1", "pg_desc": "pp", "pg_size": 4, "ranks": [0, 1, 2, 3]}]},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 0, "dur": 9000},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::recv_", "pid": 1, "tid": 1, "ts": 10, "dur": 160, "args": {"Concrete Inputs": ["", "", "0", "0"]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:recv", "pid": 1, "tid": 1, "ts": 150, "dur": 5700, "args": {"Input Dims": [[64, 256]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::send", "pid": 1, "tid": 1, "ts": 6000, "dur": 4000, "args": {"Concrete Inputs": ["", "", "2", "0"]}},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:send", "pid": 1, "tid": 1, "ts": 8000, "dur": 40, "args": {"Input Dims": [[64, 256]], "Input type": ["float"]}}
 ]}
JSON
# Shapes read for the steps' work signatures (analysis/work_signature.h), "args" before "name"
# (keys in sorted order), so the parser reads them before it knows what the event is.
cat > "$SEEDS/args_first_shapes.json" <<'JSON'
{"traceEvents": [
  {"args": {"Input Dims": [[4, 8], [8, 8]], "Input type": ["float", "float"]}, "cat": "cpu_op", "dur": 10, "name": "aten::mm", "ph": "X", "pid": 1, "tid": 1, "ts": 5},
  {"args": {"Input Dims": [[1024], []]}, "cat": "user_annotation", "dur": 10, "name": "gloo:all_reduce", "ph": "X", "pid": 1, "tid": 1, "ts": 20},
  {"cat": "user_annotation", "dur": 100, "name": "ProfilerStep#1", "ph": "X", "pid": 1, "tid": 1, "ts": 0}
 ]}
JSON
run fuzz_kineto_reader "$READER_SECONDS" "$SEEDS"

# Daemon seeds: the first byte picks the parser (0 Kineto datagram, 1 request body, 2 hosts file,
# 3 collector heartbeat, 4 token, 5 peers file).
SEEDS="$BUILD/seeds/daemon"
mkdir -p "$SEEDS"
python3 - "$SEEDS" <<'PY'
import struct, sys, pathlib
out = pathlib.Path(sys.argv[1])
def datagram(kind, payload):
    return struct.pack("=Q", len(payload)) + kind.encode().ljust(32, b"\0") + payload
req = struct.pack("=iiq", 3, 3, 0) + struct.pack("=3i", 4242, 4241, 1)
ctxt = struct.pack("=iiq", 0, 4242, 77)
(out / "req").write_bytes(b"\0" + datagram("req", req))
(out / "ctxt").write_bytes(b"\0" + datagram("ctxt", ctxt))
(out / "trace").write_bytes(b"\1" + b'{"trace_id": "t1", "steps": 3, "selection": {"job": "j", "ranks": [0, 1]}, "with_stack": true}')
(out / "snapshot").write_bytes(b"\1" + b'{"snapshot_id": "s1", "timeout_s": 5}')
(out / "hosts").write_bytes(b"\2" + b"# rank host\n0-3 node-a\n4 node-b\n5-7 node-c\n")
(out / "floats").write_bytes(b"\1" + b'{"steps": 2.5, "start_step": 9e12, "selection": {"ranks": [1e20, -1]}}')
(out / "beat").write_bytes(b"\3" + b'{"op": "beat", "pid": 1, "uid": 0, "rank": 3, "local_rank": 0, "world_size": 4, '
                           b'"job": "j", "host": "node", "step": 120, "step_ms": 31.5, "busy": false, "cmd": "python"}')
(out / "beat-bad").write_bytes(b"\3" + b'{"op": "hello", "rank": 1e30, "step_ms": -1, "host": 7}')
(out / "token").write_bytes(b"\4" + b"0123456789abcdef0123456789abcdef")
(out / "peers").write_bytes(b"\5" + b"# the other hosts\nnode7:8383\n10.0.0.8:9000  # b\n")
(out / "hang-snapshot").write_bytes(b"\1" + b'{"snapshot_id": "hang-1", "selection": {"job": "j"}, "hang_reason": "no step for 300 s", "as_uid": 1000}')
PY
run fuzz_daemon_inputs "$DAEMON_SECONDS" "$SEEDS"

# Hang seeds: the first byte picks the parser (0 pickle, 1 Flight Recorder dump, 2 stacks file,
# 3 analysis: a stacks file, NUL, a dump).
SEEDS="$BUILD/seeds/hang"
mkdir -p "$SEEDS"
for f in tests/data/pickles/*.pickle; do
  name=$(basename "$f" .pickle)
  { printf '\000'; cat "$f"; } > "$SEEDS/pickle-$name"
  { printf '\001'; cat "$f"; } > "$SEEDS/dump-$name"
done
printf '\001{"version": "2.10", "pg_config": {}, "entries": [{"process_group": ["0", "default_pg"], "collective_seq_id": 1, "profiling_name": "gloo:all_reduce", "input_sizes": [[4]], "retired": true}]}' > "$SEEDS/dump-json"
printf '\002rankscope-stacks 1\nrank: 3\ntaken: py-spy dump --native\nthreads: 1\n\nthread 7 "MainThread" main gil\n  File "a.py", line 3, in f\n    f()\n  Native "libc.so.6", in sleep\n' > "$SEEDS/stacks"
STACKS='rankscope-stacks 1\nrank: 0\nworld_size: 2\njob: j\nsteps_completed: 7\nseconds_since_last_step: 40\nthreads: 1\n\nthread 7 "MainThread" main\n  File "train.py", line 12, in step\n    time.sleep(1)\n'
printf "\003$STACKS\000"'{"version": "2.10", "pg_config": {}, "rankscope": {"rank": 0, "world_size": 2, "job": "j"}, "entries": [{"process_group": ["0", "default_pg"], "collective_seq_id": 1, "profiling_name": "gloo:all_reduce", "input_sizes": [[4]], "input_dtypes": ["Float"], "retired": true, "time_created_ns": 1000}]}' > "$SEEDS/analysis-json"
{ printf "\003$STACKS\000"; cat tests/data/pickles/torch_fr.pickle; } > "$SEEDS/analysis-pickle"
HANG_SECONDS=${3:-$(( DAEMON_SECONDS < 30 ? DAEMON_SECONDS : 30 ))}
run fuzz_hang_inputs "$HANG_SECONDS" "$SEEDS"

# Summary seeds: the first byte picks the input (0 summary file, 1 bare payload, 2 trace). The
# summaries come from the development build's `rankscope summarize` when there is one.
SEEDS="$BUILD/seeds/summary"
mkdir -p "$SEEDS"
for f in tests/data/cluster/ground_truth/clean/rank0.pt.trace.json.gz tests/data/cluster/ground_truth/node/rank5.pt.trace.json.gz; do
  name=$(basename "$f" .json.gz)
  # gzip is cut off by head (SIGPIPE, 141 under pipefail): a seed needs only the first 64 KiB.
  { printf '\002'; { gzip -dc "$f" || true; } | head -c 65536; } > "$SEEDS/trace-$name"
done
if [ -x build/dev/src/rankscope/cli/rankscope ]; then
  tmp=$(mktemp -d)
  cp tests/data/cluster/ground_truth/clean/rank0.pt.trace.json.gz "$tmp/"
  build/dev/src/rankscope/cli/rankscope summarize -q "$tmp"
  { printf '\000'; cat "$tmp"/*.rsum; } > "$SEEDS/file"
  { printf '\001'; tail -c +33 "$tmp"/*.rsum; } > "$SEEDS/payload"
  rm -rf "$tmp"
fi
SUMMARY_SECONDS=${4:-$HANG_SECONDS}
run fuzz_summary "$SUMMARY_SECONDS" "$SEEDS"

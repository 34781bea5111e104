#!/usr/bin/env bash
# Fuzzes the trace reader with libFuzzer for a bounded time (default 60 s).
# Seeds: the small real traces of ../shared/traces, gzipped and plain. Exits non-zero on a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
BUILD=build/fuzz
SHARED=${RANKSCOPE_SHARED:-../shared}

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRANKSCOPE_BUILD_FUZZ=ON -DRANKSCOPE_BUILD_TESTS=OFF -DRANKSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD" --target fuzz_kineto_reader

SEEDS="$BUILD/seeds"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
for f in $(find "$SHARED/traces" -name '*.json.gz' -size -100k | sort); do
  name=$(basename "$f" .json.gz)
  cp "$f" "$SEEDS/$name.gz"
  { gzip -dc "$f" || true; } | head -c 65536 > "$SEEDS/$name.json"
done
mkdir -p "$BUILD/corpus" "$BUILD/crashes"
echo "fuzz: $(ls "$SEEDS" | wc -l) seeds, ${SECONDS_TO_RUN}s"
"$BUILD/fuzz/fuzz_kineto_reader" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/" "$BUILD/corpus" "$SEEDS" 2>&1 | tail -15

#!/bin/bash
# Repeats of `rankscope analyze --threads 1|2|4` on one 1 GB gzip trace made from each of two
# shared traces (bench/README.md, "Single-file speed-up"), checking that the report is the same
# at every thread count. Run from the repository root on the device machine, with a bundle made
# by `WITH_MPI=1 bench/gpu/make_bundle.sh BUILD_DIR BUNDLE` plus the two source traces copied to
# BUNDLE/shared/traces/hta/...:
#   bench/gpu/analyze_repeats.sh BUNDLE
set -u
B=$(realpath "$1")
export LD_LIBRARY_PATH=$B/lib:$B/ompi/libs
for src in hta/nccl_2rank_a100/nccl_data.json.gz hta/trace_diff_control_a100/control.json.gz; do
  name=$(basename $src .json.gz)
  python3 bench/make_long_trace.py --trace "$B/shared/traces/$src" --size-mb 1000 --out "/tmp/$name.json" > /dev/null &&
    gzip -6 -f "/tmp/$name.json"
  ls -la "/tmp/$name.json.gz"
  for i in 1 2 3; do
    for t in 1 2 4; do
      TIMEFORMAT="$name T=$t: wall %R s user %U s sys %S s"
      { time "$B/bin/rankscope" analyze --threads $t "/tmp/$name.json.gz" > "/tmp/out_$t.txt" 2>&1; } 2>&1
    done
    cmp -s /tmp/out_1.txt /tmp/out_2.txt && cmp -s /tmp/out_1.txt /tmp/out_4.txt && echo "$name: same report at T=1,2,4" ||
      echo "$name: REPORTS DIFFER"
  done
  rm -f "/tmp/$name.json.gz"
done

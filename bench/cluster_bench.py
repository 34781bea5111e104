#!/usr/bin/env python3
"""Scale benchmark of `rankscope analyze <dir>` on semi-synthetic multi-rank GPU sets.

    python3 bench/cluster_bench.py [--ranks 16,64,256] [--threads 2] [--runs 2] [--keep DIR]

For each rank count N it generates a set with tools/make_synthetic_ranks.py from the real A100
trace ../shared/traces/hta/nccl_2rank_a100/nccl_data.json.gz (9.8 MB of JSON per rank, 8 ranks
per host, a clock offset per host, one kernel 10 ms slower per call on rank N/2 + 1) into a
temporary directory (removed afterwards unless --keep), then runs `rankscope analyze` on it and
reports wall time and peak RSS (of that process alone, from wait4), best of --runs, with and
without the JSON report, and checks that the diagnosis names the slowed rank. This is a benchmark,
not a test: it never fails on time. Numbers: bench/cluster_bench.md.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "traces" / "hta" / "nccl_2rank_a100" / "nccl_data.json.gz"
KERNEL = "bn_bw_1C11_kernel_new<float, float, float2, 128"


def binary():
    built = REPO / "build/dev/src/rankscope/cli/rankscope"
    return os.environ.get("RANKSCOPE_BIN") or (str(built) if built.exists() else shutil.which("rankscope"))


def generate(n, out):
    hosts = (n + 7) // 8
    offsets = ",".join(f"{(h * 7919) % 5000 - 2500}.{h % 1000:03d}" for h in range(hosts))  # µs, ns digits
    subprocess.run([sys.executable, str(REPO / "tools/make_synthetic_ranks.py"), str(SOURCE), str(out),
                    "--ranks", str(n), "--ranks-per-host", "8", f"--clock-offsets-us={offsets}",
                    "--slow-kernel", KERNEL, "--slow-grid", "256,1,1", "--slow-ranks", str(n // 2 + 1),
                    "--slow-extra-us", "10000"], check=True, capture_output=True)


def measure(cmd):
    """Wall seconds and peak RSS (MiB) of one run of cmd."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", default="16,64,256")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--keep", default="", help="generate into this directory and keep it")
    args = p.parse_args()
    exe = binary()
    root = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="rankscope-cluster-bench-"))
    rows = []
    try:
        for n in [int(x) for x in args.ranks.split(",")]:
            d = root / f"ranks{n}"
            if not d.exists():
                t0 = time.perf_counter()
                generate(n, d)
                print(f"generated {n} ranks in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            report = root / f"report{n}.json"
            base = [exe, "analyze", str(d), "--threads", str(args.threads), "--color", "never"]
            text = min(measure(base) for _ in range(args.runs))
            with_json = min(measure(base + ["--json", str(report)]) for _ in range(args.runs))
            doc = json.loads(report.read_text())
            top = doc["findings"][0] if doc["findings"] else {}
            named = top.get("kind") == "slow_rank" and top.get("ranks") == [n // 2 + 1]
            json_mb = report.stat().st_size / 2**20
            gz_mb = sum(f.stat().st_size for f in d.glob("*.gz")) / 2**20
            rows.append((n, gz_mb, text, with_json, json_mb, named, top.get("cost", {}).get("saving_ns", 0) / 1e6))
            report.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"rankscope analyze, {args.threads} threads, best of {args.runs}; source: 9.8 MB JSON per rank")
    print(f"{'ranks':>6} {'input gz MB':>12} {'time s':>8} {'peak RSS MiB':>13} {'time s (+json)':>15} "
          f"{'RSS MiB (+json)':>16} {'report MB':>10}  diagnosis")
    for n, gz, (t, rss), (tj, rssj), json_mb, named, cost in rows:
        verdict = f"rank {n // 2 + 1} named, cost {cost:.1f} ms/step" if named else "WRONG"
        print(f"{n:>6} {gz:>12.1f} {t:>8.2f} {rss:>13.1f} {tj:>15.2f} {rssj:>16.1f} {json_mb:>10.1f}  {verdict}")
    if len(rows) >= 2:
        (n0, _, (_, r0), (_, rj0), *_), (n1, _, (_, r1), (_, rj1), *_) = rows[0], rows[-1]
        print(f"RSS per added rank: {(r1 - r0) / (n1 - n0) * 1024:.0f} KiB (text), "
              f"{(rj1 - rj0) / (n1 - n0) * 1024:.0f} KiB (with --json)")


if __name__ == "__main__":
    main()

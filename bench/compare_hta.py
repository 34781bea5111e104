"""Ingest time and peak memory: rankscope versus Holistic Trace Analysis (HTA), same files,
same run. HTA must be importable by --hta-python (e.g. a venv with `pip install
holistictraceanalysis`); rankscope's numbers come from build/dev/bench/rankscope_ingest_bench.

    python3 bench/compare_hta.py --hta-python /tmp/hta-venv/bin/python FILE...
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]

HTA_LOAD = r"""
import json, resource, sys, time, logging
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
path = sys.argv[1]
start = time.perf_counter()
ta = TraceAnalysis(trace_files={0: path}, trace_dir="")
seconds = time.perf_counter() - start
rows = len(ta.t.get_trace(0))
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "rows": rows, "peak_rss_mb": peak / 1024}))
"""


def json_bytes(path):
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    n = 0
    with opener(path, "rb") as f:
        while chunk := f.read(1 << 24):
            n += len(chunk)
    return n


def run_hta(python, path):
    out = subprocess.run([python, "-c", HTA_LOAD, path], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_rankscope(bench, path, repeat):
    out = subprocess.run([bench, "--threads", "1", "--repeat", str(repeat), path], capture_output=True, text=True,
                         check=True)
    fields = dict(kv.split("=") for kv in out.stdout.strip().splitlines()[-1].split())
    return {"seconds": float(fields["median_s"]), "peak_rss_mb": float(fields["peak_rss_MB"])}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--hta-python", required=True)
    p.add_argument("--bench", default=str(REPO / "build/dev/bench/rankscope_ingest_bench"))
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'file':<48} {'JSON MB':>8} | {'HTA s':>7} {'MB/s':>6} {'RSS MB':>7} | "
          f"{'rankscope s':>11} {'MB/s':>6} {'RSS MB':>7} | {'speed x':>7} {'RSS /':>6}")
    for path in args.files:
        mb = json_bytes(path) / 1e6
        hta = run_hta(args.hta_python, path)
        rs = run_rankscope(args.bench, path, args.repeat)
        name = os.path.basename(path)[:48]
        if "error" in hta:
            print(f"{name:<48} {mb:8.1f} | HTA failed: {hta['error'][:60]}")
            continue
        print(f"{name:<48} {mb:8.1f} | {hta['seconds']:7.2f} {mb / hta['seconds']:6.1f} {hta['peak_rss_mb']:7.0f} | "
              f"{rs['seconds']:11.3f} {mb / rs['seconds']:6.0f} {rs['peak_rss_mb']:7.0f} | "
              f"{hta['seconds'] / rs['seconds']:7.0f} {hta['peak_rss_mb'] / rs['peak_rss_mb']:6.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Scale benchmark (docs/scale.md): numbers, never a verdict on time.

  python3 bench/scale_bench.py [--ranks 1024,4096,10000] [--mpi-ranks 16] [--runs 1]

1. Reduce from summaries: semi-synthetic jobs of N ranks as .rsum files
   (build/dev/bench/make_scale_summaries: copies of the real A100 trace's summary, 8 ranks per
   host, a clock offset per host, one straggler), then `rankscope analyze DIR --threads 1`:
   wall time and peak RSS of that process (wait4), text report and with --json. Targets: 10,000
   ranks in <= 10 s and <= 2 GiB.
2. Summary size per rank (target <= 1 MiB) for every shared trace and the A100 source.
3. Node-side summary time (`rankscope summarize --threads 1`, what rankscoped would spend after a
   capture) against the traced window's duration, per shared multi-rank capture.
4. MPI speed-up: `mpirun -np P rankscope analyze --mpi --threads 1` on a semi-synthetic set of
   --mpi-ranks full traces (tools/make_synthetic_ranks.py), P = 1, 2 (more with --mpi-procs), of
   ~1 MB each or --mpi-source-mb each.
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
SHARED = pathlib.Path(os.environ.get("RANKSCOPE_SHARED") or REPO.parent / "shared") / "traces"
SOURCE = SHARED / "hta/nccl_2rank_a100/nccl_data.json.gz"
BUILD = REPO / "build/dev"
MPI_ENV = {**os.environ, "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def rankscope():
    return os.environ.get("RANKSCOPE_BIN") or str(BUILD / "src/rankscope/cli/rankscope")


def measure(cmd, env=None):
    """Wall seconds and peak RSS (MiB) of one run of cmd (the process itself, from wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024


def best(cmd, runs, env=None):
    results = [measure(cmd, env) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def reduce_from_summaries(counts, runs, tmp):
    print("## Reduce from summaries: rankscope analyze DIR-of-.rsum --threads 1")
    print(f"{'ranks':>6} {'summaries MB':>13} {'KiB/rank':>9} {'text s':>8} {'RSS MiB':>8} {'json s':>8} {'RSS MiB':>8}")
    for n in counts:
        out = tmp / f"sum{n}"
        subprocess.run([str(BUILD / "bench/make_scale_summaries"), "--ranks", str(n), str(out), str(SOURCE)],
                       check=True, capture_output=True)
        size = sum(p.stat().st_size for p in out.iterdir())
        text_s, text_rss = best([rankscope(), "analyze", "--threads", "1", str(out)], runs)
        json_s, json_rss = best([rankscope(), "analyze", "--threads", "1", "--json", str(tmp / "r.json"), str(out)], runs)
        print(f"{n:>6} {size / 1e6:>13.1f} {size / n / 1024:>9.1f} {text_s:>8.2f} {text_rss:>8.0f} {json_s:>8.2f} {json_rss:>8.0f}")
        shutil.rmtree(out)


def summary_sizes(tmp):
    print("\n## Summary size per rank (rankscope summarize)")
    print(f"{'trace':<56} {'trace MB':>9} {'summary KiB':>12}")
    traces = sorted(SHARED.rglob("*.json.gz"))
    for t in traces:
        out = tmp / "sizes"
        out.mkdir(exist_ok=True)
        proc = subprocess.run([rankscope(), "summarize", "--threads", "1", "-o", str(out), str(t)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            continue
        (summary,) = out.iterdir()
        print(f"{str(t.relative_to(SHARED)):<56} {t.stat().st_size / 1e6:>9.2f} {summary.stat().st_size / 1024:>12.1f}")
        shutil.rmtree(out)


def node_side(tmp, runs):
    print("\n## Node-side summary time vs the traced window (summarize --threads 1, one rank)")
    print(f"{'capture':<28} {'rank':>4} {'window ms':>10} {'summarize s':>12} {'ratio':>7}")
    for capture in ["gpu_h100/devClean", "gpu_h100/devKernel", "kineto/resnet50_workers4", "hta/nccl_2rank_a100"]:
        report = json.loads(subprocess.run([rankscope(), "analyze", "--no-summaries", "--json", "-", str(SHARED / capture)],
                                           capture_output=True, text=True, check=True).stdout)
        for rank in report["ranks"][:2]:
            out = tmp / "node"
            out.mkdir(exist_ok=True)
            wall, _ = best([rankscope(), "summarize", "-q", "--threads", "1", "-o", str(out), rank["path"]], runs)
            window_ms = rank["window"]["duration_ns"] / 1e6
            print(f"{capture:<28} {rank['rank']:>4} {window_ms:>10.1f} {wall:>12.3f} {wall * 1e3 / window_ms:>7.2f}")
            shutil.rmtree(out)


def mpi_speedup(n, procs, runs, tmp, source_mb=0):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("\n(no mpirun: MPI speed-up skipped)")
        return
    job = tmp / "mpi"
    source = SOURCE
    if source_mb > 0:  # larger ranks: the source's steps repeated to that size (bench/make_long_trace.py)
        source = tmp / "long_source.json"
        subprocess.run([sys.executable, str(REPO / "bench/make_long_trace.py"), "--trace", str(SOURCE), "--size-mb",
                        str(source_mb), "--out", str(source)], check=True, capture_output=True)
    hosts = (n + 7) // 8
    offsets = ",".join(f"{(h * 7919) % 5000 - 2500}.{h % 1000:03d}" for h in range(hosts))
    subprocess.run([sys.executable, str(REPO / "tools/make_synthetic_ranks.py"), str(source), str(job), "--ranks", str(n),
                    "--ranks-per-host", "8", f"--clock-offsets-us={offsets}", "--jobs", str(os.cpu_count() or 1)],
                   check=True, capture_output=True)
    if source_mb > 0:
        os.unlink(source)
    size = sum(p.stat().st_size for p in job.iterdir()) / 1e6
    print(f"\n## MPI: {n} full traces ({size:.0f} MB gz), mpirun -np P rankscope analyze --mpi --threads 1")
    print(f"{'P':>3} {'wall s':>8} {'speed-up':>9}")
    base = None
    for p in procs:
        cmd = [mpirun, "-np", str(p), "--oversubscribe", "--allow-run-as-root", rankscope(), "analyze", "--mpi",
               "--no-summaries", "--threads", "1", str(job)]
        wall, _ = best(cmd, runs, MPI_ENV)
        base = base or wall
        print(f"{p:>3} {wall:>8.2f} {base / wall:>9.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="1024,4096,10000")
    ap.add_argument("--mpi-ranks", type=int, default=16)
    ap.add_argument("--mpi-procs", default="1,2")
    ap.add_argument("--mpi-source-mb", type=float, default=0,
                    help="MPI part: ranks this large (the A100 trace's steps repeated), instead of 1 MB each")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--skip", default="", help="comma-separated: reduce,sizes,node,mpi")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    with tempfile.TemporaryDirectory(prefix="rankscope_scale_") as d:
        tmp = pathlib.Path(d)
        if "reduce" not in skip:
            reduce_from_summaries([int(x) for x in args.ranks.split(",")], args.runs, tmp)
        if "sizes" not in skip:
            summary_sizes(tmp)
        if "node" not in skip:
            node_side(tmp, args.runs)
        if "mpi" not in skip:
            mpi_speedup(args.mpi_ranks, [int(x) for x in args.mpi_procs.split(",")], args.runs, tmp, args.mpi_source_mb)


if __name__ == "__main__":
    main()

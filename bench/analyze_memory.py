"""Peak memory of `rankscope analyze` against the JSON it reads, on a trace of 10 M tiny events
(the worst case per byte: bench/make_tiny_events_trace.py writes it if missing).

    python3 bench/analyze_memory.py [--rankscope build/dev/src/rankscope/cli/rankscope]
                                    [--trace /tmp/rankscope-tiny.pt.trace.json] [--events 10000000]

Prints, for `rankscope info` (ingest alone) and `rankscope analyze`, the peak RSS of the process
(getrusage of the child), its ratio to the JSON size, and CPU seconds. Target (issue 10): analyze
peaks at no more than 1x the JSON.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def measure(cmd):
    """(peak RSS bytes, CPU seconds, wall seconds) of one run of `cmd`."""
    start = time.monotonic()
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen(cmd, stdout=null)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime, time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rankscope", default=str(REPO / "build/dev/src/rankscope/cli/rankscope"))
    p.add_argument("--trace", default="/tmp/rankscope-tiny.pt.trace.json")
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    trace = pathlib.Path(a.trace)
    if not trace.exists():
        subprocess.run([sys.executable, str(REPO / "bench/make_tiny_events_trace.py"), "--events", str(a.events),
                        "--out", str(trace)], check=True)
    size = trace.stat().st_size
    print(f"{trace}: {size / 1e6:.0f} MB of JSON")
    print(f"{'command':<10} {'peak RSS MB':>12} {'x JSON':>8} {'CPU s':>7} {'wall s':>7}   (best of {a.runs})")
    for name, args in (("info", ["info", str(trace)]), ("analyze", ["analyze", str(trace), "--json", os.devnull])):
        runs = [measure([a.rankscope, *args]) for _ in range(a.runs)]
        rss = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        wall = min(r[2] for r in runs)
        print(f"{name:<10} {rss / 1e6:>12.0f} {rss / size:>8.2f} {cpu:>7.2f} {wall:>7.2f}")


if __name__ == "__main__":
    main()

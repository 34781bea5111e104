"""The daemon's own CPU cost with telemetry on: runs rankscoped with N registered worker
processes (the real collector) at a given sampling interval for a while, and reads the daemon's
CPU time from /proc/<pid>/stat before and after (after a warm-up). Also prints what one pass
produces and what the ring buffer holds. Reports numbers; asserts nothing.

    python3 bench/telemetry_overhead.py build/dev/src/rankscope/daemon/rankscoped [--interval-ms 1000] [--seconds 30]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = "import time\nfrom rankscope import Tracker\nt = Tracker()\nwhile True:\n    t.step(); time.sleep(0.05)\n"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(port, name):
    for line in urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode().splitlines():
        if line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("rankscoped")
    p.add_argument("--interval-ms", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--workers", type=int, default=4)
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="rankscope-bench-")
    sock = f"@rankscope-bench-{uuid.uuid4().hex[:8]}"
    ready = os.path.join(tmp, "ready")
    daemon = subprocess.Popen([a.rankscoped, "--out-dir", os.path.join(tmp, "out"), "--port", "0", "--ready-file", ready,
                               "--socket", sock, "--no-kineto", "--telemetry-interval-ms", str(a.interval_ms)],
                              stderr=subprocess.DEVNULL)
    workers = []
    try:
        while not os.path.exists(ready):
            time.sleep(0.05)
        port = json.load(open(ready))["port"]
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), RANKSCOPE_SOCKET=sock, RANKSCOPE_AUTO_TRIGGER="0",
                   RANKSCOPE_JOB="bench", WORLD_SIZE=str(a.workers))
        for r in range(a.workers):
            workers.append(subprocess.Popen([sys.executable, "-c", WORKER], env=dict(env, RANK=str(r), LOCAL_RANK=str(r))))
        time.sleep(8)  # registered, descendants scanned, ring warm
        c0, t0 = cpu_seconds(daemon.pid), time.monotonic()
        time.sleep(a.seconds)
        c1, t1 = cpu_seconds(daemon.pid), time.monotonic()
        frames = metric(port, "rankscope_telemetry_ring_frames")
        ring = metric(port, "rankscope_telemetry_ring_bytes")
        span = metric(port, "rankscope_telemetry_ring_span_seconds")
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read()
        series = sum(1 for line in text.decode().splitlines() if line and not line.startswith("#"))
        pass_s = metric(port, "rankscope_telemetry_sample_seconds")
        print(f"interval {a.interval_ms} ms, {a.workers} registered workers, {os.cpu_count()} CPUs, {a.seconds:.0f} s measured")
        print(f"  daemon CPU: {100 * (c1 - c0) / (t1 - t0):.3f} % of one core "
              f"({c1 - c0:.2f} s CPU in {t1 - t0:.1f} s; /proc tick resolution 10 ms)")
        print(f"  one proc pass: {pass_s * 1e3:.3f} ms; /metrics: {series} series, {len(text)} bytes")
        print(f"  ring: {frames:.0f} frames over {span:.1f} s, {ring / 1024:.1f} KiB "
              f"({ring / max(frames, 1):.0f} bytes per frame, {ring / max(span, 1e-9) / 1024:.2f} KiB per second of history)")
    finally:
        for w in workers:
            w.kill()
            w.wait()
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    main()

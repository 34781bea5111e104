"""Reply latency of rankscoped's Kineto endpoint, measured like a Kineto client sees it: send a
'req' datagram, wait for the reply. Not a test: prints numbers.

    python3 bench/ipc_latency.py path/to/rankscoped [--polls 2000]

Starts its own daemon with KINETO_IPC_SOCKET_DIR in a temporary directory (no clash with a
real dynolog), and polls from several client sockets as distinct "processes" (fake pids).
"""

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("rankscoped")
    p.add_argument("--polls", type=int, default=2000)
    p.add_argument("--clients", type=int, default=8)
    args = p.parse_args()
    d = tempfile.mkdtemp(prefix="rankscope-ipc-")
    env = dict(os.environ, KINETO_IPC_SOCKET_DIR=d)
    daemon = subprocess.Popen([args.rankscoped, "--out-dir", os.path.join(d, "out"), "--port", "0",
                               "--socket", f"@rankscope-bench-{os.getpid()}"], env=env, stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(os.path.join(d, "dynolog")):
            time.sleep(0.01)
        clients = []
        for i in range(args.clients):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(os.path.join(d, f"dynoconfigclient{i}"))
            s.settimeout(1.0)
            clients.append(s)
        lat = []
        for n in range(args.polls):
            s = clients[n % len(clients)]
            pid = 4_000_000 + n % len(clients)  # not a live process: /proc lookups fail fast
            payload = struct.pack("=iiq", 3, 1, 0) + struct.pack("=i", pid)
            msg = struct.pack("=Q", len(payload)) + b"req".ljust(32, b"\0") + payload
            t0 = time.perf_counter_ns()
            s.sendto(msg, os.path.join(d, "dynolog"))
            s.recv(65536)
            lat.append((time.perf_counter_ns() - t0) / 1000)
        lat.sort()
        print(f"{args.polls} polls from {args.clients} clients: median {statistics.median(lat):.0f} us, "
              f"p99 {lat[int(len(lat) * 0.99)]:.0f} us, max {lat[-1]:.0f} us (Kineto waits ~90 ms)")
    finally:
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    sys.exit(main())

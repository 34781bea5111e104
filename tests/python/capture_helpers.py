"""Helpers for the capture end-to-end tests: a real rankscoped per test, real torchrun jobs."""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import uuid

REPO = pathlib.Path(__file__).resolve().parents[2]
WORKLOAD = REPO / "workloads" / "ddp_train.py"


def find_rankscoped(rankscope_bin):
    sibling = pathlib.Path(rankscope_bin).resolve().parents[1] / "daemon" / "rankscoped"
    if sibling.exists():
        return str(sibling)
    beside = pathlib.Path(rankscope_bin).resolve().parent / "rankscoped"
    if beside.exists():
        return str(beside)
    return shutil.which("rankscoped")


class Daemon:
    """A rankscoped on a free port, a private collector socket and its own output directory."""

    def __init__(self, binary, out_dir, kineto=False, extra=(), port=0):
        self.binary = binary
        self.out_dir = pathlib.Path(out_dir)
        self.socket = f"@rankscope-test-{uuid.uuid4().hex[:12]}"
        self.kineto = kineto
        self.extra = list(extra)
        self.proc = None
        self.port = None
        self.want_port = port
        self.log = self.out_dir.parent / f"rankscoped-{uuid.uuid4().hex[:6]}.log"

    def start(self, timeout=10):
        ready = self.out_dir.parent / f"ready-{uuid.uuid4().hex[:8]}"
        args = [self.binary, "--out-dir", str(self.out_dir), "--port", str(self.want_port), "--ready-file", str(ready),
                "--socket", self.socket, "--expire-s", "30", *self.extra]
        if not self.kineto:
            args.append("--no-kineto")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"rankscoped did not start: {self.log.read_text()}")
            time.sleep(0.05)
        self.port = json.loads(ready.read_text())["port"]
        return self

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)

    def stop(self):
        self.kill(signal.SIGTERM)


def py_spy_binary():
    """py-spy's binary as pip installed it beside this Python (not a pyenv shim, which is a script:
    a root daemon runs only a binary as the job's user), else what PATH has."""
    beside = pathlib.Path(sysconfig.get_path("scripts")) / "py-spy"
    if beside.is_file() and beside.read_bytes()[:4] == b"\x7fELF":
        return str(beside)
    return shutil.which("py-spy")


def free_port():
    """A port nobody listens on now (daemons that must know each other's port before they start)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_env(daemon_socket=None, **extra):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO / "python"))
    env.pop("KINETO_USE_DAEMON", None)
    # Deterministic unless a test asks for it: on a loaded 2-core machine, step-time jitter can
    # fire the auto-trigger, whose trace would make the collector busy for an on-demand one.
    env["RANKSCOPE_AUTO_TRIGGER"] = "0"
    if daemon_socket:
        env["RANKSCOPE_SOCKET"] = daemon_socket
    env.update({k: str(v) for k, v in extra.items()})
    return env


def torchrun(nproc, *workload_args):
    return [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}", "--standalone",
            str(WORKLOAD), *map(str, workload_args)]


def start_job(cmd, env, log_path):
    # Its own process group, so that the test can end the launcher and every rank together.
    return subprocess.Popen(cmd, env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def descendants(pid):
    """Every process below `pid` (torchrun starts its workers in sessions of their own, so a
    process group kill does not reach them)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop_job(proc):
    """Kills the launcher and every process it started."""
    for pid in descendants(proc.pid) + [proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


def processes(run_rankscope, port):
    out = run_rankscope("ps", "--port", port, "--json").stdout
    return json.loads(out)[0]["processes"]


def wait_for(predicate, timeout, what, interval=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_for_summaries(port, capture_id, timeout=120):
    """Waits until the daemon's summary worker has no trace of the capture left to summarise
    (GET /v1/captures/<id>/summaries), so that the directory no longer changes under a reader."""
    url = f"http://127.0.0.1:{port}/v1/captures/{capture_id}/summaries"

    def settled():
        progress = json.load(urllib.request.urlopen(url, timeout=10))["progress"]
        return progress is None or progress["pending"] == 0
    return wait_for(settled, timeout, f"the summaries of capture {capture_id}")


def wait_for_ranks(run_rankscope, port, n, timeout=90, client="collector", min_step=0):
    def ready():
        procs = [p for p in processes(run_rankscope, port) if p["rank"] >= 0 and client in p["clients"]]
        if len(procs) >= n and all(p.get("step", min_step) >= min_step for p in procs):
            return procs
        return None
    return wait_for(ready, timeout, f"{n} ranks registered as {client}")


def trace_files(directory):
    return sorted(pathlib.Path(directory).glob("rank*.pt.trace.json.gz"))


def info(run_rankscope, path):
    return json.loads(run_rankscope("info", "--json", path).stdout)["files"]

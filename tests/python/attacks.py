"""What an unprivileged local user can do to rankscoped, as small programs. The security suite
(test_security.py) copies this file where that user can read it and runs it as that user.

Standard library only: the user's Python has neither torch nor rankscope. Each subcommand is one
kind of attack (or one role in it) and writes what it saw as JSON lines to --log, so that the test
can tell what reached whom.
"""

import argparse
import json
import os
import socket
import struct
import sys
import time
import uuid


def log(path, **event):
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")


def abstract(name):
    return b"\0" + name.encode()


def daemon_address(spec):
    return abstract(spec[1:]) if spec.startswith("@") else spec


def http(port, method, path, body=None, timeout=30):
    """One request on a fresh connection; returns (status, parsed JSON or text)."""
    data = b"" if body is None else json.dumps(body).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
    reply = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    s.close()
    head, _, text = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text.decode(errors="replace")


# ---------------------------------------------------------------------------------------------
# A fake collector: speaks the collector protocol from its own socket, claims what it is told to
# claim, and does something nasty when a request arrives.

def collector(a):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"attacker-collector-{os.getpid()}-{uuid.uuid4().hex[:8]}"))
    sock.settimeout(0.25)
    to = daemon_address(a.socket)
    # Like the real collector, it sends its pid and uid; the attack is in what it claims.
    beat = {"rank": a.rank, "local_rank": 0, "world_size": 1, "job": a.job, "host": "x" * a.host_bytes,
            "step": a.step, "step_ms": a.step_ms, "busy": False, "cmd": "attacker", "pid": os.getpid(),
            "uid": os.getuid()}
    if a.claim_pid:
        beat["pid"] = a.claim_pid
    if a.claim_uid is not None:
        beat["uid"] = a.claim_uid
    if a.raw_rank:
        beat = json.loads(json.dumps(beat).replace(f'"rank": {a.rank}', f'"rank": {a.raw_rank}'))
    end = time.monotonic() + a.seconds
    op = "hello"
    while time.monotonic() < end:
        sock.sendto(json.dumps(dict(beat, op=op)).encode(), to)
        op = "beat"
        try:
            msg = json.loads(sock.recv(65536))
        except socket.timeout:
            continue
        log(a.log, got=msg)
        if msg.get("op") in ("trace", "snapshot"):
            act_on_request(a, sock, to, msg)
            if a.exit_after_request:
                return


def act_on_request(a, sock, to, msg):
    d = msg["dir"]
    if a.exec_on_request:
        # Become another program in place: same pid, same start time. A setuid one (passwd)
        # then runs as root, a setgid one (unix_chkpwd) as group shadow, each waiting for a
        # password on a pipe that never closes.
        argv = a.exec_on_request.split()
        log(a.log, exec=argv)
        r, w = os.pipe()
        os.dup2(r, 0)
        os.set_inheritable(w, True)
        os.execv(argv[0], argv)
    for plant in a.plant:
        name, target = plant.split("=", 1)
        try:
            os.symlink(target, os.path.join(d, name))
            log(a.log, planted=name)
        except OSError as e:
            log(a.log, plant_failed=name, error=str(e))
    if a.swap_capture_dir:
        try:
            os.rename(d, d + ".moved")
            os.symlink(a.swap_capture_dir, d)
            log(a.log, swapped=d)
        except OSError as e:
            log(a.log, swap_failed=str(e))
    if a.write_bytes:
        try:
            with open(os.path.join(d, msg["file"]), "wb") as f:
                f.write(os.urandom(a.write_bytes))
        except OSError as e:
            log(a.log, write_failed=str(e))
    if a.report:
        report = {"op": "report", "id": msg["id"], "state": a.report, "file": msg["file"],
                  "first_step": a.step, "last_step": a.step, "error": a.report_error}
        if a.report_as_pid:
            report["pid"] = a.report_as_pid
        sock.sendto(json.dumps(report).encode(), to)


# ---------------------------------------------------------------------------------------------
# A fake Kineto client (plain PyTorch with KINETO_USE_DAEMON=1): polls from its own pid.

def kineto_request(pid):
    payload = struct.pack("=iiq", 3, 1, 0) + struct.pack("=i", pid)
    return struct.pack("=Q", len(payload)) + b"req".ljust(32, b"\0") + payload


def kineto_output_path(log_file, pid):
    at = log_file.find(".pt.trace.json")
    if at < 0:
        at = log_file.find(".json")
    return log_file[:at] + f"_{pid}" + log_file[at:]


def kineto(a):
    for plant in a.ondemand_plant:  # in the directory its own KINETO_ONDEMAND_TRACE_DIR names
        name, target = plant.split("=", 1)
        os.symlink(target, os.path.join(os.environ["KINETO_ONDEMAND_TRACE_DIR"], name))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"dynoconfigclient-{uuid.uuid4().hex}"))
    sock.settimeout(0.2)
    to = os.path.join(a.socket_dir, "dynolog")
    capture_dir = None
    end = time.monotonic() + a.seconds
    requested = False
    while time.monotonic() < end:
        sock.sendto(kineto_request(os.getpid()), to)
        try:
            reply = sock.recv(65536)
        except socket.timeout:
            reply = b""
        if not requested and a.request:
            requested = True
            status, body = http(a.port, "POST", "/v1/trace", json.loads(a.request))
            log(a.log, trace_status=status, trace=body)
            capture_dir = body.get("dir") if isinstance(body, dict) else None
            for plant in a.capture_plant:
                name, target = plant.split("=", 1)
                try:
                    os.symlink(target, os.path.join(capture_dir, name))
                    log(a.log, planted=name)
                except (OSError, TypeError) as e:
                    log(a.log, plant_failed=name, error=str(e))
        config = reply[40:].decode(errors="replace")
        if "ACTIVITIES_LOG_FILE=" not in config:
            continue
        log_file = config.split("ACTIVITIES_LOG_FILE=", 1)[1].split("\n", 1)[0]
        out = kineto_output_path(log_file, os.getpid())
        log(a.log, config=config, out=out)
        try:
            if a.staged_symlink:
                os.symlink(a.staged_symlink, out)
            else:
                with open(out + ".tmp", "w") as f:
                    json.dump({"traceEvents": [{"ph": "X", "name": "step", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}, f)
                os.rename(out + ".tmp", out)
            log(a.log, wrote=out)
        except OSError as e:
            log(a.log, write_failed=str(e))


# ---------------------------------------------------------------------------------------------
# Floods

def beats(a):
    """Heartbeats claiming many pids, with huge host fields."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"attacker-beats-{os.getpid()}"))
    to = daemon_address(a.socket)
    for i in range(a.count):
        msg = {"op": "hello", "pid": a.claim_pid_base + i, "rank": i % 1000, "job": f"flood{i}",
               "host": "h" * a.host_bytes, "step": 1, "step_ms": 1.0, "cmd": "c" * 1000}
        try:
            sock.sendto(json.dumps(msg).encode(), to)
        except OSError:
            time.sleep(0.001)  # the daemon's queue is full: it reads at its pace
    print(a.count)


def fork_hellos(a):
    """Many real processes of this user, each registering itself."""
    children = []
    for i in range(a.processes):
        pid = os.fork()
        if pid == 0:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(abstract(f"attacker-fork-{os.getpid()}"))
            msg = {"op": "hello", "rank": i, "job": "forked", "host": "x" * 60000, "step": 1, "step_ms": 1.0}
            for _ in range(3):
                sock.sendto(json.dumps(msg).encode(), daemon_address(a.socket))
                time.sleep(0.2)
            time.sleep(a.hold_s)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


def churn(a):
    """One process that renames its job at every heartbeat (new telemetry labels each time)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"attacker-churn-{os.getpid()}"))
    end = time.monotonic() + a.seconds
    i = 0
    while time.monotonic() < end:
        msg = {"op": "hello" if i == 0 else "beat", "rank": 0, "job": f"churn{i}", "step": i, "step_ms": 10.0}
        sock.sendto(json.dumps(msg).encode(), daemon_address(a.socket))
        i += 1
        time.sleep(a.every_s)


def auto(a):
    """An auto-trigger message claiming to come from another process."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"attacker-auto-{os.getpid()}"))
    for _ in range(3):
        sock.sendto(json.dumps({"op": "auto", "pid": a.claim_pid, "reason": "forged", "steps": 1}).encode(),
                    daemon_address(a.socket))
        time.sleep(0.2)


def http_body(a):
    """A request body of --mib MiB, streamed; stops when the daemon closes the connection."""
    s = socket.create_connection(("127.0.0.1", a.port), timeout=30)
    total = a.mib << 20
    s.sendall(f"POST /v1/trace HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {total}\r\n\r\n".encode())
    chunk = b"[" * (1 << 20)
    sent = 0
    try:
        while sent < total:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    print(json.dumps({"sent_mib": sent >> 20, "reply": read_reply(s)}))


def http_headers(a):
    """--mib MiB of tiny headers."""
    s = socket.create_connection(("127.0.0.1", a.port), timeout=30)
    s.sendall(b"POST /v1/trace HTTP/1.1\r\nHost: x\r\n")
    block = b"a: b\r\n" * 100000
    sent = 0
    try:
        while sent < a.mib << 20:
            s.sendall(block)
            sent += len(block)
        s.sendall(b"Content-Length: 0\r\n\r\n")
    except OSError:
        pass
    print(json.dumps({"sent_mib": sent >> 20, "reply": read_reply(s)}))


def read_reply(s):
    try:
        s.settimeout(30)
        data = s.recv(200)
        return data.split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as e:
        return f"error: {e}"


def http_idle(a):
    """Opens --connections connections, sends nothing, holds them; reopens closed ones."""
    conns = []
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        while len(conns) < a.connections:
            try:
                conns.append(socket.create_connection(("127.0.0.1", a.port), timeout=5))
            except OSError:
                time.sleep(0.05)
                break
        time.sleep(0.2)
        alive = []
        for c in conns:  # a connection the daemon closed reads as EOF: replace it
            c.setblocking(False)
            try:
                if c.recv(1, socket.MSG_PEEK) == b"":
                    c.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                c.close()
                continue
            alive.append(c)
        conns = alive


def push_to_collector(a):
    """Requests sent straight to another process's collector socket (its abstract name is in
    /proc/net/unix), pretending to be the daemon."""
    names = [line.split()[-1] for line in open("/proc/net/unix") if f"@rankscope-collector-{a.victim_pid}-" in line]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(abstract(f"attacker-push-{os.getpid()}"))
    for name in names:
        to = abstract(name[1:])
        sock.sendto(json.dumps({"op": "welcome", "out_dir": a.fake_out_dir}).encode(), to)
        time.sleep(0.2)
        sock.sendto(json.dumps({"op": "trace", "id": "forged", "dir": a.fake_out_dir + "/j/forged",
                                "file": "rank0.pt.trace.json.gz", "steps": 1, "start_step": 9_000_000_000_000}).encode(), to)
    print(json.dumps({"sockets": names}))


def post(a):
    status, body = http(a.port, a.method, a.path, json.loads(a.body) if a.body else None)
    print(json.dumps({"status": status, "body": body}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collector")
    c.add_argument("--socket", required=True)
    c.add_argument("--job", default="attackjob")
    c.add_argument("--rank", type=int, default=0)
    c.add_argument("--raw-rank", help="rank as raw JSON text (e.g. 1e30)")
    c.add_argument("--step", type=int, default=10)
    c.add_argument("--step-ms", type=float, default=100.0)
    c.add_argument("--host-bytes", type=int, default=4)
    c.add_argument("--claim-pid", type=int)
    c.add_argument("--claim-uid", type=int)
    c.add_argument("--plant", action="append", default=[], help="NAME=TARGET: a symlink in the capture directory")
    c.add_argument("--swap-capture-dir", help="replace the capture directory by a symlink to this")
    c.add_argument("--write-bytes", type=int, default=0)
    c.add_argument("--report", choices=["done", "failed", "started"])
    c.add_argument("--report-as-pid", type=int)
    c.add_argument("--report-error", default="disk full", help="the error text of a failed report")
    c.add_argument("--exec-on-request", help="exec this command line (split at spaces) when a request arrives (e.g. a setuid program)")
    c.add_argument("--exit-after-request", action="store_true")
    c.add_argument("--seconds", type=float, default=60)
    c.add_argument("--log")
    k = sub.add_parser("kineto")
    k.add_argument("--socket-dir", required=True)
    k.add_argument("--port", type=int)
    k.add_argument("--request", help="a trace request (JSON) to POST once registered")
    k.add_argument("--capture-plant", action="append", default=[], help="NAME=TARGET in the capture directory")
    k.add_argument("--ondemand-plant", action="append", default=[], help="NAME=TARGET in KINETO_ONDEMAND_TRACE_DIR")
    k.add_argument("--staged-symlink", help="answer the configuration with a symlink to this")
    k.add_argument("--seconds", type=float, default=60)
    k.add_argument("--log")
    b = sub.add_parser("beats")
    b.add_argument("--socket", required=True)
    b.add_argument("--count", type=int, default=4000)
    b.add_argument("--host-bytes", type=int, default=60000)
    b.add_argument("--claim-pid-base", type=int, default=100000)
    f = sub.add_parser("fork-hellos")
    f.add_argument("--socket", required=True)
    f.add_argument("--processes", type=int, default=20)
    f.add_argument("--hold-s", type=float, default=5)
    ch = sub.add_parser("churn")
    ch.add_argument("--socket", required=True)
    ch.add_argument("--seconds", type=float, default=8)
    ch.add_argument("--every-s", type=float, default=0.25)
    au = sub.add_parser("auto")
    au.add_argument("--socket", required=True)
    au.add_argument("--claim-pid", type=int, required=True)
    for name in ("http-body", "http-headers"):
        h = sub.add_parser(name)
        h.add_argument("--port", type=int, required=True)
        h.add_argument("--mib", type=int, default=256)
    i = sub.add_parser("http-idle")
    i.add_argument("--port", type=int, required=True)
    i.add_argument("--connections", type=int, default=200)
    i.add_argument("--seconds", type=float, default=60)
    pu = sub.add_parser("push-to-collector")
    pu.add_argument("--victim-pid", type=int, required=True)
    pu.add_argument("--fake-out-dir", required=True)
    po = sub.add_parser("post")
    po.add_argument("--port", type=int, required=True)
    po.add_argument("--method", default="POST")
    po.add_argument("--path", default="/v1/trace")
    po.add_argument("--body")
    a = p.parse_args()
    handlers = {"collector": collector, "kineto": kineto, "beats": beats, "fork-hellos": fork_hellos, "churn": churn,
                "auto": auto, "http-body": http_body, "http-headers": http_headers, "http-idle": http_idle,
                "push-to-collector": push_to_collector, "post": post}
    handlers[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

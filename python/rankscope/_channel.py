"""The collector's link to the node daemon: a Unix datagram socket of its own (abstract
address, so nothing to clean up), heartbeats, and requests pushed by the daemon.

One background thread blocks in recv() with a timeout equal to the time left to the next
heartbeat (2 s): no spinning, and no I/O on the training thread while idle. If the daemon is
absent or killed, sends fail silently and the next heartbeat tries again; a restarted daemon
learns of the process from its next heartbeat.

Any local user can send a datagram to an abstract address. A message is taken only when it
comes from the daemon's own address and the kernel says (SCM_CREDENTIALS) that its sender runs
as root or as this process's user: nobody else can push requests or a "welcome" naming another
output directory.
"""

import json
import os
import socket
import struct
import threading
import time
import uuid

_CREDENTIALS = struct.Struct("iII")  # struct ucred: pid, uid, gid

DEFAULT_ADDRESS = "@rankscoped"


def parse_address(spec):
    """'@name' -> abstract name (bytes with a leading NUL), anything else a filesystem path."""
    if spec.startswith("@"):
        return b"\0" + spec[1:].encode()
    return spec


class Channel:
    def __init__(self, address, on_message, make_beat, heartbeat_s=2.0, on_idle=None):
        self.address = parse_address(address)
        self._on_message = on_message
        self._make_beat = make_beat
        self._on_idle = on_idle
        self.heartbeat_s = heartbeat_s
        self.welcomed = False
        self.daemon_out_dir = None
        self.send_errors = 0
        self._closed = False
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self._sock.bind(b"\0rankscope-collector-%d-%s" % (os.getpid(), uuid.uuid4().hex[:12].encode()))
        self._thread = threading.Thread(target=self._loop, name="rankscope-collector", daemon=True)
        self._thread.start()

    def send(self, msg):
        """Never blocks and never raises: the daemon may be absent."""
        try:
            self._sock.sendto(json.dumps(msg).encode(), socket.MSG_DONTWAIT, self.address)
            return True
        except OSError:
            self.send_errors += 1
            self.welcomed = False  # a daemon that comes back must be greeted again
            return False

    def _from_daemon(self, sender, ancillary):
        if sender != self.address:
            return False
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= _CREDENTIALS.size:
                _, uid, _ = _CREDENTIALS.unpack_from(payload)
                return uid in (0, os.getuid())
        return False

    def close(self):
        self._closed = True
        try:
            # Wakes the thread: shutdown makes the blocked recv return.
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._sock.close()

    def _loop(self):
        next_beat = 0.0
        while not self._closed:
            now = time.monotonic()
            if now >= next_beat:
                beat = self._make_beat()
                beat["op"] = "beat" if self.welcomed else "hello"
                self.send(beat)
                next_beat = now + self.heartbeat_s
                if self._on_idle is not None:
                    try:
                        self._on_idle()
                    except Exception:  # the collector must never take the job down
                        pass
            try:
                self._sock.settimeout(max(0.01, next_beat - time.monotonic()))
                data, ancillary, _, sender = self._sock.recvmsg(65536, socket.CMSG_SPACE(_CREDENTIALS.size))
            except socket.timeout:
                continue
            except OSError:
                if self._closed:
                    return
                time.sleep(self.heartbeat_s)  # should not happen; never spin
                continue
            if not data:
                if self._closed:
                    return
                continue
            if not self._from_daemon(sender, ancillary):
                continue
            try:
                msg = json.loads(data)
            except ValueError:
                continue
            if msg.get("op") == "welcome":
                self.welcomed = True
                self.daemon_out_dir = msg.get("out_dir")
                continue
            try:
                self._on_message(msg)
            except Exception:
                pass

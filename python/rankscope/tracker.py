"""The in-process collector: `tracker = Tracker(); ...; tracker.step()` once per training step.

Idle cost: step() is a few attribute updates and the auto-trigger's arithmetic (about a
microsecond, see bench/step_overhead.py); it does no I/O and takes no lock. A background thread
(blocked in recv between 2 s heartbeats) talks to the node daemon; the daemon pushes trace and
snapshot requests to it. Everything the Tracker does is wrapped so that no exception reaches
the training loop: on an internal error it logs once and goes inert.
"""

import logging
import os
import re
import sys
import threading
import time

from rankscope import _flight_recorder, _identity
from rankscope._capture import CaptureSession
from rankscope._channel import DEFAULT_ADDRESS, Channel
from rankscope._snapshot import write_stacks
from rankscope._trigger import AutoTrigger

__all__ = ["Tracker"]

log = logging.getLogger("rankscope")

_FILE_RE = re.compile(r"^(rank|pid)\d+\.(pt\.trace\.json\.gz|stacks\.txt)$")
_STACKS_SUFFIX = ".stacks.txt"
_FR_SUFFIX = ".flightrecorder"
_monotonic = time.monotonic


def _env_float(key, default):
    try:
        return float(os.environ[key])
    except (KeyError, ValueError):
        return default


class Tracker:
    """Counts training steps, and profiles some of them when asked (daemon, `rankscope trace`)
    or when the step time degrades (auto-trigger).

    Args:
        out_dir: where traces go when no daemon is reachable (auto-trigger, `trace()`); with a
            daemon, its output directory is used. Default: $RANKSCOPE_OUT_DIR or /tmp/rankscope.
        daemon: the daemon's collector socket, '@name' (abstract) or a path.
            Default: $RANKSCOPE_SOCKET or '@rankscoped'.
        auto_trigger: trace automatically when the step time degrades (see _trigger.py).
        auto_steps: steps recorded by an automatic trace.
        slow_factor, slow_steps, warmup_steps, slow_seconds, gap_minutes, cooldown_s: the
            auto-trigger's thresholds (see _trigger.py: it fires when the median of the last
            slow_steps steps stays above slow_factor x its baseline for slow_seconds).
    """

    def __init__(self, out_dir=None, *, daemon=None, job=None, rank=None, auto_trigger=True, auto_steps=3,
                 slow_factor=1.15, slow_steps=30, warmup_steps=30, slow_seconds=20.0, gap_minutes=28.0, cooldown_s=600.0, heartbeat_s=2.0):
        self._steps = 0
        self._last_t = _monotonic()
        self._ema = 0.0
        self._attention = False        # True when step() must look beyond counting
        self._inbox = []                # requests pushed by the daemon (appended by the channel thread)
        self._session = None
        self._trigger = None
        self._channel = None
        self._hang_reported = False
        self._beat_steps = -1
        self._disabled = os.environ.get("RANKSCOPE_DISABLE", "") not in ("", "0")
        self.auto_steps = int(auto_steps)
        self.last_trace_dir = None
        if self._disabled:
            return
        try:
            self.out_dir = os.path.abspath(out_dir or os.environ.get("RANKSCOPE_OUT_DIR") or "/tmp/rankscope")
            self.job = _identity.safe_name(job) if job else _identity.job()
            self._rank = int(rank) if rank is not None else _identity.rank()
            self.gap_s = gap_minutes * 60.0
            if auto_trigger and os.environ.get("RANKSCOPE_AUTO_TRIGGER", "1") != "0":
                self._trigger = AutoTrigger(
                    factor=_env_float("RANKSCOPE_SLOW_FACTOR", slow_factor),
                    consecutive=int(_env_float("RANKSCOPE_SLOW_STEPS", slow_steps)),
                    warmup=int(_env_float("RANKSCOPE_WARMUP_STEPS", warmup_steps)),
                    sustain_s=_env_float("RANKSCOPE_SLOW_SECONDS", slow_seconds),
                    gap_s=self.gap_s, cooldown_s=_env_float("RANKSCOPE_COOLDOWN_S", cooldown_s))
            self._ident = {"pid": os.getpid(), "local_rank": _identity.local_rank(),
                           "world_size": _identity.world_size(), "host": _identity.host(), "uid": os.getuid(),
                           "cmd": _identity.command()}
            self._channel = Channel(daemon or os.environ.get("RANKSCOPE_SOCKET") or DEFAULT_ADDRESS,
                                    on_message=self._on_message, make_beat=self._beat,
                                    heartbeat_s=heartbeat_s, on_idle=self._on_idle)
            _live_trackers.append(self)
        except Exception as e:
            self._disable(e)

    # ------------------------------------------------------------------ hot path
    def step(self):
        """Marks the end of one training step. Call it once per step, after optimizer.step()."""
        if self._disabled:
            return
        try:
            now = _monotonic()
            dt = now - self._last_t
            self._last_t = now
            self._steps += 1
            ema = self._ema
            self._ema = dt if ema == 0.0 else ema + 0.1 * (dt - ema)
            trigger = self._trigger
            if trigger is not None and self._steps > 1:
                reason = trigger.observe(dt)
                if reason is not None:
                    self._auto_fire(reason)
            if self._attention:
                self._advance()
        except Exception as e:
            self._disable(e)

    # ------------------------------------------------------------------ public API
    @property
    def steps(self):
        """Steps completed so far."""
        return self._steps

    @property
    def rank(self):
        if self._rank < 0:
            dist = sys.modules.get("torch.distributed")
            try:
                if dist is not None and dist.is_available() and dist.is_initialized():
                    self._rank = dist.get_rank()
            except Exception:
                pass
        return self._rank

    @property
    def connected(self):
        """True while the daemon answers."""
        return bool(self._channel and self._channel.welcomed)

    def trace(self, steps=3, *, record_shapes=False, with_stack=False, profile_memory=False, trace_id=None):
        """Profiles the next `steps` steps of this process into <out_dir>/<job>/<trace_id>/."""
        if self._disabled:
            return None
        try:
            trace_id = trace_id or time.strftime("local-%Y%m%d-%H%M%S", time.gmtime())
            return self._local_trace(trace_id, steps, -1, "api", record_shapes, with_stack, profile_memory)
        except Exception as e:
            log.warning("rankscope: trace() failed: %s", e)
            return None

    def snapshot(self, path=None):
        """Writes every thread's Python stack; returns the file's path."""
        base = self._base_name()
        if path is None:
            d = os.path.join(self._root(), self.job, time.strftime("snapshot-%Y%m%d-%H%M%S", time.gmtime()))
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, base + ".stacks.txt")
        written = write_stacks(path, self._stack_header("api"))
        self._write_flight_recorder(os.path.dirname(path), os.path.basename(path), "api")
        return written

    def close(self):
        """Stops the background thread and any running profiler (without writing)."""
        if self._disabled:
            return
        self._disabled = True
        try:
            if self._session is not None and self._session.state == "recording":
                self._session.abort("the Tracker was closed")
            if self._channel is not None:
                self._channel.close()
        except Exception:
            pass

    def wait_for_writes(self, timeout=60.0):
        """Waits for a trace that is being written (tests, end of a job)."""
        s = self._session
        if s is not None and s.writer is not None:
            s.writer.join(timeout)

    # ------------------------------------------------------------------ internals
    def _disable(self, error):
        self._disabled = True
        log.warning("rankscope: collector disabled after an internal error (training continues): %r", error)
        try:
            if self._channel is not None:
                self._channel.close()
        except Exception:
            pass

    def _root(self):
        ch = self._channel
        return ch.daemon_out_dir if ch is not None and ch.welcomed and ch.daemon_out_dir else self.out_dir

    def _base_name(self):
        r = self.rank
        return f"rank{r}" if r >= 0 else f"pid{os.getpid()}"

    def _beat(self):
        s = self._session
        busy = s is not None and s.state in ("waiting", "recording", "writing")
        beat = dict(self._ident, rank=self.rank, job=self.job, step=self._steps, step_ms=self._ema * 1e3, busy=busy)
        # Only while steps have stopped (none since the last heartbeat): then the age of the
        # oldest open collective tells the daemon early that the job hangs. Costs nothing while
        # the job steps.
        steps = self._steps
        if steps > 0 and steps == self._beat_steps:
            try:
                pending = _flight_recorder.oldest_pending_s()
                if pending is not None:
                    beat["fr_pending_s"] = round(pending, 3)
            except Exception:
                pass
        self._beat_steps = steps
        return beat

    def _report(self, capture_id, state, **fields):
        if self._channel is not None:
            self._channel.send(dict(fields, op="report", pid=os.getpid(), id=capture_id, state=state))

    def _advance(self):
        # Called on the training thread when something is pending or running.
        if self._inbox:
            request = self._inbox.pop(0)
            s = self._session
            if request.get("op") == "cancel":
                # The daemon gave up on this capture: do not keep waiting for its start.
                if s is not None and s.id == request.get("id") and s.state == "waiting":
                    s.state = "failed"
            elif s is not None and s.state in ("waiting", "recording", "writing"):
                self._report(request["id"], "failed", error=f"busy: already profiling ({s.id})")
            else:
                self._session = CaptureSession(request, lambda state, **f: self._report(request["id"], state, **f))
        s = self._session
        if s is not None and s.state in ("waiting", "recording"):
            s.on_step(self._steps)
        if self._hang_reported:
            self._hang_reported = False
        s = self._session
        self._attention = bool(self._inbox) or (s is not None and s.state in ("waiting", "recording"))

    def _valid_request(self, msg):
        d, f = msg.get("dir", ""), msg.get("file", "")
        if not (isinstance(d, str) and os.path.isabs(d) and os.path.normpath(d) == d and ".." not in d.split(os.sep)):
            return False
        root = self._channel.daemon_out_dir if self._channel else None
        if not root or not d.startswith(root.rstrip(os.sep) + os.sep):
            return False  # only inside the directory the daemon announced
        return isinstance(f, str) and bool(_FILE_RE.match(f)) and _identity.is_safe_name(str(msg.get("id", "")))

    def _on_message(self, msg):
        # Channel thread.
        op = msg.get("op")
        if op == "cancel":
            self._inbox.append(msg)
            self._attention = True
            return
        if op not in ("trace", "snapshot"):
            return
        if not self._valid_request(msg):
            self._report(msg.get("id", "?"), "failed", error="refused: output path outside the daemon's directory")
            return
        if op == "snapshot":
            # Right here, on this thread: the training thread may be stuck in a collective.
            try:
                write_stacks(os.path.join(msg["dir"], msg["file"]), self._stack_header(msg["id"]))
            except Exception as e:
                self._report(msg["id"], "failed", error=f"{type(e).__name__}: {e}")
                return
            fields = {"file": msg["file"]}
            fr = self._write_flight_recorder(msg["dir"], msg["file"], msg["id"])
            if fr:
                fields["fr_file"] = fr
            self._report(msg["id"], "done", **fields)
            return
        self._inbox.append(msg)
        self._attention = True

    def _write_flight_recorder(self, directory, stacks_file, capture_id):
        """rank<R>.flightrecorder beside rank<R>.stacks.txt; the file name, or None."""
        if not stacks_file.endswith(_STACKS_SUFFIX):
            return None
        name = stacks_file[: -len(_STACKS_SUFFIX)] + _FR_SUFFIX
        try:
            info = {"pid": os.getpid(), "job": self.job, "host": self._ident.get("host", ""), "capture": capture_id}
            if _flight_recorder.write_dump(os.path.join(directory, name), info):
                return name
        except Exception as e:
            log.warning("rankscope: flight recorder not dumped: %r", e)
        return None

    def _stack_header(self, capture_id):
        s = self._session
        return {"pid": os.getpid(), "rank": self.rank, "world_size": self._ident.get("world_size", -1),
                "job": self.job, "host": self._ident.get("host", ""),
                "capture": capture_id, "steps_completed": self._steps, "step_ms": round(self._ema * 1e3, 3),
                "seconds_since_last_step": round(_monotonic() - self._last_t, 3),
                "profiling": s.state if s is not None else "no"}

    def _on_idle(self):
        # Channel thread, every heartbeat: a step gap longer than the threshold means the job
        # may be hung; record where every thread is, once per gap.
        if self._steps > 0 and not self._hang_reported and _monotonic() - self._last_t > self.gap_s:
            self._hang_reported = True
            self._attention = True
            d = os.path.join(self._root(), self.job, time.strftime("hang-%Y%m%d-%H%M%S", time.gmtime()))
            os.makedirs(d, exist_ok=True)
            write_stacks(os.path.join(d, self._base_name() + ".stacks.txt"), self._stack_header("auto-hang"))
            self._write_flight_recorder(d, self._base_name() + ".stacks.txt", "auto-hang")
            log.warning("rankscope: no step for %.0f s; stacks written to %s", _monotonic() - self._last_t, d)

    def _auto_fire(self, reason):
        log.warning("rankscope: auto-trigger: %s", reason)
        if self._channel is not None and self._channel.welcomed:
            # The daemon traces every rank of the job on this node, aligned, once per cooldown.
            self._channel.send({"op": "auto", "pid": os.getpid(), "reason": reason, "steps": self.auto_steps})
            return
        # No daemon: this rank traces itself. Ranks of one job that fire together pick the
        # same start step (next multiple of 10) and so the same directory.
        start = (self._steps + 2 + 9) // 10 * 10
        self._local_trace(f"auto-step{start}", self.auto_steps, start, reason, False, False, False)

    def _local_trace(self, trace_id, steps, start_step, reason, record_shapes, with_stack, profile_memory):
        s = self._session
        if s is not None and s.state in ("waiting", "recording", "writing"):
            return None
        d = os.path.join(self.out_dir, self.job, _identity.safe_name(trace_id))
        os.makedirs(d, exist_ok=True)
        request = {"id": trace_id, "dir": d, "file": self._base_name() + ".pt.trace.json.gz", "steps": steps,
                   "start_step": start_step, "record_shapes": record_shapes, "with_stack": with_stack,
                   "profile_memory": profile_memory, "reason": reason}
        self._session = CaptureSession(request, lambda state, **f: self._report(trace_id, state, **f))
        self._attention = True
        self.last_trace_dir = d
        return d


_live_trackers = []


def _after_fork_in_child():
    # A forked child (DataLoader worker) inherits the Tracker but not its thread: make it inert
    # so that it neither steps nor sends heartbeats under its parent's identity.
    for t in _live_trackers:
        t._disabled = True
        t._channel = None
    _live_trackers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

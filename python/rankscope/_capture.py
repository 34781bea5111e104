"""One on-demand or automatic profiling session inside a training process.

Steps are counted by the Tracker: after its k-th step() call, step k is about to run. A session
for steps [S, S+N) starts torch.profiler at call S-1 (one warm-up step, so that the first
recorded step does not pay the profiler's start-up), records steps S..S+N-1 as
ProfilerStep#S..#S+N-1, and stops at call S+N. A duration session records whole steps from
the first step boundary after its start time until `duration_ms` have passed.

The trace is exported on a separate (non-daemon) thread so that the training loop does not wait
for JSON and gzip: <dir>/.<base>.partial (Kineto's own export), then gzip into
<dir>/<base>.pt.trace.json.gz.tmp, then rename. Nothing is written anywhere else.
"""

import gzip
import os
import shutil
import threading
import time

from . import _cpu_sched

__all__ = ["CaptureSession"]


class CaptureSession:
    def __init__(self, request, report):
        self.id = request["id"]
        self.dir = request["dir"]
        self.file = request["file"]
        self.steps = int(request.get("steps") or 0)
        self.start_step = int(request.get("start_step", -1))
        self.duration_ms = int(request.get("duration_ms") or 0)
        self.start_unix_ms = int(request.get("start_unix_ms") or 0)
        self.record_shapes = bool(request.get("record_shapes"))
        self.with_stack = bool(request.get("with_stack"))
        self.profile_memory = bool(request.get("profile_memory"))
        self.reason = request.get("reason", "request")
        self._report = report
        self.state = "waiting"
        self.first_step = -1
        self.last_step = -1
        self._prof = None
        self._sched_before = None
        self._record_t0 = 0.0
        self.writer = None

    # ---- called from Tracker.step() on the training thread ----
    def on_step(self, n):
        """Advances the session after the n-th step() call. Returns True once it needs no more
        calls (recording finished or failed)."""
        if self.state == "waiting":
            if self._should_start(n):
                self._start(n)
            return self.state not in ("waiting", "recording")
        if self.state == "recording":
            if self._should_stop(n):
                self.last_step = n - 1
                self.state = "writing"
                self._add_cpu_sched()
                self._prof.stop()  # (RECORD, None) -> stop_trace + on_trace_ready
                return True
            if n == self.first_step:
                self._sched_before = _cpu_sched.snapshot()  # step `first` is about to be recorded
            self._prof.step()
        return False

    def _add_cpu_sched(self):
        """The recorded steps' CPU run and run-queue wait of this process, into the trace."""
        try:
            text = _cpu_sched.window_json(self._sched_before, _cpu_sched.snapshot())
            if text:
                self._prof.add_metadata_json(_cpu_sched.METADATA_KEY, text)
        except Exception:
            pass  # an older torch without add_metadata_json: the trace goes without it

    def _should_start(self, n):
        if self.steps > 0:
            return self.start_step < 0 or n >= self.start_step - 1
        return time.time() * 1000 >= self.start_unix_ms

    def _should_stop(self, n):
        if n <= self.first_step:
            return False
        if self.steps > 0:
            return n >= self.first_step + self.steps
        return (time.monotonic() - self._record_t0) * 1000 >= self.duration_ms

    def _start(self, n):
        import torch  # the job's own torch, already imported by the job
        from torch.profiler import ProfilerAction, ProfilerActivity

        self.first_step = n + 1
        first = self.first_step
        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        prof = torch.profiler.profile(
            activities=activities,
            schedule=lambda s: ProfilerAction.RECORD if s >= first else ProfilerAction.WARMUP,
            on_trace_ready=self._trace_ready,
            record_shapes=self.record_shapes, with_stack=self.with_stack, profile_memory=self.profile_memory)
        # ProfilerStep#<k> then carries the job's own step number.
        prof.step_num = n
        prof.start()
        self._prof = prof
        self._record_t0 = time.monotonic()
        self.state = "recording"
        note = {}
        if 0 <= self.start_step < first:
            note["note"] = f"started late, at step {first} instead of {self.start_step}"
        self._report("started", first_step=first, **note)

    def _trace_ready(self, prof):
        # Runs inside prof.stop() on the training thread: hand the export to a writer thread.
        self.writer = threading.Thread(target=self._write, args=(prof,), name="rankscope-trace-writer")
        self.writer.start()

    def abort(self, why):
        """Stops a running profiler without writing (the Tracker is being closed)."""
        if self._prof is not None and self.state == "recording":
            try:
                self._prof.stop()
            except Exception:
                pass
        self.state = "failed"
        self._report("failed", error=why)

    # ---- writer thread ----
    def _write(self, prof):
        base = self.file[: -len(".pt.trace.json.gz")]
        partial = os.path.join(self.dir, f".{base}.partial")
        final = os.path.join(self.dir, self.file)
        try:
            prof.export_chrome_trace(partial)
            with open(partial, "rb") as fin, gzip.open(final + ".tmp", "wb", compresslevel=1) as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            os.replace(final + ".tmp", final)
            self.state = "done"
            self._report("done", file=self.file, first_step=self.first_step, last_step=self.last_step)
        except Exception as e:  # disk full, directory removed, ...
            self.state = "failed"
            self._report("failed", error=f"{type(e).__name__}: {e}")
            _remove(final + ".tmp")
        finally:
            _remove(partial)
            _remove(partial + ".tmp")


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass

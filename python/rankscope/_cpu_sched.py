"""How long this process's threads ran and waited for a CPU during a profiled window.

Linux keeps, per thread, the time it ran on a CPU and the time it was runnable but waited in a
run queue (/proc/self/task/<tid>/schedstat: run_ns wait_ns timeslices). Summed over the
process's threads between the start and the end of a recording, they tell the diagnosis whether a
rank that is slower than its peers waited for a CPU more than they did at the same CPU use — the
host's contention, not the job's code (docs/cluster.md, "CPU contention"). The totals go into the
trace itself (`rankscope_cpu_sched`, a top-level key written with add_metadata_json).

Reading a few small /proc files on the training thread costs tens of microseconds, twice per
recording. Never raises: without /proc (another OS, a hardened container) there is no record.
"""

import json
import os

__all__ = ["snapshot", "window_json", "METADATA_KEY"]

METADATA_KEY = "rankscope_cpu_sched"
_TASKS = "/proc/self/task"


def snapshot():
    """{tid: (run_ns, wait_ns)} for every thread of this process, or None where /proc lacks it."""
    try:
        tids = os.listdir(_TASKS)
    except OSError:
        return None
    out = {}
    for tid in tids:
        try:
            with open(f"{_TASKS}/{tid}/schedstat") as f:
                run, wait = f.read().split()[:2]
            out[tid] = (int(run), int(wait))
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return out or None


def window_json(before, after):
    """The window's totals as the trace metadata's JSON text, or None without both snapshots.
    A thread that started inside the window counts from zero; one that ended is lost (its time
    is small next to the training threads')."""
    if not before or not after:
        return None
    run = wait = 0
    for tid, (r, w) in after.items():
        r0, w0 = before.get(tid, (0, 0))
        run += max(0, r - r0)
        wait += max(0, w - w0)
    return json.dumps({"run_ns": run, "wait_ns": wait, "threads": len(after), "source": "schedstat"})

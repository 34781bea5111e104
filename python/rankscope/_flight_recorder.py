"""PyTorch's Flight Recorder, read from inside the training process.

PyTorch 2.13 records every collective of every process group in a ring buffer (2000 entries by
default, TORCH_FR_BUFFER_SIZE / TORCH_NCCL_TRACE_BUFFER_SIZE; gloo and NCCL alike) and dumps it
with `torch._C._distributed_c10d._dump_fr_trace_json()`. On a snapshot the collector writes
that dump beside the stacks as rank<R>.flightrecorder, plus a "rankscope" object with what the
dump lacks: this rank, the job, the dump time, and every process group's global ranks (gloo's
pg_config is empty). While steps have stopped, the heartbeat carries the age of the oldest
collective this rank entered and has not completed, so that the daemon can tell a hang early.

Never imports torch: a process that has not imported torch.distributed has nothing to dump.
"""

import json
import os
import sys
import time

__all__ = ["available", "dump", "write_dump", "oldest_pending_s"]


def _c10d():
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None, None
    c = sys.modules.get("torch._C._distributed_c10d")
    if c is None or not hasattr(c, "_dump_fr_trace_json"):
        return None, None
    return dist, c


def available():
    return _c10d()[1] is not None


def _completed(entry):
    # gloo leaves `state` at "scheduled" and retires an entry when its work completes; NCCL
    # sets "completed" (a retired NCCL entry that is not completed timed out).
    if entry.get("state") == "completed":
        return True
    return bool(entry.get("retired")) and str(entry.get("profiling_name", "")).startswith("gloo:")


def _process_groups(dist):
    groups = {}
    try:
        world = dist.distributed_c10d._world
        for pg, name in list(world.pg_names.items()):
            groups[str(name)] = {"desc": str(getattr(pg, "group_desc", "") or ""),
                                 "ranks": [int(r) for r in dist.get_process_group_ranks(pg)]}
    except Exception:  # private API: its absence costs the membership, nothing else
        pass
    return groups


def dump(info):
    """The dump as a dict with a "rankscope" section, or None without torch.distributed."""
    dist, c = _c10d()
    if c is None:
        return None
    data = json.loads(c._dump_fr_trace_json())
    section = dict(info)
    section.update(time_unix_ns=time.time_ns(), world_size=dist.get_world_size(), rank=dist.get_rank(),
                   process_groups=_process_groups(dist))
    data["rankscope"] = section
    return data


def write_dump(path, info):
    """Writes atomically (<path>.tmp, then rename); returns the path, or None when there is
    nothing to dump."""
    data = dump(info)
    if data is None:
        return None
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)
    return path


def oldest_pending_s():
    """Seconds since the oldest collective this rank entered and has not completed was created;
    None when none is open (or there is no flight recorder)."""
    _, c = _c10d()
    if c is None:
        return None
    entries = json.loads(c._dump_fr_trace_json(onlyActive=True)).get("entries", [])
    created = [e.get("time_created_ns", 0) for e in entries if not _completed(e) and not e.get("is_p2p")]
    created = [t for t in created if t]
    if not created:
        return None
    return max(0.0, (time.time_ns() - min(created)) / 1e9)

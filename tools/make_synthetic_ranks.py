#!/usr/bin/env python3
"""Semi-synthetic multi-rank GPU trace sets, built from one real trace, with known answers.

    python3 tools/make_synthetic_ranks.py ../shared/traces/hta/nccl_2rank_a100/nccl_data.json.gz OUT \
        --ranks 8 --ranks-per-host 4 --clock-offsets-us 0,2500.125 \
        --slow-kernel bn_bw_1C11_kernel_new --slow-grid 256,1,1 --slow-ranks 5 --slow-extra-us 10000 \
        --truth truth.json

writes OUT/rank0.pt.trace.json.gz ... OUT/rank7.pt.trace.json.gz: copies of the source trace in
which, on every rank,

  * distributedInfo says rank R of N (and every process group spans the N ranks, in
    distributedInfo.pg_config and in the collectives' "Process Group Ranks"/"Group size" args);
  * host_name is node00, node01, ... (--ranks-per-host ranks each; 0: no host name, so every
    rank is its own clock domain);
  * the GPU activities run on the rank's own device of its host (its place there: ranks 0-3 of a
    host of 4 on devices 0-3), as on a multi-GPU node; without hosts on the source's device;
  * the clock is off by the host's (or, without hosts, the rank's) --clock-offsets-us entry: it
    is added to baseTimeNanoseconds, so every absolute time of that rank moves by it exactly;

and on the --slow-ranks, every instance of the chosen kernel (name contains --slow-kernel, and
grid equals --slow-grid when given) runs --slow-extra-us longer, or --slow-factor times as long
(then every launch shape of the kernel is slowed in proportion: a slowdown spread over shapes).
With --extra-kernel NAME the slowed instances keep their duration and each is followed on its
stream by a kernel NAME that runs for the extra time instead: work only the slow ranks do (extra
GEMMs a rank launches), with the same timing.

How the slowdown propagates (the model the expected answers follow). On a slow rank, every GPU
event after a slowed kernel ends that much later (a stream runs its work in order). The other
ranks' GPUs are not delayed by the kernel itself, but each collective ends at the same moment on
every rank: their communication kernels start on time and run longer (they wait for the slow
rank), and their GPU work after the collective ends happens later by the slow rank's
accumulated delay. Hosts wait for their GPU at step boundaries (the end of each ProfilerStep, as
an optimizer step or a loss.item() does): CPU events of a step move by the GPU delay accumulated
by the end of the previous step, so steps grow by the delay that arose in them and CPU ops keep
their durations. (Without ProfilerSteps the host follows the GPU delay at every instant.) GPU
kernels keep their duration unless they are the slowed kernel or a communication kernel. Times
are integer ns end to end (the source's decimal µs are parsed exactly and written back with 3
decimals), so clocks can be recovered exactly.

--truth FILE writes what was injected: hosts, offsets (ns), slow ranks, the kernel, the slowed
instances per profiled step and the injected delay per step (extra × instances per step).
"""

import argparse
import bisect
import gzip
import json
import multiprocessing
import os
import re
import sys
from decimal import Decimal

GPU_ACTIVITY = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
KERNEL = {"kernel", "Kernel"}
COMM = re.compile(r"nccl|rccl", re.IGNORECASE)

# Filled before the worker processes fork (so the big event texts are not pickled per task).
SHARED = {}
# The GPU activities' device in the shared event texts, replaced per rank by its device on its host.
DEVICE = "@rankscope-device@"


def to_ns(value):
    """A JSON number of µs (int, or Decimal from parse_float) -> integer ns, exactly."""
    return int(Decimal(value) * 1000)


def from_ns(ns):
    """Integer ns -> µs as a float whose shortest repr is the exact 3-decimal value (|ns| < 1e15)."""
    return ns / 1000


class Shift:
    """A non-decreasing step function of base time: breakpoints (t, value), right-continuous."""

    def __init__(self, points):
        points = sorted(points)
        self.times, self.values, best = [], [], 0
        for t, v in points:
            best = max(best, v)
            self.times.append(t)
            self.values.append(best)

    def __call__(self, t):
        i = bisect.bisect_right(self.times, t) - 1
        return self.values[i] if i >= 0 else 0


def is_slowed(e, pattern, grid):
    if e.get("ph") != "X" or e.get("cat") not in KERNEL or pattern not in e.get("name", ""):
        return False
    return grid is None or e.get("args", {}).get("grid") == grid


def is_comm(e):
    return e.get("ph") == "X" and e.get("cat") in KERNEL and COMM.search(e.get("name", "")) is not None


def step_ends(events, base):
    return sorted(base + to_ns(e["ts"]) + to_ns(e["dur"]) for e in events
                  if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator", "cpu_op")
                  and str(e.get("name", "")).startswith("ProfilerStep#"))


def extra_ns(e, args):
    """How much longer a slowed instance runs."""
    if args.slow_factor:
        return round((args.slow_factor - 1) * to_ns(e["dur"]))
    return round(args.slow_extra_us * 1000)


def build_shifts(events, base, args, grid):
    """{"slow": (gpu shift, cpu shift), "fast": (...)}: delays of a slow rank and of the others,
    as functions of base absolute ns."""
    slowed = sorted((base + to_ns(e["ts"]) + to_ns(e["dur"]), extra_ns(e, args)) for e in events
                    if args.slow_kernel and is_slowed(e, args.slow_kernel, grid))
    points, total = [], 0
    for end, extra in slowed:
        total += extra
        points.append((end, total))
    slow = Shift(points)
    # At each collective's end the other ranks catch up with the slow rank's delay at its start.
    comm = [(base + to_ns(e["ts"]), base + to_ns(e["ts"]) + to_ns(e["dur"])) for e in events if is_comm(e)]
    fast = Shift([(end, slow(start)) for start, end in comm])
    ends = step_ends(events, base)

    def host(gpu):  # the host catches up with its GPU at each step end
        return Shift([(t, gpu(t)) for t in ends]) if ends else gpu
    return {"slow": (slow, host(slow)), "fast": (fast, host(fast))}


def gpu_tracks(events):
    """(pid, tid) of the GPU streams: their annotations and flow ends follow the GPU's delay."""
    return {(str(e.get("pid")), str(e.get("tid"))) for e in events
            if e.get("ph") == "X" and e.get("cat") in GPU_ACTIVITY}


def shifted_events(events, base, new_base, shifts, slow_rank, args, grid):
    world_ranks = str(list(range(args.ranks)))
    gpu_shift, host_shift = shifts
    on_gpu = gpu_tracks(events)
    out = []
    for e in events:
        e, added = dict(e), None
        if "ts" in e and isinstance(e["ts"], (int, Decimal)):
            t = base + to_ns(e["ts"])
            dur = to_ns(e["dur"]) if isinstance(e.get("dur"), (int, Decimal)) else None
            shift = gpu_shift if (str(e.get("pid")), str(e.get("tid"))) in on_gpu else host_shift
            start = t + shift(t)
            if dur is not None:
                if e.get("cat") in GPU_ACTIVITY and e.get("ph") == "X":
                    if is_comm(e):
                        end = t + dur + shift(t + dur)  # waits until the collective ends everywhere
                    elif slow_rank and args.slow_kernel and is_slowed(e, args.slow_kernel, grid):
                        end = start + dur
                        if args.extra_kernel:  # the extra time runs as a kernel of its own after it
                            added = extra_kernel(e, end - new_base, extra_ns(e, args), args)
                        else:
                            end += extra_ns(e, args)
                    else:
                        end = start + dur
                else:
                    end = t + dur + shift(t + dur)  # spans stretch over the delays inside them
                e["dur"] = from_ns(end - start)
            e["ts"] = from_ns(start - new_base)
        a = e.get("args")
        if isinstance(a, dict) and ("Process Group Ranks" in a or "Group size" in a):
            a = dict(a)
            if "Process Group Ranks" in a:
                a["Process Group Ranks"] = world_ranks
            if "Group size" in a:
                a["Group size"] = args.ranks
            e["args"] = a
        if isinstance(a, dict) and e.get("cat") in GPU_ACTIVITY and "device" in a:
            e["args"] = dict(a, device=DEVICE)  # each rank's own, filled in by write_rank
        out.append(e)
        if added:
            out.append(added)
    return out


def extra_kernel(after, ts_ns, dur_ns, args):
    """A kernel --extra-kernel that runs `dur_ns` from `ts_ns` (relative ns) on `after`'s stream,
    launched by no traced CPU op."""
    a = {k: v for k, v in (after.get("args") or {}).items() if k not in ("External id", "correlation")}
    if "device" in a:
        a["device"] = DEVICE
    return {"ph": "X", "cat": after["cat"], "name": args.extra_kernel, "pid": after.get("pid"),
            "tid": after.get("tid"), "ts": from_ns(ts_ns), "dur": from_ns(dur_ns), "args": a}


def jsonable(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"not JSON: {type(value)}")


def host_of(rank, per_host):
    return f"node{rank // per_host:02d}" if per_host > 0 else None


def device_of(rank, args):
    """A rank's GPU: its place on its host (ranks of a host each have their own GPU), or the
    source's device when there are no hosts."""
    return rank % args.ranks_per_host if args.ranks_per_host > 0 else SHARED["source_device"]


def offset_ns(rank, args):
    key = rank // args.ranks_per_host if args.ranks_per_host > 0 else rank
    return round(args.clock_offsets_us[key] * 1000) if key < len(args.clock_offsets_us) else 0


def header(doc, rank, args, new_base):
    h = {k: v for k, v in doc.items() if k != "traceEvents"}
    info = dict(h.get("distributedInfo") or {})
    info["rank"], info["world_size"] = rank, args.ranks
    if isinstance(info.get("pg_config"), list):
        info["pg_config"] = [dict(pg, pg_size=args.ranks, ranks=list(range(args.ranks))) for pg in info["pg_config"]]
    h["distributedInfo"] = info
    host = host_of(rank, args.ranks_per_host)
    if host:
        h["host_name"] = host
    else:
        h.pop("host_name", None)
    h["baseTimeNanoseconds"] = new_base + offset_ns(rank, args)
    return h


def write_rank(rank):
    args, doc, new_base = SHARED["args"], SHARED["doc"], SHARED["new_base"]
    events = SHARED["slow_events"] if rank in args.slow_ranks else SHARED["fast_events"]
    head = json.dumps(header(doc, rank, args, new_base), default=jsonable)
    events = events.replace(json.dumps(DEVICE), str(device_of(rank, args)))
    text = head[:-1] + (", " if len(head) > 2 else "") + '"traceEvents": ' + events + "}"
    path = os.path.join(args.out, f"rank{rank}.pt.trace.json.gz")
    with open(path + ".tmp", "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=1, mtime=0))
    os.replace(path + ".tmp", path)
    return path


def truth(doc, events, base, args, grid):
    steps = [(base + to_ns(e["ts"]), base + to_ns(e["ts"]) + to_ns(e["dur"])) for e in events
             if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator", "cpu_op")
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    # Slowed instances counted like rankscope counts them: those that start within the steps.
    slowed = [e for e in events if args.slow_kernel and is_slowed(e, args.slow_kernel, grid)]
    names = [args.extra_kernel] if args.extra_kernel else sorted({e["name"] for e in slowed})
    in_window = [e for e in slowed
                 if steps and min(s for s, _ in steps) <= base + to_ns(e["ts"]) < max(t for _, t in steps)]
    per_step = len(in_window) / len(steps) if steps else 0.0
    extra = round(args.slow_extra_us * 1000)
    injected = sum(extra_ns(e, args) for e in in_window) / len(steps) if steps else 0.0
    return {
        "source": args.source,
        "ranks": args.ranks,
        "hosts": {str(r): host_of(r, args.ranks_per_host) for r in range(args.ranks)},
        "clock_offset_ns": {str(r): offset_ns(r, args) for r in range(args.ranks)},
        "slow_ranks": sorted(args.slow_ranks),
        "kernel": {"names": names, "grid": grid, "block": slowed[0]["args"].get("block") if slowed else None,
                   "shapes": len({(str(e["args"].get("grid")), str(e["args"].get("block"))) for e in slowed})},
        "extra_ns_per_instance": extra if not args.slow_factor else None,
        "slow_factor": args.slow_factor or None,
        "steps": len(steps),
        "slowed_instances_per_step": per_step,
        "injected_per_step_ns": round(injected),
    }


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="a real trace (.json or .json.gz)")
    p.add_argument("out", help="output directory (created)")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--ranks-per-host", type=int, default=8, help="0: no host names (one clock per rank)")
    p.add_argument("--clock-offsets-us", default="", help="comma list: offset of host 0, 1, ... (µs, 3 decimals)")
    p.add_argument("--slow-kernel", default="", help="slow the kernels whose name contains this")
    p.add_argument("--slow-grid", default="", help="... and whose grid is X,Y,Z")
    p.add_argument("--slow-ranks", default="", help="comma list of ranks with the slow kernel")
    p.add_argument("--slow-extra-us", type=float, default=0.0, help="extra time per slowed instance (µs)")
    p.add_argument("--slow-factor", type=float, default=0.0, help="... or: slowed instances run this many times as long")
    p.add_argument("--extra-kernel", default="",
                   help="... or: each slowed instance is followed by a kernel of this name for the extra time")
    p.add_argument("--truth", default="", help="write the injected facts here (JSON)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = p.parse_args(argv)
    args.clock_offsets_us = [float(x) for x in args.clock_offsets_us.split(",") if x.strip()]
    args.slow_ranks = {int(x) for x in args.slow_ranks.split(",") if x.strip()}
    if args.slow_kernel and not args.slow_ranks:
        p.error("--slow-kernel needs --slow-ranks")
    if args.extra_kernel and not args.slow_kernel:
        p.error("--extra-kernel needs --slow-kernel (the kernel it follows)")
    return args


def main(argv=None):
    args = parse_args(argv)
    opener = gzip.open if args.source.endswith(".gz") else open
    with opener(args.source, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"]
    base = int(doc.get("baseTimeNanoseconds", 0))
    starts = [base + to_ns(e["ts"]) for e in events if isinstance(e.get("ts"), (int, Decimal))]
    new_base = min(starts) // 1_000_000_000 * 1_000_000_000  # keeps written µs values small and exact
    grid = [int(x) for x in args.slow_grid.split(",")] if args.slow_grid else None
    shifts = build_shifts(events, base, args, grid)
    os.makedirs(args.out, exist_ok=True)
    devices = [e["args"]["device"] for e in events
               if e.get("cat") in GPU_ACTIVITY and "device" in (e.get("args") or {})]
    SHARED.update(args=args, doc=doc, new_base=new_base, source_device=devices[0] if devices else 0)
    SHARED["fast_events"] = json.dumps(shifted_events(events, base, new_base, shifts["fast"], False, args, grid),
                                       default=jsonable, separators=(",", ":"))
    SHARED["slow_events"] = (json.dumps(shifted_events(events, base, new_base, shifts["slow"], True, args, grid),
                                        default=jsonable, separators=(",", ":")) if args.slow_ranks else "")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(max(1, args.jobs)) as pool:
        pool.map(write_rank, range(args.ranks), chunksize=4)
    facts = truth(doc, events, base, args, grid)
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump(facts, f, indent=1)
    print(f"wrote {args.ranks} ranks to {args.out}; injected {facts['injected_per_step_ns']} ns per step "
          f"({facts['slowed_instances_per_step']:g} slowed instances per step)", file=sys.stderr)


if __name__ == "__main__":
    main()

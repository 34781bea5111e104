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
GEMMs a rank launches), with the same timing. With --host-delay-us D --host-delay-at SPAN the slow
ranks' hosts pause D before each CPU span SPAN (--host-delay-inside: at its start, inside it): what
it launches after that is launched D later, which delays the GPU only where the GPU's queue does
not hide it. --jitter-step-pct and --jitter-kernel-pct make every rank's kernels run longer by a
random fraction per (rank, step) and per kernel (--seed), as real GPUs differ.

How a delay propagates (the model the expected answers follow): one sweep over the source's
timeline, every rank at once. A GPU activity starts after the last of its constraints — its
stream's previous work, the work on another stream it waits for (the first activity launched after
a cudaStreamWaitEvent waits for the work every other stream launched before that call: the trace
does not say which event), its launch plus the shortest launch latency of the trace — and as long
after it as in the source (the GPU's own gap between kernels). So its delay is the latest of its
constraints' new times minus the latest of their source times: a delay of a constraint that was not
the binding one is hidden up to the difference (work queued on the GPU hides a late launch; a stream
that waited for another hides its own delay). A kernel ends later by its extra time (slowed,
jittered); a collective's kernel ends, on every rank, when its latest participant has arrived (the
largest delay at its start; the others' kernels start on time and wait). The host is late by its
pauses, and catches up with its GPU where it waits for it: a copy that returned after its transfer
ended (a copy to pageable memory, even when called Async) and every synchronize call (also one that
returned at once in the source: with a later GPU it would wait) — a wait returns when both the host
has called it and the work has ended, plus the time the call took after that, so it absorbs the
host's delay up to the time it waited. Nothing else makes the host wait (a step's end does not: a
host that never synchronizes runs ahead of its GPU, and its GPU's delay costs the job nothing).
CPU ops keep their durations; spans stretch over the delays inside them (a span on another
thread than the one that waited never ends before it starts). GPU kernels keep their duration
unless they are slowed, jittered or a communication kernel. Times are integer ns end
to end (the source's decimal µs are parsed exactly and written back with 3 decimals), so clocks can
be recovered exactly.

--truth FILE writes what was injected: hosts, offsets (ns), slow ranks, the kernel, the slowed
instances per profiled step, the host pauses, the injected delay per step, and what removing the
fault saves per step under the model (`saving_per_step_ns`: the job's step with it minus without
it, the same jitter in both: the injected delay less what the GPU's queue, idle streams, waits and
the other ranks' jitter hide of it).
"""

import argparse
import bisect
import gzip
import json
import multiprocessing
import os
import random
import re
import sys
from decimal import Decimal

GPU_ACTIVITY = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
KERNEL = {"kernel", "Kernel"}
COMM = re.compile(r"nccl|rccl", re.IGNORECASE)
RUNTIME = {"cuda_runtime", "Runtime", "cuda_driver"}

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


class StepFunction:
    """A right-continuous step function of base time, its breakpoints appended in time order;
    each breakpoint has a kind, and a value asked for `before_kind` ignores the breakpoints of that
    time whose kind is not below it (a span's end sees the host's catch-up at that time, not a
    pause that starts the next span)."""

    def __init__(self):
        self.keys, self.values = [], []

    def set(self, t, value, kind=0):
        key = (t, kind)
        if self.keys and self.keys[-1] == key:
            self.values[-1] = value
        else:
            self.keys.append(key)
            self.values.append(value)

    def __call__(self, t, before_kind=9):
        i = bisect.bisect_left(self.keys, (t, before_kind)) - 1
        return self.values[i] if i >= 0 else 0


def is_slowed(e, pattern, grid):
    if e.get("ph") != "X" or e.get("cat") not in KERNEL or pattern not in e.get("name", ""):
        return False
    return grid is None or e.get("args", {}).get("grid") == grid


def is_comm(e):
    return e.get("ph") == "X" and e.get("cat") in KERNEL and COMM.search(e.get("name", "")) is not None


def is_gpu_activity(e):
    return e.get("ph") == "X" and e.get("cat") in GPU_ACTIVITY


def is_step(e):
    return (e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator", "cpu_op")
            and str(e.get("name", "")).startswith("ProfilerStep#"))


def extra_ns(e, args):
    """How much longer a slowed instance runs."""
    if args.slow_factor:
        return round((args.slow_factor - 1) * to_ns(e["dur"]))
    return round(args.slow_extra_us * 1000)


class Source:
    """What the delay model needs from the source trace, in base absolute ns."""

    def __init__(self, events, base, args, grid):
        self.base = base
        self.steps = sorted((base + to_ns(e["ts"]), base + to_ns(e["ts"]) + to_ns(e["dur"]))
                            for e in events if is_step(e))
        launches = {}
        for e in events:
            a = e.get("args")
            if e.get("ph") == "X" and not is_gpu_activity(e) and isinstance(a, dict) and "correlation" in a:
                launches[a["correlation"]] = base + to_ns(e["ts"])
        # Per GPU activity (by event index): start, end, launch (its runtime call's start, or its start);
        # `launched`: the launch of those whose runtime call is in the trace.
        self.gpu, self.launched, self.by_correlation, self.track = {}, {}, {}, {}
        for i, e in enumerate(events):
            if is_gpu_activity(e):
                self.track[i] = track_of(e)
                t = base + to_ns(e["ts"])
                correlation = (e.get("args") or {}).get("correlation")
                launch = launches.get(correlation)
                self.gpu[i] = (t, t + to_ns(e["dur"]), min(launch, t) if launch is not None else t)
                if launch is not None:
                    self.launched[i] = min(launch, t)
                    self.by_correlation[correlation] = i
        # The shortest time from a launch to its work's start: what a launch onto an idle GPU takes.
        self.launch_ns = min((self.gpu[i][0] - launch for i, launch in self.launched.items()), default=0)
        self.comms = sorted((*self.gpu[i], i) for i, e in enumerate(events) if is_comm(e))
        self.slowed = {i for i, e in enumerate(events) if args.slow_kernel and is_slowed(e, args.slow_kernel, grid)}
        self.jittered = [i for i, e in enumerate(events)
                         if e.get("ph") == "X" and e.get("cat") in KERNEL and not is_comm(e)]
        self.injections = host_injections(events, base, args)
        self.waits = host_waits(events, base, self)
        self.after_event_wait = work_after_event_waits(events, base, self)


def work_after_event_waits(events, base, source):
    """{activity index: host time of the cudaStreamWaitEvent before its launch}: the first activity
    launched after each such call, which its stream runs only after the event's work on another
    stream (which the trace does not name: every stream's work launched before the call)."""
    waits = sorted(base + to_ns(e["ts"]) for e in events
                   if e.get("ph") == "X" and e.get("cat") in RUNTIME and e.get("name") == "cudaStreamWaitEvent")
    launches = sorted((launch, i) for i, launch in source.launched.items())
    out = {}
    for w in waits:
        k = bisect.bisect_right(launches, (w, len(events)))
        if k < len(launches):
            out[launches[k][1]] = w  # the latest wait before it: its event's work was launched before that
    return out


def host_injections(events, base, args):
    """Times of the host delays (--host-delay-at): before (or, --host-delay-inside, at the start
    of) each span of that name on the host."""
    if not args.host_delay_at:
        return []
    return sorted(base + to_ns(e["ts"]) for e in events
                  if e.get("ph") == "X" and not is_gpu_activity(e) and e.get("name") == args.host_delay_at)


def host_waits(events, base, source):
    """The host's waits for its GPU, (start, end, end of the awaited work, its stream or None: every
    stream): a copy that returned after its own transfer had ended (a copy to pageable host memory
    waits even when called Async), and every synchronize call, for the work launched before it that
    had ended when it returned."""
    waits = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in RUNTIME or not isinstance(e.get("dur"), (int, Decimal)):
            continue
        a = base + to_ns(e["ts"])
        b = a + to_ns(e["dur"])
        name = str(e.get("name", ""))
        if "Memcpy" in name:
            i = source.by_correlation.get((e.get("args") or {}).get("correlation"))
            if i is not None and a < source.gpu[i][1] <= b:
                waits.append((a, b, source.gpu[i][1], source.track[i]))
        elif name.endswith("Synchronize"):
            # A wait even where the GPU had finished before it was called (it returned at once).
            g = max((end for start, end, launch in source.gpu.values() if launch < a and end <= b), default=None)
            if g is not None:
                waits.append((a, b, g, None))
    return waits


def jitter_ns(source, rank, args):
    """{event index: extra ns} of the rank's kernels: each runs longer by its duration times a
    per-(rank, step) fraction plus a per-kernel fraction, uniform in [0, 2 x the given %], drawn
    from the seed (the same draws with or without a fault)."""
    if not (args.jitter_step_pct or args.jitter_kernel_pct):
        return {}
    rng = random.Random(args.seed * 7919 + rank)
    step_part = [rng.uniform(0, 2 * args.jitter_step_pct / 100) for _ in range(len(source.steps) + 1)]
    starts = [s for s, _ in source.steps]
    out = {}
    for i in source.jittered:
        start, end, launch = source.gpu[i]
        part = step_part[bisect.bisect_right(starts, launch)] + rng.uniform(0, 2 * args.jitter_kernel_pct / 100)
        out[i] = round((end - start) * part)
    return out


# Kinds of the host's breakpoints at one time: a catch-up (the host waited for its GPU) ends the
# span that waited; a pause starts the next span (spans ending there do not see it).
CATCH_UP, PAUSE = 0, 1
# The sweep's order of the points at one time: work ending before the host catches up with it,
# the host's pauses before the launches and starts they delay.
END, HOST_CATCH_UP, HOST_PAUSE, START = range(4)


class Delays:
    """One rank's delays (ns) as functions of base time, from the sweep (rank_delays): each GPU
    stream's (`gpu(t, track)`; `activity[i]`: the start of GPU activity i), its host's (`host(t)`;
    `at_end`: the end of a span ending at t), and the collectives' (shared by every rank: event
    index of a communication kernel -> the delay of the collective's end)."""

    def __init__(self, collective):
        self.gpu_at, self.host_at, self.activity, self.collective = {}, StepFunction(), {}, collective
        # While sweeping, per stream: (source end, new end) of its last work, and of all its ended
        # work (their launches and ends, in launch order).
        self.last_end, self.ended = {}, {}

    def gpu(self, t, track):
        f = self.gpu_at.get(track)
        return f(t) if f else 0

    def host(self, t, at_end=False):
        return self.host_at(t, PAUSE if at_end else PAUSE + 1)

    def set_gpu(self, track, t, value):
        self.gpu_at.setdefault(track, StepFunction()).set(t, value)


def sweep_points(source, pausing):
    """Every point of the source's timeline at which some rank's delay can change, in sweep order."""
    points = []
    for i, (start, end, launch) in source.gpu.items():
        points.append((end, END, i, None))
        points.append((start, START, i, None))
    points += [(b, HOST_CATCH_UP, i, (a, g, track)) for i, (a, b, g, track) in enumerate(source.waits)]
    if pausing:
        points += [(t, HOST_PAUSE, 0, None) for t in source.injections]
    return sorted(points, key=lambda p: p[:3])


def awaited_end(d, track, since):
    """(source end, new end) of the latest-ending work other streams than `track` launched before
    `since` and have run (a cudaStreamWaitEvent's event is on one of them)."""
    out = None
    for other, (launches, ends) in d.ended.items():
        k = bisect.bisect_left(launches, since)
        if other != track and k > 0 and (out is None or ends[k - 1][1] > out[1]):
            out = ends[k - 1]
    return out


def start_delay(d, source, i):
    """An activity starts after the last of: its stream's previous work, the work on another stream
    it waits for, its launch plus the launch's latency; and after as much time again as it started
    after that last one in the source (the GPU's own gap between kernels). So a delay of a constraint
    that was not the last in the source is hidden by the time until the last: work queued on the GPU
    hides a late launch, a stream waiting for another hides its own delay."""
    start = source.gpu[i][0]
    track = source.track[i]
    constraints = [d.last_end[track]] if track in d.last_end else []  # (source time, new time)
    if i in source.after_event_wait:
        awaited = awaited_end(d, track, source.after_event_wait[i])
        if awaited is not None:
            constraints.append(awaited)
    launch = source.launched.get(i)
    if launch is not None:
        ready = min(start, launch + source.launch_ns)
        constraints.append((ready, ready + d.host(launch)))
    delay = max(new for _, new in constraints) - max(old for old, _ in constraints) if constraints else 0
    d.activity[i] = max(0, delay)
    return d.activity[i]


def end_delay(d, source, i, extra):
    """An activity runs its extra time longer; a collective's kernel ends when its latest participant
    has arrived."""
    start, end, launch = source.gpu[i]
    delay = d.collective[i] if i in d.collective else d.activity[i] + extra
    d.last_end[source.track[i]] = (end, end + delay)
    launches, ends = d.ended.setdefault(source.track[i], ([], []))
    launches.append(launch)
    ends.append((end, end + delay))
    return delay


def catch_up(d, wait):
    """The host waits for its GPU at the end of a wait (start a, awaited work's end g on `track`;
    None: every stream), which returns when both the host had called it and the work had ended,
    plus the time the call took after that."""
    a, g, track = wait
    done = g + d.gpu(g, track) if track is not None else max((new for _, new in d.last_end.values()), default=g)
    return max(a + d.host(a), done) - max(a, g)


def rank_delays(source, events, args, faulty):
    """[(Delays, {event index: extra ns of its own duration})] per rank; `faulty`: the ranks with the
    injected fault (empty: the same job without it). One sweep over the source's timeline, every
    rank at once: a stream's delay grows at the end of its kernels that run longer, at its
    activities' starts when the host launched them late (less what was queued) or another stream's
    work they wait for ended late, and at the end of each collective to the latest participant's
    delay at its start; the host's grows at its pauses and catches up with the GPU where it waits."""
    collective = {}
    per_rank, extras = [], []
    for rank in range(args.ranks):
        extra = jitter_ns(source, rank, args)
        if rank in faulty:
            for i in source.slowed:
                extra[i] = extra.get(i, 0) + extra_ns(events[i], args)
        extras.append(extra)
        # The kernel after which --extra-kernel runs keeps its own duration (jitter aside).
        own = {i: x - (extra_ns(events[i], args) if args.extra_kernel and rank in faulty and i in source.slowed else 0)
               for i, x in extra.items()}
        per_rank.append((Delays(collective), own))
    pause = round(args.host_delay_us * 1000)
    comm = {i for *_, i in source.comms}
    for t, order, i, wait in sweep_points(source, pause and faulty):
        for rank, (d, _) in enumerate(per_rank):
            if order == END:
                d.set_gpu(source.track[i], t, end_delay(d, source, i, extras[rank].get(i, 0)))
            elif order == START:
                d.set_gpu(source.track[i], t, start_delay(d, source, i))
            elif order == HOST_CATCH_UP:
                d.host_at.set(t, catch_up(d, wait), CATCH_UP)
            elif rank in faulty:  # HOST_PAUSE
                d.host_at.set(t, d.host(t) + pause, PAUSE)
        if order == START and i in comm:  # it ends when its latest participant has arrived
            collective[i] = max(d.activity[i] for d, _ in per_rank)
    return per_rank


def job_step_ns(source, per_rank):
    """The job's step time under the model: the slowest rank's profiled window per step."""
    if not source.steps:
        return 0
    first, last = source.steps[0][0], source.steps[-1][1]
    return max((last + d.host(last, True)) - (first + d.host(first)) for d, _ in per_rank) / len(source.steps)


def track_of(e):
    return str(e.get("pid")), str(e.get("tid"))


def gpu_tracks(events):
    """(pid, tid) of the GPU streams: their annotations and flow ends follow their stream's delay."""
    return {track_of(e) for e in events if e.get("ph") == "X" and e.get("cat") in GPU_ACTIVITY}


def shifted_events(events, base, new_base, source, delays, faulty, args):
    """The rank's events with its delays: `delays` (Delays, {event index: extra ns of its duration})."""
    world_ranks = str(list(range(args.ranks)))
    delay, own_extra = delays
    on_gpu = gpu_tracks(events)
    out = []
    for i, e in enumerate(events):
        e, added = dict(e), None
        if "ts" in e and isinstance(e["ts"], (int, Decimal)):
            t = base + to_ns(e["ts"])
            dur = to_ns(e["dur"]) if isinstance(e.get("dur"), (int, Decimal)) else None
            track = track_of(e)
            gpu_track = track in on_gpu
            if gpu_track:
                start = t + delay.activity.get(i, delay.gpu(t, track))
            else:
                # A delay inside the span (--host-delay-inside) leaves its start where it was.
                inside = args.host_delay_inside and e.get("name") == args.host_delay_at
                start = t + delay.host(t, at_end=inside)
            if dur is not None:
                if is_gpu_activity(e):
                    if is_comm(e):
                        end = t + dur + delay.collective[i]  # ends when the latest participant has arrived
                    else:
                        end = start + dur + own_extra.get(i, 0)
                        if faulty and args.extra_kernel and i in source.slowed:
                            # the extra time runs as a kernel of its own after it
                            added = extra_kernel(e, end - new_base, extra_ns(e, args), args)
                elif gpu_track:
                    end = t + dur + delay.gpu(t + dur, track)
                else:
                    # Spans stretch over the delays inside them; a thread that did not wait while
                    # its host caught up with the GPU (a delay absorbed) cannot end before it starts.
                    end = max(start, t + dur + delay.host(t + dur, at_end=True))
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


def events_text(rank):
    """The rank's shifted events as JSON text (ranks with no delay of their own share one)."""
    source, args = SHARED["source"], SHARED["args"]
    if rank not in SHARED["own_text"]:
        return SHARED["shared_text"]
    events = shifted_events(SHARED["events"], source.base, SHARED["new_base"], source, SHARED["delays"][rank],
                            rank in args.slow_ranks, args)
    return json.dumps(events, default=jsonable, separators=(",", ":"))


def write_rank(rank):
    args, doc, new_base = SHARED["args"], SHARED["doc"], SHARED["new_base"]
    head = json.dumps(header(doc, rank, args, new_base), default=jsonable)
    events = events_text(rank).replace(json.dumps(DEVICE), str(device_of(rank, args)))
    text = head[:-1] + (", " if len(head) > 2 else "") + '"traceEvents": ' + events + "}"
    path = os.path.join(args.out, f"rank{rank}.pt.trace.json.gz")
    with open(path + ".tmp", "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=1, mtime=0))
    os.replace(path + ".tmp", path)
    return path


def truth(events, source, args, grid):
    steps = source.steps
    window = (steps[0][0], steps[-1][1]) if steps else (0, 0)
    # Slowed instances counted like rankscope counts them: those that start within the steps.
    slowed = [events[i] for i in sorted(source.slowed)]
    names = [args.extra_kernel] if args.extra_kernel else sorted({e["name"] for e in slowed})
    in_window = [events[i] for i in sorted(source.slowed) if window[0] <= source.gpu[i][0] < window[1]]
    delays_in_window = [t for t in source.injections if window[0] <= t < window[1]]
    per_step = len(in_window) / len(steps) if steps else 0.0
    extra = round(args.slow_extra_us * 1000)
    injected = (sum(extra_ns(e, args) for e in in_window) + len(delays_in_window) * round(args.host_delay_us * 1000)
                ) / len(steps) if steps else 0.0
    without = rank_delays(source, events, args, set())
    saving = job_step_ns(source, SHARED["delays"]) - job_step_ns(source, without)
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
        "host_delay": ({"at": args.host_delay_at, "inside": args.host_delay_inside,
                        "ns": round(args.host_delay_us * 1000), "per_step": len(delays_in_window) / len(steps)}
                       if args.host_delay_at and steps else None),
        "jitter": {"step_pct": args.jitter_step_pct, "kernel_pct": args.jitter_kernel_pct, "seed": args.seed},
        "steps": len(steps),
        "slowed_instances_per_step": per_step,
        "injected_per_step_ns": round(injected),
        # The job's step time with the fault minus without it, under the model (what fixing it saves).
        "saving_per_step_ns": round(saving),
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
    p.add_argument("--slow-ranks", default="", help="comma list of the faulty ranks")
    p.add_argument("--slow-extra-us", type=float, default=0.0, help="extra time per slowed instance (µs)")
    p.add_argument("--slow-factor", type=float, default=0.0, help="... or: slowed instances run this many times as long")
    p.add_argument("--extra-kernel", default="",
                   help="... or: each slowed instance is followed by a kernel of this name for the extra time")
    p.add_argument("--host-delay-us", type=float, default=0.0,
                   help="the slow ranks' hosts pause this long (µs) ...")
    p.add_argument("--host-delay-at", default="",
                   help="... before each CPU span of this name")
    p.add_argument("--host-delay-inside", action="store_true",
                   help="... at the span's start, inside it (the span grows)")
    p.add_argument("--jitter-step-pct", type=float, default=0.0,
                   help="every rank's kernels run longer by a fraction drawn per (rank, step) in [0, 2x this %%] ...")
    p.add_argument("--jitter-kernel-pct", type=float, default=0.0,
                   help="... plus one drawn per kernel in [0, 2x this %%]")
    p.add_argument("--seed", type=int, default=1, help="of the jitter")
    p.add_argument("--truth", default="", help="write the injected facts here (JSON)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = p.parse_args(argv)
    args.clock_offsets_us = [float(x) for x in args.clock_offsets_us.split(",") if x.strip()]
    args.slow_ranks = {int(x) for x in args.slow_ranks.split(",") if x.strip()}
    if (args.slow_kernel or args.host_delay_at) and not args.slow_ranks:
        p.error("--slow-kernel and --host-delay-at need --slow-ranks")
    if bool(args.host_delay_at) != bool(args.host_delay_us):
        p.error("--host-delay-us and --host-delay-at go together")
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
    source = Source(events, base, args, grid)
    delays = rank_delays(source, events, args, args.slow_ranks)
    os.makedirs(args.out, exist_ok=True)
    devices = [e["args"]["device"] for e in events
               if e.get("cat") in GPU_ACTIVITY and "device" in (e.get("args") or {})]
    jitter = args.jitter_step_pct or args.jitter_kernel_pct
    own_text = set(range(args.ranks)) if jitter else set(args.slow_ranks)
    plain = next((r for r in range(args.ranks) if r not in own_text), None)
    SHARED.update(args=args, doc=doc, events=events, new_base=new_base, source=source, delays=delays,
                  own_text=own_text, source_device=devices[0] if devices else 0)
    SHARED["shared_text"] = (json.dumps(shifted_events(events, base, new_base, source, delays[plain], False, args),
                                        default=jsonable, separators=(",", ":")) if plain is not None else "")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(max(1, args.jobs)) as pool:
        pool.map(write_rank, range(args.ranks), chunksize=1 if own_text else 4)
    facts = truth(events, source, args, grid)
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump(facts, f, indent=1)
    print(f"wrote {args.ranks} ranks to {args.out}; injected {facts['injected_per_step_ns']} ns per step "
          f"({facts['slowed_instances_per_step']:g} slowed instances per step)", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Pairs of real PyTorch runs that differ by one known change, for `rankscope compare` (CPU,
gloo, DistributedDataParallel, a small MLP fed by a real DataLoader).

    python3 workloads/compare_runs.py --out DIR --pair wider --pair batch ...   (one rank)
    torchrun --nproc_per_node=2 workloads/compare_runs.py --out DIR --pair ranks

A pair is BASE (the reference settings) and NEW (one change). Both are trained in one process
and profiled in one torch.profiler session (record_shapes, with_stack, profile_memory), their
steps interleaved: BASE, NEW, BASE, NEW... so that both see the same machine load, however the
load of a shared machine comes and goes. The exported trace is then split by step into
DIR/<pair>/base/rank<R>.pt.trace.json.gz and DIR/<pair>/new/rank<R>.pt.trace.json.gz, each the
events of its own steps (plus the trace's metadata). Pairs:

    same        NEW = BASE (identical runs)
    wider       the second hidden layer is 4x wider
    extra_op    forward multiplies the activations by a fixed matrix (one extra operator)
    batch       four times the batch size
    slow_data   the dataset sleeps in __getitem__ (a slower data pipeline)
    bf16        forward under torch.autocast("cpu", torch.bfloat16) instead of fp32
    ranks       (torchrun, 2 ranks) BASE: each rank trains in a process group of its own, and
                only rank 0's trace is kept (a one-rank job); NEW: both ranks train one model
                together (a two-rank job): a different number of ranks

DIR/<pair>/truth.json (rank 0) records the pair, its settings, the step numbers of each side and,
per step, how long the training thread waited for a CPU while runnable (the run-queue wait of
/proc/thread-self/schedstat, when the kernel has it): on a busy machine that time lands inside
whatever operator was running, and no trace can tell it from the operator's own work.
"""

import argparse
import gzip
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

PAIRS = ("same", "wider", "extra_op", "batch", "slow_data", "bf16", "ranks")
BASE = {"d_in": 512, "hidden": 512, "hidden2": 1024, "batch": 64, "extra_op": False, "data_sleep_s": 0.0,
        "bf16": False}


def settings(pair):
    """(BASE, NEW) settings of a pair. Each change costs about as much as BASE's whole step or
    more, so that it stands out of the step-to-step noise of a busy machine."""
    base = dict(BASE)
    if pair == "extra_op":  # a smaller body, so that one extra matmul weighs as much as the step
        base.update(d_in=256, hidden=256)
    elif pair == "bf16":  # large matmuls: bf16 changes their cost by a large factor (AMX, or emulation)
        base.update(d_in=1024, hidden=1024, batch=128)
    elif pair == "ranks":  # communication-heavy: large layers, a small batch
        base.update(d_in=2048, hidden=2048, hidden2=2048, batch=4)
    new = dict(base)
    if pair == "wider":
        new["hidden2"] = 4 * base["hidden2"]
    elif pair == "extra_op":
        new["extra_op"] = True
    elif pair == "batch":
        new["batch"] = 4 * base["batch"]
    elif pair == "slow_data":
        new["data_sleep_s"] = 0.0003  # per sample: about 20 ms per batch of 64
    elif pair == "bf16":
        new["bf16"] = True
    return base, new


class Samples(Dataset):
    def __init__(self, n, d, sleep_s):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, d, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)
        self.sleep_s = sleep_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(s["d_in"], s["hidden"]), nn.ReLU(), nn.Linear(s["hidden"], s["hidden2"]),
                                  nn.ReLU())
        self.head = nn.Linear(s["hidden2"], 10)
        # The extra operator: a fixed mixing matrix applied after the body (a plain tensor, not a
        # parameter or buffer, so that DDP neither reduces nor broadcasts it).
        self.mix = torch.randn(s["hidden2"], s["hidden2"]) / s["hidden2"] ** 0.5
        self.extra_op = s["extra_op"]

    def forward(self, x):
        x = self.body(x)
        if self.extra_op:
            x = torch.matmul(x, self.mix)
        return self.head(x)


class Trainer:
    """One side of a pair: its model, optimizer and data."""

    def __init__(self, s, steps, group):
        torch.manual_seed(0)
        world = dist.get_world_size(group)
        data = Samples(s["batch"] * steps * world, s["d_in"], s["data_sleep_s"])
        sampler = torch.utils.data.distributed.DistributedSampler(data, num_replicas=world,
                                                                  rank=dist.get_rank(group), shuffle=False)
        self.batches = iter(DataLoader(data, batch_size=s["batch"], sampler=sampler))
        self.model = nn.parallel.DistributedDataParallel(Net(s), process_group=group)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.bf16 = s["bf16"]

    def step(self):
        x, y = next(self.batches)
        self.opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            loss = nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()


def split_trace(path, out_dirs, rank, keep):
    """Writes the events of the even-numbered recorded steps to out_dirs[0] and of the odd ones
    to out_dirs[1] (when keep[i]); returns the ProfilerStep numbers of each side."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    steps = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                    and e.get("name", "").startswith("ProfilerStep#")), key=lambda e: e["ts"])
    spans = [(float(e["ts"]), float(e["ts"]) + float(e["dur"]), k % 2) for k, e in enumerate(steps)]
    sides = ([], [])
    for e in events:
        ts = e.get("ts")
        side = None
        if ts is not None and e.get("ph") != "M":
            t = float(ts)
            for start, end, s in spans:
                if start <= t < end:
                    side = s
                    break
        for s in (0, 1):
            if side is None or side == s:
                sides[s].append(e)
    numbers = ([], [])
    for k, e in enumerate(steps):
        numbers[k % 2].append(int(e["name"].split("#")[1]))
    for s in (0, 1):
        if not keep[s]:
            continue
        os.makedirs(out_dirs[s], exist_ok=True)
        part = dict(trace)
        part["traceEvents"] = sides[s]
        with gzip.open(os.path.join(out_dirs[s], f"rank{rank}.pt.trace.json.gz"), "wt") as f:
            json.dump(part, f)
    return numbers


def runqueue_wait_ns():
    """The calling thread's time spent runnable but waiting for a CPU, in ns (None when unknown)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def run(pair, args, rank, world):
    base_s, new_s = settings(pair)
    steps = args.warmup + 2 * args.steps + 2
    if pair == "ranks":
        own = [dist.new_group([r]) for r in range(world)][rank]  # every rank creates every group
        sides = [Trainer(base_s, steps, own), Trainer(new_s, steps, dist.group.WORLD)]
    else:
        sides = [Trainer(base_s, steps, dist.group.WORLD), Trainer(new_s, steps, dist.group.WORLD)]
    for _ in range(args.warmup):  # DDP builds its buckets in the first steps; caches warm up
        for t in sides:
            t.step()
    out = os.path.join(args.out, pair)
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, f".rank{rank}.raw.json")
    # Recorded steps alternate BASE, NEW, ... (the profiler's warm-up step is a NEW step).
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=2 * args.steps)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=lambda prof: prof.export_chrome_trace(raw), record_shapes=True,
                                with_stack=True, profile_memory=True) as prof:
        waits = []  # per iteration: (before the step, before prof.step()), which ends ProfilerStep#i
        for i in range(2 * args.steps + 1):
            before = runqueue_wait_ns()
            sides[(i + 1) % 2].step()
            waits.append((before, runqueue_wait_ns()))
            prof.step()
    keep_base = pair != "ranks" or rank == 0
    numbers = split_trace(raw, [os.path.join(out, "base"), os.path.join(out, "new")], rank, [keep_base, True])
    os.remove(raw)
    dist.barrier()
    if rank == 0:
        with open(os.path.join(out, "truth.json"), "w") as f:
            known = all(None not in w for w in waits)
            wait = {str(i): waits[i][1] - waits[i][0] for i in range(1, len(waits))} if known else {}
            json.dump({"pair": pair, "world_size": world, "base": base_s, "new": new_s,
                       "base_steps": numbers[0], "new_steps": numbers[1], "runqueue_wait_ns": wait}, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--pair", action="append", required=True, choices=PAIRS)
    p.add_argument("--steps", type=int, default=10, help="profiled steps per side")
    p.add_argument("--warmup", type=int, default=3, help="unprofiled steps per side first")
    args = p.parse_args()
    if "RANK" not in os.environ:  # plain `python3`: a one-rank job
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    for pair in args.pair:
        if pair == "ranks" and world < 2:
            raise SystemExit("the ranks pair needs two ranks: torchrun --nproc_per_node=2 ...")
        run(pair, args, rank, world)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Ground truth for cluster diagnosis: one DDP job (CPU, gloo, torchrun) that records several
scenarios one after the other, each with at most one injected fault, each profiled on every rank.

    torchrun --nproc_per_node=6 workloads/ground_truth.py --out DIR \
        --scenario clean:none:-:0 \
        --scenario data:slow-data:1:80 \
        --scenario forward:slow-forward:2:80 \
        --scenario collective:slow-collective:3:40 \
        --scenario node:slow-forward:4,5:80

A scenario is NAME:KIND:RANKS:MS. Kinds (the same faults as workloads/ddp_train.py):

    none              no fault
    slow-data         each listed rank's DataLoader sleeps MS per batch (spread over its samples)
    slow-forward      each listed rank does MS of extra compute (matmuls) at the start of forward
    slow-collective   each listed rank sleeps MS in its DDP communication hook, before every
                      gradient all-reduce it launches (one per DDP bucket)

A "slow node" is a fault on every rank of one pretend host: give `rankscope analyze` a hosts
file that puts those ranks on one host (tests/python/test_cluster.py does).

Output: DIR/NAME/rank<R>.pt.trace.json.gz for every rank, and DIR/truth.json (written by rank 0):
the scenarios as injected, so the tests compare rankscope's answer with them. One
job for all scenarios: the process start-up (torch import, rendezvous) is paid once, which
matters on small CI machines.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_train import SmallNet, SyntheticImages  # noqa: E402  (the demo's model and data)

KINDS = ("none", "slow-data", "slow-forward", "slow-collective")

# What the comm hook reads: the delay of the current scenario on this rank.
HOOK = {"delay_s": 0.0}


def parse_scenario(text):
    name, kind, ranks, ms = text.split(":")
    if kind not in KINDS:
        raise SystemExit(f"unknown fault kind {kind!r}; one of {', '.join(KINDS)}")
    faulty = [] if ranks in ("-", "") else [int(r) for r in ranks.split(",")]
    return {"name": name, "kind": kind, "ranks": faulty, "ms": float(ms)}


def delayed_allreduce(state, bucket):
    """DDP comm hook: the usual averaging all-reduce, after the scenario's delay (if any)."""
    if HOOK["delay_s"]:
        time.sleep(HOOK["delay_s"])
    world = dist.get_world_size()
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda f: f.value()[0] / world)


def apply_fault(scenario, rank, dataset, model, batch_size):
    """Sets (or clears) this rank's fault for the scenario."""
    mine = rank in scenario["ranks"]
    seconds = scenario["ms"] / 1000.0 if mine else 0.0
    dataset.delay_s = seconds / batch_size if scenario["kind"] == "slow-data" else 0.0
    model.extra_compute_s = seconds if scenario["kind"] == "slow-forward" else 0.0
    HOOK["delay_s"] = seconds if scenario["kind"] == "slow-collective" else 0.0


class Batches:
    """An endless stream of batches, epoch after epoch."""

    def __init__(self, loader, sampler):
        self.loader, self.sampler, self.epoch = loader, sampler, 0
        self.it = iter(loader)

    def next(self):
        try:
            return next(self.it)
        except StopIteration:
            self.epoch += 1
            self.sampler.set_epoch(self.epoch)
            self.it = iter(self.loader)
            return next(self.it)


def train_step(ddp, opt, loss_fn, batches):
    x, y = batches.next()  # the DataLoader iterator records its own enumerate(DataLoader)#... span
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()


def record(scenario, args, rank, ddp, opt, loss_fn, batches):
    out_dir = os.path.join(args.out, scenario["name"])
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"rank{rank}.pt.trace.json.gz")
    for _ in range(args.settle_steps):  # let the fault reach steady state before profiling
        train_step(ddp, opt, loss_fn, batches)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=lambda prof: prof.export_chrome_trace(path),
                                record_shapes=True, with_stack=args.with_stack) as prof:
        for _ in range(args.steps + 1):
            train_step(ddp, opt, loss_fn, batches)
            prof.step()
    dist.barrier()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="one sub-directory per scenario is written here")
    p.add_argument("--scenario", action="append", required=True, help="NAME:KIND:RANKS:MS (repeatable)")
    p.add_argument("--steps", type=int, default=5, help="profiled steps per scenario")
    p.add_argument("--warmup-steps", type=int, default=5,
                   help="unprofiled steps at the start (the first steps of a job are slower on some ranks)")
    p.add_argument("--settle-steps", type=int, default=2, help="unprofiled steps before each scenario")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--with-stack", action="store_true")
    args = p.parse_args()
    scenarios = [parse_scenario(s) for s in args.scenario]

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    dataset = SyntheticImages(args.batch_size * 16 * world)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=0)
    model = SmallNet()
    ddp = nn.parallel.DistributedDataParallel(model)
    ddp.register_comm_hook(None, delayed_allreduce)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    batches = Batches(loader, sampler)
    for _ in range(args.warmup_steps):  # DDP's first step builds its buckets; caches warm up
        train_step(ddp, opt, loss_fn, batches)

    for scenario in scenarios:
        apply_fault(scenario, rank, dataset, model, args.batch_size)
        record(scenario, args, rank, ddp, opt, loss_fn, batches)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(os.path.join(args.out, "truth.json"), "w") as f:
            json.dump({"world_size": world, "profiled_steps": args.steps, "batch_size": args.batch_size,
                       "scenarios": scenarios}, f, indent=1)
        print(f"recorded {len(scenarios)} scenarios in {args.out}")


if __name__ == "__main__":
    main()

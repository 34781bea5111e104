"""A training job that runs until stopped (or for --steps), with the ground-truth model and
faults, for captures through the daemon and for measuring the auto-trigger (torchrun, CPU or GPU):

    rankscope run -- torchrun --nproc_per_node=4 workloads/train_loop.py --device cuda \
        --model transformer --fault host-sleep:1:40          # zero-code collector; then `rankscope trace`
    KINETO_USE_DAEMON=1 torchrun ... workloads/train_loop.py ... # plain PyTorch in Kineto daemon mode
    torchrun --nproc_per_node=1 workloads/train_loop.py --tracker --steps 300 --out DIR \
        [--fault host-sleep:all:20% --fault-from 150]       # an idle Tracker's auto-trigger

--fault KIND:RANKS:AMOUNT takes the kinds of workloads/ground_truth.py; AMOUNT "N%" is a share of
the median step time of the steps before --fault-from (agreed over ranks as the largest).

With --out, every rank writes DIR/steps.rank<R>.txt (one step time in seconds per line, measured
as Tracker.step() measures it: from one step's end to the next) and, with --tracker,
DIR/trigger.rank<R>.json: how often the Tracker's auto-trigger fired, and why.
bench/trigger_bench.py and tests/python/test_trigger.py replay the recorded step times.
"""

import argparse
import json
import logging
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ground_truth import FAULT, Job, parse_scenario  # noqa: E402


class Reasons(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        msg = record.getMessage()
        if "auto-trigger" in msg:
            self.messages.append(msg)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="", help="write step times (and the trigger's record) here")
    p.add_argument("--steps", type=int, default=0, help="0: until stopped")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    p.add_argument("--model", choices=["cnn", "mlp", "transformer"], default="cnn")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--fault", default="", help="KIND:RANKS:AMOUNT (see workloads/ground_truth.py)")
    p.add_argument("--fault-from", type=int, default=60, help="the fault starts at this step")
    p.add_argument("--tracker", action="store_true", help="call rankscope.Tracker().step() every step")
    args = p.parse_args()

    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.set_num_threads(1)
    job = Job(args)
    job.extra.calibrate()
    fault = parse_scenario("fault:" + args.fault, dist.get_world_size()) if args.fault else None
    reasons = Reasons()
    logging.getLogger("rankscope").addHandler(reasons)
    tracker = None
    if args.tracker:
        from rankscope import Tracker
        tracker = Tracker()  # idle: its auto-trigger watches; nothing is recorded unless it fires
    times, last, step = [], time.monotonic(), 0
    while args.steps == 0 or step < args.steps:
        if fault and step == args.fault_from:
            t = torch.tensor([statistics.median(times[-50:]) * 1e3], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            job.apply(fault, float(t.item()))
        job.step()
        if tracker:
            tracker.step()
        now = time.monotonic()
        times.append(now - last)
        last = now
        step += 1
    FAULT.update(kind="none", seconds=0.0)
    job.hog.set(0.0)
    if tracker:
        tracker.wait_for_writes()
        tracker.close()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"steps.rank{rank}.txt"), "w") as f:
            f.write("".join(f"{t:.6f}\n" for t in times))
        if tracker:
            fired = tracker._trigger.fired if tracker._trigger is not None else 0
            with open(os.path.join(args.out, f"trigger.rank{rank}.json"), "w") as f:
                json.dump({"rank": rank, "world_size": dist.get_world_size(), "device": args.device,
                           "model": args.model, "steps": len(times), "fault": fault, "fault_from": args.fault_from,
                           "fired": fired, "reasons": reasons.messages}, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

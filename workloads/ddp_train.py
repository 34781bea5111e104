"""A small data-parallel training job for demos and tests (CPU, gloo, torchrun).

It trains a small CNN on synthetic data through a real DataLoader and DistributedDataParallel,
and can record the profiled steps of every rank with torch.profiler:

    torchrun --nproc_per_node=4 workloads/ddp_train.py --steps 8 --profile-dir out/traces

Faults can be injected on one rank to create ground truth for the diagnosis:

    --fault slow-data:RANK:MS        the rank's DataLoader sleeps MS per batch
    --fault slow-forward:RANK:MS     the rank does MS of extra compute in forward
    --fault slow-collective:RANK:MS  the rank sleeps MS before its gradient all-reduce
    --fault host-sleep:RANK:MS       the rank sleeps MS on the training thread before its forward
    --fault checkpoint:RANK:EVERY    every EVERY steps, after the optimizer step, the rank saves a
                                     sharded checkpoint: 8 torch.save calls of 4 MB each (into a
                                     temporary directory, removed at the end)
    --fault hang:RANK:0              the rank stops stepping (sleeps forever in Python) while the
                                     others block inside their next gradient all-reduce
    --fault-from-step N              the fault starts at step N (default 0: from the start)
    --fault-every N                  ... and is there in every N-th step only (default 1: every step)

A rank that shares its core with a busy process (2 ranks, rank 1 on core 1 beside a busy loop):

    taskset -c 1 python3 -c 'while 1: pass' & torchrun --nproc_per_node=2 workloads/ddp_train.py --pin-cores ...

An input-bound job (every rank, for telemetry): each sample costs CPU in the DataLoader's worker
processes, so the host CPU saturates while the training step itself is cheap:

    --data-cpu-ms MS --num-workers N   burn MS of CPU (pure Python) per sample in N workers

Capture from a live job (docs/capture.md):

    --collector tracker              rankscope.Tracker().step() in the loop
    --collector none                 no rankscope code (zero-code `rankscope run`, KINETO_USE_DAEMON=1)
"""

import argparse
import os
import shutil
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from profiling import rank_profiler


# Faults can start at a given step: every injection point asks this.
STATE = {"step": 0, "fault_from": 0, "fault_every": 1}


def fault_active():
    since = STATE["step"] - STATE["fault_from"]
    return since >= 0 and since % STATE["fault_every"] == 0


def burn_python(seconds):
    """Busy CPU for `seconds`, as decoding or augmentation in a DataLoader worker would be."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


class SyntheticImages(Dataset):
    def __init__(self, n, delay_s=0.0, cpu_s=0.0):
        self.n = n
        self.delay_s = delay_s
        self.cpu_s = cpu_s
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 32, 32, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay_s and fault_active():
            time.sleep(self.delay_s)
        if self.cpu_s:
            burn_python(self.cpu_s)
        return self.x[i], self.y[i]


class SmallNet(nn.Module):
    def __init__(self, extra_compute_s=0.0):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10))
        self.extra_compute_s = extra_compute_s

    def hook_parameter(self):
        """The weight whose gradient a backward-hook fault hooks (workloads/ground_truth.py)."""
        return self.head[1].weight

    def forward(self, x):
        if self.extra_compute_s and fault_active():
            burn_cpu(self.extra_compute_s)
        return self.head(self.features(x))


def burn_cpu(seconds):
    """Real work (matmuls) for about `seconds`, so it shows up as CPU ops in the trace."""
    a = torch.randn(128, 128)
    end = time.perf_counter() + seconds
    with torch.profiler.record_function("injected_extra_compute"):
        while time.perf_counter() < end:
            a = torch.tanh(a @ a)


def parse_fault(text):
    if not text:
        return None, -1, 0.0
    kind, rank, ms = text.split(":")
    return kind, int(rank), float(ms) / 1000.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--profile-dir", default="", help="write rank<R>.pt.trace.json.gz here")
    p.add_argument("--profile-wait", type=int, default=2, help="steps before profiling starts")
    p.add_argument("--profile-active", type=int, default=4, help="profiled steps")
    p.add_argument("--with-stack", action="store_true")
    p.add_argument("--profile-memory", action="store_true")
    p.add_argument("--fault", default="", help="KIND:RANK:MS (see above)")
    p.add_argument("--fault-from-step", type=int, default=0, help="the fault starts at this step")
    p.add_argument("--fault-every", type=int, default=1, help="the fault is there in every N-th step only")
    p.add_argument("--collector", choices=["none", "tracker"], default="none",
                   help="tracker: call rankscope.Tracker().step() every step")
    p.add_argument("--step-sleep-ms", type=float, default=0.0, help="extra time per step on every rank")
    p.add_argument("--data-cpu-ms", type=float, default=0.0, help="CPU burned per sample by the data pipeline")
    p.add_argument("--num-workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--pin-cores", action="store_true",
                   help="pin rank R to core R mod the cores (with a busy process on one core: a rank that shares "
                        "its core, as with more ranks than cores or a noisy neighbour)")
    args = p.parse_args()
    STATE["fault_from"] = args.fault_from_step
    STATE["fault_every"] = max(1, args.fault_every)

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.pin_cores:
        os.sched_setaffinity(0, {rank % os.cpu_count()})
    torch.manual_seed(0)
    torch.set_num_threads(1)
    kind, fault_rank, fault_s = parse_fault(args.fault)
    mine = rank == fault_rank

    data_delay = fault_s / args.batch_size if mine and kind == "slow-data" else 0.0
    # At most 20 batches per rank and epoch: long runs cycle over epochs instead of growing memory.
    dataset = SyntheticImages(args.batch_size * min(args.steps + 1, 20) * world, delay_s=data_delay,
                              cpu_s=args.data_cpu_ms / 1000.0)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=args.num_workers,
                        persistent_workers=args.num_workers > 0)
    model = SmallNet(extra_compute_s=fault_s if mine and kind == "slow-forward" else 0.0)
    ddp = nn.parallel.DistributedDataParallel(model)
    if mine and kind == "slow-collective":
        def delayed_allreduce(state, bucket):
            if fault_active():
                time.sleep(fault_s)
            return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(
                lambda f: f.value()[0] / world)
        ddp.register_comm_hook(None, delayed_allreduce)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    profiler = None
    if args.profile_dir:
        profiler = rank_profiler(args.profile_dir, rank, args.profile_wait, args.profile_active,
                                 with_stack=args.with_stack, profile_memory=args.profile_memory)
        profiler.start()
    tracker = None
    if args.collector == "tracker":
        from rankscope import Tracker
        tracker = Tracker()
    checkpoint_dir = tempfile.mkdtemp(prefix="ddp_train_ckpt") if mine and kind == "checkpoint" else None
    checkpoint_every = max(1, round(fault_s * 1000))  # parse_fault reads the third field as ms
    step_times = []
    step = 0
    while step < args.steps:
        for x, y in loader:
            if step >= args.steps:
                break
            STATE["step"] = step
            if mine and kind == "hang" and fault_active():
                print(f"rank {rank}: hanging at step {step}", flush=True)
                while True:
                    time.sleep(1)
            started = time.perf_counter()
            if mine and kind == "host-sleep" and fault_active():
                time.sleep(fault_s)
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            if checkpoint_dir and fault_active() and step % checkpoint_every == 0:
                # A sharded checkpoint written inline, as training loops do: one torch.save per
                # shard (the model's state and a 1 M-float slice of optimizer-like state in each).
                for shard in range(8):
                    torch.save({"model": model.state_dict() if shard == 0 else {}, "state": torch.randn(1 << 20)},
                               os.path.join(checkpoint_dir, f"shard{shard}.pt"))
            if args.step_sleep_ms:
                time.sleep(args.step_sleep_ms / 1000.0)
            step_times.append(time.perf_counter() - started)
            step += 1
            if profiler:
                profiler.step()
            if tracker:
                tracker.step()
    if tracker:
        tracker.wait_for_writes()
        tracker.close()
    if profiler:
        profiler.stop()
    if checkpoint_dir:
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        steady = step_times[2:] or step_times
        print(f"trained {step} steps on {world} ranks, rank 0's mean step {1000 * sum(steady) / max(1, len(steady)):.2f} ms "
              "(without the first two)" + (f"; traces in {args.profile_dir}" if profiler else ""))


if __name__ == "__main__":
    main()

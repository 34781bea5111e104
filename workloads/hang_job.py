"""A small data-parallel job (CPU, gloo, torchrun) that hangs on purpose, one way per scenario,
for the hang analysis tests (docs/hang.md):

    torchrun --nproc_per_node=4 workloads/hang_job.py --fault stop:1@15

Every step: a batch from a DataLoader, forward, backward (DDP all-reduces the gradients in the
default process group), optimizer step, then an all-reduce of the loss in a second group
("metrics"). Faults, on rank R from step S:

    stop:R@S        the rank stops stepping: it sleeps in a Python loop
    skip:R@S        the rank skips the metrics all-reduce (and blocks in the next step's
                    gradient all-reduce, which the others never reach)
    size:R@S        the rank's metrics all-reduce has a different size (an empty tensor: gloo
                    returns at once on that rank, the others wait)
    op:R@S          the rank calls a barrier where the others call the metrics all-reduce
    gil:R@S         the rank calls a C function (libc sleep, through ctypes.PyDLL) that blocks
                    while holding the GIL: its collector cannot answer
    dataloader:R@S  one of the rank's DataLoader workers deadlocks (takes a lock it holds)
    pause:R@S       a healthy job: the rank pauses --pause-s seconds once (a checkpoint), then
                    the job runs to the end

Uses the rankscope Tracker (--collector tracker) so that the daemon can snapshot it.

--fr-dump-after-s S: what NCCL's watchdog does on a collective timeout
(TORCH_NCCL_DUMP_ON_TIMEOUT), which gloo does not: once no step has completed for S seconds,
a thread writes torch._C._distributed_c10d._dump_fr_trace() — the pickle NCCL writes — to
$TORCH_FR_DUMP_TEMP_FILE<rank>, once.
"""

import argparse
import ctypes
import os
import threading
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BATCH = 8


class Samples(Dataset):
    """Sample i belongs to step i // BATCH of this rank (no shuffling)."""

    def __init__(self, n, deadlock_from_step=-1):
        self.n = n
        self.deadlock_from_step = deadlock_from_step
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)
        self.y = torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if 0 <= self.deadlock_from_step <= i // BATCH:
            lock = threading.Lock()
            lock.acquire()
            lock.acquire()  # deadlock: this worker never returns the batch
        return self.x[i], self.y[i]


def fr_dump_watchdog(rank, after_s, last_step):
    """Writes this rank's pickled Flight Recorder dump once no step has completed for `after_s`
    (last_step[0] is the monotonic time of the last one), as NCCL's watchdog does on a timeout."""
    prefix = os.environ.get("TORCH_FR_DUMP_TEMP_FILE", "/tmp/nccl_trace_rank_")

    def run():
        while time.monotonic() - last_step[0] < after_s:
            time.sleep(0.5)
        data = torch._C._distributed_c10d._dump_fr_trace()
        path = f"{prefix}{rank}"
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)

    threading.Thread(target=run, name="fr-dump-watchdog", daemon=True).start()


def parse_fault(text):
    if not text:
        return "", -1, -1
    kind, where = text.split(":")
    rank, step = where.split("@")
    return kind, int(rank), int(step)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=1000000)
    p.add_argument("--fault", default="", help="KIND:RANK@STEP (see above)")
    p.add_argument("--pause-s", type=float, default=3.0)
    p.add_argument("--step-sleep-ms", type=float, default=20.0)
    p.add_argument("--collector", choices=["none", "tracker"], default="tracker")
    p.add_argument("--num-workers", type=int, default=0, help="DataLoader worker processes (dataloader: at least 1)")
    p.add_argument("--fr-dump-after-s", type=float, default=0, help="dump the Flight Recorder (pickle) after this long "
                   "without a step, to $TORCH_FR_DUMP_TEMP_FILE<rank> (0: never)")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metrics = dist.new_group(list(range(world)), group_desc="metrics")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    kind, fault_rank, fault_step = parse_fault(args.fault)
    mine = rank == fault_rank

    # The DataLoader sees this rank's samples in order.
    n = BATCH * min(args.steps, 100000)
    data = Samples(n, fault_step if mine and kind == "dataloader" else -1)
    workers = max(args.num_workers, 1 if kind == "dataloader" else 0)
    loader = DataLoader(data, batch_size=BATCH, num_workers=workers, prefetch_factor=2 if workers else None,
                        persistent_workers=workers > 0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    tracker = None
    if args.collector == "tracker":
        from rankscope import Tracker
        tracker = Tracker()

    last_step = [time.monotonic()]
    if args.fr_dump_after_s > 0:
        fr_dump_watchdog(rank, args.fr_dump_after_s, last_step)

    step = 0
    for x, y in loader:
        if step >= args.steps:
            break
        fault = mine and step == fault_step
        if fault:
            print(f"rank {rank}: fault {kind} at step {step}", flush=True)
        if fault and kind == "stop":
            while True:
                time.sleep(1)
        if fault and kind == "gil":
            ctypes.PyDLL("libc.so.6").sleep(100000)
        if fault and kind == "pause":
            time.sleep(args.pause_s)  # a checkpoint: the others wait in the next collective
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        value = loss.detach().reshape(1)
        if fault and kind == "skip":
            pass
        elif fault and kind == "size":
            dist.all_reduce(torch.zeros(0), group=metrics)
        elif fault and kind == "op":
            dist.barrier(group=metrics)
        else:
            dist.all_reduce(value, group=metrics)
        if args.step_sleep_ms:
            time.sleep(args.step_sleep_ms / 1000.0)
        step += 1
        last_step[0] = time.monotonic()
        if tracker:
            tracker.step()
    if tracker:
        tracker.close()
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(f"trained {step} steps on {world} ranks", flush=True)
    os._exit(0)  # do not wait for the DataLoader's worker


if __name__ == "__main__":
    main()

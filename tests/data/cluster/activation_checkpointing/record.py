"""Records tests/data/cluster/activation_checkpointing (see README.md): a 4-rank DDP MLP on CPU
(gloo) whose rank --rank runs its middle layers through torch.utils.checkpoint (activation
checkpointing: their forward is recomputed in backward), profiled by plain torch.profiler.

    torchrun --nproc_per_node=4 record.py --steps 12 --profile-dir DIR

Without --profile-dir it only prints the mean step time (the largest over ranks, without the first
three steps): run it with --rank -1 (no rank checkpoints) and --rank 1 to measure what the
recomputation costs.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--rank", type=int, default=1, help="the rank that checkpoints (-1: none)")
p.add_argument("--profile-dir", default="")
args = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self, recompute):
        super().__init__()
        self.inp = nn.Linear(256, 1024)
        self.mid = nn.Sequential(nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())
        self.out = nn.Linear(1024, 10)
        self.recompute = recompute

    def forward(self, x):
        h = self.inp(x)
        h = checkpoint(self.mid, h, use_reentrant=False) if self.recompute else self.mid(h)
        return self.out(h)


ddp = nn.parallel.DistributedDataParallel(Net(rank == args.rank))
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
prof = None
if args.profile_dir:
    os.makedirs(args.profile_dir, exist_ok=True)
    path = os.path.join(args.profile_dir, f"rank{rank}.pt.trace.json.gz")
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                  schedule=torch.profiler.schedule(wait=2, warmup=1, active=args.steps - 3),
                                  on_trace_ready=lambda pr: pr.export_chrome_trace(path),
                                  with_stack=True, record_shapes=True)
    prof.start()
times = []
for step in range(args.steps):
    t0 = time.perf_counter()
    x, y = torch.randn(256, 256), torch.randint(0, 10, (256,))
    loss = nn.functional.cross_entropy(ddp(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    times.append(time.perf_counter() - t0)
    if prof:
        prof.step()
if prof:
    prof.stop()
mean = torch.tensor([1000 * sum(times[3:]) / len(times[3:])])
dist.all_reduce(mean, op=dist.ReduceOp.MAX)
if rank == 0:
    print(f"mean step {mean.item():.2f} ms")
dist.destroy_process_group()

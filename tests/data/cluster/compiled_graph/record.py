"""Records tests/data/cluster/compiled_graph (see README.md): a 4-rank DDP MLP on CPU (gloo) whose
model is torch.compile'd on every rank; rank --rank runs --extra more matmuls inside the compiled
forward, so inductor compiles it another graph (another generated file) than its peers'. Profiled
by plain torch.profiler from the fifth step (after the compilation).

    torchrun --nproc_per_node=4 record.py --steps 16 --profile-dir DIR

Without --profile-dir it only prints the mean step time (the largest over ranks, without the first
five steps).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=16)
p.add_argument("--rank", type=int, default=1, help="the rank whose compiled forward does more")
p.add_argument("--extra", type=int, default=6, help="its extra matmuls per forward")
p.add_argument("--profile-dir", default="")
args = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self, extra):
        super().__init__()
        self.a = nn.Linear(256, 512)
        self.b = nn.Linear(512, 512)
        self.c = nn.Linear(512, 10)
        self.extra = extra

    def forward(self, x):
        h = torch.relu(self.a(x))
        for _ in range(self.extra):
            h = torch.tanh(h @ self.b.weight)
        return self.c(torch.relu(self.b(h)))


ddp = nn.parallel.DistributedDataParallel(torch.compile(Net(args.extra if rank == args.rank else 0)))
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
prof = None
times = []
for step in range(args.steps):
    if step == 4 and args.profile_dir:  # the graphs are compiled by then
        os.makedirs(args.profile_dir, exist_ok=True)
        path = os.path.join(args.profile_dir, f"rank{rank}.pt.trace.json.gz")
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      schedule=torch.profiler.schedule(wait=0, warmup=1, active=args.steps - 5),
                                      on_trace_ready=lambda pr: pr.export_chrome_trace(path),
                                      with_stack=True, record_shapes=True)
        prof.start()
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
mean = torch.tensor([1000 * sum(times[5:]) / len(times[5:])])
dist.all_reduce(mean, op=dist.ReduceOp.MAX)
if rank == 0:
    print(f"mean step {mean.item():.2f} ms")
dist.destroy_process_group()

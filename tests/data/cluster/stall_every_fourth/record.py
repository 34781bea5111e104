"""Records tests/data/cluster/stall_every_fourth (see README.md): a 4-rank DDP MLP on CPU (gloo)
whose rank 1 sleeps --ms before every --every-th step, profiled by plain torch.profiler.

    torchrun --nproc_per_node=4 record.py --steps 24 --ms 40 --profile-dir DIR

Without --profile-dir it only prints rank 0's mean step time (without the first three steps): run it
with --ms 0 and --ms 40 to measure what the stall costs.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=24)
p.add_argument("--ms", type=float, default=40.0)
p.add_argument("--every", type=int, default=4)
p.add_argument("--profile-dir", default="")
args = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)


def hiccup(ms):
    time.sleep(ms / 1000)


prof = None
if args.profile_dir:
    os.makedirs(args.profile_dir, exist_ok=True)
    out = os.path.join(args.profile_dir, f"rank{rank}.pt.trace.json.gz")
    prof = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=2, warmup=1, active=args.steps - 3, repeat=1),
        on_trace_ready=lambda pr: pr.export_chrome_trace(out), with_stack=True, record_shapes=True)
    prof.start()
times = []
for step in range(args.steps):
    t = time.perf_counter()
    x, y = torch.randn(128, 256), torch.randint(0, 10, (128,))
    if rank == 1 and args.ms and step % args.every == 0:
        hiccup(args.ms)
    loss = nn.functional.cross_entropy(ddp(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    times.append(time.perf_counter() - t)
    if prof:
        prof.step()
if prof:
    prof.stop()
if rank == 0:
    print("MEAN_STEP_MS", 1000 * sum(times[3:]) / len(times[3:]))
dist.destroy_process_group()

"""Records tests/data/cluster/stalled_calls (see README.md): a user's own 4-rank DDP job on CPU
(gloo), not written for rankscope (rank 0 logs the loss every step), traced by torch.profiler with its default arguments (no
shapes, no stacks) through tensorboard_trace_handler. Rank --burn-rank burns --burn-ms of extra
CPU in a loop of 128 x 128 matmuls after each forward.

    OUT=DIR torchrun --nproc_per_node=4 record.py --burn-rank 1 --burn-ms 6
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

p = argparse.ArgumentParser()
p.add_argument("--burn-rank", type=int, default=1)
p.add_argument("--burn-ms", type=float, default=6.0)
p.add_argument("--steps", type=int, default=24)
args = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.ln(x))


class Net(nn.Module):
    def __init__(self, d=192, n=3):
        super().__init__()
        self.emb = nn.Embedding(1000, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.out = nn.Linear(d, 1000)

    def forward(self, t):
        x = self.emb(t)
        for b in self.blocks:
            x = b(x)
        return self.out(x)


def extra_compute(seconds):
    a = torch.randn(128, 128)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        a = torch.tanh(a @ a)


model = DDP(Net())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 100)
lossf = nn.CrossEntropyLoss()
prof = profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=6, warmup=2, active=10),
               on_trace_ready=tensorboard_trace_handler(os.environ["OUT"]))
log = open(os.path.join(os.environ["OUT"], "metrics0.jsonl"), "w") if rank == 0 else None
prof.start()
for step in range(args.steps):
    tok = torch.randint(0, 1000, (8, 64))
    logits = model(tok)
    if rank == args.burn_rank:
        extra_compute(args.burn_ms / 1000)
    loss = lossf(logits.view(-1, 1000), tok.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if log:  # rank 0 logs the loss, as a job's metrics logger does
        log.write(json.dumps({"step": step, "loss": loss.item()}) + "\n")
        log.flush()
    prof.step()
prof.stop()
dist.destroy_process_group()

"""A small fully sharded data-parallel training job (FSDP2 `fully_shard`; CPU, gloo, torchrun).

Every block of an MLP and the whole model are sharded over the ranks; each step all-gathers the
parameters before each block's forward and backward and reduce-scatters the gradients. The output
layer has 10 rows: with 4 ranks the shards are 3, 3, 3 and 1 rows (FSDP2 shards dim 0 in chunks of
ceil(10 / 4)), so the last rank runs other input shapes than the others in every step, as a real
job whose vocabulary or head size the world size does not divide does.

    torchrun --nproc_per_node=4 workloads/fsdp_train.py --steps 12 --profile-dir out/fsdp

With --profile-dir every rank records --profile-active steps (after --profile-wait + 1 warm-up)
with torch.profiler and record_shapes, and writes rank<R>.pt.trace.json.gz there. rankscope code
is not used: the traces are what a user's own torch.profiler call writes.

A fault for probes (one rank): --fault forward:RANK:MS does MS of extra matmuls in every forward.
"""

import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

from profiling import rank_profiler


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Mlp(nn.Module):
    def __init__(self, dim, layers, extra_forward_s=0.0):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.head = nn.Linear(dim, 10)
        self.extra_forward_s = extra_forward_s

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        if self.extra_forward_s:
            a = torch.randn(128, 128)
            end = time.perf_counter() + self.extra_forward_s
            while time.perf_counter() < end:
                a = torch.tanh(a @ a)
        return self.head(x)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--profile-dir", default="")
    p.add_argument("--profile-wait", type=int, default=2)
    p.add_argument("--profile-active", type=int, default=8)
    p.add_argument("--with-stack", action="store_true")
    p.add_argument("--fault", default="", help="forward:RANK:MS")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    extra_s = 0.0
    if args.fault:
        kind, fault_rank, ms = args.fault.split(":")
        if kind != "forward":
            raise SystemExit(f"unknown fault {kind!r}: forward:RANK:MS")
        extra_s = float(ms) / 1000.0 if int(fault_rank) == rank else 0.0

    model = Mlp(args.dim, args.layers, extra_s)
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch_size, args.dim)
    y = torch.randint(0, 10, (args.batch_size,))

    profiler = None
    if args.profile_dir:
        profiler = rank_profiler(args.profile_dir, rank, args.profile_wait, args.profile_active,
                                 with_stack=args.with_stack)
        profiler.start()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - start)
        if profiler:
            profiler.step()
    if profiler:
        profiler.stop()
    if rank == 0:
        steady = times[len(times) // 4:]
        print(f"MEAN_STEP_MS {1000 * sum(steady) / len(steady):.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

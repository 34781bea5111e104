"""A small pipeline + data-parallel training job (CPU, gloo).

The world is laid out as order tp-cp-dp-pp with tp = cp = 1: rank = dp_index + dp * stage, so
with --pp 2 (and 4 ranks) stage 0 is ranks 0, 1 and stage 1 is ranks 2, 3. Every pipeline
column (one data-parallel index) runs a GPipe schedule over its stages (send/recv between
neighbouring stages); the stages' data-parallel peers then all-reduce their gradients.

The schedule is written out here with dist.send/recv: torch.distributed.pipelining's
PipelineStage (torch 2.13) hangs on gloo, in shape inference and, with the shapes given, in the
backward's gradient exchange between subgroup stages.

    torchrun --nproc_per_node=4 workloads/pipeline_train.py --pp 2 --steps 6 --profile-dir out/pp

Faults (ground truth for issue 16's findings):

    --fault slow-stage            the last stage has extra layers (a partition imbalance)
    --fault slow-worker:RANK      RANK does extra compute in every forward (a slow worker)
    --fault imbalance:all         every data rank computes a random share (0.2-1.0, mean 0.6) of its
                                  padded batch each step (variable batch/sequence lengths): the
                                  slowest one changes from step to step
    --fault imbalance:DP          only data rank DP does so; the others compute 0.6 of it

With --device-ms D every layer also waits D ms per full micro-batch (a third in forward, the rest
in backward; fewer rows, less time): emulated accelerator time, so that four ranks on two cores
measure the pipeline rather than mostly each other's CPU contention. The slow worker's extra time
is then emulated the same way (bench/accuracy/pipeline_accuracy.py runs it so).

With --measure-steps N (slow-stage and slow-worker faults), after the profiled steps the job runs
N unprofiled steps with the fault and N without, in alternating blocks of 2 (every rank switches
at the same step), and rank 0 writes the median step time of each to PROFILE_DIR.measured.json
(beside the traces' directory, which holds traces only): the saving that removing the fault
measures, from the same processes at the same load.
"""

import argparse
import json
import os
import random
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from profiling import rank_profiler

WIDTH = 256
STATE = {"rows": None,   # rows of the padded micro-batch this step really computes (imbalance)
         "fault": True,  # whether the slow-stage / slow-worker fault is on (measured steps toggle it)
         "mb": 1}        # rows of a full micro-batch (emulated device time scales with the rows)


class DeviceTime(torch.autograd.Function):
    """Emulated accelerator time: the identity, whose forward waits a third of `seconds` and whose
    backward waits the rest (a layer's backward costs about twice its forward)."""

    @staticmethod
    def forward(ctx, x, seconds):
        ctx.seconds = seconds
        time.sleep(seconds / 3)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        time.sleep(ctx.seconds * 2 / 3)
        return grad, None


class Layer(nn.Module):
    """Linear + tanh; with --device-ms, also that much emulated accelerator time per full
    micro-batch (fewer rows, less time), so that four ranks on two cores measure the pipeline and
    not mostly each other's CPU contention."""

    def __init__(self, device_s):
        super().__init__()
        self.linear = nn.Linear(WIDTH, WIDTH)
        self.device_s = device_s

    def forward(self, x):
        x = torch.tanh(self.linear(x))
        if self.device_s:
            x = DeviceTime.apply(x, self.device_s * x.shape[0] / STATE["mb"])
        return x


class Block(nn.Module):
    """A few linear layers; with STATE["rows"] set, only that many rows of the batch are real."""

    def __init__(self, layers, extra_s=0.0, extra_layers=0, device_s=0.0):
        super().__init__()
        self.layers = nn.Sequential(*[Layer(device_s) for _ in range(layers)])
        self.extra = nn.Sequential(*[Layer(device_s) for _ in range(extra_layers)])
        self.extra_s = extra_s
        self.device = device_s > 0

    def run(self, x):
        x = self.layers(x)
        return self.extra(x) if STATE["fault"] and len(self.extra) else x

    def forward(self, x):
        if self.extra_s and STATE["fault"]:
            burn_cpu(self.extra_s, emulated=self.device)
        rows = STATE["rows"]
        if rows is None or rows >= x.shape[0]:
            return self.run(x)
        # Padded batch: the padding rows pass through unchanged, so the shape sent on is fixed.
        return torch.cat([self.run(x[:rows]), x[rows:]], dim=0)


def burn_cpu(seconds, emulated=False):
    """The slow worker's extra compute: CPU work, or with --device-ms emulated device time."""
    a = torch.randn(96, 96)
    end = time.perf_counter() + seconds
    with torch.profiler.record_function("injected_extra_compute"):
        if emulated:
            time.sleep(seconds)
        while time.perf_counter() < end:
            a = torch.tanh(a @ a)


def gpipe_step(module, x, y, microbatches, mb, prev_rank, next_rank, loss_fn, pp_group):
    """One GPipe step: every micro-batch forward (activations sent to the next stage), then every
    micro-batch backward in reverse (input gradients sent to the previous stage)."""
    inputs, outputs = [], []
    for i in range(microbatches):
        if prev_rank is None:
            inp = x[i * mb:(i + 1) * mb]
        else:
            inp = torch.empty(mb, WIDTH)
            dist.recv(inp, src=prev_rank, group=pp_group)
            inp.requires_grad_(True)
        out = module(inp)
        if next_rank is not None:
            dist.send(out.detach(), dst=next_rank, group=pp_group)
        inputs.append(inp)
        outputs.append(out)
    for i in reversed(range(microbatches)):
        if next_rank is None:
            loss = loss_fn(outputs[i], y[i * mb:(i + 1) * mb]) / microbatches
            loss.backward()
        else:
            grad = torch.empty(mb, WIDTH)
            dist.recv(grad, src=next_rank, group=pp_group)
            outputs[i].backward(grad)
        if prev_rank is not None:
            dist.send(inputs[i].grad, dst=prev_rank, group=pp_group)


def parse_fault(text):
    if not text:
        return "", ""
    kind, _, arg = text.partition(":")
    return kind, arg


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pp", type=int, default=2, help="pipeline stages")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--layers", type=int, default=4, help="layers per stage")
    p.add_argument("--extra-layers", type=int, default=4, help="slow-stage: extra layers on the last stage")
    p.add_argument("--slow-ms", type=float, default=15.0, help="slow-worker: extra compute per forward")
    p.add_argument("--device-ms", type=float, default=0.0,
                   help="emulated accelerator time per layer and full micro-batch (a third in forward, the rest in backward)")
    p.add_argument("--profile-dir", default="")
    p.add_argument("--profile-wait", type=int, default=1)
    p.add_argument("--profile-active", type=int, default=4)
    p.add_argument("--fault", default="")
    p.add_argument("--seed", type=int, default=0, help="imbalance: which random batch shares are drawn")
    p.add_argument("--measure-steps", type=int, default=0,
                   help="then N unprofiled steps with the fault and N without (PROFILE_DIR.measured.json)")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    pp = args.pp
    assert world % pp == 0, "world size must be a multiple of --pp"
    dp = world // pp
    stage, dp_index = rank // dp, rank % dp
    torch.manual_seed(stage)
    torch.set_num_threads(1)

    # Every rank creates every group, in the same order (c10d requires it). The descriptions are
    # what the trace's distributedInfo.pg_config says of each group (rankscope's layout reads it).
    pp_group = dp_group = None
    for d in range(dp):
        g = dist.new_group([d + dp * s for s in range(pp)], group_desc="pp")
        if d == dp_index:
            pp_group = g
    for s in range(pp):
        g = dist.new_group([d + dp * s for d in range(dp)], group_desc="dp")
        if s == stage:
            dp_group = g

    kind, arg = parse_fault(args.fault)
    extra_layers = args.extra_layers if kind == "slow-stage" and stage == pp - 1 else 0
    extra_s = args.slow_ms / 1000.0 if kind == "slow-worker" and int(arg) == rank else 0.0
    module = Block(args.layers, extra_s, extra_layers, args.device_ms / 1000.0)
    mb = args.batch_size // args.microbatches
    STATE["mb"] = mb
    loss_fn = nn.MSELoss()
    prev_rank = rank - dp if stage > 0 else None
    next_rank = rank + dp if stage < pp - 1 else None
    opt = torch.optim.SGD(module.parameters(), lr=1e-3)
    rng = random.Random(1000 * (1 + args.seed) + dp_index)  # the same draws on every stage of one data rank
    g = torch.Generator().manual_seed(dp_index)

    profiler = None
    if args.profile_dir:
        # record_shapes (always on): c10d's send/recv ops then carry their peer (Concrete Inputs),
        # which pairs the transfers of a pipeline group of more than two stages.
        profiler = rank_profiler(args.profile_dir, rank, args.profile_wait, args.profile_active)
        profiler.start()
    measured = {True: [], False: []}
    for step in range(args.steps + 2 * args.measure_steps):
        measuring = step >= args.steps
        if measuring:  # alternating blocks of 2 steps with and without the fault, the same on every rank
            STATE["fault"] = ((step - args.steps) // 2) % 2 == 0
            dist.barrier()
            t0 = time.perf_counter()
        imbalanced = kind == "imbalance" and (arg == "all" or int(arg) == dp_index)
        # Variable batch / sequence lengths: an imbalanced data rank draws its share of the padded
        # batch each step (mean 0.6), the others always compute 0.6 of it.
        share = rng.uniform(0.2, 1.0) if imbalanced else 0.6
        STATE["rows"] = max(1, int(mb * share)) if kind == "imbalance" else None
        x = torch.randn(args.batch_size, WIDTH, generator=g)
        y = torch.randn(args.batch_size, WIDTH, generator=g)
        opt.zero_grad()
        gpipe_step(module, x, y, args.microbatches, mb, prev_rank, next_rank, loss_fn, pp_group)
        if dp > 1:
            flat = torch.cat([(q.grad if q.grad is not None else torch.zeros_like(q)).reshape(-1) for q in module.parameters()])
            dist.all_reduce(flat, group=dp_group)
        opt.step()
        if measuring:
            dist.barrier()
            measured[STATE["fault"]].append((time.perf_counter() - t0) * 1e3)
        elif profiler:
            profiler.step()
        if profiler and step == args.steps - 1:
            profiler.stop()
            profiler = None
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0 and args.measure_steps and args.profile_dir:
        with open(os.path.normpath(args.profile_dir) + ".measured.json", "w") as f:
            json.dump({"fault": args.fault, "steps_each": args.measure_steps,
                       "with_fault_ms": statistics.median(measured[True]),
                       "without_fault_ms": statistics.median(measured[False])}, f, indent=1)
    if rank == 0:
        print(f"trained {args.steps} steps on {world} ranks ({pp} stages x {dp} data ranks)")


if __name__ == "__main__":
    main()

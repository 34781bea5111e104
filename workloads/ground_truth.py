"""Ground truth for cluster diagnosis: one DDP job (torchrun) that records several scenarios one
after the other, each with at most one injected fault, each profiled on every rank.

    torchrun --nproc_per_node=6 workloads/ground_truth.py --out DIR \
        --scenario clean:none:-:0 \
        --scenario data:slow-data:1:80 \
        --scenario forward:slow-forward:2:10% \
        --scenario collective:slow-collective:3:40 \
        --scenario node:slow-forward:4,5:80

A scenario is NAME:KIND:RANKS:AMOUNT, AMOUNT being milliseconds per step ("80") or a share of
the job's fault-free step time as the profiler sees it, measured on every rank before the first
scenario ("10%"). Kinds:

    none                no fault
    slow-data           each listed rank's DataLoader sleeps AMOUNT per batch (spread over its samples)
    slow-forward        extra compute (matmuls) of AMOUNT at the start of forward (a forward pre-hook)
    slow-backward       extra compute of AMOUNT in a backward hook on one layer's weight gradient
    slow-optimizer      extra compute of AMOUNT in an optimizer pre-step hook
    slow-kernel-shapes  extra compute of AMOUNT in forward, spread over 14 matrix shapes (on a GPU:
                        14 grid|block variants of the GEMM kernels, each a small part)
    slow-collective     a sleep in the DDP communication hook before every gradient all-reduce the
                        rank launches (AMOUNT per step, split over the step's buckets)
    host-sleep          time.sleep(AMOUNT) on the training thread before each forward
    host-stall          time.sleep(4 x AMOUNT) on the training thread before every fourth forward:
                        AMOUNT per step on average, in a quarter of the steps (a stall that comes and
                        goes: a periodic flush, a slow shard, a pause); its steps are measured by
                        their mean, which the stall moves, not their median, which it does not
    cpu-hog             a Python thread in the rank that burns CPU (and holds the GIL) for a share
                        AMOUNT / step time of the wall clock, in 5 ms slices

Two faults at once: KIND1+KIND2 with RANKS1+RANKS2 (each kind on its ranks, the same AMOUNT):
`two:slow-forward+host-sleep:1+4:10%` makes rank 1's forward and rank 4's host slower together;
the measured saving is that of fixing both.

A "slow node" is a fault on every rank of one pretend host: give `rankscope analyze` a hosts
file that puts those ranks on one host (tests/python/test_cluster.py and bench/accuracy do).

Extra compute is real work: matmuls on the job's device. On a CPU it runs until AMOUNT of wall
time has passed; on a GPU the rank launches GEMMs whose measured duration adds up to AMOUNT
(calibrated once at start), so the time is GPU time the host does not wait for.

Output: DIR/NAME/rank<R>.pt.trace.json.gz for every rank, and DIR/truth.json (written by rank 0):
the scenarios as injected (AMOUNT resolved to ms), the fault-free step time, and each scenario's
median step time as measured by the job (wall clock of the profiled steps, the slowest rank's
view, which is every rank's in synchronous training; with --measure-steps N also the median of
N unprofiled steps with the fault, `plain_step_ms`, and of N without it, `plain_fault_free_ms`,
taken in interleaved blocks after the profiled steps: their difference is what fixing the fault
saves, measured; with --measure-profiled N the same pairs while the profiler records,
`profiled_step_ms` and `profiled_fault_free_ms`: what fixing it saves in the run the trace shows).
One job for all scenarios: the process
start-up (torch import, rendezvous) is paid once, which matters on small CI machines.
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_train import SmallNet, SyntheticImages  # noqa: E402  (the demo's model and data)
from transformer import SyntheticTokens, TinyTransformer  # noqa: E402

# The collector's record of the recorded steps' CPU run and run-queue wait (written into each
# trace, as rankscope's own captures carry it): the repository's package, importable without torch.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from rankscope import _cpu_sched  # noqa: E402

KINDS = ("none", "slow-data", "slow-forward", "slow-backward", "slow-optimizer", "slow-kernel-shapes",
         "slow-collective", "host-sleep", "host-stall", "cpu-hog")
# host-stall sleeps in one step of every STALL_EVERY; its scenarios are measured by the mean step.
STALL_EVERY = 4
COMPUTE_KINDS = ("slow-forward", "slow-backward", "slow-optimizer", "slow-kernel-shapes")

# This rank's current fault: what the hooks read.
FAULT = {"kind": "none", "seconds": 0.0, "buckets": 1, "calls": 0, "stall_steps": 0}


def parse_ranks(ranks, world):
    """"1,2" -> [1, 2]; "-" -> []; "all" -> every rank."""
    if ranks == "all":
        return list(range(world))
    return [] if ranks in ("-", "") else [int(r) for r in ranks.split(",")]


def parse_scenario(text, world=None):
    """NAME:KIND:RANKS:AMOUNT -> a scenario dict (RANKS: "1,2", "-" for none, "all"); two faults
    at once: KIND1+KIND2 and RANKS1+RANKS2 (a "faults" list, each kind with its ranks)."""
    name, kind, ranks, amount = text.split(":")
    kinds, groups = kind.split("+"), ranks.split("+")
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"unknown fault kind {k!r}; one of {', '.join(KINDS)}")
    if len(kinds) != len(groups):
        raise SystemExit(f"{text}: {len(kinds)} kinds but {len(groups)} groups of ranks (KIND1+KIND2:RANKS1+RANKS2)")
    faults = [{"kind": k, "ranks": parse_ranks(g, world)} for k, g in zip(kinds, groups)]
    share = amount.endswith("%")
    value = float(amount[:-1]) if share else float(amount)
    scenario = {"name": name, "kind": kind, "ranks": sorted({r for f in faults for r in f["ranks"]}),
                "share": value / 100 if share else None, "ms": None if share else value}
    if len(faults) > 1:
        scenario["faults"] = faults
    return scenario


def kind_on(scenario, rank):
    """The fault kind `rank` runs in `scenario` ("none" when it is not a faulty rank)."""
    for fault in scenario.get("faults", [{"kind": scenario["kind"], "ranks": scenario["ranks"]}]):
        if rank in fault["ranks"]:
            return fault["kind"]
    return "none"


class SmallMlp(nn.Module):
    """A model whose CPU work is small: with --device-ms, ranks spend most of a step off the CPU."""

    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.head(x)

    def hook_parameter(self):
        return self.head[1].weight


class ExtraCompute:
    """Real matmuls of a given duration on the job's device."""

    SHAPES = [256 + 32 * i for i in range(14)]  # 14 sizes: 14 launch configurations on a GPU

    def __init__(self, device):
        self.device = device
        # CPU: 256x256 matmuls (about a millisecond each): few enough ops per step that a
        # faulty rank's trace stays small.
        self.a = torch.randn(256, 256, device=device) / 16
        self.gpu_ms = {}  # GPU: measured ms of one GEMM per size

    def calibrate(self):
        if self.device.type != "cuda":
            return
        self.gpu_inputs, self.gpu_outputs = {}, {}
        for n in [1024] + self.SHAPES:
            a = self.gpu_inputs[n] = torch.randn(n, n, device=self.device) / n
            out = self.gpu_outputs[n] = torch.empty(n, n, device=self.device)
            for _ in range(3):
                torch.mm(a, a, out=out)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(10):
                torch.mm(a, a, out=out)
            end.record()
            end.synchronize()
            self.gpu_ms[n] = start.elapsed_time(end) / 10

    def run(self, seconds, spread=False):
        if seconds <= 0:
            return
        if self.device.type == "cuda":
            sizes = self.SHAPES if spread else [1024]
            per_size = seconds * 1e3 / len(sizes)
            for n in sizes:
                a = self.gpu_inputs[n]
                for _ in range(max(1, round(per_size / self.gpu_ms[n]))):
                    torch.mm(a, a, out=self.gpu_outputs[n])  # GEMMs only: the calibrated kernels
            return
        end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < end:
            if spread:
                n = self.SHAPES[i % len(self.SHAPES)] // 4
                b = torch.randn(n, n)
                torch.tanh(b @ b)
            else:
                self.a = torch.tanh(self.a @ self.a)
            i += 1


class CpuHog:
    """A Python thread that burns CPU for a share of the wall clock while switched on."""

    def __init__(self):
        self.duty = 0.0
        self.thread = None

    def set(self, duty):
        self.duty = min(0.95, max(0.0, duty))
        if self.duty > 0 and self.thread is None:
            self.thread = threading.Thread(target=self.cpu_hog, name="cpu-hog", daemon=True)
            self.thread.start()
        elif self.duty == 0 and self.thread is not None:
            self.thread.join()  # it ends within one slice: no idle thread in later scenarios
            self.thread = None

    def cpu_hog(self):
        while True:
            duty = self.duty
            if duty <= 0:
                return
            end = time.perf_counter() + 0.005
            x = 0
            while time.perf_counter() < end:
                for _ in range(2000):  # few calls: a profiler with_stack records each one
                    x += 1
            time.sleep(0.005 * (1 - duty) / duty)


class DeviceTime(torch.autograd.Function):
    """Emulated accelerator time in backward: the identity, whose backward waits (--device-ms)."""

    @staticmethod
    def forward(ctx, x, seconds):
        ctx.seconds = seconds
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        if ctx.seconds:
            time.sleep(ctx.seconds)
        return grad, None


class WithDeviceTime(nn.Module):
    """Wraps a model so that each step also waits `device_ms` (a third in forward, the rest in
    backward), as a rank waits for its GPU: on a small shared CPU machine, the ranks then spend
    most of a step off the CPU, as real GPU jobs do, instead of competing for two cores."""

    def __init__(self, model, device_ms):
        super().__init__()
        self.model = model
        self.device_s = device_ms / 1e3

    def forward(self, x):
        out = self.model(x)
        if self.device_s:
            time.sleep(self.device_s / 3)
            out = DeviceTime.apply(out, 2 * self.device_s / 3)
        return out


def delayed_allreduce(state, bucket):
    """DDP comm hook: the usual averaging all-reduce, after the scenario's delay (if any)."""
    FAULT["calls"] += 1
    if FAULT["kind"] == "slow-collective" and FAULT["seconds"]:
        time.sleep(FAULT["seconds"] / FAULT["buckets"])
    world = dist.get_world_size()
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda f: f.value()[0] / world)


class Job:
    def __init__(self, args):
        self.args = args
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        if args.device == "cuda":
            # gloo: every rank shares GPU 0; nccl: one GPU per rank.
            gpu = int(os.environ.get("LOCAL_RANK", 0)) if args.backend == "nccl" else 0
            self.device = torch.device("cuda", gpu)
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        torch.manual_seed(0)
        if args.model == "transformer":
            self.dataset = SyntheticTokens(args.batch_size * 16 * self.world)
            self.model = TinyTransformer().to(self.device)
        elif args.model == "mlp":
            self.dataset = SyntheticImages(args.batch_size * 16 * self.world)
            self.model = SmallMlp().to(self.device)
        else:
            self.dataset = SyntheticImages(args.batch_size * 16 * self.world)
            self.model = SmallNet().to(self.device)
        self.loss_fn = nn.CrossEntropyLoss()
        self.hook_param = self.model.hook_parameter()
        sampler = torch.utils.data.distributed.DistributedSampler(self.dataset, shuffle=False)
        self.sampler = sampler
        self.loader = DataLoader(self.dataset, batch_size=args.batch_size, sampler=sampler, num_workers=0)
        self.ddp = nn.parallel.DistributedDataParallel(WithDeviceTime(self.model, getattr(args, "device_ms", 0.0)))
        self.ddp.register_comm_hook(None, delayed_allreduce)
        if args.model == "transformer":
            self.opt = torch.optim.AdamW(self.ddp.parameters(), lr=1e-4)
        else:
            self.opt = torch.optim.SGD(self.ddp.parameters(), lr=0.01)
        self.extra = ExtraCompute(self.device)
        self.hog = CpuHog()
        self.model.register_forward_pre_hook(self.forward_hook)
        self.hook_param.register_hook(self.backward_hook)
        self.opt.register_step_pre_hook(self.optimizer_hook)
        self.epoch, self.it = 0, iter(self.loader)
        self.buckets = 1

    # The injection points.
    def forward_hook(self, module, inputs):
        if FAULT["kind"] == "slow-forward":
            self.extra.run(FAULT["seconds"])
        elif FAULT["kind"] == "slow-kernel-shapes":
            self.extra.run(FAULT["seconds"], spread=True)

    def backward_hook(self, grad):
        if FAULT["kind"] == "slow-backward":
            self.extra.run(FAULT["seconds"])
        return grad

    def optimizer_hook(self, optimizer, args, kwargs):
        if FAULT["kind"] == "slow-optimizer":
            self.extra.run(FAULT["seconds"])

    def next_batch(self):
        try:
            return next(self.it)
        except StopIteration:
            self.epoch += 1
            self.sampler.set_epoch(self.epoch)
            self.it = iter(self.loader)
            return next(self.it)

    def step(self):
        x, y = self.next_batch()  # the DataLoader iterator records its own enumerate(DataLoader)#... span
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        if FAULT["kind"] == "host-sleep":
            time.sleep(FAULT["seconds"])
        elif FAULT["kind"] == "host-stall":
            # The second step of every STALL_EVERY counted from apply(): a measuring block's first
            # step, which paired_steps leaves out, never holds it.
            if FAULT["stall_steps"] % STALL_EVERY == 1:
                time.sleep(FAULT["seconds"] * STALL_EVERY)
            FAULT["stall_steps"] += 1
        self.opt.zero_grad()
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            out = self.ddp(x)
            loss = self.loss_fn(out.reshape(-1, out.shape[-1]) if out.dim() == 3 else out, y.reshape(-1))
        loss.backward()
        self.opt.step()
        if self.device.type == "cuda":
            torch.cuda.synchronize()  # a step ends when its GPU work is done (as loss.item() would)

    def timed_steps(self, n):
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            self.step()
            times.append(time.perf_counter() - t0)
        return times

    def profiled_steps(self, n):
        """Step times while the profiler records as it does for a scenario (nothing is written):
        shares of the step are shares of the step the traces show."""
        with self.profiler():
            return self.timed_steps(n)

    def profiler(self):
        """A profiler that records as the scenarios' does and writes nothing."""
        return torch.profiler.profile(activities=self.activities(), record_shapes=True, with_stack=self.args.with_stack)

    def activities(self):
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        return activities

    def agreed_step_ms(self, times, mean=False):
        """The median step time (or the mean), the largest over ranks (the same on every rank)."""
        # NCCL reduces GPU tensors only.
        value = statistics.fmean(times) if mean else statistics.median(times)
        t = torch.tensor([value * 1e3], dtype=torch.float64,
                         device=self.device if self.args.backend == "nccl" else "cpu")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def apply(self, scenario, base_ms):
        self.base_ms = base_ms  # the base of AMOUNT N%, and of the CPU hog's duty
        kind = kind_on(scenario, self.rank)
        ms = scenario["ms"] if scenario["ms"] is not None else scenario["share"] * base_ms
        scenario["ms"] = round(ms, 3)
        seconds = ms / 1e3 if kind != "none" else 0.0
        FAULT.update(kind=kind, seconds=seconds, buckets=self.buckets, stall_steps=0)
        self.dataset.delay_s = seconds / self.args.batch_size if kind == "slow-data" else 0.0
        self.hog.set(seconds * 1e3 / base_ms if kind == "cpu-hog" else 0.0)

    def record(self, scenario):
        args = self.args
        out_dir = os.path.join(args.out, scenario["name"])
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, f"rank{self.rank}.pt.trace.json.gz")
        self.timed_steps(args.settle_steps)  # let the fault reach steady state before profiling
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps)
        times = []
        with torch.profiler.profile(activities=self.activities(), schedule=schedule,
                                    on_trace_ready=lambda prof: prof.export_chrome_trace(path),
                                    record_shapes=True, with_stack=args.with_stack) as prof:
            for i in range(args.steps + 1):
                t0 = time.perf_counter()
                self.step()
                if i > 0:
                    times.append(time.perf_counter() - t0)
                if i == args.steps:  # the recorded steps' CPU run and wait, as the collector records them
                    sched = _cpu_sched.window_json(sched_before, _cpu_sched.snapshot())
                    if sched:
                        prof.add_metadata_json(_cpu_sched.METADATA_KEY, sched)
                prof.step()
                if i == 0:
                    sched_before = _cpu_sched.snapshot()
        stall = "host-stall" in scenario["kind"]
        scenario["step_ms"] = round(self.agreed_step_ms(times, mean=stall), 3)
        if args.measure_steps:
            # What fixing the fault saves, measured without the profiler (bench/accuracy): the
            # step time with the fault and without it, in interleaved blocks, so that a drift of
            # the machine's load moves both alike.
            scenario["plain_step_ms"], scenario["plain_fault_free_ms"] = self.measured_pair(
                scenario, args.measure_steps, stall)
        if args.measure_profiled:
            # The same pairs while the profiler records as it did for the trace (nothing is
            # written): the saving in the run the trace shows. The profiler's own CPU time changes
            # a contended host's timing (a sleep wakes later), so the two measurements tell the
            # model's error from the observer's effect (bench/accuracy, round 15).
            with self.profiler():
                scenario["profiled_step_ms"], scenario["profiled_fault_free_ms"] = self.measured_pair(
                    scenario, args.measure_profiled, stall)
        dist.barrier()

    def measured_pair(self, scenario, n, stall):
        """The agreed step time (ms) with the fault and without it over n paired steps each; a
        stall's blocks hold STALL_EVERY counted steps, and its steps are averaged."""
        with_fault, without = self.paired_steps(scenario, n, block=STALL_EVERY + 1 if stall else 4)
        return (round(self.agreed_step_ms(with_fault, mean=stall), 3),
                round(self.agreed_step_ms(without, mean=stall), 3))

    def paired_steps(self, scenario, n, block=4):
        """n steps with the scenario's fault and n without, in alternating blocks of `block`;
        the first step of each block (the fault switching on or off) is not counted."""
        with_fault, without = [], []
        fault_free = dict(scenario, ranks=[], faults=[], ms=0.0)
        while len(with_fault) < n:
            for target, sc in ((with_fault, scenario), (without, fault_free)):
                self.apply(sc, self.base_ms)
                target += self.timed_steps(block)[1:]
        self.apply(scenario, self.base_ms)
        return with_fault[:n], without[:n]


def count_buckets(job):
    """DDP buckets per step (gradient all-reduces the comm hook launches in one step)."""
    before = FAULT["calls"]
    job.step()
    return max(1, FAULT["calls"] - before)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="one sub-directory per scenario is written here")
    p.add_argument("--scenario", action="append", required=True, help="NAME:KIND:RANKS:AMOUNT (repeatable)")
    p.add_argument("--steps", type=int, default=5, help="profiled steps per scenario")
    p.add_argument("--warmup-steps", type=int, default=5,
                   help="unprofiled steps at the start (the first steps of a job are slower on some ranks)")
    p.add_argument("--calibrate-steps", type=int, default=8,
                   help="profiled steps that measure the fault-free step time (the base of AMOUNT N%%)")
    p.add_argument("--settle-steps", type=int, default=3, help="unprofiled steps before each scenario")
    p.add_argument("--measure-steps", type=int, default=0,
                   help="unprofiled steps after each scenario whose median is its plain_step_ms")
    p.add_argument("--measure-profiled", type=int, default=0,
                   help="steps per scenario that measure its step time with and without the fault while the "
                        "profiler records (profiled_step_ms, profiled_fault_free_ms)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--with-stack", action="store_true")
    p.add_argument("--device-ms", type=float, default=0.0,
                   help="emulated accelerator time per step (sleeps in forward and backward; see WithDeviceTime)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cuda: every rank uses GPU LOCAL_RANK (nccl) or GPU 0 (gloo: ranks share one GPU)")
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    p.add_argument("--model", choices=["cnn", "mlp", "transformer"], default="cnn",
                   help="cnn: the demo's SmallNet; mlp: little CPU work (with --device-ms); transformer: the GPU model")
    args = p.parse_args()
    dist.init_process_group(args.backend)
    scenarios = [parse_scenario(s, dist.get_world_size()) for s in args.scenario]
    torch.set_num_threads(1)
    job = Job(args)
    job.extra.calibrate()
    job.timed_steps(args.warmup_steps)  # DDP's first step builds its buckets; caches warm up
    job.buckets = count_buckets(job)
    base_ms = job.agreed_step_ms(job.profiled_steps(args.calibrate_steps))
    for scenario in scenarios:
        job.apply(scenario, base_ms)
        job.record(scenario)
    FAULT.update(kind="none", seconds=0.0)
    job.hog.set(0.0)
    dist.barrier()
    dist.destroy_process_group()
    if job.rank == 0:
        with open(os.path.join(args.out, "truth.json"), "w") as f:
            json.dump({"world_size": job.world, "profiled_steps": args.steps, "batch_size": args.batch_size,
                       "device": args.device, "backend": args.backend, "model": args.model,
                       "with_stack": bool(args.with_stack),
                       "buckets_per_step": job.buckets, "base_step_ms": round(base_ms, 3),
                       "scenarios": scenarios}, f, indent=1)
        print(f"recorded {len(scenarios)} scenarios in {args.out}")


if __name__ == "__main__":
    main()

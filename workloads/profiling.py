"""The profiler the CPU workloads record with (ddp_train.py, pipeline_train.py, fsdp_train.py).

One cycle of torch.profiler over the CPU: `wait` steps, one warm-up step, `active` recorded steps.
repeat=1, because a job longer than wait + warmup + active would start a second cycle, and stop()
would export its first steps over the trace of the first. record_shapes is always on: the work
signatures of the steps (uneven timing) and the peers of c10d's send/recv ops (Concrete Inputs,
which pair the transfers of a pipeline group of more than two stages) come from it. Each rank
writes DIR/rank<R>.pt.trace.json.gz, as a user's own torch.profiler call would.
"""

import os

import torch


def rank_profiler(profile_dir, rank, wait, active, with_stack=False, profile_memory=False):
    """An unstarted torch.profiler.profile for `rank` writing into `profile_dir` (created)."""
    os.makedirs(profile_dir, exist_ok=True)
    out = os.path.join(profile_dir, f"rank{rank}.pt.trace.json.gz")
    return torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=wait, warmup=1, active=active, repeat=1),
        on_trace_ready=lambda prof: prof.export_chrome_trace(out),
        with_stack=with_stack, profile_memory=profile_memory, record_shapes=True)

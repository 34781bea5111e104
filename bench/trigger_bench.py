#!/usr/bin/env python3
"""The auto-trigger on real step times. Not a test: prints a table.

    python3 bench/trigger_bench.py [SERIES.txt ...]      # default: tests/data/trigger/*.txt
    python3 bench/trigger_bench.py --record DIR          # first record CPU runs here (train_loop.py)

For every recorded run (step times in seconds, one per line; '#' lines describe the run):
  * fires: how often the trigger fires on the run as recorded (healthy runs: must be 0; runs
    whose steps became slower: once, after the slowdown began), and at which step;
  * +20%: a minute of the run's steps in a fixed random order (its noise without its drifts),
    then a minute of them 20 % slower (50 % for runs whose steps spread by more than 30 %): the
    seconds from the slowdown's start to the fire (the detection delay; '-': never);
  * before: the same for the trigger rankscope had before issue 11 (5 consecutive steps above
    1.2x the median of the last 50 normal steps, 10 warm-up steps), for comparison.
"""

import argparse
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from rankscope._trigger import AutoTrigger  # noqa: E402


class PreviousTrigger:
    """The rule before issue 11, kept here only to compare."""

    def __init__(self, factor=1.2, consecutive=5, window=50, warmup=10, min_excess_s=0.005):
        self.factor, self.consecutive, self.window, self.warmup, self.min_excess = (factor, consecutive, window,
                                                                                   warmup, min_excess_s)
        self.seen, self.ring, self.base, self.run, self.since = 0, [], 0.0, 0, 0

    def observe(self, dt):
        self.seen += 1
        if self.seen <= self.warmup:
            return None
        if self.base and dt > self.factor * self.base and dt - self.base > self.min_excess:
            self.run += 1
            if self.run >= self.consecutive:
                self.__init__(self.factor, self.consecutive, self.window, self.warmup, self.min_excess)
                return "fired"
            return None
        self.run = 0
        self.ring = (self.ring + [dt])[-self.window:]
        self.since += 1
        if self.since >= 16 or len(self.ring) < self.window:
            self.since = 0
            if len(self.ring) >= 4:
                self.base = sorted(self.ring)[len(self.ring) // 2]
        return None


def load(path):
    text = pathlib.Path(path).read_text()
    meta = {k.strip(): v.strip() for line in text.splitlines() if line.startswith("#") and ":" in line
            for k, v in [line[1:].split(":", 1)]}
    return meta, [float(x) for x in text.splitlines() if x.strip() and not x.startswith("#")]


def then_slower(times, factor, seconds=60.0):
    """As tests/python/test_trigger.py: (a shuffled minute, the same 20 % slower)."""
    import itertools
    import random
    rng = random.Random(11)

    def minute(scale):
        out, total = [], 0.0
        for dt in itertools.cycle(rng.sample(times, len(times))):
            out.append(scale * dt)
            total += scale * dt
            if total >= seconds:
                return out
    return minute(1.0), minute(factor)


def noise(times):
    s = sorted(times)
    m = s[len(s) // 2]
    return 1.4826 * sorted(abs(x - m) for x in times)[len(times) // 2] / m


def delay_s(make, before, after):
    fired = [i for i in fire_steps(make, before + after) if i >= len(before)]
    return f"{sum(after[:fired[0] - len(before) + 1]):.1f} s" if fired else "-"


def fire_steps(make, times):
    t = make()
    return [i for i, dt in enumerate(times) if t.observe(dt) is not None]


def record_cpu(out):
    """Healthy and 20 %-slower CPU runs on this machine (train_loop.py, Tracker idle, trigger off)."""
    out = pathlib.Path(out)
    for n, steps, run in ((1, 1500, "healthy"), (4, 600, "healthy"), (4, 1000, "slow20")):
        extra = ["--fault", "host-sleep:all:20%", "--fault-from", str(steps // 3)] if run == "slow20" else []
        d = out / f"cpu{n}_{run}"
        subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
                        str(REPO / "workloads/train_loop.py"), "--tracker", "--steps", str(steps), "--out", str(d),
                        *extra], check=True, capture_output=True, timeout=1800,
                       env=dict(os.environ, OMP_NUM_THREADS="1", RANKSCOPE_AUTO_TRIGGER="0",
                                RANKSCOPE_SOCKET="@rankscope-bench-nobody", PYTHONPATH=str(REPO / "python")))
        print(f"recorded {d}", file=sys.stderr)


def import_runs(dirs, dest, source):
    """train_loop.py's output (steps.rank0.txt, trigger.rank0.json) -> DEST/<dir name>.txt."""
    import json
    for d in map(pathlib.Path, dirs):
        meta = json.loads((d / "trigger.rank0.json").read_text())
        fault = meta.get("fault")
        lines = [f"# source: {source}, {meta['world_size']} rank(s), {meta['device']}, model {meta['model']}, "
                 f"workloads/train_loop.py with an idle Tracker (auto-trigger off while recording); rank 0",
                 f"# fault: {'none' if not fault else fault['kind'] + ' ' + str(round(100 * fault['share'])) + '%'}"]
        if fault:
            lines.append(f"# fault_from: {meta['fault_from']}")
        lines += (d / "steps.rank0.txt").read_text().split()
        (pathlib.Path(dest) / f"{d.name}.txt").write_text("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("series", nargs="*")
    p.add_argument("--record", default="", help="record CPU runs into this directory first")
    p.add_argument("--import-to", default="", help="turn the run directories given as SERIES into test data here")
    p.add_argument("--source", default="this machine", help="--import-to: where the runs were recorded")
    args = p.parse_args()
    if args.record:
        record_cpu(args.record)
    if args.import_to:
        import_runs(args.series, args.import_to, args.source)
        return
    paths = args.series or sorted(str(x) for x in (REPO / "tests/data/trigger").glob("*.txt"))
    print(f"| run | steps | median step | spread | fires | slowdown: delay | rule before: fires | rule before: delay |")
    print("|---|---|---|---|---|---|---|---|")
    new = lambda: AutoTrigger(clock=lambda: 0.0)  # noqa: E731
    for path in paths:
        meta, times = load(path)
        s = sorted(times)
        spread = noise(times)
        factor = 1.2 if spread <= 0.3 else 1.5
        before, after = then_slower(times, factor)
        now = fire_steps(new, times)
        then = fire_steps(PreviousTrigger, times)
        name = pathlib.Path(path).stem + (f" (20 % slower from step {meta['fault_from']})" if "fault_from" in meta else "")
        print(f"| {name} | {len(times)} | {1e3 * s[len(s) // 2]:.1f} ms | {100 * spread:.0f} % | "
              f"{len(now)} {now[:3] if now else ''} | +{round(100 * (factor - 1))} %: {delay_s(new, before, after)} | "
              f"{len(then)} {then[:3] if then else ''} | {delay_s(PreviousTrigger, before, after)} |")


if __name__ == "__main__":
    main()

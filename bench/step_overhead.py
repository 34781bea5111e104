"""Idle cost of Tracker.step() (target: < 5 us per call). Not a test: prints numbers.

    python3 bench/step_overhead.py [--calls 200000] [--repeat 7]

Measures, in one process with no daemon reachable (the heartbeat thread is alive but blocked):
  * a bare Python method call, for reference,
  * Tracker.step() with the auto-trigger off,
  * Tracker.step() with the auto-trigger on (the default),
reporting the best and median of `repeat` runs in ns per call.
"""

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from rankscope.tracker import Tracker  # noqa: E402


class Empty:
    def step(self):
        pass


def per_call_ns(fn, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls


def measure(name, obj, calls, repeat):
    per_call_ns(obj.step, calls // 10)  # warm up
    runs = [per_call_ns(obj.step, calls) for _ in range(repeat)]
    print(f"{name:<34} best {min(runs):7.0f} ns   median {statistics.median(runs):7.0f} ns per call")
    return min(runs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    print(f"python {sys.version.split()[0]}, {args.calls} calls x {args.repeat}")
    measure("empty method (reference)", Empty(), args.calls, args.repeat)
    off = Tracker(daemon="@rankscope-bench-nobody", auto_trigger=False)
    measure("Tracker.step(), auto-trigger off", off, args.calls, args.repeat)
    off.close()
    on = Tracker(daemon="@rankscope-bench-nobody")
    best = measure("Tracker.step(), auto-trigger on", on, args.calls, args.repeat)
    on.close()
    print(f"target < 5000 ns: {'met' if best < 5000 else 'NOT met'}")


if __name__ == "__main__":
    main()

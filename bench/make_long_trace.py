"""Makes a long trace from a real one, for compare benchmarks: the trace's events repeated N
times one after the other in time, as if the job had been profiled for N times as many steps.

Each repetition shifts every timestamp by the span of the original trace, renumbers the
ProfilerStep#N annotations, and offsets correlation ids, External ids and flow ids so that they
stay unique; everything else (names, args, categories, Kineto's field order) is the original's.

    python3 bench/make_long_trace.py --trace ../shared/traces/hta/trace_diff_control_a100/control.json.gz \\
        --size-mb 1000 --out /tmp/long_control.pt.trace.json
"""

import argparse
import gzip
import json
import pathlib


def load(path):
    raw = pathlib.Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", required=True)
    p.add_argument("--size-mb", type=float, default=1000)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    trace = load(args.trace)
    events = trace.pop("traceEvents")
    timed = [e for e in events if "ts" in e and e.get("ph") != "M"]
    start = min(float(e["ts"]) for e in timed)
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    span = end - start + 1000.0  # µs, with a 1 ms gap between repetitions
    steps = [int(e["name"].split("#")[1]) for e in timed if str(e.get("name", "")).startswith("ProfilerStep#")]
    step_span = (max(steps) - min(steps) + 1) if steps else 0
    ids = [int(v) for e in events for k, v in (e.get("args") or {}).items()
           if k in ("correlation", "External id", "external id") and isinstance(v, int)]
    ids += [int(e["id"]) for e in events if isinstance(e.get("id"), int)]
    id_span = max(ids, default=0) + 1
    target = int(args.size_mb * 1e6)
    written = 0
    with open(args.out, "w", encoding="utf-8") as out:
        header = json.dumps(trace)[:-1]  # every top-level key but traceEvents, then the array
        out.write(header + (', ' if trace else '') + '"traceEvents": [\n')
        first = True
        k = 0
        while written < target:
            for e in events:
                if e.get("ph") == "M" and k > 0:
                    continue  # metadata once
                e = dict(e)
                if "ts" in e and e.get("ph") != "M":
                    ts = e["ts"]
                    e["ts"] = ts + k * span if isinstance(ts, float) else int(ts + k * round(span))
                if k and isinstance(e.get("id"), int):
                    e["id"] = e["id"] + k * id_span
                args_ = e.get("args")
                if k and args_:
                    args_ = dict(args_)
                    for key in ("correlation", "External id", "external id"):
                        if isinstance(args_.get(key), int) and args_[key] >= 0:
                            args_[key] += k * id_span
                    e["args"] = args_
                name = e.get("name")
                if k and isinstance(name, str) and name.startswith("ProfilerStep#"):
                    e["name"] = f"ProfilerStep#{int(name.split('#')[1]) + k * step_span}"
                text = json.dumps(e, separators=(", ", ": "))
                out.write(("" if first else ",\n") + text)
                written += len(text) + 2
                first = False
            k += 1
        out.write("\n]}\n")
    print(f"wrote {args.out}: {pathlib.Path(args.out).stat().st_size / 1e6:.0f} MB, {k} repetitions")


if __name__ == "__main__":
    main()

"""Writes a Kineto-style trace of many tiny events: the worst case for memory per byte of JSON.

    python3 bench/make_tiny_events_trace.py --events 10000000 --out /tmp/tiny.pt.trace.json

Per profiler step: a ProfilerStep# annotation, then short CPU ops on two threads (each a
`{"ph":"X",...}` of about 75 bytes: integer microseconds, no args), and every 50th op launches a kernel (runtime call
+ GPU kernel with correlation ids), so that the GPU analyses have work too. 10 M events make
about 757 MB of JSON (issue 10's file: analyze used to peak at 2.7x the JSON).
"""

import argparse
import pathlib

OPS = ["aten::add", "aten::mul", "aten::to", "aten::mm", "aten::t", "aten::neg", "aten::sum", "aten::max"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--ops-per-step", type=int, default=100_000)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    with open(a.out, "w") as out:
        out.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}],\n'
                  '"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n"traceEvents": [\n')
        written, ts, step, corr = 0, 1_000_000, 0, 0
        lines = []
        first = True

        def flush():
            nonlocal first
            if lines:
                out.write(("" if first else ",\n") + ",\n".join(lines))
                first = False
                lines.clear()

        while written < a.events:
            step_dur = a.ops_per_step * 2
            lines.append(f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{step}","pid":1,"tid":1,'
                         f'"ts":{ts},"dur":{step_dur}}}')
            written += 1
            t = ts
            for i in range(a.ops_per_step):
                if written >= a.events:
                    break
                tid = 1 + (i & 1)
                lines.append(f'{{"ph":"X","cat":"cpu_op","name":"{OPS[i % 8]}","pid":1,"tid":{tid},'
                             f'"ts":{t},"dur":1}}')
                written += 1
                if i % 50 == 0:
                    corr += 1
                    lines.append(f'{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":{tid},'
                                 f'"ts":{t},"dur":1,"args":{{"correlation":{corr}}}}}')
                    lines.append(f'{{"ph":"X","cat":"kernel","name":"kernel_{i % 8}","pid":0,"tid":7,'
                                 f'"ts":{t + 5},"dur":3,"args":{{"device":0,"stream":7,"correlation":{corr}}}}}')
                    written += 2
                t += 2
                if len(lines) >= 100_000:
                    flush()
            ts += step_dur + 10
            step += 1
        flush()
        out.write("\n]}\n")
    size = pathlib.Path(a.out).stat().st_size
    print(f"wrote {a.out}: {written} events, {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()

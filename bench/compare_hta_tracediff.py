"""rankscope compare beside Holistic Trace Analysis's TraceDiff on the same pair of traces (HTA's
own trace-diff pair in ../shared/traces: control A100 vs test V100), for docs/compare.md.

HTA must be importable by --hta-python (a venv with `pip install HolisticTraceAnalysis`; it is not
a dependency of rankscope or of its tests):

    python3 bench/compare_hta_tracediff.py --hta-python /tmp/hta-venv/bin/python [--rankscope BIN]

Prints a Markdown report: what each tool says, the numbers both report side by side (operator
and kernel counts and times per step), and where they differ.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]

HTA = r"""
import json, logging, sys, time
logging.disable(logging.CRITICAL)
from hta.trace_diff import LabeledTrace, TraceDiff
control = LabeledTrace(label="control", trace_dir=sys.argv[1])
test = LabeledTrace(label="test", trace_dir=sys.argv[2])
cr, tr = int(sys.argv[3]), int(sys.argv[4])
# Every iteration of both (HTA's default compares only the first of each).
ci, ti = control.iterations(), test.iterations()
start = time.perf_counter()
df = TraceDiff.compare_traces(control, test, control_rank=cr, test_rank=tr, control_iteration=ci, test_iteration=ti)
ops = TraceDiff.ops_diff(control, test, control_rank=cr, test_rank=tr, control_iteration=ci, test_iteration=ti)
seconds = time.perf_counter() - start
df = df.reset_index()
print(json.dumps({"seconds": seconds, "columns": list(df.columns), "rows": json.loads(df.to_json(orient="records")),
                  "ops": {k: list(v) for k, v in ops.items()}, "iterations": [len(ci), len(ti)]}))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hta-python", required=True)
    p.add_argument("--rankscope", default=str(REPO / "build/dev/src/rankscope/cli/rankscope"))
    p.add_argument("--shared", default=str(REPO.parent / "shared"))
    args = p.parse_args()
    hta_dir = pathlib.Path(args.shared) / "traces/hta"
    control, test = hta_dir / "trace_diff_control_a100", hta_dir / "trace_diff_test_v100"

    hta = subprocess.run([args.hta_python, "-c", HTA, str(control), str(test), "3", "1"], capture_output=True,
                         text=True, timeout=3600)
    if hta.returncode != 0:
        sys.exit(f"HTA failed: {hta.stderr[-2000:]}")
    h = json.loads(hta.stdout.strip().splitlines()[-1])
    r = json.loads(subprocess.run([args.rankscope, "compare", control, test, "--json", "-"], capture_output=True,
                                  text=True, check=True).stdout)
    rank = r["ranks"][0]
    it_c, it_t = h["iterations"]
    print(f"HTA TraceDiff: {h['seconds']:.1f} s; iterations {it_c} (control) / {it_t} (test); columns {h['columns']}")
    print(f"ops_diff: " + ", ".join(f"{k} {len(v)}" for k, v in h["ops"].items()))
    stats = {o["name"]: o for o in rank["operator_stats"]}
    kernels = {k["name"]: k for k in rank["kernels"]}
    def count(rows, status):
        return sum(1 for o in rows if o["status"] == status)
    print(f"rankscope: CPU operators by name only in NEW {count(rank['operator_stats'], 'added')}, only in BASE "
          f"{count(rank['operator_stats'], 'removed')}; kernels by name only in NEW {count(rank['kernels'], 'added')}, "
          f"only in BASE {count(rank['kernels'], 'removed')}; aligned operator tree: "
          f"{sum(1 for o in rank['operators'] if o['status'] == 'added')} added / "
          f"{sum(1 for o in rank['operators'] if o['status'] == 'removed')} removed rows; "
          f"step delta {rank['delta_ns'] / 1e6:+.2f} ms, noise {rank['noise_ns'] / 1e6:.2f} ms")
    hta_names = {row["name"] for row in h["rows"]}
    mine = set(stats) | set(kernels)
    print(f"names: HTA {len(hta_names)}, rankscope {len(mine)}, in both {len(hta_names & mine)}")
    # HTA's rows are per name over the iterations it kept; rankscope's per step over kept steps.
    rows = sorted(h["rows"], key=lambda x: -abs(x.get("diff_duration", 0) or 0))
    print("\n| name | HTA control count / iter | rankscope BASE calls / step | HTA test count / iter | "
          "rankscope NEW calls / step | HTA diff duration µs / iter | rankscope DIFF µs / step |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    shown = 0
    for row in rows:
        name = row["name"]
        mine = stats.get(name) or kernels.get(name)
        if not mine:
            continue
        if name in stats:
            b, n = mine["base_count"], mine["new_count"]
            d = (mine["new_host_ns"] - mine["base_host_ns"]) / 1e3
        else:
            b, n = mine["base_count"], mine["new_count"]
            d = (mine["new_ns"] - mine["base_ns"]) / 1e3
        print(f"| `{name[:60]}` | {row.get('control_counts', 0) / max(it_c, 1):.1f} | {b:.1f} | "
              f"{row.get('test_counts', 0) / max(it_t, 1):.1f} | {n:.1f} | "
              f"{(row.get('diff_duration', 0) or 0) / max(it_t, 1):+.0f} | {d:+.0f} |")
        shown += 1
        if shown >= 12:
            break
    print("\nrankscope's ranked differences:")
    for d in rank["differences"][:6]:
        print(f"- {d['delta_ns'] / 1e6:+.2f} ms ({d['share_of_delta'] * 100:.0f}%): {d['text']}")


if __name__ == "__main__":
    main()

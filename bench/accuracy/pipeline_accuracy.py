#!/usr/bin/env python3
"""Accuracy of the parallelism-aware diagnosis (issue 16) on pipeline jobs with known faults.
Not a test: records real jobs, prints a table.

    python3 bench/accuracy/pipeline_accuracy.py                 # 2 repeats, about 10 min on 2 cores
    python3 bench/accuracy/pipeline_accuracy.py --repeats 1 --layouts 4x1

Every scenario is a real CPU job (torchrun, gloo, workloads/pipeline_train.py: GPipe with
dist.send/recv, data-parallel all-reduces), recorded with torch.profiler and record_shapes, then
`rankscope analyze`d. The layouts are 4 stages x 1 data rank and 2 x 2; the faults:

  clean                  nothing: no finding is right
  slow-stage  (+L)       the last stage runs L extra layers (a partition imbalance): slow_stage
                         naming the last stage's ranks
  slow-worker (+M ms)    rank 1 does M ms more per micro-batch forward: slow_worker naming rank 1
                         (with one rank per stage it is its stage, so slow_stage naming rank 1)
  imbalance:one / :all   data rank 1 (every data rank) computes a random share of its padded
                         batch each step (other draws in every repeat): per_step_imbalance, and
                         no slow worker (2 x 2 only)

Compute is emulated accelerator time (--device-ms per layer and micro-batch: sleeps, a third in
forward, the rest in backward) besides the layers' own small CPU work, so that four ranks on two
cores measure the pipeline rather than mostly each other's CPU contention (the DDP accuracy
benchmark does the same with --device-ms). The slow worker's extra time is emulated the same way.

What is scored, per scenario: the top finding's kind and ranks against the fault's; for
slow-stage and slow-worker faults, the top finding's cost (the replayed what-if when the replay is
faithful) against the saving the job measured itself (pipeline_train.py --measure-steps: unprofiled
steps with and without the fault in alternating blocks, the same processes); the replay's
fidelity (largest step error) on every run. A clean run's two measured halves give the
reference's own noise.
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_accuracy import REPO, analyze, emit, rankscope_bin, record_job  # noqa: E402

LAYOUTS = {"4x1": dict(pp=4, world=4), "2x2": dict(pp=2, world=4)}


def scenarios(layout, stage_layers, worker_ms):
    """(name, fault argument, extra options, expected kinds, expected ranks or None)."""
    pp, world = LAYOUTS[layout]["pp"], LAYOUTS[layout]["world"]
    dp = world // pp
    last_stage = list(range(dp * (pp - 1), world))
    worker_kind = "slow_stage" if dp == 1 else "slow_worker"
    out = [("clean", "", [], [], None)]
    for layers in stage_layers:
        out.append((f"slow-stage+{layers}", "slow-stage", ["--extra-layers", str(layers)], ["slow_stage"], last_stage))
    for ms in worker_ms:
        out.append((f"slow-worker+{ms:g}ms", "slow-worker:1", ["--slow-ms", str(ms)], [worker_kind], [1]))
    if dp > 1:
        out.append(("imbalance-one", "imbalance:1", [], ["per_step_imbalance"], None))
        out.append(("imbalance-all", "imbalance:all", [], ["per_step_imbalance"], None))
    return out


def record(work, layout, name, fault, options, args, seed):
    out = work / f"{layout}-{name}"
    if (out / "rank0.pt.trace.json.gz").exists():
        return out
    pp, world = LAYOUTS[layout]["pp"], LAYOUTS[layout]["world"]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}",
           str(REPO / "workloads/pipeline_train.py"), "--pp", str(pp), "--steps", str(args.steps),
           "--profile-active", str(args.steps - 2), "--device-ms", str(args.device_ms),
           "--profile-dir", str(out), "--measure-steps", str(args.measure_steps), "--seed", str(seed)] + options
    if fault:
        cmd += ["--fault", fault]
    t0 = time.time()
    record_job(cmd, work / f"{layout}-{name}.log", out)
    print(f"  recorded {out.name} in {time.time() - t0:.0f} s", file=sys.stderr)
    return out


def score(report, kinds, ranks, measured):
    findings = report["findings"]
    top = findings[0] if findings else None
    row = {"top": top, "findings": len(findings),
           "fidelity": report["cluster"].get("replay", {}).get("max_step_error"),
           "faithful": report["cluster"].get("replay", {}).get("faithful")}
    if not kinds:  # clean
        row["ok"] = not findings
        return row
    row["ok"] = bool(top) and top["kind"] in kinds and (ranks is None or top["ranks"] == ranks)
    if kinds == ["per_step_imbalance"]:
        row["ok"] = row["ok"] and not any(f["kind"] == "slow_worker" for f in findings)
    if measured is not None and top and row["ok"]:
        row["estimated_ms"] = top["cost"]["saving_ns"] / 1e6
        row["method"] = top["cost"].get("method", "")
        row["measured_ms"] = measured
    return row


def measured_saving(out):
    path = pathlib.Path(str(out) + ".measured.json")
    if not path.exists():
        return None
    m = json.loads(path.read_text())
    return m["with_fault_ms"] - m["without_fault_ms"]


def describe(top):
    if not top:
        return "no finding"
    return f"{top['kind']} r{','.join(map(str, top['ranks']))}"


def print_table(rows, markdown):
    lines = ["| layout | scenario | expected | named (top finding) | right | replay fidelity | est / measured saving |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        exp = "nothing" if not r["kinds"] else \
            f"{'/'.join(r['kinds'])}" + (f" r{','.join(map(str, r['ranks']))}" if r["ranks"] else "")
        fid = "-" if r["fidelity"] is None else f"{100 * r['fidelity']:.2f} %" + ("" if r["faithful"] else " (not faithful)")
        saving = ""
        if "estimated_ms" in r:
            saving = f"{r['estimated_ms']:.1f} / {r['measured_ms']:.1f} ms ({r['method']})"
        elif not r["kinds"] and r.get("measured_ms") is not None:
            saving = f"halves differ by {abs(r['measured_ms']):.1f} ms"
        lines.append(f"| {r['layout']} | {r['scenario']} | {exp} | {describe(r['top'])} | "
                     f"{'ok' if r['ok'] else 'MISS'} | {fid} | {saving} |")
    lines += ["", "| kind | runs | told apart (top finding right) | what-if within 30 % | median what-if error |",
              "|---|---|---|---|---|"]
    for kind in ["clean", "slow-stage", "slow-worker", "imbalance"]:
        sel = [r for r in rows if r["scenario"].startswith(kind)]
        if not sel:
            continue
        wi = [r for r in sel if "estimated_ms" in r and r["measured_ms"] > 0]
        errs = [abs(r["estimated_ms"] - r["measured_ms"]) / r["measured_ms"] for r in wi]
        within = sum(1 for e in errs if e <= 0.3)
        lines.append(f"| {kind} | {len(sel)} | {sum(r['ok'] for r in sel)} / {len(sel)} | "
                     + (f"{within} / {len(wi)}" if wi else "-") + " | "
                     + (f"{100 * statistics.median(errs):.0f} %" if errs else "-") + " |")
    fids = [r["fidelity"] for r in rows if r["fidelity"] is not None]
    unfaithful = sum(1 for r in rows if r["fidelity"] is not None and not r["faithful"])
    lines.append("")
    if fids:
        lines.append(f"Replay fidelity: largest step error {100 * max(fids):.2f} % over {len(fids)} runs; "
                     f"not faithful: {unfaithful}")
    noise = [abs(r["measured_ms"]) for r in rows if not r["kinds"] and r.get("measured_ms") is not None]
    if noise:
        lines.append(f"The reference's noise (clean runs, |with - without| of the interleaved halves): median "
                     f"{statistics.median(noise):.1f} ms over {len(noise)} clean runs")
    emit(lines, markdown)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", default="", help="recordings go here (default: a new folder in /tmp); "
                   "recordings already there are scored again, not re-recorded")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--layouts", default="4x1,2x2")
    p.add_argument("--stage-layers", default="1,4", help="slow-stage magnitudes: extra layers on the last stage")
    p.add_argument("--worker-ms", default="3,10", help="slow-worker magnitudes: ms more per micro-batch forward")
    p.add_argument("--device-ms", type=float, default=2.0, help="emulated accelerator time per layer and micro-batch")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--measure-steps", type=int, default=8)
    p.add_argument("--only", default="", help="only the scenarios whose name contains one of these (comma-separated)")
    p.add_argument("--rankscope", default="")
    p.add_argument("--markdown", default="")
    args = p.parse_args()
    binary = rankscope_bin(args.rankscope)
    work = pathlib.Path(args.work or f"/tmp/rankscope-pipeline-accuracy-{os.getpid()}")
    work.mkdir(parents=True, exist_ok=True)
    print(f"recordings in {work}", file=sys.stderr)
    stage_layers = [int(x) for x in args.stage_layers.split(",") if x]
    worker_ms = [float(x) for x in args.worker_ms.split(",") if x]
    rows = []
    for rep in range(args.repeats):
        for layout in args.layouts.split(","):
            for name, fault, options, kinds, ranks in scenarios(layout, stage_layers, worker_ms):
                if args.only and not any(o in name for o in args.only.split(",")):
                    continue
                (work / f"r{rep}").mkdir(exist_ok=True)
                out = record(work / f"r{rep}", layout, name, fault, options, args, seed=rep)
                report = analyze(binary, out)
                row = score(report, kinds, ranks, measured_saving(out) if kinds and "imbalance" not in name else None)
                if not kinds:
                    row["measured_ms"] = measured_saving(out)
                rows.append(dict(row, layout=layout, scenario=f"{name}-r{rep}", kinds=kinds, ranks=ranks))
    print_table(rows, args.markdown)


if __name__ == "__main__":
    main()

"""`rankscope compare` end to end (docs/compare.md).

Real PyTorch runs that differ by one known change (workloads/compare_runs.py: a wider layer, an
extra operator, a larger batch, a slower data pipeline, bf16 autocast instead of fp32, a
different number of ranks, and no change at all). Each pair is trained in one process with the
steps of its two sides interleaved, so both see the same machine load; rankscope must rank the
injected change first and give it a cost within 20 % of the step-time delta measured
independently from the traces. Both allowances widen by the pair's own noise band (three
standard errors of the step-time difference, from the runs' step-to-step variation): on a busy
machine a difference cannot be told more precisely than that, and no assertion uses wall-clock
time. They also widen by the difference in how long each side's training thread waited for a
CPU per step (its run-queue wait, recorded by the workload): that time shows in the traces as
time inside whichever operator happened to run, so no trace can give it to the change, and on a
machine shared with other jobs it grows with the step (the longer side waits more). Identical
runs must show no difference beyond noise.

Recorded traces: HTA's trace-diff pair (control A100 vs test V100), H100 captures with an
injected extra GEMM on rank 0, and bad inputs (a trace without steps, ranks in common with none,
--rank missing on one side, different models).
"""

import csv
import gzip
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

import jsonschema
import pytest

import recording

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "docs" / "compare-schema.json").read_text())
ONE_RANK_PAIRS = ["same", "wider", "extra_op", "batch", "slow_data", "bf16"]
COST_TOLERANCE = 0.20
RANKSCOPE = None  # set by the pairs fixture


def record(out, pairs):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    one = [p for p in pairs if p != "ranks"]
    if one:
        cmd = [sys.executable, str(REPO / "workloads/compare_runs.py"), "--out", str(out)]
        for pair in one:
            cmd += ["--pair", pair]
        recording.record(cmd, env=env, timeout=900, clean=[out / pair for pair in one])
    if "ranks" in pairs:
        recording.record([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          str(REPO / "workloads/compare_runs.py"), "--out", str(out), "--pair", "ranks"],
                         env=env, timeout=900, clean=[out / "ranks"])


def within_noise(out, pair):
    """True when a pair's step-time delta is within its own noise band."""
    proc = subprocess.run([RANKSCOPE, "compare", out / pair / "base", out / pair / "new", "--json", "-"],
                          capture_output=True, text=True, timeout=600)
    rank = json.loads(proc.stdout)["ranks"][0]
    return abs(rank["delta_ns"]) <= rank["noise_ns"]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory, rankscope_bin):
    """Every pair of workloads/compare_runs.py: one one-rank process, one two-rank torchrun job.
    A live pair is recorded again, at most twice, when the machine's load decided it instead of
    the pair's change: an injected change hidden in noise, or identical runs apart by more than
    their noise band (the band is a 0.27 % chance for steps that vary independently; a burst of
    load on a shared machine spans several steps). A pair that comes out so three times in a row
    is judged as it is: an injected change skips the magnitude checks, identical runs fail."""
    global RANKSCOPE
    RANKSCOPE = rankscope_bin
    out = tmp_path_factory.mktemp("compare_pairs")
    record(out, ONE_RANK_PAIRS + ["ranks"])
    for _ in range(2):
        again = [p for p in INJECTED if within_noise(out, p)]
        if not within_noise(out, "same"):
            again.append("same")
        if not again:
            break
        record(out, again)
    return out


def compare(run_rankscope, base, new, *args, check=True):
    proc = run_rankscope("compare", base, new, "--json", "-", *args, check=check)
    if not check:
        return proc
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def step_durations(path):
    """ProfilerStep#N -> duration (ns, from the trace's own µs) of a trace file, read with Python."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    return {int(e["name"].split("#")[1]): round(float(e["dur"]) * 1000) for e in events
            if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")}


def measured_delta(rank, base_file, new_file):
    """The step-time delta measured from the traces themselves, over the steps the report kept."""
    means = []
    for path, side in ((base_file, "base"), (new_file, "new")):
        steps = step_durations(path)
        kept = [d for n, d in steps.items() if n not in rank["steps"][side]["dropped"]]
        assert len(kept) == rank["steps"][side]["kept"]
        means.append(statistics.fmean(kept))
    return means[1] - means[0]


def cpu_wait_delta(rank, pair_dir):
    """NEW's mean run-queue wait per kept step minus BASE's (ns; 0 when the kernel has no
    schedstat): time the training thread was runnable but not running."""
    truth = json.loads((pair_dir / "truth.json").read_text())
    wait = truth.get("runqueue_wait_ns") or {}
    if not wait:
        return 0.0
    means = []
    for side in ("base", "new"):
        kept = [wait[str(n)] for n in truth[f"{side}_steps"]
                if n not in rank["steps"][side]["dropped"] and str(n) in wait]
        means.append(statistics.fmean(kept) if kept else 0.0)
    return means[1] - means[0]


def check_additivity(rank):
    """The differences plus the step-to-step variation add up to the step delta (ns rounding)."""
    total = sum(d["delta_ns"] for d in rank["differences"]) + rank["variation_ns"]
    assert abs(total - rank["delta_ns"]) <= len(rank["differences"]) + 2


INJECTED = {
    # pair: (cause, a text the subject / before / after must contain)
    "wider": ("shapes", "4096"),
    "extra_op": ("added", "aten::matmul"),
    "batch": ("shapes", "[256,"),
    "slow_data": ("same_work", "enumerate(DataLoader)"),
    "bf16": ("dtypes", "BFloat16"),
    "ranks": ("communication", "all_reduce"),
}


@pytest.mark.parametrize("pair", sorted(INJECTED))
def test_the_injected_change_ranks_first_and_explains_the_delta(pairs, run_rankscope, pair):
    report = compare(run_rankscope, pairs / pair / "base", pairs / pair / "new")
    rank = report["ranks"][0]
    assert rank["new_rank"] == 0 and rank["detailed"]
    measured = measured_delta(rank, pairs / pair / "base/rank0.pt.trace.json.gz", pairs / pair / "new/rank0.pt.trace.json.gz")
    assert abs(rank["delta_ns"] - measured) <= 2  # the report's delta is the traces' delta
    noise = rank["noise_ns"]
    check_additivity(rank)

    cause, text = INJECTED[pair]
    injected = [d for d in rank["differences"] if d["cause"] == cause and
                text in d["subject"] + " " + d["before"] + " " + d["after"]]
    assert injected, f"{pair}: no {cause} difference naming {text}: {[d['text'] for d in rank['differences'][:5]]}"
    change = injected[0]
    if abs(measured) <= noise:
        # A live run on a loaded machine: the load swallowed the change this time. What the runs
        # did (an added operator, other shapes or dtypes) is still named, above; how much it cost
        # cannot be judged from this pair, so the magnitude checks below do not apply.
        return
    top = rank["differences"][0]
    waiting = abs(cpu_wait_delta(rank, pairs / pair))
    # First, unless another difference is larger only by less than the noise band (and the CPU
    # wait, which lands in random operators).
    assert abs(top["delta_ns"]) - abs(change["delta_ns"]) <= noise + waiting, (pair, top["text"], change["text"])
    assert abs(change["delta_ns"] - measured) <= COST_TOLERANCE * abs(measured) + noise + waiting, \
        (pair, change["text"], measured, noise, waiting)
    # A finding says it, in the shared findings type.
    kind = "compare_regression" if change["delta_ns"] > 0 else "compare_improvement"
    if change["beyond_noise"]:
        assert any(f["kind"] == kind and f["subject"]["kind"] == cause for f in report["findings"])


def test_identical_runs_differ_by_no_more_than_noise(pairs, run_rankscope):
    report = compare(run_rankscope, pairs / "same/base", pairs / "same/new")
    rank = report["ranks"][0]
    check_additivity(rank)
    assert not rank["beyond_noise"], (rank["delta_ns"], rank["noise_ns"])
    assert not [d["text"] for d in rank["differences"] if d["beyond_noise"]]
    assert report["findings"] == []
    assert rank["aligned_share"] > 0.95  # the same operators
    kinds = {o["kind"] for o in rank["observations"]}
    assert "no_difference" in kinds and "no_gpu" in kinds


def test_a_different_number_of_ranks_is_compared_as_jobs(pairs, run_rankscope):
    proc = run_rankscope("compare", pairs / "ranks/base", pairs / "ranks/new", "--json", "-")
    report = json.loads(proc.stdout)
    assert report["base"]["ranks"] == [0] and report["new"]["ranks"] == [0, 1]
    assert [r["new_rank"] for r in report["ranks"]] == [0]
    assert "BASE has 1 rank(s) (0) and NEW has 2 (0-1)" in proc.stderr
    job = report["job"]
    assert job["new_slowest_rank"] in (0, 1)
    assert job["base_median_step_ns"] == report["ranks"][0]["steps"]["base"]["mean_ns"]
    comm = {c["op"]: c for c in report["ranks"][0]["communication"]}
    assert comm["all_reduce"]["new_exposed_ns"] > comm["all_reduce"]["base_exposed_ns"]


def test_terminal_report_leads_with_the_delta_and_the_ranked_list(pairs, run_rankscope):
    text = run_rankscope("compare", pairs / "extra_op/base", pairs / "extra_op/new", "--color", "never").stdout
    lines = text.splitlines()
    assert lines[0].startswith("rankscope compare")
    assert lines[2].startswith("Step time (rank 0)") and "delta +" in lines[3]
    first = next(line for line in lines if line.strip().startswith("1 "))
    assert "added aten::matmul" in first
    assert "the step-time delta (explained" in text
    assert text.index("What changed") < text.index("Overall breakdown") < text.index("Operators")


def terminal_amounts(text):
    """The amounts of the 'What changed' block of a terminal report: the listed differences and
    the lines after them (ns), and the delta of its '=' line."""
    unit = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}
    block = text[text.index("What changed"):]
    amounts, delta = [], None
    for line in block.splitlines()[1:]:
        m = re.match(r"^\s*(=|\d+)?\s+([+-]?[\d.]+) (s|ms|us|ns)\s", line)
        if not m:
            continue
        value = float(m.group(2)) * unit[m.group(3)]
        if m.group(1) == "=":
            delta = value
            break
        amounts.append(value)
    return amounts, delta


def test_terminal_lines_add_up_to_the_delta(shared_dir, run_rankscope):
    truth = REPO / "tests/data/cluster/ground_truth"
    hta = shared_dir / "traces/hta"
    for args in ((truth / "clean", truth / "forward", "--rank", 2),
                 (hta / "trace_diff_control_a100/control.json.gz", hta / "trace_diff_test_v100/test.json.gz")):
        text = run_rankscope("compare", *args, "--color", "never").stdout
        amounts, delta = terminal_amounts(text)
        assert delta is not None and len(amounts) >= 3, text
        # Each printed with 3-4 significant digits.
        assert abs(sum(amounts) - delta) <= 0.002 * abs(delta) + 0.01 * sum(abs(a) for a in amounts), (amounts, delta)


def read_xlsx(path):
    """{sheet: [[cell text or number, style index], ...] rows} and the fill colour of each style."""
    z = zipfile.ZipFile(path)
    ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    rel = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    shared = [si.findtext(".//m:t", default="", namespaces=ns)
              for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", ns)]
    rels = {r.get("Id"): r.get("Target") for r in ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))}
    styles = ET.fromstring(z.read("xl/styles.xml"))
    fills = [f.find(".//m:fgColor", ns) for f in styles.find("m:fills", ns)]
    fill_of_style = [fills[int(x.get("fillId", 0))] for x in styles.find("m:cellXfs", ns)]
    colour = [f.get("rgb") if f is not None else None for f in fill_of_style]
    sheets = {}
    for s in ET.fromstring(z.read("xl/workbook.xml")).find("m:sheets", ns):
        data = ET.fromstring(z.read("xl/" + rels[s.get(rel)]))
        rows = []
        for row in data.find("m:sheetData", ns):
            cells = []
            for c in row:
                v = c.findtext("m:v", namespaces=ns)
                value = shared[int(v)] if c.get("t") == "s" else (float(v) if v is not None else None)
                cells.append((value, colour[int(c.get("s", 0))]))
            rows.append(cells)
        sheets[s.get("name")] = rows
    return sheets


def test_xlsx_and_csv_hold_every_comparison(pairs, run_rankscope, tmp_path):
    xlsx, csv_dir = tmp_path / "c.xlsx", tmp_path / "csv"
    report = json.loads(run_rankscope("compare", pairs / "slow_data/base", pairs / "slow_data/new", "--json", "-",
                                      "--xlsx", xlsx, "--csv", csv_dir).stdout)
    rank = report["ranks"][0]
    sheets = read_xlsx(xlsx)
    for name in ("differences", "overall", "operators", "operator_stats", "modules", "kernels", "kernel_classes",
                 "communication", "memory", "ranks", "findings"):
        assert name in sheets
        assert (csv_dir / f"{name}.csv").exists()
    # The overall sheet: the step row's DIFF (ms) is the JSON delta, and red (a regression).
    header = [v for v, _ in sheets["overall"][1]]
    step = next(r for r in sheets["overall"][2:] if r[2][0] == "step")
    diff_col = header.index("DIFF time (ms)")
    assert step[diff_col][0] == pytest.approx(rank["delta_ns"] / 1e6, abs=1e-3)
    assert step[diff_col][1] == "FFFFC7CE"
    # CSV for scripts: the differences add up to the delta, in integer ns.
    with open(csv_dir / "differences.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(int(r["diff_cost_ns"]) for r in rows)
    assert abs(total - rank["delta_ns"]) <= len(rows) + 2
    assert rows[0]["cause"] == rank["differences"][0]["cause"]
    # Memory: both runs were profiled with profile_memory=True.
    assert rank["has_memory"] and rank["memory"] and rank["memory_peaks"][0]["device"] == "CPU"
    # Modules from the Python stacks, with their source lines.
    assert any(m["name"].startswith("Linear") and "linear.py" in m["source"] for m in rank["modules"])


def test_use_input_shapes_and_op_map_change_the_alignment(pairs, run_rankscope):
    plain = compare(run_rankscope, pairs / "batch/base", pairs / "batch/new")["ranks"][0]
    strict = compare(run_rankscope, pairs / "batch/base", pairs / "batch/new", "--use-input-shapes")["ranks"][0]
    # By name, the batch change is reshaped operators; with shapes, the same operators are
    # added and removed instead.
    assert any(o["status"] == "shapes" for o in plain["operators"])
    assert not any(o["status"] == "shapes" for o in strict["operators"])
    assert any(o["status"] == "added" for o in strict["operators"])
    renamed = compare(run_rankscope, pairs / "extra_op/base", pairs / "extra_op/new",
                      "--op-map", "aten::linear=aten::not_linear")["ranks"][0]
    assert renamed["aligned_share"] < plain["aligned_share"]


# ---- recorded traces


def test_hta_trace_diff_pair_compares_across_hardware(shared_dir, run_rankscope):
    hta = shared_dir / "traces/hta"
    proc = run_rankscope("compare", hta / "trace_diff_control_a100/control.json.gz",
                         hta / "trace_diff_test_v100/test.json.gz", "--json", "-")
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    assert "comparing BASE rank 3 with NEW rank 1" in proc.stderr
    rank = report["ranks"][0]
    assert (rank["base_rank"], rank["new_rank"]) == (3, 1)
    assert rank["steps"]["base"]["kept"] == 6 and rank["steps"]["new"]["kept"] == 6
    check_additivity(rank)
    hardware = [o for o in rank["observations"] if o["kind"] == "different_hardware"]
    assert hardware and "A100" in hardware[0]["base"] and "V100" in hardware[0]["new"]
    # Kernel names differ (cutlass sm80 vs volta sgemm): compared by class, side by side.
    gemm = next(k for k in rank["kernel_classes"] if k["class"] == "gemm")
    assert "cutlass_80" in gemm["base_top"] and "volta_sgemm" in gemm["new_top"]
    kernels = {k["name"]: k for k in rank["kernels"]}
    assert all(kernels[n]["status"] == "removed" for n in kernels if "cutlass_80" in n)
    # NEW runs the model through torch.compile: its compiled graph is the largest change.
    assert rank["differences"][0]["cause"] == "added"
    assert "CompiledFunction" in rank["differences"][0]["subject"]


def test_h100_extra_gemm_is_found_on_rank_0(shared_dir, run_rankscope):
    h100 = shared_dir / "traces/gpu_h100"
    report = compare(run_rankscope, h100 / "devClean", h100 / "devKernel", "--rank", "0")
    rank = report["ranks"][0]
    check_additivity(rank)
    top = rank["differences"][0]
    assert top["cause"] == "added" and top["subject"].startswith("aten::matmul") and top["new_count"] == 2
    gemm = next(r for r in rank["overall"] if r["key"] == "gpu.gemm")
    assert gemm["new_count"] > gemm["base_count"]


def test_bad_inputs_give_a_clear_message(shared_dir, run_rankscope, tmp_path):
    traces = shared_dir / "traces"
    no_steps = traces / "tracelens/mi210_gpu_only/gpu_only_trace.json.gz"
    proc = compare(run_rankscope, no_steps, no_steps, check=False)
    assert proc.returncode == 1
    assert "no profiler steps" in proc.stderr and "gpu_only_trace.json.gz" in proc.stderr

    # Three ranks against one other rank: nothing to pair.
    proc = compare(run_rankscope, traces / "gpu_h100/devClean", traces / "hta/trace_diff_control_a100", check=False)
    assert proc.returncode == 1
    assert "no rank in common: BASE has ranks 0-2 and NEW has ranks 3" in proc.stderr

    proc = compare(run_rankscope, traces / "gpu_h100/devClean", traces / "gpu_h100/devKernel", "--rank", "5",
                   check=False)
    assert proc.returncode == 1 and "--rank 5: in neither run (BASE has ranks 0-2, NEW has ranks 0-2)" in proc.stderr

    proc = run_rankscope("compare", traces / "gpu_h100/devClean", check=False)
    assert proc.returncode == 1 and "compare needs two runs" in proc.stderr

    # Different models: a ResNet-50 against a recommendation model.
    report = compare(run_rankscope, traces / "kineto/resnet50_workers0", traces / "hta/trace_diff_control_a100")
    obs = {o["kind"]: o for o in report["ranks"][0]["observations"]}
    assert "few_operators_aligned" in obs and obs["few_operators_aligned"]["value"] < 0.5
    assert "different models" in obs["few_operators_aligned"]["text"]


def test_amd_against_nvidia_compares_kernel_sets_and_says_the_models_differ(shared_dir, run_rankscope):
    """No same-model AMD/NVIDIA pair is in the corpus (docs/compare.md "Across hardware"): HTA's
    MI250 toy (Linear, ReLU, MSE, SGD; ROCm 6.2) against its A100 recommendation model. The
    kernel sets stand side by side by class, the vendors are named, and the report says the
    models differ instead of ranking them as a regression of one into the other."""
    traces = shared_dir / "traces"
    report = compare(run_rankscope, traces / "hta/amd_mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
                     traces / "hta/trace_diff_control_a100/control.json.gz")
    rank = report["ranks"][0]
    check_additivity(rank)
    obs = {o["kind"]: o for o in rank["observations"]}
    hardware = obs["different_hardware"]
    assert hardware["value"] == 1 and "different GPU vendors" in hardware["text"]
    assert "AMD" in hardware["base"] and "NVIDIA" in hardware["new"]
    assert obs["few_operators_aligned"]["value"] < 0.5 and "different models" in obs["few_operators_aligned"]["text"]
    classes = {k["class"]: k for k in rank["kernel_classes"]}
    assert classes["gemm"]["base_top"].startswith("Cijk_")  # Tensile (rocBLAS / hipBLASLt)
    assert "cutlass" in classes["gemm"]["new_top"]
    # Operators are aligned by name: the toy's aten::linear is one of BASE's, listed as removed.
    assert any(o["name"] == "aten::linear" and o["status"] == "removed" for o in rank["operators"])


def test_one_step_a_side_is_said(shared_dir, run_rankscope):
    hta = shared_dir / "traces/hta"
    proc = run_rankscope("compare", hta / "cuda_event_sync_a100", hta / "triton_a100", "--json", "-")
    rank = json.loads(proc.stdout)["ranks"][0]
    assert rank["noise_ns"] == 0
    assert "BASE has 1 step(s) to compare: with fewer than two there is no step-to-step variation" in proc.stderr
    assert any("NEW has 1 step(s)" in w for w in rank["warnings"])

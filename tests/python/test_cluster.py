"""Cluster diagnosis end to end (docs/cluster.md).

Ground truth with real PyTorch: one 6-rank DDP job (CPU, gloo, torchrun) recorded a clean run and
four scenarios with one injected fault each (workloads/ground_truth.py); the recording is
tests/data/cluster/ground_truth. rankscope must name the right kind of problem, rank(s), host,
phase (and function where there is one), estimate a cost within COST_TOLERANCE of the injected
delay per step, and find nothing in the clean run. These assertions are exact, on a recording:
a verdict must never depend on how busy the machine is. A live run of the same job checks what
holds however loaded the machine is (test_live_ground_truth_run).

Semi-synthetic GPU sets (tools/make_synthetic_ranks.py, from the real A100 trace nccl_data, and
from the V100 trace of the accuracy benchmark): copies per rank with known clock offsets and a known
kernel slowed on known ranks (or followed by extra work of their own). The answers are exact:
offsets to the nanosecond, the kernel and rank(s), the cost equal to the injected delay (within
15 % where the V100 host runs ahead of its GPU: the replay's cost, cluster/gpu_work_cost.h).
"""

import gzip
import json
import os
import statistics
import pathlib
import subprocess
import sys

import jsonschema
import pytest

import recording

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "docs" / "report-schema.json").read_text())
MS = 1_000_000

# 6 processes share 2 CPU cores in CI: the healthy ranks' local times move by a few ms from run to
# run, and the next-slowest of them sets the pace in the what-if (docs/cluster.md, "What-if").
COST_TOLERANCE = 0.30

HOSTS = "0-1 node-a\n2-3 node-b\n4-5 node-c\n"
SCENARIOS = {
    "clean": "none:-:0",
    "data": "slow-data:1:80",          # rank 1's DataLoader sleeps 80 ms per batch
    "forward": "slow-forward:2:80",    # rank 2 computes 80 ms more in forward
    "collective": "slow-collective:3:40",  # rank 3 sleeps 40 ms before each of its all-reduces
    "node": "slow-forward:4,5:80",     # both ranks of node-c compute 80 ms more in forward
}


def analyze(run_rankscope, *args):
    report = json.loads(run_rankscope("analyze", "--json", "-", *args).stdout)
    jsonschema.validate(report, SCHEMA)
    return report


RECORDED = REPO / "tests" / "data" / "cluster" / "ground_truth"


@pytest.fixture(scope="module")
def ground_truth():
    """The recorded job (workloads/ground_truth.py with SCENARIOS, 6 ranks; hosts.txt = HOSTS)."""
    truth = json.loads((RECORDED / "truth.json").read_text())
    assert {s["name"]: f"{s['kind']}:{','.join(map(str, s['ranks'])) or '-'}:{s['ms']:g}"
            for s in truth["scenarios"]} == SCENARIOS
    assert (RECORDED / "hosts.txt").read_text() == HOSTS
    return RECORDED


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    """The same job, live: a clean run and the forward fault."""
    out = tmp_path_factory.mktemp("ground_truth_live")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=6",
           str(REPO / "workloads/ground_truth.py"), "--out", str(out)]
    for name in ("clean", "forward"):
        cmd += ["--scenario", f"{name}:{SCENARIOS[name]}"]
    recording.record(cmd, env=env, timeout=600, clean=[out / name for name in ("clean", "forward")])
    (out / "hosts.txt").write_text(HOSTS)
    return out


def diagnose(ground_truth, run_rankscope, scenario):
    report = analyze(run_rankscope, ground_truth / scenario, "--hosts", ground_truth / "hosts.txt")
    assert report["errors"] == [] and len(report["ranks"]) == 6
    return report


def check_cluster_basics(report, buckets):
    cluster = report["cluster"]
    assert cluster["unit"] == "step" and cluster["options"]["outlier_k"] == 3
    assert cluster["options"]["outlier_margin"] == 0.10 and cluster["options"]["hosts_file"].endswith("hosts.txt")
    # gloo spans of every rank matched: every DDP bucket of every step, each instance with all 6
    # ranks (the job counted its buckets: truth.json).
    coll = cluster["collectives"]
    (group,) = coll["groups"]
    assert group["match"] == "step_order" and group["members"] == list(range(6))
    steps = cluster["ranks"][0]["steps"]
    assert coll["matched"] == coll["complete"] == group["complete"] >= buckets * steps
    assert all(r["collectives"] == coll["complete"] for r in cluster["ranks"])
    # Three pretend hosts share one real clock: the estimated offsets are within the gloo spread.
    assert [d["host"] for d in cluster["clock"]["domains"]] == ["node-a", "node-b", "node-c"]
    for d in cluster["clock"]["domains"]:
        assert d["estimated"] and abs(d["offset_ns"]) < 20 * MS
    # Local time: the median over the rank's steps of duration minus exposed communication.
    for r, c in zip(report["ranks"], cluster["ranks"]):
        assert c["rank"] == r["rank"] and c["steps"] == len(r["steps"])
        local = statistics.median(s["duration_ns"] - s["comm_exposed_ns"] for s in r["steps"])
        assert abs(c["local_ns"] - local) <= 1
        assert abs(c["step_ns"] - statistics.median(s["duration_ns"] for s in r["steps"])) <= 1
    return cluster


def buckets(recording):
    return json.loads((recording / "truth.json").read_text())["buckets_per_step"]


def injected_per_step(report, scenario, rank):
    kind, _, ms = SCENARIOS[scenario].split(":")
    if kind != "slow-collective":
        return float(ms) * MS
    # The hook sleeps before every all-reduce the rank launches: one per DDP bucket.
    (r,) = [x for x in report["ranks"] if x["rank"] == rank]
    calls_per_step = len(r["communication"]["instances"]) / len(r["steps"])
    return float(ms) * MS * calls_per_step


def check_cost(finding, injected):
    cost = finding["cost"]
    assert abs(cost["saving_ns"] - injected) <= COST_TOLERANCE * injected, (cost["saving_ns"], injected)
    # Each of the three is rounded to the nanosecond on its own.
    assert abs(cost["estimated_step_ns"] - (cost["step_ns"] - cost["saving_ns"])) <= 1


def evidence(finding, kind):
    return [e for e in finding["evidence"] if e["kind"] == kind]


def phase_of(finding):
    """The abnormal phase a finding names: (phase id, rank), or None."""
    phases = evidence(finding, "phase")
    return (phases[0]["subject"], phases[0]["rank"]) if phases else None


def test_clean_run_raises_no_finding(ground_truth, run_rankscope):
    report = diagnose(ground_truth, run_rankscope, "clean")
    cluster = check_cluster_basics(report, buckets(ground_truth))
    assert [f for f in report["findings"] if f["kind"] in ("slow_rank", "slow_node")] == []
    assert report["findings"] == []
    assert not any(r["slow"] for r in cluster["ranks"])
    assert cluster["what_if"]["saving_ns"] == 0


@pytest.mark.parametrize("scenario,rank,phase", [("data", 1, "data_loading"), ("forward", 2, "forward"),
                                                 ("collective", 3, None)])
def test_one_slow_rank_is_named_with_its_phase_and_cost(ground_truth, run_rankscope, scenario, rank, phase):
    report = diagnose(ground_truth, run_rankscope, scenario)
    cluster = check_cluster_basics(report, buckets(ground_truth))
    top = report["findings"][0]
    assert top["kind"] == "slow_rank" and top["ranks"] == [rank], top["title"]
    assert [r["rank"] for r in cluster["ranks"] if r["slow"]] == [rank]
    # Its host partner is healthy: a slow rank, not a slow node.
    assert top["host"] == HOSTS.splitlines()[rank // 2].split()[1]
    assert any("same host" in e["text"] and "not slow" in e["text"] for e in top["evidence"])
    # It is the one the others wait for.
    me = cluster["ranks"][rank]
    assert me["last_arriver_votes"] >= 0.75 * me["collectives"]
    assert me["late_sum_ns"] / me["steps"] >= 0.25 * me["local_excess_ns"] > 0
    check_cost(top, injected_per_step(report, scenario, rank))
    if phase:
        assert phase_of(top) == (phase, rank)
    else:
        # The sleep sits in DDP's comm hook, which autograd runs between backward ops.
        assert phase_of(top)[0] in ("backward", "other")
    if scenario == "forward":
        # The injected matmuls are the abnormal functions, and the next step points at them.
        names = {e["subject"] for e in evidence(top, "function")}
        assert names & {"aten::matmul", "aten::mm", "aten::tanh"}, names
        assert "aten::" in top["next"]["text"]
    if scenario == "data":
        assert "input pipeline" in top["next"]["text"]
    assert len(report["findings"]) == 1 or report["findings"][1]["cost"]["saving_ns"] <= top["cost"]["saving_ns"]


def test_slow_node_is_one_finding_for_its_ranks(ground_truth, run_rankscope):
    report = diagnose(ground_truth, run_rankscope, "node")
    cluster = check_cluster_basics(report, buckets(ground_truth))
    top = report["findings"][0]
    assert top["kind"] == "slow_node" and top["host"] == "node-c" and top["ranks"] == [4, 5], top["title"]
    assert phase_of(top)[0] == "forward"
    check_cost(top, injected_per_step(report, "node", 4))
    assert {h["host"]: h["slow_ranks"] for h in cluster["hosts"]} == {"node-a": [], "node-b": [], "node-c": [4, 5]}
    assert not [f for f in report["findings"] if f["kind"] == "slow_rank"]
    # Without the hosts file every rank is its own host: two slow ranks, same total cost.
    plain = analyze(run_rankscope, ground_truth / "node")
    kinds = sorted((f["kind"], f["ranks"]) for f in plain["findings"] if f["kind"] in ("slow_rank", "slow_node"))
    assert kinds == [("slow_rank", [4]), ("slow_rank", [5])]
    assert plain["cluster"]["what_if"]["saving_ns"] == report["cluster"]["what_if"]["saving_ns"]


def test_terminal_report_names_the_straggler(ground_truth, run_rankscope):
    text = run_rankscope("analyze", ground_truth / "forward", "--hosts", ground_truth / "hosts.txt",
                         "--color", "never").stdout
    assert "Cluster diagnosis" in text and "rank 2 is a straggler" in text and "mostly in forward" in text
    assert "cost " in text and "if fixed" in text and "What-if" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    # --rank prints one rank in full; the JSON still carries the whole job's diagnosis.
    one = analyze(run_rankscope, ground_truth / "forward", "--rank", "0")
    assert [r["rank"] for r in one["ranks"]] == [0] and one["findings"][0]["ranks"] == [2]


def test_options_change_the_verdict_and_bad_hosts_files_are_refused(ground_truth, run_rankscope, tmp_path):
    # A margin of 10x the median hides the straggler; the report says which was used. What is
    # left is the injected function itself, abnormal on rank 2 (its peers never run it).
    report = analyze(run_rankscope, ground_truth / "forward", "--outlier-margin", "10")
    assert report["cluster"]["options"]["outlier_margin"] == 10
    assert not any(r["slow"] for r in report["cluster"]["ranks"])
    assert not [f for f in report["findings"] if f["kind"] in ("slow_rank", "slow_node")]
    top = report["findings"][0]
    assert top["kind"] in ("slow_function", "extra_work") and 2 in top["ranks"], top["title"]
    assert top["subject"]["name"] in ("aten::matmul", "aten::mm", "aten::tanh") or "burn_cpu" in top["subject"]["name"]
    partial = tmp_path / "hosts.txt"
    partial.write_text("0-4 node-a\n")
    proc = run_rankscope("analyze", ground_truth / "forward", "--hosts", partial, check=False)
    assert proc.returncode == 1 and "does not say where rank 5 runs" in proc.stderr
    proc = run_rankscope("analyze", ground_truth / "forward", "--hosts", tmp_path / "nope", check=False)
    assert proc.returncode == 1 and "cannot read the hosts file" in proc.stderr


def test_live_ground_truth_run(live_run, run_rankscope):
    # Only what holds however busy the machine is: every rank's trace reads, every gloo bucket
    # all-reduce is matched on all 6 ranks, the three pretend hosts get clocks, and the rank
    # that computes 80 ms more per step (about as long as the whole step) has the largest local
    # time. Which other functions look slower on a loaded machine is not asserted here.
    for scenario in ("clean", "forward"):
        report = diagnose(live_run, run_rankscope, scenario)
        cluster = check_cluster_basics(report, buckets(live_run))
        if scenario == "forward":
            local = {r["rank"]: r["local_ns"] for r in cluster["ranks"]}
            assert max(local, key=local.get) == 2, local


# --- semi-synthetic GPU sets -------------------------------------------------------------------

SOURCE = "traces/hta/nccl_2rank_a100/nccl_data.json.gz"
KERNEL = "bn_bw_1C11_kernel_new<float, float, float2, 128"  # cudnn batch-norm backward, 4 per step


def make_set(shared_dir, out, *args):
    truth = out.parent / (out.name + ".truth.json")
    subprocess.run([sys.executable, str(REPO / "tools/make_synthetic_ranks.py"), str(shared_dir / SOURCE), str(out),
                    "--truth", str(truth), *map(str, args)], check=True, capture_output=True, timeout=600)
    return json.loads(truth.read_text())


def check_offsets(report, truth):
    offsets = {r["rank"]: r["clock_offset_ns"] for r in report["cluster"]["ranks"]}
    assert offsets == {int(r): o for r, o in truth["clock_offset_ns"].items()}
    for d in report["cluster"]["clock"]["domains"]:
        assert d["estimated"] and d["spread_ns"] == 0


def check_kernel(function, truth, rank):
    """`function`: a finding's evidence item of kind "function"."""
    assert function["subject_kind"] == "kernel" and function["rank"] == rank
    assert function["subject"] in truth["kernel"]["names"]
    grid, block = truth["kernel"]["grid"], truth["kernel"]["block"]
    assert function["detail"] == f"[{','.join(map(str, grid))}]|[{','.join(map(str, block))}]"
    assert function["values"]["excess_ns"] == pytest.approx(truth["injected_per_step_ns"], rel=0.01)


def host_bound_cost(finding, truth):
    """The A100 DDP trace's GPU is idle 170 of every 222 ms and its host waits for it once (a copy
    in the first step): a kernel 40 ms/step slower on some ranks delays the job 12 ms/step in the
    generator's model. The per-step estimate follows the GPUs' collectives (33 ms late each step);
    the hosts' waits bound it (cluster/host_wait_bound.h)."""
    assert truth["injected_per_step_ns"] == 40 * MS and truth["saving_per_step_ns"] == pytest.approx(12 * MS, rel=0.02)
    what_if = {e["detail"]: e["values"]["saving_ns"] for e in evidence(finding, "what_if")}
    assert what_if["per_step"] > 30 * MS
    assert finding["cost"]["saving_ns"] == what_if["host_wait_bound"]
    assert finding["cost"]["saving_ns"] == pytest.approx(truth["saving_per_step_ns"], rel=0.1)


def test_synthetic_slow_gpu_rank_with_two_host_clocks(shared_dir, run_rankscope, tmp_path):
    truth = make_set(shared_dir, tmp_path / "set", "--ranks", 8, "--ranks-per-host", 4,
                     "--clock-offsets-us", "0,2500.125", "--slow-kernel", KERNEL, "--slow-grid", "256,1,1",
                     "--slow-ranks", 5, "--slow-extra-us", 10000)
    assert truth["slowed_instances_per_step"] == 4
    report = analyze(run_rankscope, tmp_path / "set")
    check_offsets(report, truth)
    (finding,) = report["findings"]
    assert finding["kind"] == "slow_rank" and finding["ranks"] == [5] and finding["host"] == "node01"
    check_kernel(evidence(finding, "function")[0], truth, 5)
    host_bound_cost(finding, truth)
    # The others waited at the collectives that followed the slowed kernels, for rank 5 only.
    cluster = report["cluster"]
    assert cluster["ranks"][5]["last_arriver_votes"] > 0
    assert all(r["last_arriver_votes"] == 0 for r in cluster["ranks"] if r["rank"] != 5)
    assert cluster["collectives"]["max_skew_ns"] == pytest.approx(33.1 * MS, rel=0.02)
    assert cluster["gpu_utilization"]["ranks"] == 8


def test_synthetic_slow_node(shared_dir, run_rankscope, tmp_path):
    truth = make_set(shared_dir, tmp_path / "set", "--ranks", 8, "--ranks-per-host", 2,
                     "--clock-offsets-us", "0,-1700.5,3200.001,250", "--slow-kernel", KERNEL, "--slow-grid", "256,1,1",
                     "--slow-ranks", "6,7", "--slow-extra-us", 10000)
    report = analyze(run_rankscope, tmp_path / "set")
    check_offsets(report, truth)
    (finding,) = report["findings"]
    assert finding["kind"] == "slow_node" and finding["host"] == "node03" and finding["ranks"] == [6, 7]
    functions = evidence(finding, "function")
    assert sorted(f["rank"] for f in functions if f["subject_kind"] == "kernel") == [6, 7]
    for f in functions:
        check_kernel(f, truth, f["rank"])
    host_bound_cost(finding, truth)


def test_synthetic_slow_kernel_below_the_straggler_margin(shared_dir, run_rankscope, tmp_path):
    # 2 ms more per instance, 8 ms per step: 4 % of rank 3's local time, under the 10 % margin for
    # a slow rank. One clock per rank. The GPU's idle time absorbs it (the generator's model: 0.1
    # ms/step): the kernel is in the table on rank 3, and the finding costs nothing.
    truth = make_set(shared_dir, tmp_path / "set", "--ranks", 6, "--ranks-per-host", 0,
                     "--clock-offsets-us", "0,-1700.5,3200.001,250,-42.042,77", "--slow-kernel", KERNEL,
                     "--slow-grid", "256,1,1", "--slow-ranks", 3, "--slow-extra-us", 2000)
    assert truth["saving_per_step_ns"] < 0.5 * MS
    report = analyze(run_rankscope, tmp_path / "set")
    check_offsets(report, truth)
    assert [d["host"] for d in report["cluster"]["clock"]["domains"]] == [f"rank {r}" for r in range(6)]
    (finding,) = report["findings"]
    assert finding["ranks"] == [3] and finding["severity"] == "info" and finding["cost"]["saving_ns"] == 0
    (row,) = [f for f in report["cluster"]["functions"] if f["kind"] == "kernel"]
    assert row["rank"] == 3 and row["name"].startswith("void cudnn::bn_bw_1C11_kernel_new")
    assert row["excess_ns"] == pytest.approx(8 * MS, rel=0.01)
    assert not any(r["slow"] for r in report["cluster"]["ranks"])


V100 = "traces/hta/trace_diff_test_v100/test.json.gz"  # host runs ahead of its GPU; 36 GEMMs in 13 shapes per step
GEMM = "volta_sgemm_128x32_nt"


def make_v100_set(shared_dir, out, *args):
    """The accuracy benchmark's semi-synthetic sets: 8 ranks, 2 per host, each on its own GPU."""
    truth = out.parent / (out.name + ".truth.json")
    subprocess.run([sys.executable, str(REPO / "tools/make_synthetic_ranks.py"), str(shared_dir / V100), str(out),
                    "--truth", str(truth), "--ranks", "8", "--ranks-per-host", "2",
                    "--clock-offsets-us", "0,1500.25,-800.5,42", *map(str, args)],
                   check=True, capture_output=True, timeout=600)
    return json.loads(truth.read_text())


def replayed_gpu_cost(top, truth):
    """The top finding costed by the replay (cluster/gpu_work_cost.h): what the generator's model
    saves (the injected delay less what idle GPU time hides of it); its per-step estimate, from the
    hosts' steps, is what it had before: over 10 % low."""
    what_if = {e["detail"]: e["values"]["saving_ns"] for e in evidence(top, "what_if")}
    assert top["cost"]["saving_ns"] == what_if["replay_excess"]
    assert top["cost"]["saving_ns"] == pytest.approx(truth["saving_per_step_ns"], rel=0.05)
    assert what_if["per_step"] < 0.9 * truth["saving_per_step_ns"]


def test_synthetic_kernel_slowed_over_its_shapes_is_costed_where_its_gpu_delay_shows(shared_dir, run_rankscope,
                                                                                      tmp_path):
    """A GEMM 3.5x slower in all 13 launch shapes on rank 3 (the accuracy benchmark's shapes-10%):
    costed by the replay, what it delays the job by (10.6 of its 11.6 ms: idle GPU time absorbs the
    rest). Before: 9.0 ms/step by the host's steps, 15 % low."""
    truth = make_v100_set(shared_dir, tmp_path / "set", "--slow-kernel", GEMM, "--slow-factor", 3.5,
                          "--slow-ranks", 3)
    injected = truth["injected_per_step_ns"]
    assert truth["kernel"]["shapes"] == 13 and injected == pytest.approx(11.6 * MS, rel=0.01)
    report = analyze(run_rankscope, tmp_path / "set")
    top = report["findings"][0]
    assert top["kind"] == "slow_function" and top["ranks"] == [3]
    assert top["subject"] == {"kind": "kernel", "name": GEMM, "detail": ""}
    assert "is slower on rank 3 than on the other ranks" in top["title"]
    (function,) = [e for e in evidence(top, "function") if e["rank"] == 3]
    assert function["values"]["excess_ns"] == pytest.approx(injected, rel=0.01)
    replayed_gpu_cost(top, truth)


def test_synthetic_extra_gpu_work_on_one_rank_is_named_as_its_own_and_costed(shared_dir, run_rankscope, tmp_path):
    """Issue 11 #2 on GPUs of their own: rank 2 runs an extra GEMM after each of its 36 GEMMs per
    step (+5.7 ms/step, 5 % of the step: under the straggler margin), a kernel no other rank runs.
    It is the finding, told as work of its own (not "slower"), costed by the replay."""
    truth = make_v100_set(shared_dir, tmp_path / "set", "--slow-kernel", GEMM, "--slow-factor", 2.23,
                          "--slow-ranks", 2, "--extra-kernel", "sm70_xmma_gemm_f32f32_extra")
    injected = truth["injected_per_step_ns"]
    assert truth["kernel"]["names"] == ["sm70_xmma_gemm_f32f32_extra"]
    report = analyze(run_rankscope, tmp_path / "set")
    top = report["findings"][0]
    assert top["kind"] == "slow_function" and top["ranks"] == [2]
    assert top["subject"] == {"kind": "kernel", "name": "sm70_xmma_gemm_f32f32_extra", "detail": ""}
    assert "runs on rank 2 and not on most other ranks" in top["title"]
    assert top["next"]["text"].startswith("find where rank 2 runs sm70_xmma_gemm_f32f32_extra")
    (function,) = [e for e in evidence(top, "function") if e["rank"] == 2]
    assert function["values"]["median_calls"] == 0
    assert function["values"]["excess_ns"] == pytest.approx(injected, rel=0.01)
    replayed_gpu_cost(top, truth)
    # The GEMM it follows is the peers' own, as long as theirs.
    assert not any(f["name"] == GEMM for f in report["cluster"]["functions"])


JITTER = ["--jitter-step-pct", 1, "--jitter-kernel-pct", 3, "--seed", 1]  # the accuracy benchmark's


def test_synthetic_host_pause_inside_an_annotation_is_named_by_it(shared_dir, run_rankscope, tmp_path):
    """Rank 4's host pauses 28.75 ms (25 % of the step) at the start of its `## backward ##` range,
    on ranks whose kernels jitter. No op runs there and the trace has no Python stacks: the range's
    own untraced time ("inside ## backward ##", analysis/untraced_time.h) names it; before, only the
    backward phase. The GPU still had about 17 ms of work queued there, which hides that much of
    the pause: the replay costs what is left, as the generator's model has it."""
    truth = make_v100_set(shared_dir, tmp_path / "set", "--slow-ranks", 4, "--host-delay-us", 28750,
                          "--host-delay-at", "## backward ##", "--host-delay-inside", *JITTER)
    assert truth["host_delay"]["per_step"] == 1 and truth["injected_per_step_ns"] == 28_750_000
    assert 10 * MS < truth["saving_per_step_ns"] < 14 * MS
    report = analyze(run_rankscope, tmp_path / "set")
    top = report["findings"][0]
    assert top["ranks"] == [4]
    (function,) = [e for e in evidence(top, "function") if e["rank"] == 4]
    assert (function["subject_kind"], function["subject"]) == ("untraced", "inside ## backward ##")
    assert function["values"]["excess_ns"] == pytest.approx(28.75 * MS, rel=0.05)
    assert top["next"]["text"].startswith("find the Python that rank 4 runs inside ## backward ##")
    assert top["cost"]["saving_ns"] == pytest.approx(truth["saving_per_step_ns"], rel=0.05)


def test_synthetic_host_pause_the_gpu_queue_hides_costs_nothing(shared_dir, run_rankscope, tmp_path):
    """Rank 1's host pauses 5.75 ms (5 % of the step) before `## backward ##`, where its GPU still
    has about 17 ms of work queued: the GPU never waits for it, and the host's next blocking copy
    waits that much less. The generator's model says fixing it saves nothing; the report shows the
    pause (rank 1's untraced time) as information without a cost — not as the bottleneck."""
    truth = make_v100_set(shared_dir, tmp_path / "set", "--slow-ranks", 1, "--host-delay-us", 5750,
                          "--host-delay-at", "## backward ##", *JITTER)
    assert truth["injected_per_step_ns"] == 5_750_000 and truth["saving_per_step_ns"] == 0
    report = analyze(run_rankscope, tmp_path / "set")
    assert all(f["severity"] == "info" and f["cost"]["saving_ns"] == 0 for f in report["findings"])
    top = report["findings"][0]
    assert top["ranks"] == [1]
    (function,) = [e for e in evidence(top, "function") if e["rank"] == 1]
    assert (function["subject_kind"], function["subject"]) == ("untraced", "between aten::zeros and ## backward ##")
    assert function["values"]["excess_ns"] == pytest.approx(5.75 * MS, rel=0.05)


def host_waits(path):
    """(start, duration, end of its transfer or None) of a rank's copy and synchronize calls, in µs."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    transfers = {e["args"]["correlation"]: e for e in events if e.get("cat") == "gpu_memcpy"}
    out = []
    for e in events:
        if e.get("cat") != "cuda_runtime":
            continue
        t = transfers.get((e.get("args") or {}).get("correlation")) if "Memcpy" in e["name"] else None
        if t is not None or e["name"].endswith("Synchronize"):
            out.append((e["ts"], e["dur"], t["ts"] + t["dur"] if t else None))
    return out


def test_synthetic_waits_absorb_a_host_pause(shared_dir, tmp_path):
    """The generator's model at its waits: rank 1's host pauses 5.75 ms before `## backward ##` in
    each of the 6 steps; its copies and synchronize calls in the steps wait that much less in all
    (no step ends later: the job saves nothing without it), and every copy that returned only
    after its transfer ended (a device-to-host copy into pageable memory) still does."""
    make_v100_set(shared_dir, tmp_path / "clean", *JITTER)
    truth = make_v100_set(shared_dir, tmp_path / "paused", "--slow-ranks", 1, "--host-delay-us", 5750,
                          "--host-delay-at", "## backward ##", *JITTER)
    assert truth["saving_per_step_ns"] == 0 and truth["host_delay"]["per_step"] == 1
    clean = host_waits(tmp_path / "clean" / "rank1.pt.trace.json.gz")
    paused = host_waits(tmp_path / "paused" / "rank1.pt.trace.json.gz")
    events = json.loads(gzip.decompress((tmp_path / "clean" / "rank1.pt.trace.json.gz").read_bytes()))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith("ProfilerStep#"))
    assert len(clean) == len(paused) and len(steps) == 6
    in_steps = [i for i, (ts, dur, end) in enumerate(clean) if steps[0][0] <= ts < steps[-1][1]]
    assert sum(clean[i][1] - paused[i][1] for i in in_steps) == pytest.approx(6 * 5750, abs=1)
    waited = [i for i, (ts, dur, end) in enumerate(clean) if end is not None and ts < end <= ts + dur]
    assert len(waited) >= 30
    assert all(paused[i][0] < paused[i][2] <= paused[i][0] + paused[i][1] + 0.001 for i in waited)


def test_synthetic_pause_before_each_gradient_all_reduce_is_named_at_accumulate_grad(shared_dir, run_rankscope,
                                                                                   tmp_path):
    """A slowed collective on GPUs of their own: rank 5's host pauses 4.44 ms before each of the 5
    gradient all-reduces per step (10 % of the A100 DDP trace's step), where its GPU waits for it.
    Without Python stacks the trace names the place: autograd's AccumulateGrad, where DDP's hook
    launches them, as many calls as its peers' and 22.2 ms longer; the next step says to look at
    the hooks, and the cost is what the pause delays the job by."""
    truth = make_set(shared_dir, tmp_path / "set", "--ranks", 8, "--ranks-per-host", 2, "--slow-ranks", 5,
                     "--host-delay-us", 4440, "--host-delay-at", "c10d::allreduce_", *JITTER)
    assert truth["host_delay"]["per_step"] == 5 and truth["injected_per_step_ns"] == 22_200_000
    report = analyze(run_rankscope, tmp_path / "set")
    top = report["findings"][0]
    assert top["ranks"] == [5]
    (function,) = [e for e in evidence(top, "function") if e["rank"] == 5]
    assert function["subject"] == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert function["values"]["excess_ns"] == pytest.approx(22.2 * MS, rel=0.02)
    assert function["values"]["calls"] == function["values"]["median_calls"]
    assert top["next"]["text"].startswith("look at the hooks that run when rank 5 accumulates a gradient")
    assert top["cost"]["saving_ns"] == pytest.approx(truth["saving_per_step_ns"], rel=0.05)


def test_synthetic_jittered_healthy_set_has_no_finding(shared_dir, run_rankscope, tmp_path):
    """Eight ranks whose kernels run 0-2 % longer per step and 0-6 % per kernel at random: the
    ranks differ in every step, none consistently; nothing stands out."""
    make_v100_set(shared_dir, tmp_path / "set", *JITTER)
    report = analyze(run_rankscope, tmp_path / "set")
    assert [f["kind"] for f in report["findings"]] == []
    steps = {r["rank"]: r["step_ns"] for r in report["cluster"]["ranks"]}
    assert len(set(steps.values())) == 8  # the jitter made every rank's steps its own


def test_gpu_work_on_a_shared_gpu_keeps_its_per_step_cost(shared_dir, run_rankscope):
    """Three ranks on one H100 (gpu_h100/devKernel): rank 0's extra GEMMs slow its peers through
    the GPU they share, which the replay cannot see; the per-step estimate stands."""
    report = analyze(run_rankscope, shared_dir / "traces" / "gpu_h100" / "devKernel")
    top = report["findings"][0]
    assert top["ranks"] == [0] and top["subject"]["kind"] == "kernel"
    what_if = {e["detail"]: e["values"]["saving_ns"] for e in evidence(top, "what_if")}
    assert "replay_excess" not in what_if and top["cost"]["saving_ns"] == what_if["per_step"]


def test_synthetic_healthy_set_has_offsets_and_no_finding(shared_dir, run_rankscope, tmp_path):
    truth = make_set(shared_dir, tmp_path / "set", "--ranks", 4, "--ranks-per-host", 1,
                     "--clock-offsets-us", "0,12.5,-7000,900000.001")
    report = analyze(run_rankscope, tmp_path / "set")
    check_offsets(report, truth)
    assert report["findings"] == [] and report["cluster"]["collectives"]["max_skew_ns"] == 0
    # Every rank of the copy says it is rank R of 4, in a 4-rank process group.
    for r in report["ranks"]:
        assert r["world_size"] == 4
        assert {g["ranks"] for g in r["communication"]["process_groups"]} == {"[0, 1, 2, 3]"}


def test_same_work_imbalance_is_uneven_timing_not_input(run_rankscope):
    """A clean job's run-queue imbalance, traced without the collector's CPU record: the ranks ran
    the same operators on the same shapes in every step (work signatures), so the imbalance is
    not the input's (tests/data/cluster/same_work_clean/README.md)."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "same_work_clean")
    signatures = {(r["rank"], s["number"]): (s["work_signature"], s["shaped_ops"])
                  for r in report["ranks"] for s in r["steps"]}
    assert len(signatures) == 40
    assert set(signatures.values()) == {(signatures[(0, 4)][0], 452)}
    assert [f["kind"] for f in report["findings"]] == ["uneven_timing"]
    f = report["findings"][0]
    assert f["ranks"] == [0, 1, 2, 3] and f["severity"] == "info"
    assert f["cost"]["saving_ns"] == 0
    (same,) = evidence(f, "same_work")
    assert same["values"]["steps"] == 10 and same["values"]["shaped_ops"] == 452
    assert evidence(f, "step_imbalance")  # the imbalance it measured is kept
    assert "not an input imbalance" in f["title"]
    assert "balance the work" not in json.dumps(f)


def test_constant_work_per_rank_is_uneven_timing_not_input(run_rankscope):
    """An FSDP2 job whose last rank holds a smaller shard of a layer: its work signature differs
    from the others', but no rank's changes from step to step, so a change of slowest rank is not
    the input's (tests/data/cluster/fsdp_clean/README.md)."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "fsdp_clean")
    per_rank = {r["rank"]: {(s["work_signature"], s["shaped_ops"]) for s in r["steps"]} for r in report["ranks"]}
    assert all(len(work) == 1 for work in per_rank.values())  # each rank: the same work in every step
    assert per_rank[0] == per_rank[1] == per_rank[2] != per_rank[3]
    assert [f["kind"] for f in report["findings"]] == ["uneven_timing"]
    f = report["findings"][0]
    assert f["ranks"] == [0, 1, 2, 3] and f["severity"] == "info" and f["cost"]["saving_ns"] == 0
    steps, own = evidence(f, "same_work")
    assert steps["detail"] == "per_rank" and steps["values"]["steps"] == 8
    assert own["detail"] == "own_work" and own["ranks"] == [3]
    assert "each rank ran the same operators" in f["title"]
    assert "balance the work" not in json.dumps(f)


def test_two_faults_are_costed_together(run_rankscope):
    """Two faults on two ranks (tests/data/cluster/two_faults/README.md): each finding is costed
    with the other fault in place and shows little; fixing both is the report's
    cluster.what_if_findings, against the saving the job measured."""
    recorded = REPO / "tests" / "data" / "cluster" / "two_faults"
    (truth,) = json.loads((recorded / "truth.json").read_text())["scenarios"]
    measured_ns = (truth["plain_step_ms"] - truth["plain_fault_free_ms"]) * 1e6
    report = analyze(run_rankscope, recorded / "two10")
    about_ranks = [f for f in report["findings"] if f["kind"] in ("slow_rank", "extra_work", "slow_function")]
    assert sorted(f["ranks"] for f in about_ranks[:2]) == [[1], [3]]
    alone = [f["cost"]["saving_ns"] for f in about_ranks[:2]]
    both = report["cluster"]["what_if_findings"]
    assert both["findings"] == 2 and both["ranks"] == [1, 3]
    assert both["saving_ns"] > 2 * max(alone)
    assert both["estimated_step_ns"] == both["step_ns"] - both["saving_ns"]
    assert abs(both["saving_ns"] - measured_ns) <= 0.3 * measured_ns
    text = run_rankscope("analyze", recorded / "two10").stdout
    assert "What-if: fixing the 2 findings about ranks 1, 3 together" in " ".join(text.split())
    # One fault: nothing to combine.
    one = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "same_work_clean")
    assert one["cluster"]["what_if_findings"] is None


def test_a_rank_whose_work_changes_does_not_make_the_hosts_imbalance_the_inputs(run_rankscope):
    """Rank 2 burns 20 ms of CPU per forward in a loop whose operators vary from step to step; the
    host delays rank 0 or 1 in the other steps (tests/data/cluster/work_changes_on_one_rank/
    README.md). The slowest rank of those steps ran its usual work, so the imbalance is the host's,
    and the burn leads."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "work_changes_on_one_rank")
    signatures = {r["rank"]: {s["work_signature"] for s in r["steps"]} for r in report["ranks"]}
    assert len(signatures[2]) >= 5  # rank 2's work changes from step to step
    assert [f["kind"] for f in report["findings"]] == ["extra_work", "uneven_timing"]
    burn, timing = report["findings"]
    assert burn["ranks"] == [2] and burn["subject"]["name"].endswith("burn_cpu")
    assert timing["ranks"] == [0, 1, 2] and timing["cost"]["saving_ns"] == 0
    (imbalance,) = evidence(timing, "step_imbalance")
    assert imbalance["ranks"] == [0, 0, 1, 1, 0]
    (same,) = evidence(timing, "same_work")
    assert same["detail"] == "slowest_rank"
    assert same["values"]["explained_steps"] == 0 and same["values"]["steps"] == 5
    assert "balance the work" not in timing["next"]["text"]


def test_calls_that_stalled_are_the_hosts_not_a_slower_function(run_rankscope):
    """Four ranks on two cores: rank 2's optimizer aten::mul_ stalled in 4 of its 630 calls (the
    scheduler's time slices) and was abnormal through them alone; rank 1 ran extra matmuls
    (tests/data/cluster/stalled_calls/README.md). The extra work leads; the stalls are a note."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "stalled_calls")
    mul = next(row for row in report["ranks"][2]["cpu_ops"]["rows"] if row["name"] == "aten::mul_")
    assert mul["count"] == 630 and mul["stalls"] == 4 and mul["stall_ns"] > 0.8 * mul["total_ns"]
    assert [f["kind"] for f in report["findings"]] == ["extra_work", "stalled_calls"]
    work, note = report["findings"]
    assert work["ranks"] == [1] and work["subject"]["name"] == "aten::matmul"
    assert note["ranks"] == [2] and note["severity"] == "info" and note["cost"]["saving_ns"] == 0
    (stalled,) = evidence(note, "stalled_calls")
    assert stalled["subject"] == "aten::mul_" and stalled["values"]["stalled_calls"] == 4
    assert stalled["values"]["steady_ns"] < 1.1 * stalled["values"]["steady_median_ns"]
    assert "held off its CPU" in note["title"] and note["next"]["text"].startswith("check host")
    # The abnormal-functions table still lists it.
    assert any(f["name"] == "aten::mul_" and f["rank"] == 2 for f in report["cluster"]["functions"])


def test_a_clean_capture_has_no_finding(run_rankscope):
    """The demo's job without its fault, captured through the daemon and `rankscope run`
    (tests/data/cluster/clean_capture/README.md): rank 1 ran 2.1 ms/step more on a CPU than its
    peers while waiting 5 ms/step longer for them, which is not CPU time of its own."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "clean_capture")
    run = {r["rank"]: r["cpu_sched"]["run_ns"] for r in report["ranks"]}
    assert max(run, key=run.get) == 1 and run[1] > 1.09 * sorted(run.values())[1]
    assert report["findings"] == []


def test_a_checkpoint_every_third_step_is_costed_in_those_steps(run_rankscope):
    """Rank 0 writes eight checkpoint shards every third step (tests/data/cluster/checkpoint/
    README.md): named with its cost in the steps it stalls, not spread over every step."""
    measured_ns = 33.4e6  # median of three measured savings (the README)
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "checkpoint")
    top = report["findings"][0]
    assert top["ranks"] == [0] and top["kind"] in ("extra_work", "slow_function")
    lead = next(e for e in top["evidence"] if e["kind"] == "function")
    assert lead["values"]["calls"] > 1  # more than one call per step on average: the call count cannot tell
    assert any(e["kind"] == "function" and "serialization.py" in e["subject"] for e in top["evidence"])
    assert abs(top["cost"]["saving_ns"] - measured_ns) <= 0.3 * measured_ns
    assert "per_step_imbalance" not in [f["kind"] for f in report["findings"]]
    # The replay's "rank 0 like its peers": DDP's bucket all-reduces overlap (negative segments),
    # and an overlap is not work a what-if can remove (cluster/step_replay.cc, LikePeer): it said
    # 72.4 ms when its peers' longer overlaps counted as rank 0 doing less.
    (rank0,) = [w for w in report["cluster"]["replay"]["by_rank"] if w["rank"] == 0]
    assert abs(rank0["saving_ns"] - measured_ns) <= 0.3 * measured_ns


def test_a_checkpoint_is_all_its_call_paths_and_bounded_where_the_steps_do_not_line_up(run_rankscope):
    """The same checkpoint: creating the shards' tensors and torch.save are sibling call paths,
    and both are the finding's time (cluster/findings.cc, AddedFunctions). Rank 0 writes it after
    the optimizer step, so its peers wait for it only at the next step's first all-reduce, having
    run their forward meanwhile: the per-step what-if charges it all (50.4 ms), the replay follows
    the collectives (cluster/replay_bound.h). The cost is stated against the mean step."""
    measured_ns = 33.4e6
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "checkpoint")
    top = report["findings"][0]
    functions = {e["subject"].rsplit("|", 1)[-1]: e["values"] for e in top["evidence"] if e["kind"] == "function"}
    randn = next(v for k, v in functions.items() if "randn" in k)
    save = functions["torch/serialization.py(944): save"]
    assert randn.get("in_added") == 1 and save.get("in_added") == 1
    assert top["cost"]["added_ns"] == pytest.approx(randn["excess_ns"] + save["excess_ns"], abs=2)
    bound = next(e["values"] for e in top["evidence"] if e["kind"] == "what_if" and e["detail"] == "replay_bound")
    assert bound["per_step_saving_ns"] > 1.3 * measured_ns > bound["saving_ns"] == top["cost"]["saving_ns"]
    # Rank 0's local time in its checkpoint steps is longer than its peers' whole step.
    steps = [{s["number"]: s for s in r["steps"]} for r in report["ranks"]]
    common = sorted(set.intersection(*(set(by) for by in steps)))
    median = [statistics.median(by[n]["duration_ns"] for by in steps) for n in common]
    local0 = [steps[0][n]["duration_ns"] - steps[0][n]["comm_exposed_ns"] for n in common]
    assert any(local > 1.2 * m for local, m in zip(local0, median))
    # The saving is a mean over the steps: stated against the mean step, not the median.
    assert top["cost"]["step_ns"] == pytest.approx(statistics.mean(median), rel=1e-6)
    assert statistics.mean(median) > 1.3 * statistics.median(median)
    assert "the replayed steps bound it" in " ".join(run_rankscope("analyze", REPO / "tests" / "data" / "cluster" /
                                                                   "checkpoint").stdout.split())


def test_a_stall_every_fourth_step_is_costed_in_its_steps_and_replayed(run_rankscope):
    """Rank 1 sleeps 40 ms before every fourth step (tests/data/cluster/stall_every_fourth/README.md).
    The ranks' median steps hardly see it: the median what-if said 4.2 ms/step; in the steps that
    hold it every peer waits, and the cost is most of its 9.6 ms/step (cluster/cost_model.h,
    CostSlowFunctionsByStep). gloo ran the step's two all-reduces on two threads and rank 2's
    spans started in the other order than its peers': the replay was refused as a cycle."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "stall_every_fourth")
    top = report["findings"][0]
    assert top["kind"] == "slow_function" and top["ranks"] == [1]
    assert top["subject"]["name"].endswith("hiccup|<built-in function sleep>")
    lead = next(e["values"] for e in top["evidence"] if e["kind"] == "function")
    assert lead["calls"] < 0.5 and lead["median_calls"] == 0
    # The title says how long one stall is, not only its average over the steps.
    assert "(40.12 ms a call, one every 4.2 steps on average)" in top["title"], top["title"]
    what_ifs = {e["detail"]: e["values"] for e in top["evidence"] if e["kind"] == "what_if"}
    assert what_ifs["faster"]["saving_ns"] < 0.5 * lead["excess_ns"]
    assert 0.7 * lead["excess_ns"] <= top["cost"]["saving_ns"] == what_ifs["per_step"]["saving_ns"] <= lead["excess_ns"]
    replay = report["cluster"]["replay"]
    assert replay["built"] and replay["faithful"], replay
    assert replay["by_rank"][0]["rank"] == 1


def test_the_forward_a_rank_runs_through_activation_checkpointing_is_not_extra_work(run_rankscope):
    """Rank 1 runs its middle layers through torch.utils.checkpoint
    (tests/data/cluster/activation_checkpointing/README.md): the same modules under the wrapper's
    frames in forward, and their forward again in backward. Only the recomputation is extra work;
    before, the wrapped forward, which every peer runs too, was 35 of the 60 ms/step named."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "activation_checkpointing")
    top = report["findings"][0]
    assert top["kind"] == "slow_rank" and top["ranks"] == [1]
    functions = [e["subject"] for e in top["evidence"] if e["kind"] == "function"]
    assert functions and "recompute_fn|nn.Module: Sequential_0" in functions[0], functions
    assert top["cost"]["saving_ns"] > 0
    subjects = [e["subject"] or "" for f in report["findings"] for e in f["evidence"]]
    assert subjects and not any("checkpoint.py(354): checkpoint" in s for s in subjects), subjects


def test_a_rank_whose_dataloader_workers_fall_behind_is_a_straggler(run_rankscope):
    """Rank 1's two DataLoader workers take 130 ms per batch (tests/data/cluster/dataloader_behind/
    README.md): its main process waits for them, 29.6 ms/step of data loading against 6.4 on its
    peers. Against all four ranks' spread, widened by rank 1 itself and a fast rank 0, nothing
    stood out; against its three peers rank 1 is a straggler in data loading."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "dataloader_behind")
    top = report["findings"][0]
    assert (top["kind"], top["ranks"], top["subject"]["name"]) == ("slow_rank", [1], "data_loading")
    assert top["cost"]["saving_ns"] > 0.1 * report["cluster"]["step_ns"]
    assert top["next"]["kind"] == "input_pipeline"
    (local,) = [e for e in top["evidence"] if e["kind"] == "local_time"]
    assert local["values"]["ranks_compared"] == 3
    assert local["values"]["local_ns"] - local["values"]["median_local_ns"] > local["values"]["threshold_ns"]
    polls = [e for e in top["evidence"] if e["kind"] == "function" and "poll of select.poll" in e["subject"]]
    assert polls and all(e["values"].get("wait") == 1 for e in polls)
    assert len(report["findings"]) == 1


def test_the_straggler_of_a_two_rank_job_is_named(run_rankscope):
    """Rank 1 of two burns 20 ms of matmuls in every forward (tests/data/cluster/two_ranks/README.md).
    Two values have no spread, so nothing was ever compared in a 2-rank job; each rank is now
    compared with the other by the margin, and the one the other waits for is the straggler."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "two_ranks")
    assert len(report["findings"]) == 1
    (top,) = report["findings"]
    assert (top["kind"], top["ranks"], top["subject"]["name"]) == ("slow_rank", [1], "forward")
    functions = [e["subject"] for e in top["evidence"] if e["kind"] == "function"]
    assert functions and functions[0].endswith("ddp_train.py(104): burn_cpu"), functions
    assert top["cost"]["saving_ns"] > 0.3 * report["cluster"]["step_ns"]
    assert report["cluster"]["ranks"][1]["last_arriver_votes"] == 16


def test_compiled_code_is_compared_across_ranks_whose_graphs_differ(run_rankscope):
    """Every rank runs a torch.compile'd model; rank 1's graph has more matmuls, so inductor wrote
    it to a file of another hashed name (tests/data/cluster/compiled_graph/README.md). Compared by
    file, rank 1's compiled code was extra on it and missing on its peers; the key masks the hash."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "compiled_graph")
    top = report["findings"][0]
    assert top["ranks"] == [1] and top["cost"]["saving_ns"] > 0
    functions = [e for e in top["evidence"] if e["kind"] == "function" and e["subject_kind"] == "python_path"]
    assert functions and not any("torchinductor_" in e["subject"] for e in functions), functions
    generated = [e["values"] for e in functions if e["subject"].endswith("<generated code>: call")]
    assert generated and generated[0]["median_ns"] > 0  # the peers' compiled code, compared
    assert generated[0]["value_ns"] > 2 * generated[0]["median_ns"]


def test_a_fault_from_the_middle_of_the_trace_is_named_by_its_function(run_rankscope):
    """Rank 2 runs 25 ms of extra forward compute from halfway through the profiled steps
    (tests/data/cluster/fault_midway/README.md): 0.5 calls per step of a function no peer calls.
    It names the finding; before, it was left out and a CPU op inside it named the finding."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "fault_midway")
    top = report["findings"][0]
    assert top["ranks"] == [2]
    subject = top["subject"]
    assert subject["kind"] == "python_path" and subject["name"].endswith("ddp_train.py(101): burn_cpu")
    lead = next(e for e in top["evidence"] if e["kind"] == "function" and e["subject"] == subject["name"])
    assert lead["values"]["calls"] == pytest.approx(0.5) and lead["values"]["median_calls"] == 0
    assert top["cost"]["saving_ns"] > 0
    assert all(2 in f["ranks"] for f in report["findings"] if f["kind"] not in ("cpu_contention", "uneven_timing"))


def test_without_python_stacks_a_sleep_is_untraced_time_where_it_lies(run_rankscope):
    """Rank 1 of four sleeps 12 ms before every forward; the profile has no Python stacks, so the
    sleep is a gap in which its process records nothing (tests/data/cluster/no_stack_sleep). The
    gap, compared with the peers' at the same place, leads the straggler's evidence."""
    directory = REPO / "tests" / "data" / "cluster" / "no_stack_sleep"
    report = analyze(run_rankscope, directory)
    assert len(report["findings"]) == 1
    (top,) = report["findings"]
    assert (top["kind"], top["ranks"]) == ("slow_rank", [1])
    functions = [e for e in top["evidence"] if e["kind"] == "function"]
    assert functions and functions[0]["subject_kind"] == "untraced", functions
    assert functions[0]["subject"] == ("between enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ and "
                                       "Optimizer.zero_grad#SGD.zero_grad")
    assert functions[0]["values"]["excess_ns"] > 8e6
    text = run_rankscope("analyze", directory).stdout
    assert "find the Python that rank 1 runs between" in " ".join(text.split())
    rank1 = [r for r in report["ranks"] if r["rank"] == 1][0]
    assert rank1["untraced"]["rows"][0]["name"] == functions[0]["subject"]


def test_without_python_stacks_a_spinning_thread_is_unrecorded_cpu_time(run_rankscope):
    """Rank 2 runs a pure-Python thread that burns 10 % of the step; no slice shows it, the kernel's
    count of the process's CPU time does (tests/data/cluster/no_stack_cpu_hog)."""
    report = analyze(run_rankscope, REPO / "tests" / "data" / "cluster" / "no_stack_cpu_hog")
    assert len(report["findings"]) == 1
    (top,) = report["findings"]
    assert (top["kind"], top["ranks"], top["subject"]["kind"]) == ("extra_work", [2], "cpu_time")
    assert top["cost"]["saving_ns"] == 0 and top["cost"]["added_ns"] > 5e6  # the job measured no slowdown
    (cpu,) = [e for e in top["evidence"] if e["kind"] == "cpu_wait"]
    assert cpu["detail"] == "unrecorded_cpu"
    assert (cpu["values"]["threads"], cpu["values"]["peers_threads"]) == (6, 5)
    assert cpu["values"]["run_ns"] > 2 * cpu["values"]["peers_run_ns"]


def test_without_python_stacks_a_hooks_ops_are_one_finding_about_its_autograd_node(run_rankscope):
    """Rank 2's tensor hook runs matmuls inside autograd's AccumulateGrad node; without stacks the
    node and the hook's ops were three findings for one fault (tests/data/cluster/no_stack_backward_hook)."""
    directory = REPO / "tests" / "data" / "cluster" / "no_stack_backward_hook"
    report = analyze(run_rankscope, directory)
    assert [f["ranks"] for f in report["findings"]] == [[2]]
    (top,) = report["findings"]
    assert top["subject"]["name"] == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    parts = [e["subject"] for e in top["evidence"] if e["kind"] == "function"][1:]
    assert parts[:2] == ["aten::matmul", "aten::mm"]
    text = " ".join(run_rankscope("analyze", directory).stdout.split())
    assert "look at the hooks autograd runs in torch::autograd::AccumulateGrad on rank 2" in text


def test_a_rank_whose_operations_are_each_slower_is_sent_to_its_cpu(run_rankscope):
    """Rank 1 of two shares its core with a busy process: its operators, as many and on the same
    shapes as rank 0's, each take over twice as long (tests/data/cluster/shared_core). Its code is
    not the cause; the next step is its CPU, not the largest of its slower operators."""
    directory = REPO / "tests" / "data" / "cluster" / "shared_core"
    report = analyze(run_rankscope, directory)
    top = report["findings"][0]
    assert (top["kind"], top["ranks"]) == ("slow_rank", [1])
    (slower,) = [e for e in top["evidence"] if e["kind"] == "slower_ops"]
    assert slower["values"]["median_ratio"] > 2 and slower["values"]["same_shapes"] == 1
    assert top["next"]["kind"] == "check_host"
    text = " ".join(run_rankscope("analyze", directory).stdout.split())
    assert "check the CPU of rank 1 itself" in text

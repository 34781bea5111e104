"""Real GPU jobs (issue 11): what the diagnosis sees in them, exactly (recorded traces).

  * ../shared/traces/gpu_h100/devClean, devKernel: 3 ranks sharing one H100, DDP with gloo and
    CUDA tensors (gloo:all_reduce annotations + gpu_user_annotation copies + c10d::allreduce_
    ops, no NCCL kernels), captured with rankscope's collector running in the job;
  * tests/data/gpu/ (bench/gpu/capture.sh; docs/cluster.md, "Real GPU runs"), 4 ranks sharing one
    H100 (or H200) with gloo and CUDA tensors, a small transformer (workloads/ground_truth.py):
      zerocode_host_sleep/  `rankscope run` + `rankscope trace --with-stack` through rankscoped:
                            rank 1 sleeps 25 % of the step before each forward (capture.manifest,
                            telemetry.vm.tsv with NVML readings beside the traces);
      kineto_daemon/        plain PyTorch with KINETO_USE_DAEMON=1 (no rankscope code, no
                            ProfilerStep): rank 2 runs extra GEMMs in forward;
      kernel_shapes/        rank 3 runs extra GEMMs over 14 matrix shapes (torch.profiler);
      nccl_1rank/           one rank with the NCCL backend (no communication kernel on one rank).
"""

import json
import pathlib

import jsonschema
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "gpu"
SCHEMA = json.loads((REPO / "docs" / "report-schema.json").read_text())
MS = 1_000_000


def analyze(run_rankscope, *args):
    report = json.loads(run_rankscope("analyze", "--json", "-", *args).stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["errors"] == []
    return report


def count_events(path, name, cat):
    import gzip
    doc = json.loads(gzip.open(path).read())
    return sum(1 for e in doc["traceEvents"] if e.get("name") == name and e.get("cat") == cat and e.get("ph") == "X")


@pytest.mark.parametrize("capture", ["devClean", "devKernel"])
def test_gloo_with_cuda_tensors_collectives_are_matched_and_waited_for(shared_dir, run_rankscope, capture):
    # Before issue 11: "comm exp 0.0%", no matched collective, no clock link, a wait of 0.
    directory = shared_dir / "traces" / "gpu_h100" / capture
    report = analyze(run_rankscope, directory)
    cluster = report["cluster"]
    for r in report["ranks"]:
        trace = directory / f"rank{r['rank']}.pt.trace.json.gz"
        annotations = count_events(trace, "gloo:all_reduce", "user_annotation")
        assert annotations == 15 and count_events(trace, "gloo:all_reduce", "gpu_user_annotation") > 0
        # Each gloo all-reduce once (its GPU-timeline copy and c10d::allreduce_ are not counted).
        (ctype,) = r["communication"]["types"]
        assert ctype["op"] == "all_reduce" and ctype["count"] == annotations and not ctype["on_gpu"]
        # rankscope's own collector thread (it ran in these jobs) is not one of the job's paths.
        assert r["python_functions"]["collector_threads"] == 1
        assert not any("_channel.py" in f["name"] for f in r["python_functions"]["rows"])
    coll = cluster["collectives"]
    assert coll["matched"] == coll["complete"] == 15
    assert all(d["estimated"] for d in cluster["clock"]["domains"])
    assert all(r["comm_wait_ns"] > 0 and r["collectives"] == 15 for r in cluster["ranks"])


def test_devkernel_extra_gemms_are_found_on_their_rank(shared_dir, run_rankscope):
    report = analyze(run_rankscope, shared_dir / "traces" / "gpu_h100" / "devKernel")
    rows = [f for f in report["cluster"]["functions"] if f["kind"] == "kernel" and "gemm" in f["name"]]
    assert rows and all(f["rank"] == 0 for f in rows)
    # The top finding is rank 0's GEMMs, not a per-step imbalance of the three ranks: rank 0 is the
    # slowest in 3 of the 5 steps because of them, and those steps are its own (a straggler's).
    top = report["findings"][0]
    assert top["ranks"] == [0] and top["kind"] != "per_step_imbalance"
    assert top["subject"]["kind"] == "kernel" and "gemm" in top["subject"]["name"]


def test_a_host_sleep_is_found_however_many_python_paths(run_rankscope):
    # Issue 11 #3: more than 500 Python paths per rank; rank 1 sleeping 40 ms per step was
    # compared with nobody because its peers' tables were "capped".
    report = analyze(run_rankscope, DATA / "zerocode_host_sleep")
    for r in report["ranks"]:
        table = r["python_functions"]
        assert len(table["rows"]) + table["omitted_rows"] > 500
        # Every row above 0.1 % of the window is kept: the rest are tiny.
        assert table["omitted_max_in_window_ns"] < 0.001 * r["window"]["duration_ns"]
        assert table["collector_threads"] == 1
    sleeps = [f for f in report["cluster"]["functions"]
              if f["kind"] == "python_path" and f["name"].endswith("<built-in function sleep>")]
    assert [f["rank"] for f in sleeps] == [1]
    (sleep,) = sleeps
    assert sleep["compared"] == 4
    # The excess is the sleep itself: one sleep per step (its median call) more than the peers.
    assert abs(sleep["excess_ns"] - sleep["per_call_ns"] * sleep["calls"]) <= 0.3 * sleep["excess_ns"]
    assert sleep["calls"] >= 1 and sleep["excess_ns"] > 3 * MS
    (rank1,) = [r for r in report["ranks"] if r["rank"] == 1]
    waits = [f for f in rank1["python_functions"]["rows"] if f["name"].endswith("<built-in function sleep>")]
    assert waits and all(f.get("wait") for f in waits)
    assert report["findings"] and report["findings"][0]["ranks"] == [1]


def test_kineto_daemon_traces_get_their_iterations_from_the_optimizer(run_rankscope):
    # Issue 11 #7: no ProfilerStep in a KINETO_USE_DAEMON capture; it used to show "steps 0".
    report = analyze(run_rankscope, DATA / "kineto_daemon")
    for r in report["ranks"]:
        assert r["window"]["step_source"] == "optimizer_step" and r["window"]["steps"] == 4
        assert [s["number"] for s in r["steps"]] == [0, 1, 2, 3]
        assert any("iterations derived from its Optimizer.step" in w for w in r["warnings"])
    cluster = report["cluster"]
    assert cluster["unit"] == "step" and cluster["collectives"]["complete"] == 8
    assert {f["rank"] for f in cluster["functions"]} == {2}
    assert report["findings"][0]["ranks"] == [2]


def test_a_slowdown_spread_over_kernel_shapes_is_one_row(run_rankscope):
    # Issue 11 #5: rank 3's extra GEMMs run in 14 shapes; compared by kernel name or by the op
    # that launched them (aten::mm), they are one row, not 14 below the minimum cost.
    report = analyze(run_rankscope, DATA / "kernel_shapes")
    rows = report["cluster"]["functions"]
    assert rows and {f["rank"] for f in rows} == {3}
    gpu = [f for f in rows if f["kind"] in ("kernel", "kernels_of_op")]
    assert any(f["kind"] == "kernels_of_op" and f["name"] == "aten::mm" for f in gpu)
    assert all(f["detail"] == "" for f in gpu if f["kind"] == "kernel")  # the name, not one shape


def test_nccl_on_one_rank_counts_each_collective_once(run_rankscope):
    # One rank: NCCL launches no kernel; record_param_comms and nccl:all_reduce are two records
    # of one collective.
    report = analyze(run_rankscope, DATA / "nccl_1rank")
    (r,) = report["ranks"]
    assert r["backend"] == "nccl"
    (ctype,) = r["communication"]["types"]
    truth = json.loads((DATA / "nccl_1rank.truth.json").read_text())
    assert ctype["count"] == truth["buckets_per_step"] * len(r["steps"])


@pytest.mark.parametrize("run", ["zerocode_host_sleep", "kineto_daemon", "kernel_shapes"])
def test_replay_reproduces_the_gpu_steps(run_rankscope, run):
    """The replayed what-if's fidelity check on real GPU runs: the steps rebuilt from the
    per-rank chains and the all-reduces as barriers come back within 2 % of the measured ones."""
    rep = analyze(run_rankscope, DATA / run)["cluster"]["replay"]
    assert rep["built"] and rep["faithful"], rep
    assert rep["max_step_error"] < 0.02
    assert rep["steps"] == 4 and rep["ranks"] == 4 and rep["barriers"] == 8

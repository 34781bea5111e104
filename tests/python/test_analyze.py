"""`rankscope analyze` end to end: the JSON report validates against docs/report-schema.json on
every shared trace, its numbers are consistent with each other and with TraceLens's own CSVs,
and a real 4-rank PyTorch run (CPU, gloo, with an injected slow DataLoader on one rank) gets
the steps, phases, collectives and the slow rank right."""

import csv
import gzip
import json
import os
import pathlib
import subprocess
import sys

import jsonschema
import pytest

import independent_counts
import recording

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED_TRACES = sorted(p.relative_to(REPO.parent / "shared" / "traces").as_posix()
                       for p in (REPO.parent / "shared" / "traces").rglob("*.json.gz"))
SCHEMA = json.loads((REPO / "docs" / "report-schema.json").read_text())
PHASES = ["data_loading", "forward", "backward", "optimizer", "other"]


def analyze(run_rankscope, *args):
    report = json.loads(run_rankscope("analyze", "--json", "-", *args).stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def check_invariants(rank):
    """Identities that follow from the definitions (docs/definitions.md)."""
    window = rank["window"]["duration_ns"]
    for step in rank["steps"]:
        assert sum(step["cpu_phases_ns"].values()) == step["duration_ns"]
        assert step["end_ns"] - step["start_ns"] == step["duration_ns"]
    if rank["gpu"] is not None:
        classes = rank["gpu"]["classes"]
        assert sum(c["exposed_ns"] for c in classes.values()) == window
        assert rank["gpu"]["busy_ns"] == window - classes["idle"]["exposed_ns"]
        for name, c in classes.items():
            if name != "idle":
                assert c["exposed_ns"] <= c["busy_ns"]
        for s in rank["idle"]["streams"]:
            assert s["busy_ns"] + s["host_wait_ns"] + s["kernel_wait_ns"] + s["other_ns"] + s["edge_ns"] == window
        # Kernel bottlenecks add up to the exposed compute + communication time (1/k split).
        kernels = rank["kernels"]
        if kernels["omitted_rows"] == 0:
            owned = sum(r["bottleneck_ns"] for r in kernels["rows"])
            exposed = classes["compute"]["exposed_ns"] + classes["communication"]["exposed_ns"]
            assert abs(owned - exposed) <= len(kernels["rows"]) + 1
    for table in ("kernels", "memory_ops", "cuda_runtime", "cpu_ops", "python_functions"):
        rows = rank[table]["rows"]
        keys = [(r["bottleneck_ns"], r["in_window_ns"]) for r in rows]
        assert keys == sorted(keys, reverse=True), f"{table} is not worst first"
        for r in rows:
            assert r["bottleneck_ns"] <= r["in_window_ns"] + 1
            assert r["flagged"] == (r["bottleneck_ratio"] > 0.01)


@pytest.mark.parametrize("relative", SHARED_TRACES)
def test_report_on_every_shared_trace(relative, shared_dir, run_rankscope):
    report = analyze(run_rankscope, shared_dir / "traces" / relative)
    assert report["errors"] == []
    (rank,) = report["ranks"]
    check_invariants(rank)
    reference = json.loads((shared_dir / "traces" / "hta_reference.json").read_text())["files"].get(relative)
    if reference is not None:
        has_gpu = reference["has_gpu_events"]
    else:  # a trace added after HTA's reference numbers were computed (e.g. gpu_h100/)
        events = independent_counts.load(str(shared_dir / "traces" / relative))["traceEvents"]
        has_gpu = any(e.get("cat") in independent_counts.GPU_CATS for e in events)
    assert (rank["gpu"] is not None) == has_gpu
    # The terminal report renders within 100 columns.
    text = run_rankscope("analyze", "--color", "never", shared_dir / "traces" / relative).stdout
    assert max(len(line) for line in text.splitlines()) <= 100, relative


def test_tracelens_gpu_timeline_and_kernel_summary(shared_dir, run_rankscope):
    base = shared_dir / "traces/tracelens/mi210_gpu_only"
    (rank,) = analyze(run_rankscope, base / "gpu_only_trace.json.gz")["ranks"]
    assert rank["window"]["mode"] == "gpu_span"  # no ProfilerStep: the window is the GPU span
    window_us = rank["window"]["duration_ns"] / 1000
    timeline = {row["type"]: float(row["time ms"]) * 1000 for row in csv.DictReader(open(base / "tracelens_reference/gpu_timeline.csv"))}
    classes = rank["gpu"]["classes"]
    tolerance = 0.005 * window_us
    assert window_us == pytest.approx(timeline["total_time"], abs=tolerance)
    assert classes["compute"]["exposed_ns"] / 1000 == pytest.approx(timeline["computation_time"], abs=tolerance)
    assert classes["idle"]["exposed_ns"] / 1000 == pytest.approx(timeline["idle_time"], abs=tolerance)
    assert rank["gpu"]["busy_ns"] / 1000 == pytest.approx(timeline["busy_time"], abs=tolerance)
    assert classes["communication"]["exposed_ns"] == 0 and classes["memory"]["exposed_ns"] == 0
    # kernel_summary.csv is per kernel name (one stream here); ours is per name + grid|block.
    ours = {}
    for r in rank["kernels"]["rows"]:
        count, total, worst = ours.get(r["name"], (0, 0, 0))
        ours[r["name"]] = (count + r["count"], total + r["total_ns"], max(worst, r["max_ns"]))
    rows = list(csv.DictReader(open(base / "tracelens_reference/kernel_summary.csv", encoding="utf-8")))
    assert len(rows) == len(ours)
    for row in rows:
        count, total, worst = ours[row["Kernel name"]]
        assert count == int(row["Kernel duration (µs)_count"])
        assert total / 1000 == pytest.approx(float(row["Kernel duration (µs)_sum"]), abs=tolerance)
        assert worst / 1000 == pytest.approx(float(row["Kernel duration (µs)_max"]), abs=0.001)


def test_cli_options_and_errors(shared_dir, run_rankscope, tmp_path):
    trace = shared_dir / "traces/hta/nccl_2rank_a100/nccl_data.json.gz"
    # --steps selects steps; out of range is an error that says what the trace has.
    (rank,) = analyze(run_rankscope, trace, "--steps", "5:5")["ranks"]
    assert [s["number"] for s in rank["steps"]] == [5]
    proc = run_rankscope("analyze", trace, "--steps", "40:41", check=False)
    assert proc.returncode == 1 and "the trace has steps 4..6" in proc.stderr
    proc = run_rankscope("analyze", trace, "--comm-pattern", "(", check=False)
    assert proc.returncode == 1 and "not a valid regular expression" in proc.stderr
    # --comm-pattern turns matching kernels into communication.
    (rank,) = analyze(run_rankscope, trace, "--comm-pattern", "nchwToNhwcKernel")["ranks"]
    ops = {t["op"] for t in rank["communication"]["types"]}
    assert "cudnn::ops::nchwToNhwcKernel" in ops
    # --json FILE writes the file and still prints the terminal report; --top limits rows.
    out = tmp_path / "report.json"
    proc = run_rankscope("analyze", trace, "--json", out, "--top", "3", "--color", "always")
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)
    assert "\x1b[1m" in proc.stdout
    kernels = proc.stdout.split("Kernels")[1].split("\n\n")[0].splitlines()[2:]  # after the note and header
    assert len(kernels) == 3 and all("%" in line for line in kernels)
    plain = run_rankscope("analyze", trace, "--color", "never")
    assert "\x1b[" not in plain.stdout and "GPU time by class" in plain.stdout
    assert "\r" not in plain.stderr  # no progress line when stderr is not a terminal
    # --window gpu: the span of GPU activity instead of the steps.
    (rank,) = analyze(run_rankscope, trace, "--window", "gpu")["ranks"]
    assert rank["window"]["mode"] == "gpu_span" and rank["steps"] == []
    proc = run_rankscope("analyze", trace, "--window", "gpu", "--steps", "4:5", check=False)
    assert proc.returncode == 1 and "cannot be combined" in proc.stderr


def independent_steps_and_gloo(path):
    """Step spans and gloo collectives counted with Python's json module."""
    events = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["dur"], int(e["name"].split("#")[1])) for e in events
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    gloo = [e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("gloo:")]
    return steps, gloo


@pytest.fixture(scope="module")
def slow_data_run(tmp_path_factory):
    """A real 4-rank DDP run (CPU, gloo): rank 1's DataLoader sleeps 200 ms per batch. With 7
    steps, the profiled steps #3..#6 are whole training steps."""
    out = tmp_path_factory.mktemp("ddp4") / "traces"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    recording.record([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4",
                      str(REPO / "workloads/ddp_train.py"), "--steps", "7", "--profile-dir", str(out),
                      "--with-stack", "--profile-memory", "--fault", "slow-data:1:200"],
                     env=env, timeout=600, clean=[out])
    return out


def test_real_pytorch_run(slow_data_run, run_rankscope):
    report = analyze(run_rankscope, slow_data_run)
    assert report["errors"] == [] and report["job"]["world_size"] == 4 and report["job"]["backend"] == "gloo"
    ranks = report["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1, 2, 3]
    data_loading = {}
    for r in ranks:
        check_invariants(r)
        assert r["gpu"] is None and r["window"]["mode"] == "steps"
        steps, gloo = independent_steps_and_gloo(r["path"])
        # Steps: the profiler's own spans, to the nanosecond.
        assert [s["number"] for s in r["steps"]] == [n for _, _, n in steps]
        assert [s["duration_ns"] for s in r["steps"]] == [round(d * 1000) for _, d, _ in steps]
        for s in r["steps"]:
            for phase in ("data_loading", "forward", "backward", "optimizer"):
                assert s["cpu_phases_ns"][phase] > 0, (r["rank"], s["number"], phase)
        data_loading[r["rank"]] = min(s["cpu_phases_ns"]["data_loading"] for s in r["steps"])
        # gloo collectives: one all_reduce per DDP bucket per step, sized from the annotation.
        comm = r["communication"]
        (t,) = comm["types"]
        assert (t["op"], t["dtype"], t["group_size"], t["on_gpu"]) == ("all_reduce", "float", 4, False)
        in_window = [g for g in gloo if g["ts"] >= steps[0][0] and g["ts"] < steps[-1][0] + steps[-1][1]]
        assert t["count"] == len(in_window) == len(comm["instances"])
        assert t["bytes"] == sum(4 * g["args"]["Input Dims"][0][0] for g in in_window)
        assert 0 <= t["exposed_ns"] <= t["busy_ns"]
        assert {i[4] for i in comm["instances"]} <= {s["number"] for s in r["steps"]}
        # with_stack and profile_memory.
        assert r["python_functions"]["rows"] and "|" in r["python_functions"]["rows"][0]["name"] + "|"
        assert any(d["device_type"] == 0 and d["peak_allocated_bytes"] > 0 for d in r["memory"]["devices"])
        assert r["cpu_ops"]["rows"]
    # The injected fault: rank 1 spends >= 200 ms per step in data loading, more than any peer.
    assert data_loading[1] >= 200e6
    assert data_loading[1] == max(data_loading.values())
    # ... and cluster diagnosis names it (tests/python/test_cluster.py tests it in depth).
    top = report["findings"][0]
    assert top["kind"] == "slow_rank" and top["ranks"] == [1] and top["subject"]["name"] == "data_loading"
    # Steps record the exposed time of the collectives they launched: together, the collectives'.
    for r in ranks:
        exposed = sum(t["exposed_ns"] for t in r["communication"]["types"])
        assert abs(sum(s["comm_exposed_ns"] for s in r["steps"]) - exposed) <= len(r["communication"]["instances"]) + 1
    # Text: an overview for the directory, the full report for one rank.
    overview = run_rankscope("analyze", slow_data_run).stdout
    assert "4 ranks" in overview
    full = run_rankscope("analyze", slow_data_run, "--rank", "1").stdout
    for section in ("Steps", "Communication", "CPU ops", "Python call paths", "Memory"):
        assert section in full


def test_every_schema_field_is_documented():
    """docs/report-schema.md names every property the JSON Schema defines."""
    doc = (REPO / "docs" / "report-schema.md").read_text()
    names = set()

    def walk(node):
        if isinstance(node, dict):
            names.update(node.get("properties", {}).keys())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(SCHEMA)
    missing = sorted(n for n in names if f"`{n}`" not in doc and f"`{n}[]`" not in doc)
    assert not missing, f"undocumented report fields: {missing}"


def test_unreadable_file_is_reported_not_fatal(shared_dir, run_rankscope, tmp_path):
    (tmp_path / "rank0.json.gz").write_bytes((shared_dir / "traces/hta/nccl_2rank_a100/nccl_data.json.gz").read_bytes())
    (tmp_path / "rank1.json.gz").write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    proc = run_rankscope("analyze", tmp_path, "--json", tmp_path / "out.json", check=False)
    assert proc.returncode == 1
    report = json.loads((tmp_path / "out.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert [r["rank"] for r in report["ranks"]] == [0]
    (error,) = report["errors"]
    assert error["path"].endswith("rank1.json.gz") and error["error"]
    assert "rank1.json.gz" in proc.stderr


def test_progress_line_on_a_terminal(rankscope_bin, shared_dir):
    """On a terminal (a pty here) a progress line is drawn once the work outlasts
    RANKSCOPE_PROGRESS_AFTER_MS (1000 by default; 0 here so that the test does not depend on
    the machine's speed), then erased; the report itself still goes to stdout."""
    import os
    import pty
    import subprocess

    traces = shared_dir / "traces" / "hta" / "trace_diff_control_a100"  # ~100 ms of work
    controller, terminal = pty.openpty()
    env = dict(os.environ, RANKSCOPE_PROGRESS_AFTER_MS="0")
    proc = subprocess.Popen([rankscope_bin, "analyze", str(traces), "--threads", "1"], stdout=subprocess.PIPE,
                            stderr=terminal, env=env)
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed its end of the pty
            break
        if not chunk:
            break
        drawn += chunk
    stdout, _ = proc.communicate(timeout=120)
    os.close(controller)
    assert proc.returncode == 0
    assert b"rankscope: reading and analysing trace files: " in drawn, drawn
    assert drawn.endswith(b"\r\x1b[2K"), drawn[-40:]  # erased at the end
    assert b"rank 3 of 8" in stdout

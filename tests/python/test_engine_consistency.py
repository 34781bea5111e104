"""The commands share one engine (AnalyzeJob, docs/architecture.md): `rankscope telemetry` joins a
capture's telemetry against the same windows `rankscope analyze` uses and reports the same node
figures and findings, and `rankscope info` agrees with `analyze` on what each file is."""

import json

import pytest

from test_analyze import SHARED_TRACES

CAPTURES = ["gpu_h100/devClean", "gpu_h100/devKernel"]  # real captures with telemetry sidecars


def as_json(run_rankscope, *args):
    return json.loads(run_rankscope(*args).stdout)


@pytest.mark.parametrize("capture", CAPTURES)
def test_telemetry_and_analyze_join_the_same_windows(capture, shared_dir, run_rankscope):
    path = shared_dir / "traces" / capture
    analyzed = as_json(run_rankscope, "analyze", path, "--json", "-")
    telemetry = as_json(run_rankscope, "telemetry", path, "--json")
    windows = {r["rank"]: (r["window"]["start_ns"], r["window"]["end_ns"]) for r in analyzed["ranks"]}
    assert {r["rank"]: (r["start_unix_ns"], r["end_unix_ns"]) for r in telemetry["ranks"]} == windows
    assert all(r["window"] == analyzed["ranks"][0]["window"]["mode"] for r in telemetry["ranks"])
    assert telemetry["nodes"] == analyzed["telemetry"]["nodes"]
    node_kinds = {"input_pipeline_bound", "input_pipeline_cpu_bound", "host_cpu_saturated", "gpu_mostly_idle",
                  "cpu_steal", "io_wait", "host_memory_full", "gpu_memory_full"}
    assert telemetry["findings"] == [f for f in analyzed["findings"] if f["kind"] in node_kinds]
    # PyTorch 2.11 wrote no host_name: the host comes from the capture's manifest.
    assert {r["host"] for r in analyzed["cluster"]["ranks"]} == {"vm"}
    assert {r["host_source"] for r in analyzed["cluster"]["ranks"]} == {"capture manifest"}


@pytest.mark.parametrize("relative", SHARED_TRACES)
def test_info_and_analyze_agree_on_each_file(relative, shared_dir, run_rankscope):
    path = shared_dir / "traces" / relative
    (info,) = as_json(run_rankscope, "info", path, "--json")["files"]
    (rank,) = as_json(run_rankscope, "analyze", path, "--json", "-")["ranks"]
    assert info["rank"] == rank["rank"] and info["rank_source"] == rank["rank_source"]
    assert info["world_size"] == rank["world_size"] and info["host_name"] == rank["host_name"]
    assert info["profiler_steps"]["count"] == rank["window"]["steps_in_trace"]

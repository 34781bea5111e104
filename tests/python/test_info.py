"""`rankscope info` against counts computed independently with Python's json module, on every
trace in ../shared/traces and on traces recorded here by a real PyTorch run."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import recording
from independent_counts import counts

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED_TRACES = sorted(p.relative_to(REPO.parent / "shared" / "traces").as_posix()
                       for p in (REPO.parent / "shared" / "traces").rglob("*.json.gz"))


def compare(info, expected, path):
    assert info["events"]["total"] == expected["elements"]
    assert info["events"]["by_phase"] == expected["by_phase"]
    assert info["events"]["by_category"] == expected["by_category"]
    assert info["span"]["start_ns"] == expected["start_ns"], path
    assert info["span"]["end_ns"] == expected["end_ns"], path
    assert info["profiler_steps"]["count"] == expected["steps"]
    assert info["kernels"]["count"] == expected["kernels"]
    assert info["kernels"]["distinct"] == expected["distinct_kernels"]
    assert info["collectives"] == expected["collectives"]
    assert info["links"]["gpu_activities"] == expected["gpu_activities"]
    assert info["links"]["linked_to_launch"] == expected["linked_to_launch"]
    assert info["rank"] == expected["rank"]
    assert info["world_size"] == expected["world_size"]
    assert info["backend"] == expected["backend"]
    assert len(info["devices"]) == expected["devices"]
    assert info["skipped"]["total"] == 0, info["skipped"]


@pytest.mark.parametrize("relative", SHARED_TRACES)
def test_info_matches_independent_counts(relative, shared_dir, run_rankscope):
    path = str(shared_dir / "traces" / relative)
    out = json.loads(run_rankscope("info", "--json", path).stdout)
    assert out["schema"] == "rankscope.info/1"
    (info,) = out["files"]
    compare(info, counts(path), relative)


def test_rank_conflicts_are_refused_with_a_fix(tmp_path, shared_dir, run_rankscope):
    # The whole hta folder mixes files without any rank with files that have one.
    proc = run_rankscope("info", shared_dir / "traces" / "hta", check=False)
    assert proc.returncode == 1
    assert "cannot tell which rank this file is" in proc.stderr
    # Two files that both say rank 0.
    for name, src in (("a.json.gz", "hta/call_stack_backward_thread/backward_thread.json.gz"),
                      ("b.json.gz", "hta/cuda_event_sync_a100/event_sync_trace.json.gz")):
        (tmp_path / name).write_bytes((shared_dir / "traces" / src).read_bytes())
    proc = run_rankscope("info", tmp_path, check=False)
    assert proc.returncode == 1
    assert f"two files claim rank 0: {tmp_path}/a.json.gz (from distributedInfo) and {tmp_path}/b.json.gz" in proc.stderr


@pytest.fixture(scope="module")
def pytorch_traces(tmp_path_factory):
    """A real 2-rank DDP run (CPU, gloo) recorded with torch.profiler: steps 3-6 (wait 2, warmup 1,
    active 4), in a job of 10 steps (the trace is the profiled cycle's, not a later partial one)."""
    out = tmp_path_factory.mktemp("ddp") / "traces"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    recording.record([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                      str(REPO / "workloads/ddp_train.py"), "--steps", "10", "--profile-dir", str(out),
                      "--with-stack", "--profile-memory"],
                     env=env, timeout=300, clean=[out])
    return out


def test_info_on_real_pytorch_run(pytorch_traces, run_rankscope):
    out = json.loads(run_rankscope("info", "--json", pytorch_traces).stdout)
    assert [f["rank"] for f in out["files"]] == [0, 1]
    for info in out["files"]:
        assert info["world_size"] == 2 and info["backend"] == "gloo"
        assert info["profiler_steps"]["count"] == 4
        assert info["events"]["memory"] > 0  # profile_memory=True
        assert info["events"]["by_category"].get("python_function", 0) > 0  # with_stack=True
        assert info["collectives"]["all_reduce"]["annotations"] > 0
        compare(info, counts(info["path"]), info["path"])


def test_errors_name_the_file_and_keep_going(tmp_path, shared_dir, run_rankscope):
    good = shared_dir / "traces/hta/cpu_only_gloo/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    (tmp_path / "rank34.json.gz").write_bytes(good.read_bytes())
    (tmp_path / "rank1.json").write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur"')
    proc = run_rankscope("info", tmp_path, check=False)
    assert proc.returncode == 1
    assert "rank1.json: the file ends at byte" in proc.stderr
    assert "34 (from distributedInfo), world size 300" in proc.stdout
    missing = run_rankscope("info", tmp_path / "nope.json", check=False)
    assert missing.returncode == 1 and "no such file or directory" in missing.stderr


def test_json_files_that_are_not_traces_are_skipped_with_a_warning(tmp_path, shared_dir, run_rankscope):
    good = shared_dir / "traces/hta/cpu_only_gloo/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    (tmp_path / "rank34.json.gz").write_bytes(good.read_bytes())
    (tmp_path / "settings.json").write_text('{"lr": 0.1}')
    out = json.loads(run_rankscope("info", "--json", tmp_path).stdout)
    assert [f["rank"] for f in out["files"]] == [34]
    assert any("settings.json: the JSON object has no \"traceEvents\" array" in w for w in out["warnings"])
    text = run_rankscope("info", tmp_path)
    assert "settings.json: the JSON object has no \"traceEvents\" array: not a Chrome/Kineto trace; skipped" in text.stderr
    alone = run_rankscope("info", tmp_path / "settings.json", check=False)
    assert alone.returncode == 1 and "none of the 1 file(s) is a trace" in alone.stderr


def test_installed_command_when_required(run_rankscope, shared_dir):
    """CI sets RANKSCOPE_REQUIRE_INSTALLED=1 after `pip install .`: the commands must be there."""
    if os.environ.get("RANKSCOPE_REQUIRE_INSTALLED") != "1":
        pytest.skip("not an installed-package run")
    import shutil
    exe = shutil.which("rankscope")
    assert exe, "pip install . did not put rankscope on PATH"
    assert subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip() == "rankscope 0.1.0"
    assert shutil.which("rankscoped"), "pip install . did not put rankscoped on PATH"
    # The package imports without torch and finds the installed command.
    probe = subprocess.run([sys.executable, "-c", "import sys, rankscope; print(rankscope.binary_path()); "
                            "print('torch' in sys.modules)"], capture_output=True, text=True, cwd="/")
    assert probe.stdout.split() == [exe, "False"], probe.stderr
    # The installed command carries the web UI (embedded at build time): an HTML report is written.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        html = pathlib.Path(tmp) / "report.html"
        traces = shared_dir / "traces" / "gpu_h100" / "devKernel"
        proc = subprocess.run([exe, "analyze", str(traces), "--html", str(html)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert 'id="rankscope-data"' in html.read_text()

"""End-to-end capture from live jobs: real PyTorch 2.13 (CPU, gloo, torchrun, 4 ranks), a real
rankscoped, the real CLI. Each test starts its own daemon on a private socket and port."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from capture_helpers import (Daemon, info, job_env, processes, start_job, stop_job, torchrun,
                             trace_files, wait_for, wait_for_ranks)

NPROC = 4


@pytest.fixture
def daemon(rankscoped_bin, tmp_path):
    d = Daemon(rankscoped_bin, tmp_path / "out").start()
    yield d
    d.stop()


@pytest.fixture
def job_cleanup():
    jobs = []
    yield jobs
    for j in jobs:
        stop_job(j)


def trace_and_check(run_rankscope, port, steps=3, extra=()):
    """`rankscope trace --steps N --wait` -> one trace per rank, each with the same steps."""
    proc = run_rankscope("trace", "--port", port, "--steps", steps, "--wait", "--timeout-s", 90, "--json", *extra,
                         check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["produced"] == outcome["expected"] == NPROC, outcome
    (capture_dir,) = outcome["dirs"]
    files = trace_files(capture_dir)
    assert [f.name for f in files] == [f"rank{r}.pt.trace.json.gz" for r in range(NPROC)]
    assert (pathlib.Path(capture_dir) / "capture.manifest").exists()
    return outcome, info(run_rankscope, capture_dir)


def test_tracker_trace_every_rank(daemon, run_rankscope, tmp_path, job_cleanup):
    job = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "tracker", "--step-sleep-ms", 10),
                    job_env(daemon.socket), tmp_path / "job.log")
    job_cleanup.append(job)
    wait_for_ranks(run_rankscope, daemon.port, NPROC, min_step=5)
    outcome, files = trace_and_check(run_rankscope, daemon.port, extra=["--record-shapes"])
    assert [f["rank"] for f in files] == list(range(NPROC))
    for f in files:
        assert f["world_size"] == NPROC and f["backend"] == "gloo"
        assert f["profiler_steps"]["count"] == 3
        assert f["events"]["by_category"].get("cpu_op", 0) > 0
    # Aligned: every rank recorded the same three steps, the ones the CLI planned.
    firsts = {f["profiler_steps"]["first"] for f in files}
    assert len(firsts) == 1, files
    planned = {t["start_step"] for h in outcome["hosts"] for t in h["targets"]}
    assert planned == firsts
    # ... and the capture analyses: every rank's 3 steps, collectives matched across the ranks.
    (capture_dir,) = outcome["dirs"]
    report = json.loads(run_rankscope("analyze", capture_dir, "--json", "-").stdout)
    assert [r["rank"] for r in report["ranks"]] == list(range(NPROC))
    assert all(len(r["steps"]) == 3 for r in report["ranks"])
    assert report["cluster"]["collectives"]["matched"] > 0, report["cluster"]["collectives"]
    # The collector recorded the steps' CPU run and run-queue wait into every trace (cpu_contention.h).
    for r in report["ranks"]:
        sched = r["cpu_sched"]
        assert sched and sched["run_ns"] > 0 and sched["wait_ns"] >= 0 and sched["threads"] >= 1, r["cpu_sched"]
    # The job keeps training after the trace.
    before = max(p["step"] for p in processes(run_rankscope, daemon.port))
    wait_for(lambda: max(p["step"] for p in processes(run_rankscope, daemon.port)) > before + 5, 30, "more steps")


def test_zero_code_run(daemon, run_rankscope, rankscope_bin, tmp_path, job_cleanup):
    cmd = [rankscope_bin, "run", "--", *torchrun(NPROC, "--steps", 100000, "--collector", "none", "--step-sleep-ms", 10)]
    job = start_job(cmd, job_env(daemon.socket), tmp_path / "job.log")
    job_cleanup.append(job)
    procs = wait_for_ranks(run_rankscope, daemon.port, NPROC, min_step=5)
    # torchrun's launcher never steps an optimizer, so it never registers.
    assert len(processes(run_rankscope, daemon.port)) == NPROC
    assert sorted(p["rank"] for p in procs) == list(range(NPROC))
    _, files = trace_and_check(run_rankscope, daemon.port)
    assert [f["rank"] for f in files] == list(range(NPROC))
    assert len({f["profiler_steps"]["first"] for f in files}) == 1
    assert all(f["profiler_steps"]["count"] == 3 for f in files)
    # `trace --analyze` waits for the traces, then prints the analysis of every rank.
    proc = run_rankscope("trace", "--port", daemon.port, "--steps", 3, "--analyze", "--timeout-s", 90, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Ranks" in proc.stdout and "Collectives  matched across ranks" in proc.stdout, proc.stdout


def test_kineto_daemon_mode_without_rankscope_code(rankscoped_bin, run_rankscope, tmp_path, job_cleanup):
    # The real Kineto endpoint: the abstract socket "dynolog", as plain PyTorch expects it.
    d = Daemon(rankscoped_bin, tmp_path / "out", kineto=True,
               extra=["--kineto-staging", str(tmp_path / "staging")]).start()
    try:
        env = job_env(None, KINETO_USE_DAEMON=1)
        env.pop("PYTHONPATH")  # no rankscope code at all in the job
        job = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "none", "--step-sleep-ms", 10), env,
                        tmp_path / "job.log")
        job_cleanup.append(job)
        wait_for_ranks(run_rankscope, d.port, NPROC, client="kineto")
        proc = run_rankscope("trace", "--port", d.port, "--steps", 3, "--roundup", 50, "--wait", "--timeout-s", 90,
                             "--json", check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outcome = json.loads(proc.stdout)
        assert outcome["produced"] == NPROC, outcome
        host = outcome["hosts"][0]
        assert all(t["via"] == "kineto" for t in host["targets"])
        # torchrun's agent polls too (it imports torch) but has no RANK: left out, and said so.
        assert any("no RANK" in n for n in host["notes"]), host["notes"]
        files = info(run_rankscope, outcome["dirs"][0])
        assert [f["rank"] for f in files] == list(range(NPROC))
        for f in files:
            assert f["events"]["by_category"].get("cpu_op", 0) > 0
            # Kineto's iteration mode brackets three optimizer steps.
            assert f["events"]["by_category"].get("user_annotation", 0) >= 3
        assert not list((tmp_path / "staging").rglob("*.json")), "staged Kineto output must be moved away"
    finally:
        d.stop()


def test_auto_trigger_fires_on_injected_slowdown(daemon, run_rankscope, tmp_path, job_cleanup):
    # Factor 2 (default 1.2): the 150 ms fault is far above it, load jitter on 2 shared cores is not.
    env = job_env(daemon.socket, RANKSCOPE_SLOW_STEPS=3, RANKSCOPE_SLOW_FACTOR=2.0, RANKSCOPE_SLOW_SECONDS=0.5,
                  RANKSCOPE_AUTO_TRIGGER=1)
    job = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "tracker", "--step-sleep-ms", 10,
                             "--fault", "slow-forward:2:150", "--fault-from-step", 60),
                    env, tmp_path / "job.log")
    job_cleanup.append(job)
    out = daemon.out_dir

    def auto_traces():
        dirs = [d for d in out.glob("*/auto-*") if len(trace_files(d)) == NPROC and (d / "capture.manifest").exists()]
        return dirs
    (auto_dir,) = wait_for(auto_traces, 150, "an automatic trace of every rank")
    manifest = json.loads((auto_dir / "capture.manifest").read_text())
    assert "auto-trigger" in manifest["reason"] and "baseline" in manifest["reason"], manifest["reason"]
    files = info(run_rankscope, auto_dir)
    # Recorded after the fault began, so the injected compute is in the slow rank's trace.
    assert all(f["profiler_steps"]["first"] >= 60 for f in files)
    assert files[2]["events"]["by_category"]["user_annotation"] > files[0]["events"]["by_category"]["user_annotation"]
    # Cooldown: one automatic trace, not a loop, while the slowdown lasts.
    time.sleep(8)
    assert len(list(out.glob("*/auto-*"))) == 1


def test_snapshot_of_a_rank_stuck_in_a_collective(daemon, run_rankscope, tmp_path, job_cleanup):
    job = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "tracker", "--step-sleep-ms", 10,
                             "--fault", "hang:1:0", "--fault-from-step", 20),
                    job_env(daemon.socket), tmp_path / "job.log")
    job_cleanup.append(job)
    wait_for_ranks(run_rankscope, daemon.port, NPROC, min_step=15)

    def stuck():
        steps = [p["step"] for p in processes(run_rankscope, daemon.port)]
        time.sleep(2.5)  # two heartbeats
        again = [p["step"] for p in processes(run_rankscope, daemon.port)]
        return len(again) == NPROC and steps == again
    wait_for(stuck, 60, "the job to hang")
    proc = run_rankscope("snapshot", "--port", daemon.port, "--json", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["produced"] == NPROC
    (snap_dir,) = outcome["dirs"]
    stacks = {r: (pathlib.Path(snap_dir) / f"rank{r}.stacks.txt").read_text() for r in range(NPROC)}
    for r, text in stacks.items():
        assert text.startswith("rankscope-stacks 1\n")
        assert f"rank: {r}\n" in text
        main = text.split("\n\nthread ")[1]
        assert main.split("\n")[0].endswith('"MainThread" main')
    # The stuck rank sleeps in Python; the others are blocked in C inside the gradient
    # all-reduce that rank 1 never joins: their main thread is in backward().
    assert "time.sleep(1)" in stacks[1].split("\n\nthread ")[1]
    for r in (0, 2, 3):
        main = stacks[r].split("\n\nthread ")[1]
        assert "loss.backward()" in main, main
    # Not *.json: the trace reader must not take stacks for traces.
    assert not list(pathlib.Path(snap_dir).glob("*.json*"))


def test_job_keeps_training_when_the_daemon_dies(rankscoped_bin, run_rankscope, tmp_path):
    d = Daemon(rankscoped_bin, tmp_path / "out").start()
    steps = 400
    job = start_job(torchrun(NPROC, "--steps", steps, "--collector", "tracker", "--step-sleep-ms", 10),
                    job_env(d.socket), tmp_path / "job.log")
    try:
        wait_for_ranks(run_rankscope, d.port, NPROC, min_step=5)
        d.kill(signal.SIGKILL)
        time.sleep(3)
        # A new daemon on the same socket: the ranks re-register by themselves and can be traced.
        d2 = Daemon(rankscoped_bin, tmp_path / "out2")
        d2.socket = d.socket
        d2.start()
        try:
            wait_for_ranks(run_rankscope, d2.port, NPROC, timeout=30)
            _, files = trace_and_check(run_rankscope, d2.port, steps=2)
            assert [f["rank"] for f in files] == list(range(NPROC))
            d2.kill(signal.SIGKILL)
        finally:
            d2.stop()
        assert job.wait(timeout=240) == 0
        assert f"trained {steps} steps on {NPROC} ranks" in (tmp_path / "job.log").read_text()
    finally:
        stop_job(job)


def test_job_trains_with_no_daemon_at_all(tmp_path):
    env = job_env("@rankscope-test-nobody-listens", RANKSCOPE_OUT_DIR=tmp_path / "local")
    proc = subprocess.run(torchrun(2, "--steps", 30, "--collector", "tracker"), env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "trained 30 steps on 2 ranks" in proc.stdout
    assert "rankscope" not in proc.stderr  # not even a warning
    assert not (tmp_path / "local").exists()  # nothing written while idle

"""Hang diagnosis end to end (docs/hang.md): real 4-rank torchrun/gloo jobs on CPU, each hung
on purpose in one way (workloads/hang_job.py), one real rankscoped that detects every hang by
itself, snapshots the job (py-spy for the rank whose collector cannot answer, and for the
DataLoader workers of the rank that waits on them), analyses it and serves the result; plus a
healthy job that pauses for a checkpoint shorter than the threshold. The skipping job also
writes the pickled Flight Recorder dumps NCCL writes on a timeout, read on their own.

Two hosts: two more daemons (peers of each other, different ports) and one 4-rank job
launched as two torchrun "nodes" of 2 ranks, each registered with its own daemon; rank 3, on
the second daemon's host, stops. The daemon of rank 0 snapshots both hosts, gathers the other
host's files over HTTP and names rank 3; `rankscope hang --host A --host B` gathers the same.

All jobs run at once and share the daemons (one module fixture), so the whole file costs about
one hang's wall time. Assertions are on what was captured and concluded, never on timing:
the waits are generous because the machine may be loaded."""

import json
import pathlib
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from capture_helpers import REPO, Daemon, descendants, free_port, job_env, start_job, stop_job, wait_for

WORKLOAD = REPO / "workloads" / "hang_job.py"
NPROC = 4
# Thresholds small enough for a test, far above the healthy job's 4 s checkpoint pause.
DAEMON_FLAGS = ["--hang-min-stall-s", "15", "--hang-fr-pending-s", "15", "--hang-interval-ms", "500",
                "--hang-snapshot-timeout-s", "40", "--native-stacks-after-s", "5", "--no-telemetry"]
HANGS = {  # job name -> fault
    "hang-stop": "stop:1@15",
    "hang-skip": "skip:2@15",
    "hang-size": "size:1@15",
    "hang-op": "op:3@15",
    "hang-gil": "gil:2@15",
    "hang-dataloader": "dataloader:1@15",
}
HEALTHY = "healthy-checkpoint"
# The job that also writes pickled Flight Recorder dumps (as NCCL does on a timeout).
PICKLED = "hang-skip"
MULTIHOST = "hang-twohosts"


def torchrun(*args):
    return [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={NPROC}", "--standalone",
            str(WORKLOAD), *map(str, args)]


def torchrun_node(node, master_port, *args):
    """One of two "hosts" of a 4-rank job: 2 ranks each, one static rendezvous."""
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", f"--node-rank={node}", "--nproc-per-node=2",
            "--master-addr=127.0.0.1", f"--master-port={master_port}", str(WORKLOAD), *map(str, args)]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        body = r.read().decode()
    return json.loads(body) if path.startswith("/v1") else body


@pytest.fixture(scope="module")
def hung(rankscoped_bin, tmp_path_factory):
    if not shutil.which("py-spy"):
        pytest.fail("py-spy is missing: scripts/setup.sh --deps installs it")
    tmp = tmp_path_factory.mktemp("hang")
    daemon = Daemon(rankscoped_bin, tmp / "out", extra=DAEMON_FLAGS).start()
    # Two "hosts": daemons that know each other (--peers), on ports chosen before they start.
    ports = [free_port(), free_port()]
    for i in range(2):
        (tmp / f"peers{i}").write_text(f"# the other host\n127.0.0.1:{ports[1 - i]}\n")
    hosts = [Daemon(rankscoped_bin, tmp / f"out-host{i}", port=ports[i],
                    extra=[*DAEMON_FLAGS, "--peers", tmp / f"peers{i}"]) for i in range(2)]
    daemons = [daemon]
    jobs = {}
    try:
        for d in hosts:
            daemons.append(d.start())
        (tmp / "pickled").mkdir()
        for name, fault in HANGS.items():
            extra, env = [], {}
            if name == PICKLED:
                extra = ["--fr-dump-after-s", 8]
                env = {"TORCH_FR_DUMP_TEMP_FILE": tmp / "pickled" / "nccl_trace_rank_"}
            jobs[name] = start_job(torchrun("--fault", fault, *extra), job_env(daemon.socket, RANKSCOPE_JOB=name, **env),
                                   tmp / f"{name}.log")
        jobs[HEALTHY] = start_job(torchrun("--fault", "pause:0@15", "--pause-s", 4),
                                  job_env(daemon.socket, RANKSCOPE_JOB=HEALTHY), tmp / f"{HEALTHY}.log")
        master = free_port()
        for node, d in enumerate(hosts):
            jobs[f"{MULTIHOST}-{node}"] = start_job(torchrun_node(node, master, "--fault", "stop:3@15"),
                                                    job_env(d.socket, RANKSCOPE_JOB=MULTIHOST),
                                                    tmp / f"{MULTIHOST}-{node}.log")

        def analysed():
            hangs = get(daemon.port, "/v1/hangs")["hangs"]
            done = {h["job"]: h for h in hangs if h["state"] in ("analysed", "failed")}
            done.update({h["job"]: h for h in get(hosts[0].port, "/v1/hangs")["hangs"]
                         if h["state"] in ("analysed", "failed")})
            return done if all(name in done for name in [*HANGS, MULTIHOST]) else None
        results = wait_for(analysed, 600, "every hung job to be detected, snapshotted and analysed", interval=2)
        yield {"daemon": daemon, "hosts": hosts, "jobs": jobs, "results": results, "tmp": tmp}
    finally:
        for job in jobs.values():
            stop_job(job)
        for d in daemons:
            d.stop()


def findings(result):
    assert result["state"] == "analysed", result
    return result["report"]["findings"]


def evidence(finding, kind, subject_kind=None):
    return [e for e in finding["evidence"]
            if e["kind"] == kind and (subject_kind is None or e.get("subject_kind") == subject_kind)]


def test_a_rank_that_stops_stepping(hung):
    (first, *_) = findings(hung["results"]["hang-stop"])
    assert first["kind"] == "hang_missing_from_collective" and first["ranks"] == [1]
    (waiting,) = evidence(first, "collective_waiting")
    assert waiting["ranks"] == [0, 2, 3] and waiting["subject"].startswith("gloo:all_reduce")
    (inner,) = evidence(first, "stack_frame", "innermost")
    assert inner["detail"] == "time.sleep(1)" and "hang_job.py" in inner["subject"]


def test_a_rank_that_skips_a_collective(hung):
    (first, *_) = findings(hung["results"]["hang-skip"])
    assert first["kind"] == "hang_missing_from_collective" and first["ranks"] == [2]
    (waiting,) = evidence(first, "collective_waiting")
    assert "metrics" in waiting["detail"] and waiting["ranks"] == [0, 1, 3]
    # Meanwhile it waits in the next step's gradient all-reduce, which the others never reach.
    (elsewhere,) = evidence(first, "collective_elsewhere")
    assert elsewhere["rank"] == 2 and "default_pg" in elsewhere["detail"]
    assert "skipped a collective" in first["sentence"]


def test_a_rank_that_calls_a_collective_of_another_size(hung):
    (first, *_) = findings(hung["results"]["hang-size"])
    assert first["kind"] == "hang_collective_mismatch" and first["ranks"] == [1]
    assert first["subject_detail"] == "size"
    (odd,) = evidence(first, "collective_call", "odd")
    assert odd["ranks"] == [1] and "[[0]]" in odd["subject"]


def test_a_rank_that_calls_another_collective(hung):
    (first, *_) = findings(hung["results"]["hang-op"])
    assert first["kind"] == "hang_collective_mismatch" and first["ranks"] == [3]
    assert first["subject_detail"] == "op"
    (odd,) = evidence(first, "collective_call", "odd")
    assert odd["subject"].startswith("gloo:barrier")
    (majority,) = evidence(first, "collective_call", "majority")
    assert majority["subject"].startswith("gloo:all_reduce") and majority["ranks"] == [0, 1, 2]


def test_a_rank_stuck_in_c_holding_the_gil(hung):
    result = hung["results"]["hang-gil"]
    (first, *_) = findings(result)
    assert first["kind"] == "hang_unresponsive_rank" and first["ranks"] == [2]
    assert first["subject_kind"] == "native_frame" and "sleep" in first["subject"]
    ranks = {r["rank"]: r for r in result["report"]["ranks"]}
    assert ranks[2]["stack_taken_by"] == "py-spy"
    assert all(ranks[r]["stack_taken_by"] == "collector" for r in (0, 1, 3))
    (waiting,) = evidence(first, "collective_waiting")
    assert waiting["ranks"] == [0, 1, 3]
    stacks = (pathlib.Path(result["dir"]) / "rank2.stacks.txt").read_text()
    assert "taken: py-spy dump --native" in stacks and "Native " in stacks


def test_a_dataloader_worker_deadlock(hung):
    result = hung["results"]["hang-dataloader"]
    (first, *_) = findings(result)
    assert first["kind"] == "hang_dataloader_wait" and first["ranks"] == [1]
    (main,) = [r for r in result["report"]["thread_roles"] if r["role"] == "main"]
    (group,) = [g for g in main["groups"] if 1 in g["ranks"]]
    assert group["ranks"] == [1] and not group["majority"]
    assert any(f["file"].endswith("torch/utils/data/dataloader.py") for f in group["frames"])
    # The daemon took the stack of rank 1's DataLoader worker (py-spy): stuck in the Dataset's
    # __getitem__, on the lock it already holds. Only rank 1's: the others do not wait on theirs.
    (worker,) = evidence(first, "stack_frame", "dataloader_worker")
    assert worker["rank"] == 1 and "hang_job.py" in worker["subject"] and "__getitem__" in worker["subject"], worker
    assert "__getitem__" in first["next"]["subject"] and "DataLoader worker" in first["sentence"]
    ranks = {r["rank"]: r for r in result["report"]["ranks"]}
    (stacks,) = ranks[1]["dataloader_workers"]
    assert stacks["pid"] == worker["values"]["pid"] and stacks["file"].endswith("rank1.worker0.stacks.txt")
    assert all(not ranks[r]["dataloader_workers"] for r in (0, 2, 3))
    text = (pathlib.Path(result["dir"]) / "rank1.worker0.stacks.txt").read_text()
    assert "taken: py-spy dump --native" in text and f"parent_pid: {ranks[1]['pid']}" in text
    assert "torch/utils/data/_utils/worker.py" in text


def test_pickled_flight_recorder_dumps_as_pytorch_writes_them(hung, run_rankscope):
    """The dumps NCCL writes on a timeout are pickles (torch._C._distributed_c10d._dump_fr_trace()):
    on their own, without stacks, they name the rank that skipped the collective."""
    pickled = hung["tmp"] / "pickled"
    wait_for(lambda: len(list(pickled.glob("nccl_trace_rank_[0-9]"))) == NPROC, 300, "every rank's pickled dump")
    assert all(f.read_bytes()[:2] == b"\x80\x02" for f in pickled.glob("nccl_trace_rank_[0-9]"))
    report = json.loads(run_rankscope("hang", "--json", "-", pickled).stdout)
    assert not report["problems"], report["problems"]
    (first, *_) = report["findings"]
    assert first["kind"] == "hang_missing_from_collective" and first["ranks"] == [2], first
    (waiting,) = evidence(first, "collective_waiting")
    assert waiting["ranks"] == [0, 1, 3] and "metrics" in waiting["detail"]
    # A truncated pickle is named, the rest analysed.
    cut = hung["tmp"] / "pickled-cut"
    shutil.copytree(pickled, cut)
    dump = cut / "nccl_trace_rank_0"
    dump.write_bytes(dump.read_bytes()[:100])
    report = json.loads(run_rankscope("hang", "--json", "-", cut).stdout)
    (problem,) = report["problems"]
    assert problem["path"].endswith("nccl_trace_rank_0") and "truncated" in problem["message"]


def test_a_hang_on_two_hosts_is_gathered_and_analysed_where_rank0_is(hung, run_rankscope):
    host_a, host_b = hung["hosts"]
    result = hung["results"][MULTIHOST]
    (first, *_) = findings(result)
    assert first["kind"] == "hang_missing_from_collective" and first["ranks"] == [3], first
    (inner,) = evidence(first, "stack_frame", "innermost")
    assert inner["rank"] == 3 and inner["detail"] == "time.sleep(1)"
    ranks = {r["rank"]: r for r in result["report"]["ranks"]}
    assert sorted(ranks) == [0, 1, 2, 3] and all(r["has_stacks"] and r["has_flight_recorder"] for r in ranks.values())
    # Rank 0's daemon asked the other one and gathered its ranks 2 and 3.
    (peer,) = result["peers"]
    assert peer["peer"] == f"127.0.0.1:{host_b.port}" and peer["state"] == "gathered" and peer["ranks"] == [2, 3], peer
    here = pathlib.Path(result["dir"])
    for name in ("rank2.stacks.txt", "rank3.flightrecorder", f"capture.127.0.0.1-{host_b.port}.manifest",
                 "hang.report"):
        assert (here / name).is_file(), name
    # The other daemon took its part for it (and, told so, no snapshot of its own).
    theirs = [h for h in get(host_b.port, "/v1/hangs")["hangs"] if h["capture"] == result["capture"]]
    assert [h["state"] for h in theirs] == ["taken for a peer"], theirs
    assert 'rankscope_hang_detected{job="hang-twohosts"} 1' in get(host_b.port, "/metrics")
    # The same from the CLI: every daemon's part of that snapshot, into one directory.
    out = hung["tmp"] / "gathered"
    proc = run_rankscope("hang", "--host", f"127.0.0.1:{host_a.port}", "--host", f"127.0.0.1:{host_b.port}",
                         "--id", result["capture"], "--out", out, "--json", "-")
    report = json.loads(proc.stdout)
    assert report["findings"][0]["ranks"] == [3] and report["findings"][0]["kind"] == "hang_missing_from_collective"
    assert sorted(p.name for p in out.glob("rank*.stacks.txt")) == [f"rank{r}.stacks.txt" for r in range(4)]
    assert "gathered" in proc.stderr
    # Without --id: the newest hang the daemons detected, which is this one.
    proc = run_rankscope("hang", "--host", f"127.0.0.1:{host_a.port}", "--host", f"127.0.0.1:{host_b.port}",
                         "--out", hung["tmp"] / "gathered-newest", "--json", "-")
    assert json.loads(proc.stdout)["capture"] == result["capture"]


def test_the_result_is_kept_served_and_shown(hung, run_rankscope):
    port = hung["daemon"].port
    metrics = get(port, "/metrics")
    for name in HANGS:
        assert f'rankscope_hang_detected{{job="{name}"}} 1' in metrics
    status = run_rankscope("status", "--port", port).stdout
    assert status.count("HANG") >= len(HANGS)
    for name, result in hung["results"].items():
        report = json.loads((pathlib.Path(result["dir"]) / "hang.report").read_text())
        assert report["schema"] == "rankscope.hang/1" and report["findings"]
    text = run_rankscope("hang", hung["results"]["hang-stop"]["dir"]).stdout
    assert "hang_missing_from_collective" in text and "rank 1 never entered" in text
    # One automatic snapshot per job (the cooldown), however long it stays hung.
    assert len(get(port, "/v1/hangs")["hangs"]) == len(HANGS)


def test_a_healthy_job_gets_no_finding_and_no_hang(hung, run_rankscope):
    port = hung["daemon"].port
    assert hung["jobs"][HEALTHY].poll() is None, "the healthy job stopped"
    # It trains on (it is stopped at the end of the module), past its 4 s checkpoint pause at
    # step 15 by more than the 15 s threshold by the time every hang was analysed.
    procs = [p for p in json.loads(run_rankscope("ps", "--port", port, "--json").stdout)[0]["processes"]
             if p["job"] == HEALTHY]
    assert len(procs) == NPROC and min(p["step"] for p in procs) > 15
    assert HEALTHY not in {h["job"] for h in get(port, "/v1/hangs")["hangs"]}
    assert f'rankscope_hang_detected{{job="{HEALTHY}"}} 0' in get(port, "/metrics")
    # A snapshot while it trains: nothing stands out.
    proc = run_rankscope("snapshot", "--port", port, "--job", HEALTHY, "--analyze")
    assert "Findings\n  none" in proc.stdout, proc.stdout + proc.stderr


def test_bad_and_partial_inputs(hung, run_rankscope, tmp_path):
    stop_dir = pathlib.Path(hung["results"]["hang-stop"]["dir"])
    partial = tmp_path / "partial"
    shutil.copytree(stop_dir, partial)
    (partial / "rank2.stacks.txt").unlink()
    (partial / "rank2.flightrecorder").unlink()
    fr = partial / "rank0.flightrecorder"
    fr.write_bytes(fr.read_bytes()[: fr.stat().st_size // 2])
    proc = run_rankscope("hang", "--json", "-", partial)
    report = json.loads(proc.stdout)
    assert any("no stack snapshot of rank 2" in w for w in report["warnings"])
    assert any("truncated" in p["message"] for p in report["problems"])
    assert report["findings"][0]["ranks"] == [1]  # still the culprit, from ranks 1 and 3's dumps and the stacks
    # Two different jobs: a clear refusal, then --job picks one.
    other = pathlib.Path(hung["results"]["hang-op"]["dir"])
    proc = run_rankscope("hang", stop_dir, other, check=False)
    assert proc.returncode == 2 and "2 different jobs" in proc.stderr and "--job" in proc.stderr
    assert run_rankscope("hang", "--job", "hang-op", stop_dir, other).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_rankscope("hang", empty, check=False)
    assert proc.returncode == 2 and "no readable stack snapshot" in proc.stderr

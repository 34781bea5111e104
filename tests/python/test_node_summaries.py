"""The map on the node (docs/scale.md): after a capture, rankscoped writes each rank's summary
beside its trace (low-priority threads, --summary-threads), serves them over HTTP, and `rankscope
trace --analyze` gathers summaries instead of traces. The report is the one of analysing the
traces centrally. Real PyTorch 2.13 (CPU, gloo, torchrun, 4 ranks), a real rankscoped."""

import json
import pathlib
import re
import urllib.request

import pytest

from capture_helpers import Daemon, job_env, start_job, stop_job, torchrun, trace_files, wait_for, wait_for_ranks
from test_summary import strip_timings

NPROC = 4


@pytest.fixture
def daemon(rankscoped_bin, tmp_path):
    d = Daemon(rankscoped_bin, tmp_path / "out", extra=["--summary-threads", "2"]).start()
    yield d
    d.stop()


@pytest.fixture
def job(daemon, run_rankscope, tmp_path):
    proc = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "tracker", "--step-sleep-ms", 10),
                     job_env(daemon.socket), tmp_path / "job.log")
    yield proc
    stop_job(proc)


def report(run_rankscope, tmp_path, *args):
    out = tmp_path / "r.json"
    run_rankscope("analyze", "--color", "never", "--json", out, *args)
    return strip_timings(json.loads(out.read_text()))


def test_capture_analyses_from_node_summaries(daemon, job, run_rankscope, tmp_path):
    wait_for_ranks(run_rankscope, daemon.port, NPROC, min_step=5)
    proc = run_rankscope("trace", "--port", daemon.port, "--steps", 3, "--timeout-s", 90, "--http-timeout-s", 120,
                         "--id", "nodesum", "--analyze", "--gather-summaries", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"127.0.0.1:{daemon.port}: {NPROC} summaries" in proc.stdout, proc.stdout
    gathered = pathlib.Path(re.search(r"gathered over HTTP into (\S+):", proc.stdout).group(1))
    (capture_dir,) = {p.parent for p in daemon.out_dir.rglob("rank0.pt.trace.json.gz")}
    # The daemon wrote each rank's summary beside its trace, as the trace's user.
    traces = trace_files(capture_dir)
    assert len(traces) == NPROC
    for t in traces:
        rsum = t.with_name(t.name + ".rsum")
        assert rsum.exists() and rsum.stat().st_uid == t.stat().st_uid
    # Only summaries and the small files beside them travelled, no trace.
    (host_dir,) = gathered.iterdir()
    names = sorted(p.name for p in host_dir.iterdir())
    assert [n for n in names if n.endswith(".rsum")] == sorted(t.name + ".rsum" for t in traces)
    assert not [n for n in names if n.endswith(".json.gz")]
    assert "capture.manifest" in names
    # Same report as the traces analysed centrally (paths aside: the summaries stand for traces
    # of the same names in the gathered directory).
    central = report(run_rankscope, tmp_path, capture_dir, "--no-summaries")
    from_node = json.loads(json.dumps(report(run_rankscope, tmp_path, gathered)).replace(str(host_dir), str(capture_dir)))
    assert from_node == central
    # In place, the current summaries beside the traces stand for them: the same report again.
    assert report(run_rankscope, tmp_path, capture_dir) == central
    # The API lists them; a trace itself is not served.
    base = f"http://127.0.0.1:{daemon.port}/v1/captures/nodesum"
    listing = json.load(urllib.request.urlopen(base + "/summaries"))
    assert len(listing["summaries"]) == NPROC and listing["progress"]["pending"] == 0
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "/files/" + traces[0].name)
    assert refused.value.code == 404

"""`mpirun -np N rankscope analyze --mpi PATHS...` (docs/scale.md): each process maps a slice of
the files, process 0 reduces; the report is the single-process report. Skipped only when this
rankscope was built without MPI or mpirun is missing."""

import json
import os
import shutil
import subprocess

import pytest

from test_summary import GROUND_TRUTH, SHARED_JOBS, strip_timings

# Containers often forbid the cross-memory attach Open MPI's shared-memory transport prefers.
MPI_ENV = {**os.environ, "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@pytest.fixture(scope="module")
def mpirun(rankscope_bin):
    probe = subprocess.run([rankscope_bin, "analyze", "--mpi", "--help"], capture_output=True, text=True)
    if "--mpi" not in probe.stdout:
        pytest.fail("analyze has no --mpi option")
    built = subprocess.run([rankscope_bin, "analyze", "--mpi", "/nonexistent"], capture_output=True, text=True,
                           env=MPI_ENV, timeout=120)
    if "built without MPI" in built.stderr:
        pytest.skip("rankscope was built without MPI")
    path = shutil.which("mpirun")
    if not path:
        pytest.skip("no mpirun")
    return path


def run_mpi(mpirun, rankscope_bin, processes, *args):
    cmd = [mpirun, "-np", str(processes), "--oversubscribe", "--allow-run-as-root", rankscope_bin, "analyze",
           "--mpi", "--threads", "1", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def compare(mpirun, rankscope_bin, run_rankscope, tmp_path, job, processes):
    single = tmp_path / "single.json"
    text = run_rankscope("analyze", "--color", "never", "--json", single, job).stdout
    spread = tmp_path / "mpi.json"
    proc = run_mpi(mpirun, rankscope_bin, processes, "--color", "never", "--json", spread, job)
    assert strip_timings(json.loads(spread.read_text())) == strip_timings(json.loads(single.read_text()))
    assert proc.stdout == text  # one report, from process 0


@pytest.mark.parametrize("name", ["clean", "node", "collective"])
def test_two_processes_give_the_single_process_report(name, tmp_path, mpirun, rankscope_bin, run_rankscope):
    compare(mpirun, rankscope_bin, run_rankscope, tmp_path, GROUND_TRUTH / name, 2)


@pytest.mark.parametrize("relative", SHARED_JOBS[:4])
def test_two_processes_on_shared_traces(relative, tmp_path, shared_dir, mpirun, rankscope_bin, run_rankscope):
    compare(mpirun, rankscope_bin, run_rankscope, tmp_path, shared_dir / "traces" / relative, 2)


def test_more_processes_than_files_and_mixed_summaries(tmp_path, mpirun, rankscope_bin, run_rankscope):
    job = tmp_path / "job"
    shutil.copytree(GROUND_TRUTH / "data", job)
    run_rankscope("summarize", job / "rank0.pt.trace.json.gz", job / "rank4.pt.trace.json.gz")
    compare(mpirun, rankscope_bin, run_rankscope, tmp_path, job, 8)


def test_a_bad_file_is_reported_once(tmp_path, mpirun, rankscope_bin, run_rankscope):
    job = tmp_path / "job"
    shutil.copytree(GROUND_TRUTH / "clean", job)
    (job / "rank6.pt.trace.json").write_text('{"traceEvents": [')
    cmd = [mpirun, "-np", "3", "--oversubscribe", "--allow-run-as-root", rankscope_bin, "analyze", "--mpi",
           "--threads", "1", job]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV, timeout=600)
    assert proc.returncode != 0
    assert proc.stderr.count("rank6.pt.trace.json") == 1
    assert "6 ranks" in proc.stdout  # process 0 still reports the readable ranks

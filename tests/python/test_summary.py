"""Rank summaries (.rsum, docs/scale.md): `rankscope summarize` writes each rank's summary, and
`rankscope analyze` reading summaries - beside the traces or alone - reports exactly what it
reports from the traces. Bad summaries are clear errors; stale ones are passed over."""

import json
import os
import pathlib
import shutil
import struct

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GROUND_TRUTH = REPO / "tests" / "data" / "cluster" / "ground_truth"
LOCAL_JOBS = sorted(p.name for p in GROUND_TRUTH.iterdir() if p.is_dir())
# Shared jobs: directories holding traces (a capture with its manifest and telemetry, multi-rank
# jobs, single traces).
SHARED_JOBS = ["gpu_h100/devClean", "gpu_h100/devKernel", "hta/nccl_2rank_a100", "hta/trace_diff_test_v100",
               "kineto/resnet50_workers4", "hta/cpu_only_gloo", "tracelens/mi210_gpu_only"]


def strip_timings(report):
    """Wall-clock read and analysis times are measurements of the run, not of the job."""
    for rank in report["ranks"]:
        rank.pop("timings", None)
    return report


def analyze(run_rankscope, *args):
    proc = run_rankscope("analyze", "--color", "never", "--json", "report.json", *args)
    return proc


def report_of(run_rankscope, tmp, *args):
    out = tmp / "report.json"
    proc = run_rankscope("analyze", "--color", "never", "--json", out, *args)
    return strip_timings(json.loads(out.read_text())), proc.stdout, proc.stderr


def copy_job(src, dst):
    shutil.copytree(src, dst)
    return dst


def check_same_report(run_rankscope, tmp_path, job):
    before, text_before, _ = report_of(run_rankscope, tmp_path, job)
    listing = run_rankscope("summarize", job).stdout.split("\n")
    summaries = sorted(job.rglob("*.rsum"))
    assert summaries and len(summaries) == len([line for line in listing if line])
    after, text_after, _ = report_of(run_rankscope, tmp_path, job)
    assert after == before
    assert text_after == text_before
    # The summaries alone, named one by one, stand for the traces beside them.
    alone, text_alone, _ = report_of(run_rankscope, tmp_path, *summaries)
    assert alone == before
    assert text_alone == text_before
    return summaries


@pytest.mark.parametrize("name", LOCAL_JOBS)
def test_summaries_give_the_report_of_the_traces(name, tmp_path, run_rankscope):
    job = copy_job(GROUND_TRUTH / name, tmp_path / name)
    check_same_report(run_rankscope, tmp_path, job)


@pytest.mark.parametrize("relative", SHARED_JOBS)
def test_summaries_of_shared_traces_give_the_same_report(relative, tmp_path, shared_dir, run_rankscope):
    job = copy_job(shared_dir / "traces" / relative, tmp_path / "job")
    check_same_report(run_rankscope, tmp_path, job)


def test_summaries_in_an_output_directory(tmp_path, run_rankscope):
    job = copy_job(GROUND_TRUTH / "node", tmp_path / "job")
    out = tmp_path / "summaries"
    out.mkdir()
    run_rankscope("summarize", job, "-o", out)
    assert not list(job.glob("*.rsum"))
    from_traces, text_traces, _ = report_of(run_rankscope, tmp_path, job)
    from_summaries, text_summaries, _ = report_of(run_rankscope, tmp_path, out)
    assert len(from_summaries["ranks"]) == 6
    # Only the paths differ: the summaries stand for traces of the same names in their directory.
    as_text = json.dumps(from_summaries).replace(str(out), str(job))
    assert json.loads(as_text) == from_traces
    assert text_summaries.replace(str(out), str(job)) == text_traces


def summary_timings(run_rankscope, tmp_path, summary):
    report, _, _ = report_of(run_rankscope, tmp_path, summary)
    return report["ranks"][0]


def raw_timings(tmp_path, run_rankscope, *args):
    out = tmp_path / "timed.json"
    run_rankscope("analyze", "--json", out, *args)
    return [r["timings"] for r in json.loads(out.read_text())["ranks"]]


def test_a_current_summary_is_read_instead_of_the_trace_and_a_stale_one_is_not(tmp_path, run_rankscope):
    job = copy_job(GROUND_TRUTH / "clean", tmp_path / "job")
    run_rankscope("summarize", job)
    stored = raw_timings(tmp_path, run_rankscope, *sorted(job.glob("*.rsum")))
    # The read and analysis times recorded in the summaries come back: the traces were not read.
    assert raw_timings(tmp_path, run_rankscope, job) == stored
    trace = job / "rank3.pt.trace.json.gz"
    st = trace.stat()
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    again = raw_timings(tmp_path, run_rankscope, job)
    assert again[3] != stored[3]  # rank 3 was analysed again (its summary is stale) ...
    assert again[:3] == stored[:3] and again[4:] == stored[4:]  # ... the others were not
    # --no-summaries reads every trace; other analysis options do not use the summaries either.
    assert all(a != b for a, b in zip(raw_timings(tmp_path, run_rankscope, job, "--no-summaries"), stored))
    assert all(a != b for a, b in zip(raw_timings(tmp_path, run_rankscope, job, "--steps", "2:3"), stored))


def damaged(tmp_path, run_rankscope, change):
    job = copy_job(GROUND_TRUTH / "clean", tmp_path / "job")
    run_rankscope("summarize", job)
    summary = job / "rank1.pt.trace.json.gz.rsum"
    data = bytearray(summary.read_bytes())
    summary.write_bytes(bytes(change(data)))
    return job, summary


def flip(data, at):
    data[at] ^= 0x40
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: d[: len(d) // 2], "truncated summary"),
    (lambda d: d[:20], "truncated summary"),
    (lambda d: flip(d, len(d) - 3), "corrupt summary: payload hash mismatch"),
    (lambda d: d[:8] + struct.pack("<I", 99) + d[12:], "summary format version 99 (a newer rankscope)"),
    (lambda d: bytearray(b'{"traceEvents": []}'), "not a rankscope summary"),
])
def test_a_bad_summary_is_a_clear_error(change, message, tmp_path, run_rankscope):
    job, summary = damaged(tmp_path, run_rankscope, change)
    proc = run_rankscope("analyze", summary, check=False)
    assert proc.returncode == 1
    assert f"{summary}: {message}" in proc.stderr
    # Beside its trace, a damaged summary is passed over: the trace is analysed (a warning says
    # why, unless the summary is merely of another format version).
    expected, _, _ = report_of(run_rankscope, tmp_path, job, "--no-summaries")
    got, _, stderr = report_of(run_rankscope, tmp_path, job)
    warnings = got.pop("warnings")
    expected.pop("warnings")
    assert got == expected
    if "version" not in message:
        assert f"{summary}: {message}" in stderr and "analysed the trace instead" in stderr
        assert any("analysed the trace instead" in w for w in warnings)
    else:
        assert warnings == []


def test_a_summary_made_with_other_options_is_refused_alone(tmp_path, run_rankscope):
    job = copy_job(GROUND_TRUTH / "clean", tmp_path / "job")
    run_rankscope("summarize", job, "--steps", "2:3")
    proc = run_rankscope("analyze", job / "rank0.pt.trace.json.gz.rsum", check=False)
    assert proc.returncode == 1
    assert "made with other analysis options (window=auto;steps=2:3" in proc.stderr
    ok = run_rankscope("analyze", "--steps", "2:3", job / "rank0.pt.trace.json.gz.rsum")
    assert ok.returncode == 0

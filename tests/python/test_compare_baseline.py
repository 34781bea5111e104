"""A job's own baseline, end to end (docs/compare.md, "A job's baseline"): a real rankscoped with
--baseline-first-healthy, a real 2-rank DDP job (CPU, gloo, torchrun) with the collector, and the
real CLI. The job's first complete trace becomes its baseline; `rankscope compare --baseline`
compares with it; then rank 1 slows down (extra compute in forward), the auto-trigger traces the
job, and the daemon compares that slow capture with the baseline by itself: the findings say what
changed since the job was fast, on which rank. `rankscope serve` on the daemon's output directory
then shows that comparison in the capture's Compare tab (a real browser).
"""

import json
import pathlib

import jsonschema
import pytest

from capture_helpers import Daemon, job_env, start_job, stop_job, torchrun, trace_files, wait_for, wait_for_ranks
from web_helpers import CHROMIUM, CHROMIUM_ARGS, Server

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "docs" / "compare-schema.json").read_text())
NPROC = 2
# Late enough that the healthy trace (asked for after step 5) is taken before it on an idle
# machine too (steps of ~15-40 ms: the fault starts some 4-10 s in).
FAULT_STEP = 250


@pytest.fixture
def daemon(rankscoped_bin, rankscope_bin, tmp_path):
    # A short auto-trigger cooldown: if load jitter on a busy machine fires the trigger before the
    # fault, a later capture (after it) is still taken.
    d = Daemon(rankscoped_bin, tmp_path / "out",
               extra=["--baseline-first-healthy", "--compare-bin", rankscope_bin, "--auto-cooldown-s", "5"]).start()
    yield d
    d.stop()


def steps_of(capture_dir):
    """(first, last) recorded step of every target of a capture, from its manifest."""
    manifest = json.loads((capture_dir / "capture.manifest").read_text())
    return [(t["first_step"], t["last_step"]) for t in manifest["targets"]]


def test_the_slow_capture_is_compared_with_the_jobs_baseline(daemon, run_rankscope, rankscope_bin, tmp_path):
    # Factor 3 (default 1.2): the 300 ms fault is far above it, most load jitter is not; a
    # trigger fired by jitter before the fault is followed by one after it (short cooldowns).
    env = job_env(daemon.socket, RANKSCOPE_SLOW_STEPS=3, RANKSCOPE_SLOW_FACTOR=3.0, RANKSCOPE_AUTO_TRIGGER=1,
                  RANKSCOPE_COOLDOWN_S=5)
    job = start_job(torchrun(NPROC, "--steps", 100000, "--collector", "tracker", "--step-sleep-ms", 10,
                             "--fault", "slow-forward:1:300", "--fault-from-step", FAULT_STEP),
                    env, tmp_path / "job.log")
    try:
        wait_for_ranks(run_rankscope, daemon.port, NPROC, min_step=5)
        proc = run_rankscope("trace", "--port", daemon.port, "--steps", 3, "--wait", "--timeout-s", 90, "--json",
                             check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (healthy,) = json.loads(proc.stdout)["dirs"]
        healthy = pathlib.Path(healthy)
        job_dir = healthy.parent
        assert all(last < FAULT_STEP for _, last in steps_of(healthy)), "the healthy trace ran into the fault"

        # The first complete trace capture is the job's baseline.
        baseline = json.loads(wait_for(lambda: (job_dir / "baseline").exists() and (job_dir / "baseline").read_text(),
                                       30, "the job's baseline"))
        assert baseline["capture"] == healthy.name and baseline["reason"] == "first healthy capture"
        assert baseline["job"] == job_dir.name

        # compare --baseline JOB NEW, by job name under the daemon's output directory.
        report = json.loads(run_rankscope("compare", "--baseline", job_dir.name, healthy, "--out-dir", daemon.out_dir,
                                          "--json", "-").stdout)
        jsonschema.validate(report, SCHEMA)
        assert f"BASE is the baseline of job {job_dir.name}: capture {healthy.name}" in report["baseline"]
        assert report["findings"] == [] and all(r["delta_ns"] == 0 for r in report["ranks"])

        # Rank 1 slows down; the auto-trigger traces the job; the daemon compares it with the baseline.
        def compared():
            for d in daemon.out_dir.glob("*/auto-*"):
                if ((d / "baseline-comparison").exists() and len(trace_files(d)) == NPROC and
                        all(first >= FAULT_STEP for first, _ in steps_of(d))):
                    return d
            return None
        slow = wait_for(compared, 240, "the automatic capture compared with the baseline")
    finally:
        stop_job(job)

    assert (job_dir / "baseline").exists() and json.loads((job_dir / "baseline").read_text())["capture"] == healthy.name
    report = json.loads((slow / "baseline-comparison").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["base"]["inputs"] == [str(healthy)] and report["new"]["inputs"] == [str(slow)]
    by_rank = {r["new_rank"]: r for r in report["ranks"]}
    assert set(by_rank) == {0, 1}
    slow_rank = by_rank[1]
    assert slow_rank["delta_ns"] > 150_000_000  # about 300 ms of injected compute per step
    # What changed since the job was fast: the injected compute on rank 1.
    injected = [d for d in slow_rank["differences"] if "injected_extra_compute" in d["subject"]]
    assert injected and injected[0] is slow_rank["differences"][0], [d["text"] for d in slow_rank["differences"][:3]]
    assert injected[0]["cause"] == "added"
    findings = [f for f in report["findings"] if f["kind"] == "compare_regression" and
                "injected_extra_compute" in f["subject"]["name"]]
    assert findings and 1 in findings[0]["ranks"]
    assert 1 in report["job"]["changed_ranks"]

    # The web UI: the capture's overview links to the comparison, and its Compare tab draws the
    # daemon's document (the same JSON) with the injected change first.
    server = Server(rankscope_bin, [daemon.out_dir])
    try:
        (entry,) = [j for j in json.loads(server.get("/api/jobs")[1])["jobs"] if j["path"] == str(slow.resolve())]
        overview = json.loads(server.get(f"/api/jobs/{entry['id']}/overview")[1])
        assert overview["comparison"]["source"] == "baseline"
        status, body = server.get(f"/api/jobs/{entry['id']}/compare")
        assert status == 200 and json.loads(body) == report
        from playwright import sync_api
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{server.url}#/job/{entry['id']}/overview")
            page.locator("a.open-compare").click()
            page.locator(f"#compare-ranks tr[data-rank='1'] a.rank-link").click()
            page.locator(f"#compare-summary[data-delta-ns='{slow_rank['delta_ns']}']").wait_for()
            first = page.locator("#compare-differences tbody tr[data-cause]").first
            assert "injected_extra_compute" in first.inner_text() and first.get_attribute("data-cause") == "added"
            assert "BASE is the baseline of job" in page.locator("#compare-summary").inner_text()
            browser.close()
    finally:
        server.stop()

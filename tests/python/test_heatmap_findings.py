"""The Ranks view (heatmap) under a finding that no per-rank rule backs, in a real browser
(Playwright, Debian's headless Chromium), on a real capture: ../shared/traces/gpu_h100/devKernel,
3 ranks sharing one H100 where rank 0 runs extra fp32 GEMMs every step.

The engine's top finding is `extra_work` on rank 0 (a kernel only it runs), yet no rank is slow or
an outlier by local time: the GPU work overlaps the step and no peer waits for it measurably. The
view used to say "no slow or outlier rank" under that finding; it must list and badge every rank
a finding names. Every expectation is read from the engine's own JSON of the same capture. A
finding about every rank (here uneven_timing on the recording tests/data/cluster/same_work_clean)
singles out none."""

import json
import pathlib

from web_helpers import Server, browser, page  # noqa: F401 (fixtures)

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_ranks_named_by_findings_are_listed_when_no_rank_is_slow(rankscope_bin, run_rankscope, shared_dir, page,
                                                                  tmp_path):
    capture = shared_dir / "traces/gpu_h100/devKernel"
    report = tmp_path / "report.json"
    run_rankscope("analyze", capture, "--json", report)
    doc = json.loads(report.read_text())
    # The premise: the top finding names a rank that the per-rank rule does not flag.
    top = doc["findings"][0]
    assert top["kind"] == "extra_work" and top["ranks"] == [0], top["title"]
    assert not any(r["slow"] or r["outlier"] for r in doc["cluster"]["ranks"])
    named = {}  # a finding about every rank singles out none
    for i, f in enumerate(doc["findings"], start=1):
        for r in f.get("ranks", []) if len(f.get("ranks", [])) < len(doc["cluster"]["ranks"]) else []:
            named.setdefault(r, (i, f["kind"].replace("_", " ")))

    s = Server(rankscope_bin, [capture])
    try:
        page.goto(s.url)  # one job: it opens
        page.locator("article.finding[data-kind='extra_work']").first.wait_for()
        page.locator("nav.tabs a[data-view='heatmap']").click()
        links = page.locator(".abnormal-ranks a.rank-link")
        links.first.wait_for()
        shown = {int(a.get_attribute("data-rank")): a.inner_text().strip() for a in links.all()}
        assert shown == {r: f"rank {r} (finding {i}: {kind})" for r, (i, kind) in named.items()}
        assert list(shown)[0] == 0  # the top finding's rank first

        links.first.click()
        detail = page.locator("#rank-detail")
        detail.wait_for()
        assert detail.get_attribute("data-rank") == "0"
        badge = detail.locator("h2 .badge.named")
        assert badge.get_attribute("data-finding") == "1"
        assert badge.inner_text() == "finding 1: extra work"
        assert detail.locator("h2 .badge.abnormal:not(.named)").count() == 0  # no slow/outlier verdict
        # The GPU forward phase the finding's work lands in is outlined as abnormal by the engine.
        assert {(p["rank"], p["side"], p["phase"]) for p in doc["cluster"]["phases"]} >= {(0, "gpu", "forward")}
        assert "abnormal" in detail.locator("tr", has_text="GPU forward").inner_text()
    finally:
        s.stop()


def test_a_finding_about_every_rank_singles_out_none(rankscope_bin, run_rankscope, page, tmp_path):
    """tests/data/cluster/same_work_clean: the one finding is uneven_timing on all four ranks (a
    note about the machine); no rank is listed or badged."""
    traces = REPO / "tests/data/cluster/same_work_clean"
    report = tmp_path / "report.json"
    run_rankscope("analyze", traces, "--json", report)
    doc = json.loads(report.read_text())
    assert [(f["kind"], f["ranks"]) for f in doc["findings"]] == [("uneven_timing", [0, 1, 2, 3])]
    assert not any(r["slow"] or r["outlier"] for r in doc["cluster"]["ranks"])

    s = Server(rankscope_bin, [traces])
    try:
        page.goto(s.url)
        page.locator("article.finding[data-kind='uneven_timing']").first.wait_for()
        page.locator("nav.tabs a[data-view='heatmap']").click()
        page.locator("#heatmap-canvas").wait_for()
        assert page.locator(".abnormal-ranks").count() == 0
        assert "no finding names a rank" in page.locator(".controls").inner_text()
    finally:
        s.stop()

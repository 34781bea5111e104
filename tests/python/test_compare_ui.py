"""The web UI's Compare view in a real browser (Playwright, Debian's headless Chromium), on
recorded traces: the repository's 6-rank ground truth (tests/data/cluster/ground_truth, CPU,
gloo DDP), a clean run against the same job with 80 ms of extra forward compute on rank 2.

The view draws the compare engine's own JSON (`rankscope compare --json`, rankscope.compare/1):
the server hands out the very document, and every assertion compares what the page shows with
that document. The daemon's baseline-comparison of a live job is shown by
test_compare_baseline.py."""

import json
import pathlib

import pytest

from web_helpers import Server, browser, page  # noqa: F401 (fixtures)

REPO = pathlib.Path(__file__).resolve().parents[2]
TRUTH = REPO / "tests/data/cluster/ground_truth"
SLOW_RANK = 2  # truth.json: scenario "forward", slow-forward on rank 2


def fmt_ns(ns):
    """web/src/format.ts fmtNs, for the values these traces have (µs to s)."""
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.{1 if a >= 1e10 else 2}f} s"
    if a >= 1e6:
        return f"{ns / 1e6:.{0 if a >= 1e8 else 1 if a >= 1e7 else 2}f} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.{0 if a >= 1e5 else 1}f} µs"
    return f"{round(ns)} ns"


def signed(ns):
    return ("+" if ns > 0 else "") + fmt_ns(ns)


@pytest.fixture(scope="module")
def comparison(run_rankscope, tmp_path_factory):
    d = tmp_path_factory.mktemp("compare_ui")
    run_rankscope("compare", TRUTH / "clean", TRUTH / "forward", "--json", d / "cmp.json", "--html", d / "cmp.html")
    return {"dir": d, "json": d / "cmp.json", "html": d / "cmp.html", "doc": json.loads((d / "cmp.json").read_text())}


@pytest.fixture(scope="module")
def server(rankscope_bin, comparison):
    s = Server(rankscope_bin, [comparison["json"]])
    yield s
    s.stop()


def red_pixels(page, selector):
    """Pixels of the canvas in the regression red (#d62728), counted in the page."""
    return page.evaluate("""(sel) => {
        const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] > 180 && d[i + 1] < 90 && d[i + 2] < 90) n++;
        return n;
    }""", selector)


def pair(doc, rank):
    (p,) = [r for r in doc["ranks"] if r["new_rank"] == rank]
    return p


def check_pair_shown(page, p):
    """The summary, the differences (adding up to the delta) and the overall table of rank pair p."""
    summary = page.locator("#compare-summary")
    summary.wait_for()
    assert int(summary.get_attribute("data-delta-ns")) == p["delta_ns"]
    assert page.locator("#compare-delta").inner_text() == signed(p["delta_ns"])
    assert page.locator("#compare-base-step").inner_text() == fmt_ns(p["steps"]["base"]["mean_ns"])
    assert page.locator("#compare-new-step").inner_text() == fmt_ns(p["steps"]["new"]["mean_ns"])
    # Every difference, in the engine's order, then the variation and the delta: in the DOM too
    # the costs add up to the delta.
    rows = page.locator("#compare-differences tbody tr[data-cause]")
    assert rows.count() == len(p["differences"])
    shown = [int(x) for x in rows.evaluate_all("rs => rs.map(r => r.dataset.deltaNs)")]
    assert shown == [d["delta_ns"] for d in p["differences"]]
    assert abs(sum(shown) + p["variation_ns"] - p["delta_ns"]) <= len(shown) + 2
    first = rows.first
    assert first.get_attribute("data-cause") == p["differences"][0]["cause"]
    assert p["differences"][0]["text"] in first.inner_text()
    step = page.locator("#compare-overall tr[data-key='step']")
    assert step.locator("td.diff").inner_text() == signed(p["delta_ns"])
    overall = next(r for r in p["overall"] if r["key"] == "step")
    assert ("regression" in step.get_attribute("class")) == overall["regression"]


def test_the_server_hands_out_the_engines_document(server, comparison):
    status, body = server.get("/api/jobs")
    (job,) = json.loads(body)["jobs"]
    assert status == 200 and job["kind"] == "comparison"
    status, body = server.get(f"/api/jobs/{job['id']}/compare")
    assert status == 200 and json.loads(body) == comparison["doc"]
    # The overview carries the compare findings (the shared findings type) and says where its
    # comparison comes from.
    overview = json.loads(server.get(f"/api/jobs/{job['id']}/overview")[1])
    assert overview["findings"] == comparison["doc"]["findings"]
    assert overview["comparison"]["source"] == "comparison"
    status, body = server.get(f"/api/jobs/{job['id']}/timeline")
    assert status == 422, (status, body)
    assert "needs traces" in json.loads(body)["error"]


def test_compare_view_shows_the_delta_the_ranked_differences_and_the_ranks(server, page, comparison):
    doc = comparison["doc"]
    page.goto(server.url)  # one comparison: it opens on Compare
    median = pair(doc, doc["job"]["median_rank"])
    assert median["new_rank"] == SLOW_RANK and median["detailed"]
    check_pair_shown(page, median)
    # The injected change ranks first: the extra forward compute of rank 2.
    first = page.locator("#compare-differences tbody tr[data-cause]").first
    assert "added aten::matmul" in first.inner_text() and "regression" in first.get_attribute("class")
    # The chart's largest bar is the regression, drawn red.
    page.locator("#compare-chart canvas").first.wait_for()
    assert red_pixels(page, "#compare-chart canvas") > 200
    # Every rank pair, the changed ones marked; breakdown tables of the focus ranks.
    ranks = page.locator("#compare-ranks tbody tr")
    assert ranks.count() == 6
    shown = ranks.evaluate_all("rs => rs.map(r => [Number(r.dataset.rank), r.classList.contains('abnormal'), r.cells[3].innerText])")
    assert shown == [[r["new_rank"], r["new_rank"] in doc["job"]["changed_ranks"], signed(r["delta_ns"])] for r in doc["ranks"]]
    assert page.locator("#compare-operators tbody tr").count() > 0
    assert "[step]" not in page.locator("#compare-operators").inner_text()

    # Another rank: its own delta and differences; a rank that is not a focus rank has no
    # operator table, and says why.
    other = next(r for r in doc["ranks"] if not r["detailed"])
    page.locator(f"#compare-ranks tr[data-rank='{other['new_rank']}'] a.rank-link").click()
    page.locator(f"#compare-summary[data-delta-ns='{other['delta_ns']}']").wait_for()
    assert f"rank={other['new_rank']}" in page.url
    check_pair_shown(page, other)
    assert page.locator("#compare-operators").count() == 0
    assert "built for the focus ranks" in page.locator("main").inner_text()

    # The overview shows the compare findings; views that need traces say so.
    page.locator("nav.tabs a[data-view='overview']").click()
    finding = page.locator("article.finding[data-kind='compare_regression']").first
    finding.wait_for()
    assert any(f["title"] in finding.inner_text() for f in doc["findings"])
    heatmap = page.locator("nav.tabs a[data-view='heatmap']")
    assert "unavailable" in heatmap.get_attribute("class") and "comparison" in heatmap.get_attribute("title")


def test_compare_html_opens_offline(browser, comparison):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, offline=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(comparison["html"].as_uri())
    check_pair_shown(page, pair(comparison["doc"], SLOW_RANK))
    assert all(u.startswith(("file:", "data:", "blob:")) for u in requests), requests
    context.close()
    assert not errors


def test_a_broken_comparison_file_is_an_error_in_the_page(rankscope_bin, page, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps({"schema": "rankscope.compare/1", "findings": []}))
    s = Server(rankscope_bin, [bad])
    try:
        page.goto(s.url)
        page.locator("main .error").wait_for()
        assert "a comparison without ranks" in page.locator("main .error").inner_text()
    finally:
        s.stop()


def test_a_long_list_of_differences_is_summed_then_listed(run_rankscope, shared_dir, page, tmp_path):
    # HTA's trace-diff pair (A100 vs V100, torch.compile in NEW): a hundred differences.
    hta = shared_dir / "traces/hta"
    run_rankscope("compare", hta / "trace_diff_control_a100/control.json.gz", hta / "trace_diff_test_v100/test.json.gz",
                  "--json", tmp_path / "hta.json", "--html", tmp_path / "hta.html")
    (p,) = json.loads((tmp_path / "hta.json").read_text())["ranks"]
    assert len(p["differences"]) > 25
    page.goto((tmp_path / "hta.html").as_uri())
    rows = page.locator("#compare-differences tbody tr[data-cause]")
    rows.first.wait_for()
    assert rows.count() == 25
    more = page.locator("#compare-differences tr.more")
    assert f"{len(p['differences']) - 25} more differences" in more.inner_text()
    listed = [int(x) for x in rows.evaluate_all("rs => rs.map(r => r.dataset.deltaNs)")]
    assert abs(sum(listed) + int(more.get_attribute("data-delta-ns")) + p["variation_ns"] - p["delta_ns"]) <= len(listed) + 2
    more.locator("a.show-all").click()
    page.locator("#compare-differences tr.more").wait_for(state="detached")
    assert rows.count() == len(p["differences"])

"""The overview's what-ifs in a real browser (Playwright, Debian's headless Chromium) on a real
recording with two faults at once (tests/data/cluster/two_faults: rank 1's forward and rank 3's
host sleep): besides the slow ranks' what-if, the page says what fixing every finding about ranks
together saves — the engine's cluster.what_if_findings, read from its own JSON of the same traces.
A job with one finding shows no such line."""

import json
import pathlib

from web_helpers import Server, browser, page  # noqa: F401 (fixtures)

REPO = pathlib.Path(__file__).resolve().parents[2]


def ms(ns):
    """web/src/format.ts fmtNs between 1 ms and 1 s (the what-ifs below)."""
    digits = 0 if ns >= 1e8 else 1 if ns >= 1e7 else 2
    return f"{ns / 1e6:.{digits}f} ms"


def test_overview_says_what_fixing_every_finding_together_saves(rankscope_bin, run_rankscope, page, tmp_path):
    traces = REPO / "tests/data/cluster/two_faults/two10"
    report = tmp_path / "report.json"
    run_rankscope("analyze", traces, "--json", report)
    both = json.loads(report.read_text())["cluster"]["what_if_findings"]
    assert both["findings"] == 2 and both["ranks"] == [1, 3]

    s = Server(rankscope_bin, [traces])
    try:
        page.goto(s.url)
        line = page.locator("p.what-if-findings")
        line.wait_for()
        text = " ".join(line.inner_text().split())
        assert text.startswith("What if the 2 findings about rank 1")
        assert "were fixed together:" in text
        assert f"{ms(both['step_ns'])} → {ms(both['estimated_step_ns'])} per step, {ms(both['saving_ns'])}" in text
        assert [int(a.get_attribute("data-rank")) for a in line.locator("a.rank-link").all()] == [1, 3]
    finally:
        s.stop()

    s = Server(rankscope_bin, [REPO / "tests/data/cluster/same_work_clean"])
    try:
        page.goto(s.url)
        page.locator("p.what-if").first.wait_for()
        assert page.locator("p.what-if-findings").count() == 0
    finally:
        s.stop()

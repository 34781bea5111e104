#!/usr/bin/env python3
"""Benchmark of the web UI on a large semi-synthetic job: `rankscope serve` and the page.

    python3 bench/ui_bench.py [--ranks 1024] [--keep DIR] [--runs 3]

Generates N ranks with tools/make_synthetic_ranks.py from the real A100 trace (as
bench/cluster_bench.py does: 8 ranks per host, a clock offset per host, one kernel 10 ms slower
per call on rank N/2 + 1), starts `rankscope serve` on it, and measures

  * the analysis in the server (the first request of the job's overview),
  * every JSON document the page fetches: size and time to serve it once the job is analysed
    (timelines, matrix and functions are rendered on their first request, then kept),
  * in headless Chromium (Playwright, the system binary): the first view — from navigation to the
    overview with its findings and step chart drawn — and each other view, best of --runs, with
    the analysis already done (a fresh browser context every run: nothing cached in the page);
  * the size of `rankscope analyze --html` for the job.

A benchmark, not a test: it never fails on time. Numbers: bench/README.md ("Web UI").
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from cluster_bench import binary, generate  # noqa: E402

CHROMIUM = os.environ.get("RANKSCOPE_CHROMIUM", "/usr/bin/chromium")
VIEWS = {  # view -> what shows that it is drawn
    "overview": "#step-chart canvas",
    "heatmap": "#heatmap-canvas",
    "steptrace": "#steptrace-chart canvas",
    "timeline": "#timeline-canvas",
    "matrix": "#matrix-canvas",
    "functions": "#functions-chart canvas",
}


def fetch(url):
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t0, len(body)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--keep", default="", help="generate into this directory and keep it")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    exe = binary()
    root = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="rankscope-ui-bench-"))
    d = root / f"ranks{args.ranks}"
    if not d.exists():
        t0 = time.perf_counter()
        generate(args.ranks, d)
        print(f"generated {args.ranks} ranks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    server = subprocess.Popen([exe, "serve", str(d), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[2]
        jobs = json.loads(urllib.request.urlopen(url + "api/jobs").read())["jobs"]
        job = jobs[0]["id"]
        api = f"{url}api/jobs/{job}/"
        analysis_s, _ = fetch(api + "overview")
        docs = []
        for doc in ["overview", "timeline", "matrix", "functions", "telemetry"]:
            first, size = fetch(api + doc)
            again, _ = fetch(api + doc)
            docs.append((doc, size, first, again))
        full_s, full_size = fetch(api + "report")

        from playwright.sync_api import sync_playwright
        times = {v: [] for v in VIEWS}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-quic"])
            for _ in range(args.runs):
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = ctx.new_page()
                t0 = time.perf_counter()
                page.goto(f"{url}#/job/{job}/overview")
                page.locator("article.finding").first.wait_for(timeout=600_000)
                page.locator(VIEWS["overview"]).first.wait_for(timeout=600_000)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
                times["overview"].append(time.perf_counter() - t0)
                for view, selector in VIEWS.items():
                    if view == "overview":
                        continue
                    t0 = time.perf_counter()
                    page.locator(f"nav.tabs a[data-view='{view}']").click()
                    page.locator(selector).first.wait_for(timeout=600_000)
                    page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
                    times[view].append(time.perf_counter() - t0)
                ctx.close()
            browser.close()
    finally:
        server.terminate()
        server.wait()
    html = root / "report.html"
    t0 = time.perf_counter()
    subprocess.run([exe, "analyze", str(d), "--html", str(html)], check=True, stdout=subprocess.DEVNULL)
    html_s = time.perf_counter() - t0
    html_mb = html.stat().st_size / 2**20
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)

    print(f"rankscope serve, {args.ranks} semi-synthetic ranks ({args.ranks // 8} hosts)")
    print(f"analysis in the server (first overview request): {analysis_s:.2f} s")
    print(f"{'document':>10} {'KB':>9} {'first s':>8} {'cached s':>9}")
    for doc, size, first, again in docs:
        print(f"{doc:>10} {size / 1024:>9.0f} {first:>8.3f} {again:>9.3f}")
    print(f"{'report':>10} {full_size / 1024:>9.0f} {full_s:>8.3f}  (the whole JSON report, not fetched by the page)")
    print(f"page views in Chromium, best of {args.runs} (navigation/click -> drawn):")
    for view, ts in times.items():
        print(f"{view:>10} {min(ts):>6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in ts)})")
    print(f"analyze --html: {html_mb:.1f} MB in {html_s:.1f} s")


if __name__ == "__main__":
    main()

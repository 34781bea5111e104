#!/usr/bin/env python3
"""Screenshots of every view of the web UI, for docs/ui.md.

    python3 tools/ui_screenshots.py JOB_DIR [OUT_DIR, default docs/ui] [--rank R]
    python3 tools/ui_screenshots.py COMPARISON.json docs/ui --views compare --height 1500 --top-only

Starts `rankscope serve JOB_DIR`, opens the job in headless Chromium (Playwright, the system
binary) and writes OUT_DIR/<view>.png for each view; with --rank, the heatmap and the timeline
are opened on that rank (as clicking it in a finding does). A comparison JSON (`rankscope compare
--json`) has the Compare view; --top-only keeps the first screen of a long page.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("RANKSCOPE_CHROMIUM", "/usr/bin/chromium")
VIEWS = ["overview", "heatmap", "steptrace", "timeline", "matrix", "functions", "telemetry", "hang"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("job")
    p.add_argument("out", nargs="?", default=str(REPO / "docs" / "ui"))
    p.add_argument("--rank", type=int)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=900)
    p.add_argument("--views", default=",".join(VIEWS), help="comma-separated views (default: all but compare)")
    p.add_argument("--top-only", action="store_true", help="the first screen only, not the whole page")
    args = p.parse_args()
    built = REPO / "build/dev/src/rankscope/cli/rankscope"
    exe = os.environ.get("RANKSCOPE_BIN") or (str(built) if built.exists() else shutil.which("rankscope"))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen([exe, "serve", args.job, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[2]
        from playwright.sync_api import sync_playwright
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-quic"])
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.goto(url)
            page.locator("nav.tabs").wait_for(timeout=600_000)
            job = page.evaluate("() => location.hash.split('/')[2]")
            for view in args.views.split(","):
                q = f"?rank={args.rank}" if args.rank is not None and view in ("heatmap", "timeline", "hang") else ""
                page.goto(f"{url}#/job/{job}/{view}{q}")
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(800)  # charts finish drawing
                page.screenshot(path=str(out / f"{view}.png"), full_page=not args.top_only)
                print(out / f"{view}.png", file=sys.stderr)
            browser.close()
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()

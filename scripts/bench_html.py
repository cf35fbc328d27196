#!/usr/bin/env python3
"""Measure `heapscope html`: page size, time to write it, and time until the page is drawn
in Debian's chromium (Playwright, network off), median of interleaved runs; and the
charting library's time to draw 10^5 points in that page.

    python3 scripts/bench_html.py RECORDING [RECORDING...] [--runs 5]

Needs playwright (pip) and chromium (apt). Prints one line per recording.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
UPLOT_1E5 = """async () => { const n = 100000, xs = new Array(n), ys = new Array(n);
  for (let i = 0; i < n; i++) { xs[i] = i / 100; ys[i] = Math.round(1e6 * (1 + Math.sin(i / 500))); }
  const div = document.createElement('div'); document.body.append(div);
  const t = performance.now();
  const u = new uPlot({width: 1200, height: 300, scales: {x: {time: false}},
    series: [{}, {stroke: 'red'}]}, [xs, ys], div);
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));  // drawn
  const ms = performance.now() - t; u.destroy(); div.remove(); return ms; }"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    out = Path(tempfile.mkdtemp(prefix="bench-html-"))
    pages, write_s = {}, {r: [] for r in args.recordings}
    for _ in range(args.runs):          # interleaved: each run writes every recording's page
        for r in args.recordings:
            page = out / (Path(r).name + ".html")
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "heapscope", "html", r, "-o", str(page)],
                           check=True, capture_output=True)
            write_s[r].append(time.perf_counter() - t)
            pages[r] = page
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        draw_s = {r: [] for r in args.recordings}
        uplot_ms = []
        for _ in range(args.runs):
            for r in args.recordings:
                ctx = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
                tab = ctx.new_page()
                t = time.perf_counter()
                tab.goto(pages[r].resolve().as_uri())
                tab.wait_for_selector("body[data-ready='1']", timeout=60000)
                draw_s[r].append(time.perf_counter() - t)
                uplot_ms.append(tab.evaluate(UPLOT_1E5))
                ctx.close()
        browser.close()
    for r in args.recordings:
        print(f"{r}: page {os.path.getsize(pages[r]) / 1e6:.2f} MB, written in "
              f"{statistics.median(write_s[r]):.2f} s, drawn in {statistics.median(draw_s[r]):.2f} s "
              f"(medians of {args.runs})")
    print(f"uPlot, 10^5 points: {statistics.median(uplot_ms):.1f} ms (median of {len(uplot_ms)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

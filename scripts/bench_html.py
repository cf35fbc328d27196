#!/usr/bin/env python3
"""Measure `heapscope html`: page size, time to write it (wall, and CPU of heapscope and
its children: graphviz), and time until the page is drawn in Debian's chromium
(Playwright, network off), median of interleaved runs; and the charting library's time
to draw 10^5 points in that page.

    python3 scripts/bench_html.py RECORDING [RECORDING...] [--runs 5] [--base REV]

--base REV: the same pages written by an older revision too (python/ exported with `git
archive`, this tree's vendored JavaScript beside it), interleaved with this tree's runs:
its page size and write times, and the ratio of CPU with a bootstrap interval. Needs
playwright (pip) and chromium (apt). Prints one line per recording (and side).
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_analysis_speed import export, timed  # noqa: E402
import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.bench.stats import ratio  # noqa: E402

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
    ap.add_argument("--base", help="git revision whose pages to write too (A/B)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    out = Path(tempfile.mkdtemp(prefix="bench-html-"))
    sides = {"this": ROOT / "python"}
    if args.base:
        sides = {"base": export(args.base), **sides}
        shutil.copytree(ROOT / "python/heapscope/render/html/assets",
                        sides["base"] / "heapscope/render/html/assets", dirs_exist_ok=True)
    pages, sizes = {}, {}
    write = {(side, r): ([], []) for side in sides for r in args.recordings}
    for side, path in sides.items():     # symbols cached, untimed
        timed(path, ["html", args.recordings[0], "-o", str(out / "warm.html")], None)
    for _ in range(args.runs):          # interleaved: each run writes every side's every page
        for r in args.recordings:
            for side, path in sides.items():
                page = out / f"{Path(r).name}.{side}.html"
                wall, cpu = timed(path, ["html", r, "-o", str(page)], None)
                if wall is None:
                    raise SystemExit(f"heapscope html {r} failed ({side})")
                write[(side, r)][0].append(wall)
                write[(side, r)][1].append(cpu)
                sizes[(side, r)] = os.path.getsize(page)
                if side == "this":
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
        for side in sides:
            wall, cpu = write[(side, r)]
            line = (f"{r} [{side}]: page {sizes[(side, r)] / 1e6:.2f} MB, written in "
                    f"{statistics.median(wall):.2f} s wall, {statistics.median(cpu):.2f} s CPU")
            if side == "this":
                line += f", drawn in {statistics.median(draw_s[r]):.2f} s"
                if args.base:
                    q = ratio(cpu, write[("base", r)][1])
                    line += f"; CPU ratio to base {q.value:.3f} [{q.ci[0]:.3f}, {q.ci[1]:.3f}]"
            print(line + f" (medians of {args.runs})")
    print(f"uPlot, 10^5 points: {statistics.median(uplot_ms):.1f} ms (median of {len(uplot_ms)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

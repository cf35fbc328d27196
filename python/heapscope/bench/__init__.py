"""`heapscope bench`: run commands under several allocators (or profilers), interleaved,
and compare them with bootstrap confidence intervals.

Modules, in the order data flows:
  workloads   the bundled workload programs (hs-wl-*) and their default/smoke sizes
  configs     what to compare: one Config per allocator or profiler mode (argv prefix, env)
  runner      one run measured by os.wait4 (wall, user, sys, max RSS, faults, checksum);
              interleaved rounds A B C A B C; failing configurations dropped
  stats       mean, median, percentile-bootstrap intervals, ratios to a baseline
  results     per workload and configuration: the runs, their summaries and ratios;
              the bench document (what --format json writes)
  machine     the machine and library versions a result was measured on
Their text, Markdown and CSV: render.bench_text; the charts: render.plots.
"""

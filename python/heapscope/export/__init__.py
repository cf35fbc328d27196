"""Profiles in other tools' formats.

Exporters take generic weighted stacks (heapscope.analysis.stacks.WeightedStack):
whatever produced the weights (stack trace types today, lifetimes or peak holders
later) exports the same way.

  collapsed   "root;caller;callee count" lines (flamegraph.pl, speedscope, inferno)
  protobuf    a minimal protocol-buffers wire-format writer
  pprof       profile.proto, gzip-compressed (go tool pprof)
  massif      one process's heap over time and its peak tree (ms_print, massif-visualizer)

They take analysis results (weighted stacks, a profile) and never parse arguments:
commands/export.py does that.
"""

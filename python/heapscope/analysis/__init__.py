"""Profiles turned into documents: plain data (dicts, lists, dataclasses of numbers and
strings) that heapscope.render lays out as text, CSV, JSON, SVG or HTML. Nothing here
prints, writes a file or runs a program; tests/unit/test_layers.py checks that no module
here imports heapscope.render or heapscope.commands.

  identify      the `report` document: sizes x regions, groups, hot sizes (identify)
  stack_types   the `stacks` document: symbolized stack trace types (locate)
  callgraph     stack types merged into a call graph, fix targets ranked (characterize)
  diff          two sets of profiles compared per size, region and stack type (compare)
  by_library    heap blocks per shared object (`report --by library`)
  tracked, lifetimes, peak, leaks, histogram   the tracking reports
  timeline      heap, RSS and PSS over time, for one process or gridded for a job
  job, job_loading, job_processes              the MPI job report over rank files
  job_peak_stacks   who held the ranks' heap peaks, from the job file (record --track)
  stacks, loading, selection, classify, suppressions, recorded, processes,
  profile_files the shared pieces: weighted stacks, reading and selecting, frame kinds
"""

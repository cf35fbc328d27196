"""Documents (plain data from heapscope.analysis) into text, CSV, JSON, dot/SVG and PNG.

Nothing here reads a profile or computes a figure: a renderer only lays out what its
document holds. `text` has the shared building blocks (numbers, tables, sparklines).
"""

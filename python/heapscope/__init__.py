"""heapscope: heap-memory toolkit for HPC codes (profiler, MPI attribution, allocator, bench)."""

__version__ = "0.1.0"

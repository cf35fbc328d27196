"""heapscope: heap-memory toolkit for HPC codes (profiler, MPI attribution, allocator, bench).

    import heapscope
    rec = heapscope.open("run/")      # the Python API (heapscope.api, docs/python-api.md)
"""

__version__ = "0.1.0"
__all__ = ["open", "Recording"]


def __getattr__(name):
    # heapscope.open and heapscope.Recording are imported on first use: the command line
    # imports this package too, and must not pay for the analyses (numpy) before `record`.
    if name in ("open", "Recording"):
        from heapscope import api
        return getattr(api, name)
    raise AttributeError(f"module 'heapscope' has no attribute {name!r}")

"""Kept until the tracking/timeline reports move: `emit(text, path)` is
commands/options.py's write_result (stdout, or a file written atomically)."""
from heapscope.commands.options import write_result as emit  # noqa: F401

"""Where a report goes: stdout, or a file written atomically (`-o FILE`, see atomic.py)."""
import sys

from heapscope.atomic import write_atomic


def emit(text: str, path: str = None) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_atomic(path, text)

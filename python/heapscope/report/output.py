"""Where a report goes: stdout, or a file written atomically (`-o FILE`).

A file is written to a temporary name in its directory and renamed into place, so a
failed or interrupted report never leaves a half-written file that looks whole.
"""
import os
import sys
import tempfile

from heapscope.errors import HeapscopeError


def emit(text: str, path: str = None) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise HeapscopeError(f"cannot write {path}: directory {directory} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise HeapscopeError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise HeapscopeError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

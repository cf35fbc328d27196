"""Writing an output file so that it is never seen half-written.

Data goes to a temporary file in the target's directory, which is renamed into place
only when complete; on any failure the temporary file is removed and the user gets
one line. Every command that writes a file (reports, exports, plots' data) uses this.
A path that exists and is not a regular file (-o /dev/null, a FIFO, a terminal) is
written in place: renaming over it would replace the device with a file.
"""
import os
import stat
import tempfile
from typing import Union

from heapscope.errors import HeapscopeError


def write_atomic(path: str, data: Union[str, bytes]) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path)
    except OSError:
        special = False
    if special:
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise HeapscopeError(f"cannot write {path}: {exc.strerror}") from None
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise HeapscopeError(f"cannot write {path}: directory {directory} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise HeapscopeError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise HeapscopeError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

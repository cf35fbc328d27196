"""Output files are written whole (a temporary file renamed into place), except a path
that is not a regular file: `-o /dev/null` or a FIFO must stay what it is (renaming over
/dev/null replaced the device with a file for every process on the machine)."""
import os
import stat
import threading

import pytest

from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError


def test_a_fifo_is_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_atomic(str(fifo), "x" * 100_000 + "\n")
    reader.join(timeout=10)
    assert got == [b"x" * 100_000 + b"\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["out.fifo"]        # no temporary file left


def test_a_regular_file_is_replaced_whole(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old, longer than the new text\n")
    write_atomic(str(path), "new\n")
    assert path.read_text() == "new\n" and sorted(os.listdir(tmp_path)) == ["report.json"]
    with pytest.raises(HeapscopeError, match="cannot write"):
        write_atomic(str(tmp_path), "a directory\n")

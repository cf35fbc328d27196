"""Recording onto a file system that fills up: the recorder says once which file, at
which byte and why; `record` names the incomplete profile on its last line and exits
74 when the program succeeded; the file stays readable and every report says it is
incomplete. The file systems are tmpfs mounts of a known size (root needed to mount)."""
import json
import os
import re
import struct
import subprocess

import pytest

from heapscope.profile import format as fmt
from heapscope.profile import read_profile

INCOMPLETE = 74      # record's exit status (commands/record.py EXIT_INCOMPLETE)


@pytest.fixture
def tiny_fs(tmp_path):
    """A 64 KiB tmpfs at tmp_path / "fs"."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs of a known size needs root")
    where = tmp_path / "fs"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], check=True)
    yield where
    subprocess.run(["umount", "-l", str(where)], check=True)


def record(heapscope, out, exe, *args):
    res = heapscope("record", "-o", out, "--", exe, *args, check=False)
    [path] = out.glob("*.hsp")
    said = [line for line in res.stderr.splitlines() if "cannot write" in line]
    return res, path, said


def header_fields(path):
    data = path.read_bytes()[:fmt.HEADER_SIZE]
    return struct.unpack_from("<IIQ", data, 24)      # flags, write_errno, lost_at


def test_profile_larger_than_the_disk(heapscope, build, tiny_fs):
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    res, path, said = record(heapscope, tiny_fs / "run", exe, "10000")   # ~240 KB of sizes
    assert res.returncode == INCOMPLETE, res.stderr
    size = path.stat().st_size
    # said once: the file, the byte (the file's size: the chunk was not written), errno text
    assert said == [f"heapscope: cannot write a snapshot to the profile {path} at byte {size}: "
                    f"No space left on device (the program goes on; this profile is incomplete)"]
    last = res.stderr.splitlines()[-1]
    assert last == (f"heapscope: 1 incomplete profile (the recorder could not write it whole): "
                    f"{path.name}: a write failed at byte {size:,} (No space left on device)")
    assert header_fields(path) == (fmt.HEADER_WRITE_FAILED, 28, size)    # ENOSPC
    rep = heapscope("report", path, check=False)
    assert rep.returncode == 2 and len(rep.stderr.splitlines()) == 1
    assert "no complete snapshot: incomplete: a write of the recorder failed at byte" in rep.stderr
    assert "(No space left on device)" in rep.stderr


def test_an_earlier_snapshot_is_read_and_flagged(heapscope, build, tiny_fs):
    """The snapshot of heapscope_dump() fits, the final one does not: report reads the
    first with its figures, and says the profile is incomplete."""
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    res, path, said = record(heapscope, tiny_fs / "run", exe, "10000", "dump")
    assert res.returncode == INCOMPLETE and len(said) == 1, res.stderr
    rep = heapscope("report", "--format", "json", path)
    doc = json.loads(rep.stdout)
    [proc] = doc["processes"]
    assert proc["complete"] is False and proc["reason"] == "api"
    assert any(w.startswith("incomplete: a write of the recorder failed at byte") for w in proc["warnings"])
    assert {row["size"] for row in doc["sizes"]} >= set(range(1000, 1010))
    assert max(row["size"] for row in doc["sizes"]) < 1010 + 64   # not the last snapshot's sizes
    text = heapscope("report", path).stdout
    assert re.search(r"warning.*incomplete: a write of the recorder failed", text)


def test_program_failure_keeps_its_status(heapscope, build, tiny_fs):
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    res, path, said = record(heapscope, tiny_fs / "run", exe, "10000", "-", "3")
    assert res.returncode == 3 and len(said) == 1
    assert "1 incomplete profile" in res.stderr.splitlines()[-1]


def test_completely_full_disk(heapscope, build, tiny_fs):
    fd = os.open(tiny_fs / "fill", os.O_WRONLY | os.O_CREAT)     # every block taken
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    os.close(fd)
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    (tiny_fs / "run").mkdir()
    res, path, said = record(heapscope, tiny_fs / "run", exe, "10")
    assert res.returncode == INCOMPLETE
    assert said == [f"heapscope: cannot write its header to the profile {path} at byte 0: "
                    f"No space left on device (the program goes on; this profile is incomplete)"]
    assert path.stat().st_size == 0
    assert res.stderr.splitlines()[-1].endswith(
        f"{path.name}: empty: the recorder could not write even its header")
    rep = heapscope("report", path, check=False)
    assert rep.returncode == 2
    assert rep.stderr.strip() == (f"heapscope: error: {path}: empty file: incomplete (the recorder "
                                  f"could not write even its header; a full disk?)")


def test_room_is_given_back(heapscope, build, tiny_fs):
    """A profile that fits: no message, exit 0, and the room reserved ahead of the file's
    end is released at exit (the file takes the blocks of its data, not of a reservation)."""
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    res, path, said = record(heapscope, tiny_fs / "run", exe, "100")
    assert res.returncode == 0 and said == [] and "incomplete" not in res.stderr
    assert header_fields(path) == (0, 0, 0)
    assert path.stat().st_blocks * 512 < path.stat().st_size + 8192
    p = read_profile(path)
    assert p.complete and p.size_counts[("(none)", 1000)] == 1 and len(p.size_counts) >= 100


def test_exit_status_is_documented(heapscope):
    text = " ".join(heapscope("record", "--help").stdout.split())
    assert f"{INCOMPLETE} when the program succeeded but a profile is incomplete" in text

"""Massif export of a recorded timeline (no tracking): tests/programs/rep_lifetimes.c
recorded with the heap sampled; the snapshots are the samples, the last one holds the
4 blocks of 100 bytes the program never frees (glibc's usable size, as the timeline
measures it), and ms_print reads the file. (The peak tree of a --track recording is
tested in tests/e2e/test_peak_and_leaks.py.)"""
import json
import re
import subprocess

from helpers.known_programs import glibc_extra


def test_timeline_only_export(build, heapscope, tmp_path):
    exe = build("rep_lifetimes.c")
    heapscope("record", "-o", tmp_path / "rec", "--timeline-interval", "5ms", "--timeline-heap", "on",
              "--", exe)
    timeline = json.loads(heapscope("timeline", tmp_path / "rec", "--format", "json").stdout)
    (proc,) = timeline["processes"]
    assert proc["heap_measure"] == "usable"
    out = tmp_path / "massif.out"
    heapscope("export", tmp_path / "rec", "--format", "massif", "-o", out)
    text = out.read_text()
    assert text.splitlines()[1] == f"cmd: {exe}"
    snaps = [(int(t), int(h)) for t, h in re.findall(r"time=(\d+)\nmem_heap_B=(\d+)", text)]
    assert snaps[0] == (0, 0)
    assert len(snaps) in (proc["sample_count"], proc["sample_count"] + 1)   # + the time-0 snapshot
    assert [t for t, _ in snaps] == sorted(t for t, _ in snaps)
    assert snaps[-1][1] == 4 * (100 + glibc_extra(build, 100))
    assert "heap_tree=peak" not in text and "heap_tree=detailed" not in text
    res = subprocess.run(["ms_print", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert f"Command:            {exe}" in res.stdout

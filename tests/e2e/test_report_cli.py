"""`heapscope report` / `heapscope stacks` as commands: bad input gives one stderr line and a
non-zero exit (never a traceback), outputs in each format, -o written whole."""
import json
import struct

import pytest

from helpers.profile_builder import API, ProfileBuilder


def good(tmp_path, name="good.hsp", **kw):
    b = ProfileBuilder(**kw)
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, 12, 3584), (1, 24, 7), (0, 100, 2)],
               apis=[(1, API["malloc"], 3591), (1, API["free"], 3000)])
    return b.write(tmp_path / name), b


def one_line_error(res, *fragments):
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("heapscope: error: ") and "Traceback" not in res.stderr
    for f in fragments:
        assert f in lines[0]
    assert res.stdout == ""


def test_bad_files_one_line(tmp_path, heapscope):
    path, b = good(tmp_path)
    data = path.read_bytes()
    (tmp_path / "short.hsp").write_bytes(data[:20])
    (tmp_path / "magic.hsp").write_bytes(b"NOTAHEAP" + data[8:])
    (tmp_path / "version.hsp").write_bytes(data[:8] + struct.pack("<I", 7) + data[12:])
    corrupt = bytearray(data)
    corrupt[-3] ^= 0xFF   # inside the last chunk (SNAPSHOT_END) payload
    (tmp_path / "crc.hsp").write_bytes(bytes(corrupt))
    (tmp_path / "empty").mkdir()
    cases = {
        "short.hsp": "file too short for a heapscope header",
        "magic.hsp": "not a heapscope profile (bad magic)",
        "version.hsp": "unsupported profile format version 7",
        "crc.hsp": "(type 9, SNAPSHOT_END): crc mismatch",
        "missing.hsp": "no such file",
        "empty": "holds no profile",
    }
    for name, fragment in cases.items():
        for cmd in (["report"], ["stacks", "--size", "12"]):
            res = heapscope(*cmd, tmp_path / name, check=False)
            one_line_error(res, str(tmp_path / name), fragment)
            assert res.returncode == 2


def test_bad_options_one_line(tmp_path, heapscope):
    path, _ = good(tmp_path)
    one_line_error(heapscope("report", path, "--size", "12-x", check=False), "bad size spec")
    one_line_error(heapscope("report", path, "--region", "nope", check=False), "no region 'nope'")
    one_line_error(heapscope("report", path, "--top", "-1", check=False), "--top must not be negative")
    one_line_error(heapscope("report", path, "-o", tmp_path / "no" / "dir" / "r.txt", check=False),
                   "does not exist")


def test_truncated_file_reports_with_warning(tmp_path, heapscope):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 10)])
    b.snapshot(sizes=[(0, 8, 50)])
    data = b.data()
    (tmp_path / "cut.hsp").write_bytes(data[:-7])
    res = heapscope("report", tmp_path / "cut.hsp")
    assert "warning   last snapshot (seq 1) cut short at byte" in res.stdout
    assert "using snapshot 0" in res.stdout
    assert any(l.split() == ["8", "10", "80"] for l in res.stdout.splitlines())


def test_json_output_and_file(tmp_path, heapscope):
    path, _ = good(tmp_path)
    doc = json.loads(heapscope("report", path, "--format", "json").stdout)
    assert doc["format"] == "heapscope-report" and doc["version"] == 1
    assert {r["size"]: r["counts"] for r in doc["sizes"]} == {
        12: {"(none)": 0, "local": 3584}, 24: {"(none)": 0, "local": 7}, 100: {"(none)": 2, "local": 0}}
    assert doc["api"]["local"] == {"malloc": 3591, "free": 3000}
    out = tmp_path / "r.csv"
    res = heapscope("report", path, "--format", "csv", "-o", out)
    assert res.stdout == "" and out.read_text().startswith("section,process,region,item,count,bytes,share\n")
    assert "size,all,local,12,3584,43008," in out.read_text().splitlines()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temp left


def test_merge_directory_and_per_process(tmp_path, heapscope):
    d = tmp_path / "run"
    d.mkdir()
    good(d, "a.hsp", pid=11)
    good(d, "b.hsp", pid=22)
    res = heapscope("report", d)
    assert "processes 2 (merged): pid 11 on node01, pid 22 on node01" in res.stdout
    assert any(l.split() == ["12", "0", "7,168", "7,168", "86,016"] for l in res.stdout.splitlines())
    res = heapscope("report", d, "--per-process", "--format", "json")
    doc = json.loads(res.stdout)
    assert [s["sizes"][0]["counts"]["local"] for s in doc["per_process"]] == [3584, 3584]
    assert doc["sizes"][0]["counts"]["local"] == 7168


def test_stacks_not_recorded(tmp_path, heapscope):
    path, _ = good(tmp_path, cmdline=("./sim", "in.dat"))
    res = heapscope("stacks", path, "--size", "12", "--region", "local", check=False)
    one_line_error(res, "no stacks recorded for size 12 in region local (the profile recorded no stacks)",
                   "record them with: heapscope record --sizes 12 --regions local -- ./sim in.dat")
    b = ProfileBuilder(stack_sizes="24")
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, 24, 2)], stacks=[(1, 24, 2, 48, (0x1234,))])
    res = heapscope("stacks", b.write(tmp_path / "s.hsp"), "--size", "24,12", check=False)
    assert res.returncode == 1
    assert "Stack trace types for size 24 in region local: 1 type, 2 allocations (48 bytes)" in res.stdout
    assert "no stacks recorded for size 12 (stacks were recorded for sizes 24)" in res.stdout
    assert "  [0] ?? (?+0x1234)" in res.stdout

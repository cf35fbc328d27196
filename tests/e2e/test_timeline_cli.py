"""`heapscope timeline`: text (sparklines, peaks, regions), JSON, CSV, PNG/SVG plots, one
line per process for several files, one-line errors; `record --timeline-interval`
parsing. (The timeline constants against the C header: tests/format/test_format_table.py.)"""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from heapscope.commands.record import timeline_interval_ms
from heapscope.errors import HeapscopeError

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, build, heapscope):
    """tl_regions (10 MiB held in "hold") and tl_fork (two processes), recorded once."""
    d = tmp_path_factory.mktemp("timeline-cli")
    heapscope("record", "--timeline-interval", "20ms", "--timeline-heap", "on", "-o", d / "one", "--",
              build("tl_regions.c", "-DHEAPSCOPE_WEAK"), 100)
    heapscope("record", "--timeline-interval", "20ms", "--timeline-heap", "on", "-o", d / "two", "--",
              build("tl_fork.c", "-DHEAPSCOPE_WEAK"), 100)
    heapscope("record", "--timeline-interval", "0", "-o", d / "off", "--",
              build("tl_regions.c", "-DHEAPSCOPE_WEAK"), 1)
    return d


def test_text_of_one_process(recorded, heapscope):
    (f,) = (recorded / "one").glob("*.hsp")
    out = heapscope("timeline", f).stdout
    lines = out.splitlines()
    heap = next(l for l in lines if l.strip().startswith("heap |"))
    assert "peak 10.0 MiB" in heap and "(hold)" in heap
    # 60 columns by default; a column no sample fell in stays blank (a loaded machine
    # can delay the 20 ms sampler past a column), the others carry the heap's level
    bar = re.search(r"\|([ ▁▂▃▄▅▆▇█]{60})\|", heap)
    assert bar and sum(c != " " for c in bar.group(1)) >= 40, heap
    assert any(l.strip().startswith("RSS  |") and "peak" in l for l in lines)
    assert any(l.strip().startswith("PSS  |") and "peak" in l for l in lines)
    regions = [l.split()[0] for l in lines[lines.index(next(l for l in lines if l.startswith("Regions"))) + 2:]]
    assert regions == ["setup", "hold", "outer", "outer/inner", "release"]
    hold = next(l for l in lines if l.strip().startswith("hold "))
    assert hold.split()[6:8] == ["10.0", "MiB"]         # heap at the end of "hold"
    assert "samples over" in out and "5 region-begin, 5 region-end" in out
    assert "heap in use: usable bytes" in out


def test_json_csv_and_plots(recorded, heapscope, tmp_path):
    (f,) = (recorded / "one").glob("*.hsp")
    png, svg = tmp_path / "t.png", tmp_path / "t.svg"
    doc = json.loads(heapscope("timeline", f, "--json", "--plot", png).stdout)
    heapscope("timeline", f, "--plot", svg)
    assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ET.parse(svg).getroot().tag.endswith("svg")
    assert doc["format"] == "heapscope-timeline" and doc["version"] == 1
    (p,) = doc["processes"]
    assert p["interval_ns"] == 20_000_000 and p["sample_count"] == len(p["samples"])
    assert p["kinds"]["region-begin"] == p["kinds"]["region-end"] == 5
    assert [r["region"] for r in p["regions"]] == ["setup", "hold", "outer", "outer/inner", "release"]
    hold = p["regions"][1]
    assert hold["heap_end"] >= 10 * MIB and hold["heap_begin"] < MIB and hold["end_s"] > hold["begin_s"]
    assert p["peaks"]["heap"]["bytes"] == hold["heap_end"]
    assert p["peaks"]["pss"]["bytes"] > 0 and p["peaks"]["rss"]["bytes"] >= 10 * MIB
    ends = [s for s in p["samples"] if s["kind"] == "region-end" and s["region"] == "hold"]
    assert len(ends) == 1 and ends[0]["heap_bytes"] == hold["heap_end"]
    rows = heapscope("timeline", f, "--format", "csv").stdout.splitlines()
    assert rows[0].startswith("pid,rank,seconds,kind,region")
    assert len(rows) == 1 + len(p["samples"])


def test_several_processes_one_line_each(recorded, heapscope, tmp_path):
    out = heapscope("timeline", recorded / "two", "--width", "30").stdout
    assert out.startswith("Timelines of 2 processes")
    rows = [l for l in out.splitlines() if l.startswith("  pid ")]
    assert len(rows) == 2 and all(re.search(r"\|.{30}\|", r) for r in rows)
    doc = json.loads(heapscope("timeline", recorded / "two", "--json", "--plot",
                               tmp_path / "two.png").stdout)
    assert len(doc["processes"]) == 2 and (tmp_path / "two.png").stat().st_size > 1000
    child = next(p for p in doc["processes"] if p["peaks"]["heap"]["bytes"] >= 2 * MIB)
    assert [r["region"] for r in child["regions"]] == ["parent/child"]


def test_errors_are_one_line(recorded, heapscope, tmp_path):
    def error(*args):
        res = heapscope("timeline", *args, check=False)
        assert res.returncode != 0 and res.stdout == ""
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
        return lines[0]

    (off,) = (recorded / "off").glob("*.hsp")
    assert "no timeline samples: recorded with the timeline off" in error(off)
    assert "no such file" in error(tmp_path / "missing.hsp")
    (tmp_path / "junk.hsp").write_bytes(b"not a profile at all, not at all")
    assert "not a heapscope profile" in error(tmp_path / "junk.hsp")
    (one,) = (recorded / "one").glob("*.hsp")
    assert ".png or .svg" in error(one, "--plot", tmp_path / "t.pdf")
    assert "--width" in error(one, "--width", "3")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no profile" in error(empty)


@pytest.mark.parametrize("text,ms", [("100ms", 100), ("2s", 2000), ("0.5s", 500), ("250", 250),
                                     ("0", 0), ("1000us", 1)])
def test_durations(text, ms):
    assert timeline_interval_ms(text) == ms


@pytest.mark.parametrize("text", ["abc", "0.5ms", "1.5ms", "-5", "10 min", "100000s"])
def test_bad_durations(text):
    with pytest.raises(HeapscopeError, match="bad --timeline-interval"):
        timeline_interval_ms(text)


def test_record_rejects_a_bad_interval(heapscope):
    res = heapscope("record", "--timeline-interval", "fast", "--", "true", check=False)
    assert res.returncode == 2 and "bad --timeline-interval 'fast'" in res.stderr


def test_killed_before_the_first_flush_says_so(native, heapscope, tmp_path):
    """A process SIGKILLed before its first dump and the timeline's first flush leaves a
    file with no samples: the error says that, not that the timeline was off."""
    import os
    import signal
    import subprocess
    import time
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(tmp_path), HEAPSCOPE_TIMELINE_FLUSH_MS="60000")
    proc = subprocess.Popen(["sleep", "30"], env=env)
    for _ in range(500):
        if list(tmp_path.glob("*.hsp")):
            break
        time.sleep(0.01)
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    (killed,) = tmp_path.glob("*.hsp")
    res = heapscope("timeline", killed, check=False)
    assert res.returncode != 0 and len(res.stderr.strip().splitlines()) == 1
    assert "no timeline samples: killed before its first dump" in res.stderr

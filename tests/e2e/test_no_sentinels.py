"""No figure is a sentinel: what was not measured is null in JSON, empty in CSV and
"-" or "not measured" in text, never -1 (the format's "not measured"), and a process
not under MPI has rank null, not -1. tl_regions recorded with the timeline's default
(heap in use not measured, PSS not read at region boundaries)."""
import csv
import io
import json
import re

MINUS_ONE = re.compile(r"(?<![\w.])-1(?![\d.])")


def test_timeline_and_report_documents(heapscope, build, tmp_path):
    exe = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path / "out", "--timeline-interval", "20ms", "--", exe, 30)
    [profile] = (tmp_path / "out").glob("*.hsp")
    res = heapscope("timeline", profile, "--format", "json")
    assert not MINUS_ONE.search(res.stdout)
    [p] = json.loads(res.stdout)["processes"]
    assert p["rank"] is None and p["heap_measure"] == "none"
    assert all(s["heap_bytes"] is None for s in p["samples"])
    boundaries = [s for s in p["samples"] if s["kind"].startswith("region-")]
    assert len(boundaries) == 10 and all(s["pss_bytes"] is None and s["rss_bytes"] > 0
                                         for s in boundaries)
    assert all(r["heap_begin"] is None for r in p["regions"])
    rows = list(csv.DictReader(io.StringIO(heapscope("timeline", profile, "--format", "csv").stdout)))
    assert rows and all(r["heap_bytes"] == "" and r["rank"] == "" for r in rows)
    assert all(r["pss_bytes"] == "" for r in rows if r["kind"].startswith("region-"))
    text = heapscope("timeline", profile).stdout
    assert not MINUS_ONE.search(text)
    for cmd in (["report", "--format", "json"], ["report", "--format", "csv"], ["report"]):
        out = heapscope(*cmd[:1], profile, *cmd[1:]).stdout
        assert not MINUS_ONE.search(out), (cmd, out)
    doc = json.loads(heapscope("report", profile, "--format", "json").stdout)
    assert all(proc["rank"] is None for proc in doc["processes"])
    # diff: the total row is every region and size, not size 0 (a real size: malloc(0))
    diff = json.loads(heapscope("diff", profile, profile, "--format", "json").stdout)
    assert (diff["total"]["size"], diff["total"]["region"]) == (None, None)


def test_frames_without_line_information_are_null(heapscope, build, tmp_path):
    """A frame's unknown file and line are null in JSON (they were "" and 0; a call
    graph's unranked vertex had rank 0)."""
    exe = build("rec_stacks.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path / "out", "--sizes", "1234", "--", exe)
    doc = json.loads(heapscope("stacks", tmp_path / "out", "--size", "1234", "--format",
                               "json").stdout)
    frames = [f for g in doc["groups"] for t in g["stack_types"] for f in t["frames"]]
    start = [f for f in frames if f["function"] == "_start"]
    assert start and all((f["file"], f["line"]) == (None, None) for f in start)
    assert all(f["line"] > 0 for f in frames if f["file"])
    cg = json.loads(heapscope("callgraph", tmp_path / "out", "--size", "1234", "--format",
                              "json", "-o", "-").stdout)
    assert all(v["rank"] is None or v["rank"] >= 1 for v in cg["vertices"])
    assert any(v["rank"] is None for v in cg["vertices"])
    assert all(v["line"] is None for v in cg["vertices"])       # the function view


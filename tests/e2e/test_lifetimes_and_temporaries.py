"""End to end: record tests/programs/rep_lifetimes.c with --track, then `heapscope lifetimes`
and `heapscope temporaries`: exact allocation, free, temporary and live counts per size and
stack trace type, the in-between histogram and its percentile bins (derived here from
the program's known allocation order), the extra heap bytes glibc gives each size, and
a lifetime at least as long as the program's sleep."""
import json
from pathlib import Path

import pytest

from heapscope.profile.model import lifetime_bin
from helpers.known_programs import glibc_extra, user_frames

SOURCE = Path(__file__).resolve().parents[1] / "programs" / "rep_lifetimes.c"
WINDOW = 100
SLEEP_NS = 20_000_000


def line_of(mark):
    hits = [i + 1 for i, t in enumerate(SOURCE.read_text().splitlines()) if f"LINE-MARK {mark}" in t]
    assert len(hits) == 1, mark
    return hits[0]


def bins_of(values):
    out = {}
    for v in values:
        out[lifetime_bin(v)] = out.get(lifetime_bin(v), 0) + 1
    return out


def percentile_value(values, percent):
    ordered = sorted(values)
    return ordered[max(1, (percent * len(ordered) + 99) // 100) - 1]


@pytest.fixture(scope="module")
def recorded(build, heapscope, tmp_path_factory):
    exe = build("rep_lifetimes.c")
    out = tmp_path_factory.mktemp("rep-lifetimes")
    heapscope("record", "--track", "--sizes", "all", "-o", out, "--", exe)
    return out


def lifetimes(heapscope, recorded, *args):
    return json.loads(heapscope("lifetimes", recorded, "--format", "json", *args).stdout)


def test_temporaries_of_size_48(heapscope, recorded, build):
    doc = lifetimes(heapscope, recorded, "--size", "48")
    (size,) = doc["sizes"]
    assert (size["allocs"], size["frees"], size["live_at_end"], size["temporaries"]) == (1000, 1000, 0, 1000)
    assert size["between"]["bins"] == [dict(bin=0, lo=0, hi=0, count=1000)]
    assert size["between"]["median"] == size["between"]["p90"] == dict(bin=0, lo=0, hi=0)
    assert size["time"]["count"] == 1000
    extra = glibc_extra(build, 48)
    assert size["extra"] == dict(blocks=1000, bytes=1000 * extra, per_block=float(extra))
    (t,) = size["stack_types"]
    assert [fn for fn, _ in user_frames(t)] == ["make_temps", "main"]
    assert user_frames(t)[0] == ("make_temps", line_of("temps"))
    rows = heapscope("lifetimes", recorded, "--size", "48", "--format", "csv").stdout.splitlines()
    assert rows[0] == "size,region,type,measure,bin,lo,hi,count,allocs,frees,live_at_end,temporaries,frames"
    assert "48,(none),0,between,0,0,0,1000,1000,1000,0,1000," in rows
    assert any(r.startswith("48,(none),1,between,0,0,0,1000,1000,1000,0,1000,make_temps <- main") for r in rows)


def test_in_between_histogram_of_the_window(heapscope, recorded):
    values = [WINDOW - 1 - i for i in range(WINDOW)]      # allocations made after block i
    doc = lifetimes(heapscope, recorded, "--size", "56", "--region", "window")
    (size,) = doc["sizes"]
    assert size["regions"] == ["window"]
    assert (size["allocs"], size["frees"], size["temporaries"]) == (WINDOW, WINDOW, 1)
    assert {b["bin"]: b["count"] for b in size["between"]["bins"]} == bins_of(values)
    assert size["between"]["median"]["bin"] == lifetime_bin(percentile_value(values, 50))
    assert size["between"]["p90"]["bin"] == lifetime_bin(percentile_value(values, 90))
    assert user_frames(size["stack_types"][0])[0] == ("hold_window", line_of("window"))
    text = heapscope("lifetimes", recorded, "--size", "56", "--region", "window").stdout
    assert "Size 56 (window): 1 stack trace type, 100 allocations, 100 freed, 0 live at the snapshot, " \
           "1 temporary" in text
    lo, hi = 1 << (size["between"]["median"]["bin"] - 1), (1 << size["between"]["median"]["bin"]) - 1
    assert f"median {lo}-{hi}, p90 " in text


def test_slow_block_lives_at_least_the_sleep(heapscope, recorded):
    (size,) = lifetimes(heapscope, recorded, "--size", "64")["sizes"]
    assert (size["allocs"], size["frees"], size["temporaries"]) == (1, 1, 1)
    (b,) = size["time"]["bins"]
    assert b["bin"] >= lifetime_bin(SLEEP_NS) and b["count"] == 1


def test_blocks_never_freed_and_their_extra(heapscope, recorded, build):
    (size,) = lifetimes(heapscope, recorded, "--size", "100")["sizes"]
    assert (size["allocs"], size["frees"], size["live_at_end"]) == (4, 0, 4)
    assert size["time"]["count"] == 0 and size["time"]["median"] is None
    assert size["extra"]["bytes"] == 4 * glibc_extra(build, 100)


def test_temporaries_ranking(heapscope, recorded):
    doc = json.loads(heapscope("temporaries", recorded, "--size", "48,56,64,100", "--format", "json").stdout)
    assert doc["bound"] == dict(max_between=0, max_ns=None)
    assert doc["totals"] == dict(allocs=1105, temporaries=1002, share=1002 / 1105, types_with_temporaries=3)
    assert [(s["size"], s["temporaries"], s["allocs"], s["share"]) for s in doc["sizes"]] == \
        [(48, 1000, 1000, 1.0), (56, 1, 100, 0.01), (64, 1, 1, 1.0)]
    assert [(t["size"], user_frames(t)[0]) for t in doc["stack_types"]] == \
        [(48, ("make_temps", line_of("temps"))), (56, ("hold_window", line_of("window"))),
         (64, ("slow_block", line_of("slow")))]
    text = heapscope("temporaries", recorded, "--size", "48,56,64,100").stdout
    assert "1,002 of 1,105 allocations were temporaries (90.7%)." in text
    assert "freed with no other allocation of the same thread in between" in text


def test_without_tracking_one_line_error(heapscope, build, tmp_path):
    exe = build("rep_lifetimes.c")
    heapscope("record", "-o", tmp_path, "--", exe)
    for command in ("lifetimes", "temporaries", "peak", "leaks"):
        res = heapscope(command, tmp_path, check=False)
        assert res.returncode == 2 and res.stdout == ""
        assert len(res.stderr.strip().splitlines()) == 1 and "record --track" in res.stderr


def test_temporary_bounds_as_recorded(build, heapscope, tmp_path):
    exe = build("rep_lifetimes.c")
    heapscope("record", "--track", "--sizes", "all", "--temporary-between", "3", "-o", tmp_path / "n3", "--", exe)
    doc = json.loads(heapscope("temporaries", tmp_path / "n3", "--size", "56", "--format", "json").stdout)
    assert doc["bound"] == dict(max_between=3, max_ns=None)
    # window blocks with at most 3 allocations after them: the last four
    assert [(s["size"], s["temporaries"]) for s in doc["sizes"]] == [(56, 4)]
    assert "freed with at most 3 other allocations of the same thread in between" in \
        heapscope("temporaries", tmp_path / "n3").stdout
    heapscope("record", "--track", "--sizes", "all", "--temporary-time", "5ms", "-o", tmp_path / "t5", "--", exe)
    doc = json.loads(heapscope("temporaries", tmp_path / "t5", "--size", "64", "--format", "json").stdout)
    assert doc["bound"] == dict(max_between=0, max_ns=5_000_000)
    assert doc["totals"]["temporaries"] == 0 and doc["sizes"] == []   # slept 20 ms: not a temporary

"""pprof export addresses: every location of a PIE program, symbolized on its own from
the profile's address and mapping with eu-addr2line (not from the lines heapscope wrote
beside it), names the known function and source line of tests/programs/rec_stacks.c.
An address written without the module's load bias lands outside its mapping."""
import subprocess

from conftest import PROGRAMS, require
from helpers.pprof_profile import read_pprof

SOURCE = PROGRAMS / "rec_stacks.c"


def line_of(text):
    hits = [n for n, t in enumerate(SOURCE.read_text().splitlines(), 1) if text in t]
    assert len(hits) == 1, text
    return hits[0]


def is_pie(path):
    with open(path, "rb") as f:
        return int.from_bytes(f.read(18)[16:18], "little") == 3   # ET_DYN


def symbolize(binary, addresses):
    """(function, line) of each file address, by eu-addr2line."""
    res = subprocess.run([require("eu-addr2line"), "-f", "-e", str(binary),
                          *(hex(a) for a in addresses)], capture_output=True, text=True, check=True)
    out = res.stdout.splitlines()
    return [(out[2 * i], int(out[2 * i + 1].split(":")[1])) for i in range(len(addresses))]


def test_addresses_symbolize_to_the_call_sites(build, heapscope, tmp_path):
    exe = build("rec_stacks.c", "-DHEAPSCOPE_WEAK")
    assert is_pie(exe)    # Debian's gcc links PIE: a load bias that is not 0
    heapscope("record", "-o", tmp_path / "out", "--sizes", "1234", "--", exe)
    heapscope("export", tmp_path / "out", "--format", "pprof", "--size", "1234",
              "-o", tmp_path / "p.pb.gz")
    prof = read_pprof(tmp_path / "p.pb.gz")
    for loc in prof.locations.values():
        m = prof.mappings[loc.mapping]
        assert m.start <= loc.address < m.limit, (hex(loc.address), m)
    [(exe_id, mapping)] = [(i, m) for i, m in prof.mappings.items() if m.filename == str(exe)]
    assert mapping.start != mapping.offset

    stacks = set()
    for sample in prof.samples:
        own = [prof.locations[i] for i in sample.locations if prof.locations[i].mapping == exe_id]
        frames = symbolize(exe, [loc.address - mapping.start + mapping.offset for loc in own])
        stacks.add((sample.values[0], tuple(f for f in frames if f[0] != "_start")))
    malloc = ("alloc_here", line_of("LINE_MALLOC"))
    a, b = ("path_a", line_of("LINE_A")), ("path_b", line_of("LINE_B"))
    assert stacks == {(10, (malloc, a, ("main", line_of("path_a(1234, 10)")))),
                      (20, (malloc, b, ("main", line_of("path_b(1234, 20)")))),
                      (7, (malloc, a, ("main", line_of("path_a(1234, 7)"))))}

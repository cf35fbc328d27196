"""The C runtime's start-up frames carry no source line: eu-addr2line gives `_start`
of an -O2 C++ program (the FEM workload: its main lies next to _start) a line of
main.cc, a neighbouring compilation unit's line-table row; the reports showed
`_start @ main.cc:66`."""
import subprocess

from heapscope.profile.model import Module, Profile
from heapscope.symbolize import Symbolizer
from heapscope.symbolize.cache import SymbolCache

from conftest import require


def _symbol(binary, name):
    out = subprocess.run([require("eu-readelf"), "-s", str(binary)], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[7] == name and parts[3] == "FUNC":
            return int(parts[1], 16)
    raise AssertionError(f"no {name} in {binary}")


def test_start_has_no_stray_line(native, tmp_path):
    binary = native / "bin" / "hs-wl-fem-temporaries"
    start, main = _symbol(binary, "_start"), _symbol(binary, "main")
    raw = subprocess.run([require("eu-addr2line"), "-f", "-e", str(binary), hex(start + 0x10)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert raw[0] == "_start" and "main.cc" in raw[1], raw   # what eu-addr2line says
    bias = 0x5555_0000_0000
    profile = Profile(path="p.hsp", modules=[Module(str(binary), bias, "", ((bias, bias + (1 << 24)),))])
    sym = Symbolizer(cache=SymbolCache(tmp_path / "cache"))
    ret_start, ret_main = bias + start + 0x11, bias + main + 0x11   # return addresses
    frames = sym.resolve(profile, [ret_start, ret_main])
    [f] = frames[ret_start]
    assert (f.function, f.file, f.line) == ("_start", "", 0)
    assert f.text() == f"_start (hs-wl-fem-temporaries+{start + 0x10:#x})"
    # a function with its own debug information keeps its line
    assert frames[ret_main][-1].function == "main" and frames[ret_main][-1].file.endswith("main.cc")
    assert frames[ret_main][-1].line > 0

"""Offline symbolization of recorded return addresses (libdw via eu-addr2line).

    sym = Symbolizer()
    frames = sym.resolve(profile, addresses)   # {address: [Frame, ...]}
    sym.notes                                  # one line per module lacking debug info

Modules: frames (Frame and its text), elf (build-id, debug-info checks), addr2line
(batch lookups), cache (per build-id on-disk cache), symbolizer (orchestration).
"""
from heapscope.symbolize.cache import SymbolCache, cache_dir
from heapscope.symbolize.frames import Frame
from heapscope.symbolize.symbolizer import Symbolizer

__all__ = ["Frame", "Symbolizer", "SymbolCache", "cache_dir"]

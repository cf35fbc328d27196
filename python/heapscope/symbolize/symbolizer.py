"""Offline symbolization: return addresses + a profile's module map -> source frames.

For each module the addresses fall in: when the cache holds every offset of this
build (by build-id, with debug info), answer from it without touching the disk: the
recorded binary may since have been rebuilt in place (`heapscope record` fills the
cache as it ends, symbolize.warm). Else find a binary to read (the recorded file if
it is still the same build, else its separate debug file by build-id), look the
file-relative offsets up (cache first, then one eu-addr2line run per module); when
there is none, what the cache holds of that build is all there is. Say once per
module why frames may lack names or lines.
"""
import bisect
import dataclasses
import os
from contextlib import nullcontext
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Iterable, List, Optional, Tuple

from heapscope.profile.model import Module, Profile
from heapscope.symbolize import addr2line
from heapscope.symbolize.cache import SymbolCache, build_id_key, module_key
from heapscope.symbolize.elf import (build_id_debug_file, function_starts, read_elf,
                                     separate_debug_file, source_file_of)
from heapscope.symbolize.frames import Frame
from heapscope.symbolize.names import MAIN_PROGRAM, fortran_name

UNKNOWN = ("??", "", 0, False)
# The C runtime's start-up code (crt1.o, crti.o, crtbegin.o): assembly or code built
# without debug information on every toolchain, so a line eu-addr2line gives one of
# them is a neighbouring compilation unit's line-table row (an -O2 program's _start
# came out as "main.cc:66"). Their frames keep no file:line, unless the line is in an
# assembly source (a C runtime built with -g).
CRT_FUNCTIONS = frozenset({"_start", "_init", "_fini", "deregister_tm_clones",
                           "register_tm_clones", "__do_global_dtors_aux", "frame_dummy"})
ASSEMBLY_SUFFIXES = (".S", ".s", ".asm")


def _frame(entry, module: str, offset: int) -> Frame:
    """eu-addr2line's answer for one frame, with a stray line of start-up code dropped and
    a Fortran symbol read as Fortran (the symbol kept beside it); a main program without
    debug information is named by its source file, as .symtab gives it."""
    function, file, line, inlined = entry
    if function in CRT_FUNCTIONS and file and not file.endswith(ASSEMBLY_SUFFIXES):
        file, line = "", 0
    fortran = fortran_name(function)
    if fortran is None:
        return Frame(function, file, line, module, offset, inlined)
    if fortran == MAIN_PROGRAM and not file and module:
        source = source_file_of(module, function)
        fortran += f" ({source})" if source else ""
    return Frame(fortran, file, line, module, offset, inlined, symbol=function)


def _no_step(n: int = 1) -> None:
    pass


class Symbolizer:
    def __init__(self, cache: Optional[SymbolCache] = None):
        self.cache = cache if cache is not None else SymbolCache()
        self.notes: List[str] = []          # one per module with a problem, in order found
        self.program_notes: List[str] = []  # of them, "this program has no symbols"
        self._noted = set()
        self._located: Dict[Tuple[str, str], Tuple[Optional[str], Optional[str]]] = {}
        self._memo: Dict[str, Dict[int, list]] = {}
        self._starts: Dict[Tuple[str, str], List[int]] = {}   # (path, build id): function starts
        self.unsaved = 0                    # answers the cache could not store
        self.tool_missing = False           # eu-addr2line was needed and not found
        # progress(total) -> a context manager yielding step(n): a command's bar over the
        # modules of one resolve (commands/reading.symbolizer); None: no progress shown
        self.progress = None

    def resolve(self, profile: Profile, addresses: Iterable[int]) -> Dict[int, List[Frame]]:
        """Frames of each return address (innermost first; several when inlined)."""
        index = _ModuleIndex(profile.modules)
        by_module: Dict[Module, List[int]] = {}
        out: Dict[int, List[Frame]] = {}
        for address in set(addresses):
            module = index.find(address)
            if module is None:
                out[address] = [Frame("??", "", 0, "", address)]
            else:
                by_module.setdefault(module, []).append(address)
        wanted = {m: {a: a - 1 - m.bias for a in addrs} for m, addrs in by_module.items()}
        plans = {m: self._plan(m, set(offsets.values())) for m, offsets in wanted.items()}
        # eu-addr2line once per module, the modules at the same time (a subprocess each:
        # record's symbol step after a run waits for the slowest, not for their sum)
        runs = [(m, plan) for m, plan in plans.items() if plan[0] == "run"]
        with (self.progress(len(wanted)) if self.progress else nullcontext(_no_step)) as step:
            if len(runs) > 1:
                with ThreadPoolExecutor(max_workers=min(len(runs), os.cpu_count() or 1, 8)) as pool:
                    found = dict(zip([m for m, _ in runs],
                                     pool.map(lambda mp: addr2line.lookup(mp[1][1], mp[1][4]), runs)))
            else:
                found = {m: addr2line.lookup(plan[1], plan[4]) for m, plan in runs}
            for module, offsets in wanted.items():
                plan = plans[module]
                entries = plan[1] if plan[0] == "done" else self._finish(plan, found[module])
                for address, offset in offsets.items():
                    out[address] = [_frame(e, module.path, offset)
                                    for e in (entries.get(offset) or [UNKNOWN])]
                self._unnamed_functions(module, offsets, out)
                step(1)
        self._unnamed_program(profile, wanted, out)
        return out

    def _unnamed_functions(self, module: Module, offsets: Dict[int, int],
                           out: Dict[int, List[Frame]]) -> None:
        """Give each unnamed frame of the module the start of its function (from the
        binary's .eh_frame_hdr), so that a stripped program's frames group by function."""
        unnamed = [a for a in offsets if out[a][-1].function == "??"]
        if not unnamed:
            return
        starts = self._function_starts(module)
        for address in unnamed:
            i = bisect.bisect_right(starts, offsets[address]) - 1
            if i >= 0:
                frames = out[address]
                frames[-1] = dataclasses.replace(frames[-1], function_start=starts[i])

    def _function_starts(self, module: Module) -> List[int]:
        ident = (module.path, module.build_id)
        if ident not in self._starts:
            info = read_elf(module.path) if os.path.isfile(module.path) else None
            same = info is not None and (not module.build_id or info.build_id in ("", module.build_id))
            self._starts[ident] = function_starts(module.path) if same else []
        return self._starts[ident]

    def _unnamed_program(self, profile: Profile, wanted, out: Dict[int, List[Frame]]) -> None:
        """Say once that the program has no symbols when none of its frames got a name
        (said instead of its "no debug info" note)."""
        program = getattr(profile, "exe", "")   # a job file's peak stacks have no program
        for module, offsets in wanted.items():
            if module.path != program or any(out[a][-1].function != "??" for a in offsets):
                continue
            if module.path in self._noted and not any(
                    n.startswith(f"no debug info for {module.path};") for n in self.notes):
                continue   # not on this machine, or changed since: said so already
            text = (f"this program has no symbols: install its -dbgsym package or build with -g "
                    f"({module.path}; its frames show as ?? (program+offset), which eu-addr2line "
                    f"resolves once the symbols are there)")
            if "program:" + module.path not in self._noted:
                self.program_notes.append(text)
            self._note("program:" + module.path, text)
            generic = f"no debug info for {module.path};"
            self.notes = [n for n in self.notes if not n.startswith(generic)]

    def _plan(self, module: Module, offsets) -> tuple:
        """("done", entries) when nothing needs eu-addr2line; else ("run", binary, key,
        memo, missing offsets)."""
        if module.build_id:
            cached = self._cached(build_id_key(module.build_id, True))
            if all(o in cached for o in offsets):
                return ("done", cached)   # this build, symbolized with debug info before
        binary, key = self._locate(module)
        if binary is None:
            return ("done", self._cached_build(module))
        memo = self._cached(key) if key else {}
        missing = [o for o in offsets if o not in memo]
        if not missing:
            return ("done", memo)
        if not addr2line.available():
            self.tool_missing = True
            self._note("tool", "eu-addr2line not found: install elfutils to see function "
                               "names and source lines")
            return ("done", memo)
        return ("run", binary, key, memo, missing)

    def _finish(self, plan: tuple, found) -> Dict[int, list]:
        """The memo of a planned run, with eu-addr2line's answers added (and cached)."""
        _, _binary, key, memo, missing = plan
        fresh = {o: [list(e) for e in found.get(o) or [UNKNOWN]] for o in missing}
        memo.update(fresh)
        if key and not self.cache.store(key, fresh):
            self.unsaved += len(fresh)
        return memo

    def _cached(self, key: str) -> Dict[int, list]:
        memo = self._memo.get(key)
        if memo is None:
            memo = self._memo[key] = self.cache.load(key)
        return memo

    def _cached_build(self, module: Module) -> Dict[int, list]:
        """What the cache holds of a build whose binary is not here (debug answers first)."""
        if not module.build_id:
            return {}
        held = dict(self._cached(build_id_key(module.build_id, False)))
        held.update(self._cached(build_id_key(module.build_id, True)))
        return held

    def _locate(self, module: Module) -> Tuple[Optional[str], Optional[str]]:
        """(binary to read, cache key) for a module; (None, None) when there is none."""
        ident = (module.path, module.build_id)
        if ident not in self._located:
            self._located[ident] = self._find_binary(module)
        return self._located[ident]

    def _find_binary(self, module: Module):
        path = module.path
        if not path.startswith("/"):
            return None, None     # [vdso] and the like: nothing on disk to read
        info = read_elf(path) if os.path.exists(path) else None
        if info is not None and (not module.build_id or info.build_id in ("", module.build_id)):
            has_debug = info.has_dwarf or separate_debug_file(path, info) is not None
            if not has_debug:
                self._note(path, f"no debug info for {path}; install its -dbgsym package "
                                 f"or rebuild with -g")
            return path, module_key(path, module.build_id or info.build_id, has_debug)
        debug = build_id_debug_file(module.build_id)
        if debug:
            return debug, module_key(debug, module.build_id, True)
        if not os.path.exists(path):
            why = "is not on this machine"
        elif info is None:
            why = "is not a readable ELF file"
        else:
            why = (f"has changed since the recording (build-id {info.build_id or 'none'}, "
                   f"recorded {module.build_id})")
        cached = " not in the symbol cache" if self._cached_build(module) else ""
        self._note(path, f"{path} {why}; its frames{cached} show ?? (symbolize where the "
                         f"recorded binaries are, or re-record)")
        return None, None

    def _note(self, ident: str, text: str) -> None:
        if ident not in self._noted:
            self._noted.add(ident)
            self.notes.append(text)


class _ModuleIndex:
    """Which module's executable range holds an address (bisect over sorted ranges)."""

    def __init__(self, modules: List[Module]):
        spans = sorted((lo, hi, i) for i, m in enumerate(modules) for lo, hi in m.ranges)
        self.starts = [s[0] for s in spans]
        self.spans = spans
        self.modules = modules

    def find(self, address: int) -> Optional[Module]:
        # Return addresses point just past the call: look up address - 1.
        i = bisect.bisect_right(self.starts, address - 1) - 1
        if i >= 0:
            lo, hi, m = self.spans[i]
            if lo <= address - 1 < hi:
                return self.modules[m]
        return None

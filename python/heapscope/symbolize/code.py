"""What a function's machine code looks like, read from the binary on disk: whether it is
a few dozen instructions, whether it loops, what it calls on its way back to its caller.
The ranking uses it to tell an allocation wrapper from a small kernel (docs/ranking.md,
"Wrappers"): the stacks of both go straight into the allocator, their code does not look
alike.

The function is found by the call-frame information (.eh_frame_hdr, which stripping
keeps): it runs from its start to the next function's. Decoded with capstone (x86-64,
AArch64; the names of the functions called, from the PLT and its relocations, on x86-64
only); only the first SMALL + 1 instructions are read, so a big function costs no more
than a small one. Read once per file and function in a process.
"""
import bisect
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Optional, Tuple

import numpy

from heapscope.symbolize.elf import _sections, function_starts

SMALL = 96        # instructions: a wrapper with checks and counters is a few dozen
NO_RETURN = frozenset({   # what an error path ends in
    "exit", "_exit", "_Exit", "abort", "__stack_chk_fail", "__assert_fail", "err", "errx",
    "verr", "verrx", "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume", "MPI_Abort",
    "_gfortran_stop_string", "_gfortran_error_stop_string", "_gfortran_error_stop_numeric",
    "_gfortran_runtime_error", "_gfortran_runtime_error_at", "_gfortran_os_error",
    "_gfortran_os_error_at"})
_SHT_RELA, _SHT_DYNSYM = 4, 11
_GLOB_DAT, _JUMP_SLOT = 6, 7     # the x86-64 relocations of an imported function's slot
_RELA = numpy.dtype([("slot", "<u8"), ("info", "<u8"), ("addend", "<i8")])
_SHF_EXECINSTR = 0x4
_MACHINES = {0x3E: "x86-64", 0xB7: "aarch64"}


@dataclass(frozen=True)
class CodeFacts:
    start: int        # link-time address where the function starts
    small: bool       # at most SMALL instructions
    loops: bool       # its control flow can come back to an instruction (small ones)
    looping: frozenset = frozenset()   # [start, end) of each instruction inside a loop
    calls: Tuple[str, ...] = ()   # what it calls on its way to returning (small ones,
                                  # x86-64): the symbol of an imported function, "?"
                                  # for anything else; calls on error paths (ending in
                                  # exit, abort ...) left out


@lru_cache(maxsize=None)
def _starts(path: str):
    return function_starts(path)


@lru_cache(maxsize=None)
def _text(path: str):
    """(machine, [(address, size, file offset)] of the executable sections) or None."""
    try:
        with open(path, "rb") as fh:
            found = _sections(fh)
            fh.seek(18)
            machine = int.from_bytes(fh.read(2), "little")
    except OSError:
        return None
    if not found or machine not in _MACHINES or not found[2]:
        return None
    return _MACHINES[machine], [(s[3], s[5], s[4]) for s in found[0]
                                if s[2] & _SHF_EXECINSTR and s[1] == 1]


@lru_cache(maxsize=None)
def _disassembler(machine: str):
    import capstone   # imported here: only the ranking of a candidate wrapper needs it
    if machine == "x86-64":
        md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    else:
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    return md


def function_code(path: str, address: int) -> Optional[CodeFacts]:
    """The code facts of the function holding `address` (link-time) in the ELF file at
    `path`, or None when it cannot be read (no call-frame table, another machine)."""
    starts = _starts(path)
    i = bisect.bisect_right(starts, address) - 1
    if i < 0 or not path:
        return None
    return _facts(path, starts[i], starts[i + 1] if i + 1 < len(starts) else None)


@lru_cache(maxsize=4096)
def _facts(path: str, start: int, end: Optional[int]) -> Optional[CodeFacts]:
    text = _text(path)
    if text is None:
        return None
    machine, sections = text
    section = next((s for s in sections if s[0] <= start < s[0] + s[1]), None)
    if section is None:
        return None
    limit = section[0] + section[1] if end is None else min(end, section[0] + section[1])
    length = min(limit - start, 16 * (SMALL + 1))   # an instruction is at most 15 bytes
    try:
        with open(path, "rb") as fh:
            fh.seek(section[2] + start - section[0])
            code = fh.read(length)
    except OSError:
        return None
    try:
        disassembler = _disassembler(machine)
    except ImportError:   # a broken install: the ranking falls back on names
        return None
    instructions = []   # (address, size, mnemonic, operands)
    for ins in disassembler.disasm_lite(code, start):
        if ins[0] >= limit:
            break
        if len(instructions) == SMALL:
            return CodeFacts(start, False, False)
        instructions.append(ins)
    if not instructions:
        return None
    imported = _imported(path) if machine == "x86-64" else {}
    successors, calls = _flow(machine, instructions, imported)
    cyclic = _in_cycles(successors)
    return CodeFacts(start, True, bool(cyclic),
                     frozenset((instructions[i][0], instructions[i][0] + instructions[i][1])
                               for i in cyclic),
                     _calls_on_the_way_out(successors, calls) if imported else ("?",))


def in_loop(facts: CodeFacts, address: int) -> bool:
    """Whether the instruction holding `address` (a call site: return address - 1) is
    inside a loop of the function."""
    return any(a <= address < end for a, end in facts.looping)


_RIP = re.compile(r"\[rip ([+-]) (0x[0-9a-f]+|[0-9]+)\]")
_X86_CONDITIONAL = ("loop", "jrcxz", "jecxz")
_ARM_CONDITIONAL = ("b.", "cbz", "cbnz", "tbz", "tbnz")


def _branch(machine: str, mnemonic: str):
    """How an instruction moves on: "ret", "call", "jmp" (unconditional), "jcc"
    (conditional) or None (falls through)."""
    if machine == "x86-64":
        m = mnemonic.split()[-1]      # without bnd, notrack, rep prefixes
        if m.startswith("ret"):
            return "ret"
        if m == "call":
            return "call"
        if m == "jmp":
            return "jmp"
        return "jcc" if m.startswith("j") or m.startswith(_X86_CONDITIONAL) else None
    if mnemonic == "ret":
        return "ret"
    if mnemonic in ("bl", "blr"):
        return "call"
    if mnemonic in ("b", "br"):
        return "jmp"
    return "jcc" if mnemonic.startswith(_ARM_CONDITIONAL) else None


def _target(address: int, size: int, operands: str) -> Optional[int]:
    """Where a direct jump or call goes, or the GOT slot an x86-64 `jmp/call [rip+d]`
    reads (negated: a slot, not code)."""
    last = operands.split(",")[-1].strip().lstrip("#")
    if last.startswith("0x"):
        return int(last, 16)
    m = _RIP.search(operands)
    if m:
        disp = int(m.group(2), 0)
        return -(address + size + (disp if m.group(1) == "+" else -disp))
    return None


def _flow(machine: str, instructions, imported: Dict[int, str]):
    """Each instruction's successors (indices; -1: returns to the caller) and the name
    each call (or tail call) reaches: a call of a function that does not return ends the
    flow, a conditional jump out of the function goes to an error path (gcc's .cold
    part), an unconditional one is a tail call: a call, then a return."""
    index = {ins[0]: i for i, ins in enumerate(instructions)}
    successors, calls = [], {}
    for i, (address, size, mnemonic, operands) in enumerate(instructions):
        how = _branch(machine, mnemonic)
        nxt = [i + 1]
        if how == "ret":
            nxt = [-1]
        elif how == "call":
            name = imported.get(_target(address, size, operands), "?")
            calls[i] = name
            if name in NO_RETURN:
                nxt = []
        elif how is not None:
            target = _target(address, size, operands)
            if target in index:
                nxt = [index[target]] if how == "jmp" else [index[target], i + 1]
            elif how == "jmp":
                calls[i] = imported.get(target, "?")
                nxt = [-1]
        successors.append([j for j in nxt if j < len(instructions)])
    return successors, calls


def _calls_on_the_way_out(successors, calls) -> Tuple[str, ...]:
    """The calls from which the function can still return."""
    before = [[] for _ in successors]
    for i, nxt in enumerate(successors):
        for j in nxt:
            if j >= 0:
                before[j].append(i)
    returning = {i for i, nxt in enumerate(successors) if -1 in nxt}
    todo = list(returning)
    while todo:
        for i in before[todo.pop()]:
            if i not in returning:
                returning.add(i)
                todo.append(i)
    return tuple(sorted({calls[i] for i in returning if i in calls}))


def _in_cycles(successors) -> set:
    """The instructions the control flow can come back to: those inside a loop. Not any
    backward jump: optimised code jumps back to a shared epilogue. A loop has a jump
    back (i -> j, j <= i); its instructions are those reachable from j that reach i."""
    before = [[] for _ in successors]
    for i, nxt in enumerate(successors):
        for j in nxt:
            if j >= 0:
                before[j].append(i)

    def reach(start, edges):
        seen, todo = {start}, [start]
        while todo:
            for k in edges[todo.pop()]:
                if k >= 0 and k not in seen:
                    seen.add(k)
                    todo.append(k)
        return seen
    inside = set()
    for i, nxt in enumerate(successors):
        for j in nxt:
            if 0 <= j <= i and j not in inside:
                inside |= reach(j, successors) & reach(i, before)
    return inside


@lru_cache(maxsize=None)
def _imported(path: str) -> Dict[int, str]:
    """The functions a file imports, by the addresses its code calls or jumps through to
    reach them: its PLT entries (.plt, .plt.sec, .plt.got: each an indirect jump through
    its GOT slot) and the GOT slots themselves (negated), named by their relocations."""
    try:
        with open(path, "rb") as fh:
            found = _sections(fh)
            if not found or found[1] is None or not found[2]:
                return {}
            sections, name_of, _ = found

            def read(sec):
                fh.seek(sec[4])
                return fh.read(sec[5])
            slots: Dict[int, str] = {}
            for rela in (s for s in sections if s[1] == _SHT_RELA):
                symtab = sections[rela[6]] if rela[6] < len(sections) else None
                if symtab is None or symtab[1] != _SHT_DYNSYM:
                    continue
                symbols, strings = read(symtab), read(sections[symtab[6]])
                table = numpy.frombuffer(read(rela), dtype=_RELA, count=rela[5] // 24)
                kinds = table["info"] & 0xFFFFFFFF
                table = table[(kinds == _GLOB_DAT) | (kinds == _JUMP_SLOT)]
                for slot, info in zip(table["slot"].tolist(), table["info"].tolist()):
                    index = info >> 32
                    if index and 24 * index + 4 <= len(symbols):
                        name_at, = struct.unpack_from("<I", symbols, 24 * index)
                        end = strings.find(b"\0", name_at)
                        slots[slot] = strings[name_at:end].decode("ascii", "replace")
            named = {-slot: name for slot, name in slots.items()}
            for plt in (s for s in sections if name_of(s) in (".plt", ".plt.sec", ".plt.got")):
                data, entry = read(plt), plt[9] or 16
                for at in range(0, len(data) - entry + 1, entry):
                    jump = data.find(b"\xff\x25", at, at + entry)   # jmp *disp(%rip)
                    if jump >= 0 and jump + 6 <= len(data):
                        disp, = struct.unpack_from("<i", data, jump + 2)
                        slot = plt[3] + jump + 6 + disp
                        if slot in slots:
                            named[plt[3] + at] = slots[slot]
    except (OSError, struct.error, ValueError):
        return {}
    return named

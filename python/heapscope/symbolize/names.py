"""How function names read: Fortran's linkage names as Fortran, and short forms of
demangled C++ names for text reports.

Fortran (fortran_name): a module procedure's symbol is its compiler's encoding, read
back as `module::procedure` (gfortran `__m_MOD_p`, Intel `m_mp_p_`, LLVM flang
`_QMmPp`; flang's host procedures and submodules `_QMmSsFhostPp` as `m::s::host::p`,
its external `_QPp` as `p`), the main program's (gfortran's and Intel's `MAIN__`,
flang's `_QQmain`) as `main program`. A clone's suffix (`.constprop.0`, `._omp_fn.1`)
is kept. Classic flang's `m_p_` cannot be told from an external procedure named `m_p`
and stays as it is. With debug information the main program already has its own name
(DWARF's, as eu-addr2line gives it); without, the symbolizer adds its source file. The
symbolizer names a frame by its reading everywhere (reports, call graphs, exports, the
page) and keeps the symbol beside it (Frame.symbol, a frame's "symbol" in JSON).

`std::vector<double, std::allocator<double> >::vector(unsigned long, double const&)` reads
as `std::vector<...>::vector(...)`: template arguments and parameter lists are elided (as
in the listings of Gomes et al., "Memory allocation anomalies in high-performance
computing applications"), everything else kept. JSON output always carries the full name;
this is only for people reading a terminal.
"""
import re
from functools import lru_cache
from typing import Optional

MAIN_PROGRAM = "main program"
MAIN_SYMBOLS = frozenset({"MAIN__", "_QQmain"})   # gfortran and Intel; LLVM flang
_IDENT = r"[a-z_][a-z0-9_$]*"
_GFORTRAN = re.compile(r"^__([A-Za-z_][A-Za-z0-9_$]*?)_MOD_([A-Za-z_][A-Za-z0-9_$]*)(\..*)?$")
_INTEL = re.compile(r"^([a-z][a-z0-9_$]*?)_mp_([a-z][a-z0-9_$]*)_(\..*)?$")
_FLANG = re.compile(r"^_Q((?:[MSF]" + _IDENT + r"|B\d+)*)P(" + _IDENT + r")(\..*)?$")
_FLANG_SCOPE = re.compile(r"([MSF])(" + _IDENT + r")|B\d+")


@lru_cache(maxsize=65536)
def fortran_name(symbol: str) -> Optional[str]:
    """`module::procedure` for a Fortran module procedure's symbol, `main program`
    for the main program's; None for any other name (left as it is)."""
    if symbol in MAIN_SYMBOLS:
        return MAIN_PROGRAM
    head = symbol[:3]
    if head[:2] == "__" and "_MOD_" in symbol:
        m = _GFORTRAN.match(symbol)
        if m:
            return f"{m.group(1)}::{m.group(2)}{m.group(3) or ''}"
        return None
    if head == "_QM" or head == "_QF" or head == "_QP" or head == "_QS":
        m = _FLANG.match(symbol)
        if not m:
            return None
        scopes = [s.group(2) for s in _FLANG_SCOPE.finditer(m.group(1)) if s.group(2)]
        return "::".join(scopes + [m.group(2)]) + (m.group(3) or "")
    if "_mp_" in symbol:
        m = _INTEL.match(symbol)
        if m:
            return f"{m.group(1)}::{m.group(2)}{m.group(3) or ''}"
    return None

# Operators whose spelling contains brackets that are not template or call brackets.
_OPERATORS = ("operator<<=", "operator>>=", "operator<=>", "operator<<", "operator>>",
              "operator<=", "operator>=", "operator->*", "operator->", "operator()",
              "operator<", "operator>")
_KEEP_PARENS = ("(anonymous namespace)",)


def _matching(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket closing the one at `start`, or -1 if unbalanced."""
    depth = 0
    i = start
    while i < len(text):
        op = (next((o for o in _OPERATORS if text.startswith(o, i)), None)
              if text[i] == "o" else None)
        if op:
            i += len(op)
        else:
            ch = text[i]
            if ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
                if depth == 0:
                    return i
            i += 1
            continue
    return -1


@lru_cache(maxsize=65536)
def short_name(name: str) -> str:
    """Elide template arguments and parameter lists of a demangled name. (Cached: a
    report prints the same frames many times, 373,000 frame lines for 20,000 stack types
    of a Python run.)"""
    if "<" not in name and "(" not in name or name.startswith(MAIN_PROGRAM):
        return name     # (a Fortran main program's "(prog.f90)" is no parameter list)
    out = []
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "o":
            op = next((o for o in _OPERATORS if name.startswith(o, i)), None)
            if op:
                out.append(op)
                i += len(op)
                continue
        elif ch == "(":
            keep = next((k for k in _KEEP_PARENS if name.startswith(k, i)), None)
            if keep:
                out.append(keep)
                i += len(keep)
                continue
        if ch in "<(":
            close_ch = ">" if ch == "<" else ")"
            end = _matching(name, i, ch, close_ch)
            if end < 0:  # not a bracket pair we understand: leave the rest as it is
                out.append(name[i:])
                break
            out.append(ch + ("..." if end > i + 1 else "") + close_ch)
            i = end + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)

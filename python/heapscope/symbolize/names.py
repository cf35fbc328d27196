"""Short forms of demangled C++ names, for text reports.

`std::vector<double, std::allocator<double> >::vector(unsigned long, double const&)` reads
as `std::vector<...>::vector(...)`: template arguments and parameter lists are elided (as
in the listings of Gomes et al., "Memory allocation anomalies in high-performance
computing applications"), everything else kept. JSON output always carries the full name;
this is only for people reading a terminal.
"""
from functools import lru_cache

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
    if "<" not in name and "(" not in name:
        return name
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

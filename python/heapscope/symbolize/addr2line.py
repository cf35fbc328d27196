"""Batch source lookups with eu-addr2line (elfutils, libdw): one process per module.

    lookup(binary, [0x1173, 0x11af]) -> {0x1173: [(function, file, line, inlined), ...]}

Offsets are file addresses (runtime address - bias). With -i an address inside
inlined code gives several entries, the inlined callee first, the real function last.
"""
import os
import re
import shutil
import subprocess
from typing import Dict, Iterable, List, Tuple

from heapscope.errors import HeapscopeError

Entry = Tuple[str, str, int, bool]   # function, file ("" unknown), line (0 unknown), inlined

_INLINED = re.compile(r"^(.*?) inlined at .* in .*$")
_TOOL = "eu-addr2line"


def available() -> bool:
    return shutil.which(_TOOL) is not None


def lookup(binary: str, offsets: Iterable[int], timeout: float = 600) -> Dict[int, List[Entry]]:
    offsets = sorted(set(offsets))
    if not offsets:
        return {}
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)   # never wait on the network at report time
    cmd = [_TOOL, "-e", binary, "-a", "-f", "-i", "-C"]
    try:
        res = subprocess.run(cmd, input="\n".join(f"{o:#x}" for o in offsets) + "\n",
                             capture_output=True, text=True, env=env, timeout=timeout,
                             errors="replace")
    except FileNotFoundError:
        raise HeapscopeError(f"{_TOOL} not found: install elfutils (apt-get install elfutils)") from None
    except subprocess.TimeoutExpired:
        raise HeapscopeError(f"{_TOOL} took over {timeout:.0f} s on {binary}") from None
    results = parse(res.stdout)
    if res.returncode != 0 and not results:
        detail = res.stderr.strip().splitlines()[:1]
        raise HeapscopeError(f"{_TOOL} failed on {binary}" + (f": {detail[0]}" if detail else ""))
    return results


def parse(text: str) -> Dict[int, List[Entry]]:
    """Parse `eu-addr2line -a -f -i` output: an address line, then (function, location) pairs."""
    results: Dict[int, List[Entry]] = {}
    lines = text.splitlines()
    current = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x") and _is_hex(line):
            current = int(line, 16)
            results[current] = []
            i += 1
            continue
        if current is None or i + 1 >= len(lines):
            break
        function, location = line, lines[i + 1]
        i += 2
        match = _INLINED.match(function)
        inlined = match is not None
        if inlined:
            function = match.group(1)
        file, lineno = _split_location(location)
        results[current].append((function or "??", file, lineno, inlined))
    return results


def _is_hex(s: str) -> bool:
    try:
        int(s, 16)
        return True
    except ValueError:
        return False


def _split_location(location: str) -> Tuple[str, int]:
    """"file:line[:column]" -> (file, line); "??:0" -> ("", 0)."""
    parts = location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        file, line = parts[0], int(parts[1])
    elif len(parts) >= 2 and parts[-1].isdigit():
        file, line = location.rsplit(":", 1)[0], int(parts[-1])
    else:
        file, line = location, 0
    if file in ("??", "") or line == 0 and file.startswith("??"):
        return "", 0
    return file, line

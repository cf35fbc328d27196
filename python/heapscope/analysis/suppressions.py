"""LeakSanitizer-style leak suppressions: `leak:PATTERN` lines.

A suppression file holds one rule per line, `leak:PATTERN`; blank lines and lines
whose first non-blank character is `#` are ignored; surrounding blanks are trimmed.
As in LeakSanitizer, a leak is suppressed when PATTERN matches the function name, the
source file path or the module (binary or library) path of ANY frame of its
allocation stack. A pattern matches a name when it occurs anywhere in it (substring),
with `*` standing for any run of characters, `^` at the pattern's start anchoring it
to the name's start and `$` at its end anchoring it to the name's end; the match is
case-sensitive. Function names are the demangled names the reports print
(`ns::Class::method(int)`), so `leak:ns::Class::*` or `leak:libfoo.so` work as
LeakSanitizer users expect. The first matching rule (in file order) is credited.
"""
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence

from heapscope.errors import HeapscopeError
from heapscope.symbolize import Frame

LEAK_PREFIX = "leak:"


@dataclass(frozen=True)
class Suppression:
    pattern: str
    line: int                 # line number in its file (1-based)
    regex: "re.Pattern"

    def matches_name(self, name: str) -> bool:
        return bool(name) and self.regex.search(name) is not None

    def matches(self, frames: Sequence[Frame]) -> bool:
        return any(self.matches_name(f.function) or self.matches_name(f.file)
                   or self.matches_name(f.module) for f in frames)


def compile_pattern(pattern: str) -> "re.Pattern":
    """`*` -> any run of characters; leading `^` / trailing `$` anchor; the rest literal."""
    head = pattern.startswith("^")
    tail = pattern.endswith("$") and len(pattern) > (1 if head else 0)
    body = pattern[1 if head else 0:len(pattern) - (1 if tail else 0)]
    text = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(("^" if head else "") + text + ("$" if tail else ""), re.DOTALL)


def parse(text: str, path: str = "suppressions") -> List[Suppression]:
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith(LEAK_PREFIX):
            kind = line.split(":", 1)[0] if ":" in line else line
            raise HeapscopeError(f"{path}:{number}: expected `leak:PATTERN`, got {kind!r} "
                                 f"(only leak suppressions apply to heap profiles)")
        pattern = line[len(LEAK_PREFIX):].strip()
        if not pattern:
            raise HeapscopeError(f"{path}:{number}: empty pattern after `leak:`")
        rules.append(Suppression(pattern, number, compile_pattern(pattern)))
    return rules


def load(path: str) -> List[Suppression]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise HeapscopeError(f"cannot read suppressions {path}: {exc.strerror}") from None
    return parse(text, path)


def first_match(rules: Sequence[Suppression], frames: Sequence[Frame]) -> Optional[Suppression]:
    for rule in rules:
        if rule.matches(frames):
            return rule
    return None

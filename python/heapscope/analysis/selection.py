"""Which sizes and regions a command keeps: `--size SPEC` and `--region R`.

A region is named by its path ("local", "split/local", "(none)" for the top level) or by
its own name (the last path component), so `--region local` also finds "solve/local".
"""
from __future__ import annotations

import re

from heapscope.errors import HeapscopeError

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` start-up time)
    from typing import Iterable, Optional


_PART = re.compile(r"^(\d+)(?:-(\d+))?$")
MAX_SIZE = 2 ** 64 - 1


class SizeSet:
    """Sizes from a spec like "12,24,100-200"; "all" or None (no --size given) keeps every
    size. An empty spec is an error, never "all": `--size "$SIZES"` with SIZES unset
    must not silently select everything. The grammar is the recorder's
    (HEAPSCOPE_STACK_SIZES, src/recorder/count/selection.c), blanks around the commas
    aside; `normalized` is the spec as the recorder reads it. `option` names the spec
    in errors ("--sizes" for record)."""

    def __init__(self, spec: Optional[str], option: str = "size spec"):
        if spec is not None and not spec.strip():
            raise HeapscopeError(f"empty {option} {spec!r}: give sizes and ranges like "
                                 f"12,24,100-200, or all")
        self.spec = (spec or "").strip()
        self.exact = set()
        self.ranges = []
        self.everything = self.spec in ("", "all")
        parts = [] if self.everything else [part.strip() for part in self.spec.split(",")]
        self.normalized = "all" if self.everything else ",".join(parts)
        for part in parts:
            m = _PART.match(part)
            if not m or int(m.group(2) or m.group(1)) > MAX_SIZE:
                raise HeapscopeError(f"bad {option} {spec!r}: expected sizes and ranges "
                                     f"like 12,24,100-200, or all")
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if lo > hi:
                raise HeapscopeError(f"bad {option} range {part!r}: {lo} > {hi}")
            if m.group(2) is None:
                self.exact.add(lo)
            else:
                self.ranges.append((lo, hi))

    def __contains__(self, size: int) -> bool:
        if self.everything or size in self.exact:
            return True
        return any(lo <= size <= hi for lo, hi in self.ranges)

    def __str__(self) -> str:
        return "all sizes" if self.everything else f"size {self.spec}"


def region_matches(region_path: str, wanted: Optional[str]) -> bool:
    """None (no --region given) matches every region."""
    if wanted is None:
        return True
    return region_path == wanted or region_path.rsplit("/", 1)[-1] == wanted


def check_region(known: Iterable[str], wanted: Optional[str]) -> None:
    """A --region that names no region of the profiles is an error, not an empty result;
    so is an empty one (it is not "every region")."""
    if wanted is None:
        return
    if not wanted.strip():
        raise HeapscopeError(f"empty region {wanted!r}: give a region's path or name, like "
                             f"local or split/local (without --region: every region)")
    known = sorted(set(known))
    if not any(region_matches(r, wanted) for r in known):
        raise HeapscopeError(f"no region {wanted!r} in the profiles (regions: "
                             f"{', '.join(known) or 'none'})")

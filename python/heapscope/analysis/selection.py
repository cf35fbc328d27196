"""Which sizes and regions a command keeps: `--size SPEC` and `--region R`.

A region is named by its path ("local", "split/local", "(none)" for the top level) or by
its own name (the last path component), so `--region local` also finds "solve/local".
"""
from typing import Iterable, Optional

from heapscope.errors import HeapscopeError


class SizeSet:
    """Sizes from a spec like "12,24,100-200"; "all" or None (no --size given) keeps every
    size. An empty spec is an error, never "all": `--size "$SIZES"` with SIZES unset
    must not silently select everything."""

    def __init__(self, spec: Optional[str]):
        if spec is not None and not spec.strip():
            raise HeapscopeError(f"empty size spec {spec!r}: give sizes and ranges like "
                                 f"12,24,100-200, or all")
        self.spec = (spec or "").strip()
        self.exact = set()
        self.ranges = []
        self.everything = self.spec in ("", "all")
        if self.everything:
            return
        for part in self.spec.split(","):
            part = part.strip()
            try:
                if "-" in part:
                    lo, hi = (int(x) for x in part.split("-", 1))
                    if lo > hi:
                        raise ValueError
                    self.ranges.append((lo, hi))
                else:
                    self.exact.add(int(part))
            except ValueError:
                raise HeapscopeError(f"bad size spec {spec!r}: expected sizes and ranges "
                                     f"like 12,24,100-200") from None
        if any(s < 0 for s in self.exact) or any(lo < 0 for lo, _ in self.ranges):
            raise HeapscopeError(f"bad size spec {spec!r}: sizes are not negative")

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

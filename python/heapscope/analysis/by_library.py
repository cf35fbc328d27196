"""`heapscope report --by library`: which shared object asked for the heap blocks.

A block belongs to the module (main executable or shared library) of the first frame
of its stack that lies outside the runtime libraries: the C, C++ and Fortran runtimes
(libc, libm, libpthread, ld.so, libstdc++, libgcc_s, libgfortran), the peer allocators
and heapscope's own libraries (the recorder, the MPI layer's wrappers). So a strdup()
called from libfoo counts for libfoo, an std::vector grown in the main program for the
main program, and a block libmpi allocates inside MPI_Init for libmpi (or the Open MPI
component, libopen-pal, libpmix ... that asked). When every frame is a runtime frame
(the runtime's own start-up), the block counts for the innermost frame's module. A
frame in no module of the snapshot's map (code unloaded by dlclose before the
snapshot, such as an MPI component closed at MPI_Finalize) counts for
"(no module) via M", M being the first module further out that is not a runtime
library (the code that called into the unloaded object), or for NO_MODULE alone.

Only the sizes (and regions) whose stacks were recorded can be attributed: the rest of
the selected blocks is reported as NO_STACK, never dropped. Module lookup uses the
return addresses and the profile's module map; no symbolization is needed.
"""
import bisect
import os
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis.processes import describe
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile

LIBRARIES_FORMAT = "heapscope-libraries"
LIBRARIES_VERSION = 1
NO_STACK = "(no stack)"
NO_MODULE = "(no module)"
MPI_REGION = "[MPI]"

# base-name prefixes of runtime modules (matched against os.path.basename)
RUNTIME_PREFIXES = (
    "libc.so", "libc-", "libm.so", "libm-", "libpthread", "libdl.so", "libdl-", "librt.so",
    "librt-", "ld-linux", "ld64.so", "ld.so", "linux-vdso", "linux-gate",
    "libstdc++", "libgcc_s", "libgfortran", "libquadmath", "libatomic",
    "libheapscope", "libhsmalloc", "libjemalloc", "libtcmalloc", "libmimalloc", "libunwind",
)


def is_runtime(module_path: str) -> bool:
    return os.path.basename(module_path).startswith(RUNTIME_PREFIXES)


class ModuleMap:
    """Address -> module path, by binary search over the executable ranges."""

    def __init__(self, profile: Profile):
        spans = sorted((lo, hi, m.path) for m in profile.modules for lo, hi in m.ranges)
        self._lows = [lo for lo, _, _ in spans]
        self._spans = spans
        self._cache: Dict[int, Optional[str]] = {}

    def module(self, address: int) -> Optional[str]:
        hit = self._cache.get(address, 0)
        if hit != 0:
            return hit
        i = bisect.bisect_right(self._lows, address) - 1
        found = None
        if i >= 0:
            lo, hi, path = self._spans[i]
            if lo <= address < hi:
                found = path
        self._cache[address] = found
        return found


def owner(frames: Sequence[int], modules: ModuleMap) -> str:
    """The module that asked for a block allocated along `frames` (innermost first)."""
    innermost = None
    unloaded = False
    for address in frames:
        path = modules.module(address - 1)   # a return address: look up the call itself
        if path is None:
            unloaded = True
            continue
        if not is_runtime(path):
            return f"{NO_MODULE} via {os.path.basename(path)}" if unloaded else path
        if unloaded:
            continue
        if innermost is None and not os.path.basename(path).startswith("libheapscope"):
            innermost = path
    return NO_MODULE if unloaded else innermost or NO_MODULE


def build(profiles: Sequence[Profile], sizes: SizeSet = None, region: Optional[str] = None) -> dict:
    sizes = sizes or SizeSet(None)
    check_region((r.path for p in profiles for r in p.regions.values()), region)
    if not any(p.stack_types for p in profiles):
        raise HeapscopeError("--by library needs stack trace types and these profiles have "
                             "none: record with `heapscope record --sizes all -- program`")
    # library -> [count, bytes, mpi_count, mpi_bytes, {size: [count, bytes]}]
    acc: Dict[str, list] = {}
    no_stack: Dict[int, int] = {}
    for p in profiles:
        modules = ModuleMap(p)
        owners: Dict[Tuple[int, ...], str] = {}
        stacked: Dict[Tuple[str, int], int] = {}
        for t in p.stack_types:
            if t.size not in sizes or not region_matches(t.region, region):
                continue
            lib = owners.get(t.frames)
            if lib is None:
                lib = owners[t.frames] = owner(t.frames, modules)
            row = acc.setdefault(lib, [0, 0, 0, 0, {}])
            row[0] += t.count
            row[1] += t.bytes
            if t.region.rsplit("/", 1)[-1] == MPI_REGION:
                row[2] += t.count
                row[3] += t.bytes
            per_size = row[4].setdefault(t.size, [0, 0])
            per_size[0] += t.count
            per_size[1] += t.bytes
            key = (t.region, t.size)
            stacked[key] = stacked.get(key, 0) + t.count
        for (r, size), n in p.size_counts.items():
            if size in sizes and region_matches(r, region):
                rest = n - stacked.get((r, size), 0)
                if rest > 0:
                    no_stack[size] = no_stack.get(size, 0) + rest

    total_count = sum(row[0] for row in acc.values()) + sum(no_stack.values())
    total_bytes = sum(row[1] for row in acc.values()) + sum(s * n for s, n in no_stack.items())
    libraries = []
    for lib, (count, nbytes, mpi_count, mpi_bytes, per_size) in acc.items():
        libraries.append(dict(
            library=lib, name=lib if lib.startswith(NO_MODULE) else os.path.basename(lib),
            count=count, bytes=nbytes, in_mpi_count=mpi_count, in_mpi_bytes=mpi_bytes,
            share_count=count / total_count if total_count else 0.0,
            share_bytes=nbytes / total_bytes if total_bytes else 0.0,
            sizes=[dict(size=s, count=c, bytes=b) for s, (c, b) in
                   sorted(per_size.items(), key=lambda kv: (-kv[1][0], kv[0]))]))
    libraries.sort(key=lambda d: (-d["bytes"], -d["count"], d["library"]))
    rest_count = sum(no_stack.values())
    rest_bytes = sum(s * n for s, n in no_stack.items())
    recorded = sorted({p.settings.get("stack_sizes", "") for p in profiles} - {""})
    return dict(
        format=LIBRARIES_FORMAT, version=LIBRARIES_VERSION,
        processes=[describe(p) for p in profiles],
        filters=dict(size=sizes.spec or None, region=region),
        recorded_sizes=recorded,
        executables=sorted({p.exe for p in profiles if p.exe}),
        libraries=libraries,
        no_stack=dict(count=rest_count, bytes=rest_bytes,
                      share_count=rest_count / total_count if total_count else 0.0,
                      share_bytes=rest_bytes / total_bytes if total_bytes else 0.0,
                      sizes=[dict(size=s, count=n, bytes=s * n) for s, n in
                             sorted(no_stack.items(), key=lambda kv: (-kv[1], kv[0]))]),
        totals=dict(count=total_count, bytes=total_bytes),
        lost_stacks=sum(p.lost_stacks for p in profiles))

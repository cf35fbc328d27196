"""Decode a job file's JOB_PEAK_STACKS chunk (chunk 46; the recorder's
output/job_peak_stacks.c): who held the heap peak on the ranks recorded with --track.

Each such rank gave its `per_rank` largest stack types by requested bytes live at its
own tracking peak; a type is a region path and a call path (its sizes added up), or a
region path and a size for blocks tracked without stacks. Types equal on several ranks
were merged inside the job: `ranks` where the type is among their largest, `blocks` and
`bytes` summed over those ranks, `bytes_max` the most on one (`max_rank`). Frames are
(module index, offset from the module's load bias), so `addresses()` gives each module
a made-up load bias and the symbolizer reads them as it reads a rank file's.
`missing_bound` > 0: types were dropped on the way (too many distinct ones for a
message), the figures are lower bounds.
"""
from dataclasses import dataclass
from typing import List, Tuple

from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from heapscope.profile.model import Module

_SPAN = 1 << 40          # each module's made-up address space (far above any offset)


@dataclass(frozen=True)
class JobPeakType:
    region: str
    depth: int                            # 0: no stack (one size of the region)
    ranks: int
    max_rank: int
    size_min: int
    size_max: int
    blocks: int
    bytes: int
    bytes_max: int
    frames: Tuple[Tuple[int, int], ...]   # (module index or NO_MODULE, offset), innermost first


@dataclass
class JobPeakStacks:
    ranks_tracked: int
    per_rank: int
    missing_bound: int
    modules: List[Tuple[str, str]]        # (path, build-id in hex)
    types: List[JobPeakType]

    def symbol_modules(self) -> List[Module]:
        """The modules as a profile's module map: module i loaded at (i + 1) * 2^40."""
        return [Module(path, (i + 1) * _SPAN, build_id, (((i + 1) * _SPAN, (i + 2) * _SPAN),))
                for i, (path, build_id) in enumerate(self.modules)]

    def address(self, frame: Tuple[int, int]) -> int:
        """A frame as a return address in symbol_modules()'s map (in none: as recorded)."""
        module, offset = frame
        return offset if module == fmt.NO_MODULE else (module + 1) * _SPAN + offset


def decode(payload) -> JobPeakStacks:
    """The chunk's payload (Malformed from the codec when it disagrees with its layout)."""
    r = fmt.CODECS[fmt.JOB_PEAK_STACKS].decode(payload, whole=True)
    paths = [p.path for p in r.paths]
    modules = [(m.path, bytes(m.build_id).hex()) for m in r.modules]
    types = []
    for t in r.types:
        region, depth, ranks, max_rank, size_min, size_max, blocks, nbytes, bytes_max, mods, offs = t
        if region >= len(paths):
            raise Malformed(f"peak stack type in region {region} of {len(paths)}")
        if any(m != fmt.NO_MODULE and m >= len(modules) for m in mods):
            raise Malformed(f"peak stack type's frame in a module past the {len(modules)} listed")
        types.append(JobPeakType(paths[region], depth, ranks, max_rank, size_min, size_max,
                                 blocks, nbytes, bytes_max, tuple(zip(mods, offs))))
    return JobPeakStacks(r.ranks_tracked, r.per_rank, r.missing_bound, modules, types)

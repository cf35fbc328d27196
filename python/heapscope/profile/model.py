"""What a profile file holds once read: plain data classes, no file access."""
from dataclasses import dataclass, field
from typing import Dict, List, Tuple


@dataclass(frozen=True)
class Module:
    """A loaded object: runtime address = file address + bias."""
    path: str
    bias: int
    build_id: str                         # lowercase hex, "" when the object has none
    ranges: Tuple[Tuple[int, int], ...]   # runtime [lo, hi) of its executable segments

    def contains(self, address: int) -> bool:
        return any(lo <= address < hi for lo, hi in self.ranges)


@dataclass(frozen=True)
class Region:
    id: int
    parent: int    # format.NO_PARENT for region 0
    name: str
    path: str      # "(none)" for region 0, "split" at top level, "split/local" nested


@dataclass(frozen=True)
class StackType:
    """A distinct call path (innermost frame first) of one exact size in one region."""
    region: str              # region path
    size: int
    count: int
    bytes: int
    frames: Tuple[int, ...]  # return addresses; symbolize at address - 1


@dataclass
class Profile:
    path: str
    pid: int = 0
    ppid: int = 0
    rank: int = -1
    host: str = ""
    exe: str = ""
    cmdline: List[str] = field(default_factory=list)
    job_id: str = ""
    recorder_version: str = ""
    start_real_ns: int = 0
    settings: dict = field(default_factory=dict)
    complete: bool = True
    warnings: List[str] = field(default_factory=list)
    snapshot_seq: int = 0
    snapshot_reason: str = ""
    snapshot_mono_ns: int = 0
    modules: List[Module] = field(default_factory=list)
    regions: Dict[int, Region] = field(default_factory=dict)
    size_counts: Dict[Tuple[str, int], int] = field(default_factory=dict)
    api_counts: Dict[Tuple[str, str], int] = field(default_factory=dict)
    stack_types: List[StackType] = field(default_factory=list)
    lost_stacks: int = 0
    total_threads: int = 0
    # Chunks of types this reader does not decode (>= 10: later issues), raw payloads
    # from the chosen snapshot; and those found outside any snapshot.
    extra_chunks: Dict[int, List[bytes]] = field(default_factory=dict)
    file_chunks: Dict[int, List[bytes]] = field(default_factory=dict)

    @property
    def region_paths(self) -> List[str]:
        """Region paths in id order (region 0 first)."""
        return [self.regions[i].path for i in sorted(self.regions)]

    @property
    def label(self) -> str:
        """How reports name this process: "pid 1234" or "rank 3 (pid 1234)"."""
        if self.rank >= 0:
            return f"rank {self.rank} (pid {self.pid})"
        return f"pid {self.pid}"

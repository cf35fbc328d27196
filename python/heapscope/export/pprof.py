"""pprof export: weighted stacks as a gzip-compressed profile.proto message.

What `go tool pprof` gets (field numbers: github.com/google/pprof/proto/profile.proto):
  sample types   alloc_objects/count and alloc_space/bytes (the default is alloc_objects,
                 alloc_space with --value bytes)
  samples        one per stack: location ids leaf first, values [count, bytes],
                 labels region (string) and bytes (the exact size, unit bytes)
  locations      one per code address (module + offset): its lines, the inlined
                 functions first and the function they were inlined into last
  functions      one per (name, file)
  mappings       one per module, from the first profile whose module map holds it
A location's address is the code address in that first process (offset + load bias),
so addresses from several processes land in one consistent map.
"""
import gzip
from typing import Dict, Iterable, List, Sequence, Tuple

from heapscope.analysis.stacks import WeightedStack, frame_name, physical_frames
from heapscope.atomic import write_atomic
from heapscope.export.protobuf import Message
from heapscope.profile.model import Module, Profile

# profile.proto field numbers
P_SAMPLE_TYPE, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRINGS = 1, 2, 3, 4, 5, 6
P_TIME_NANOS, P_PERIOD_TYPE, P_PERIOD, P_COMMENT, P_DEFAULT_SAMPLE_TYPE = 9, 11, 12, 13, 14


class _Strings:
    def __init__(self):
        self.index: Dict[str, int] = {"": 0}
        self.table: List[str] = [""]

    def __call__(self, text: str) -> int:
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.table)
            self.table.append(text)
        return i


def _value_type(strings: _Strings, kind: str, unit: str) -> Message:
    return Message().varint(1, strings(kind)).varint(2, strings(unit))


class _Builder:
    def __init__(self, modules: Sequence[Module]):
        self.s = _Strings()
        self.modules: Dict[str, Module] = {}
        for m in modules:
            self.modules.setdefault(m.path, m)
        self.mapping_ids: Dict[str, int] = {}
        self.mappings: List[Message] = []
        self.function_ids: Dict[Tuple[str, str], int] = {}
        self.functions: List[Message] = []
        self.location_ids: Dict[Tuple[str, int], int] = {}
        self.locations: List[Message] = []

    def mapping(self, path: str) -> int:
        if not path:
            return 0
        mid = self.mapping_ids.get(path)
        if mid is None:
            mid = self.mapping_ids[path] = len(self.mapping_ids) + 1
            m = self.modules.get(path)
            msg = Message().varint(1, mid)
            if m is not None and m.ranges:
                start = min(lo for lo, _ in m.ranges)
                msg.varint(2, start).varint(3, max(hi for _, hi in m.ranges)).varint(4, start - m.bias)
            msg.varint(5, self.s(path))
            if m is not None and m.build_id:
                msg.varint(6, self.s(m.build_id))
            msg.varint(7, 1).varint(8, 1).varint(9, 1).varint(10, 1)
            self.mappings.append(msg)
        return mid

    def function(self, name: str, file: str, symbol: str = "") -> int:
        """symbol: the linkage name when `name` is its Fortran reading (pprof's
        system_name), else the name itself."""
        fid = self.function_ids.get((name, file))
        if fid is None:
            fid = self.function_ids[(name, file)] = len(self.function_ids) + 1
            self.functions.append(Message().varint(1, fid).varint(2, self.s(name))
                                  .varint(3, self.s(symbol or name)).varint(4, self.s(file)))
        return fid

    def location(self, group) -> int:
        outer = group[-1]
        key = (outer.module, outer.offset)
        lid = self.location_ids.get(key)
        if lid is None:
            lid = self.location_ids[key] = len(self.location_ids) + 1
            m = self.modules.get(outer.module)
            address = outer.offset + (m.bias if m is not None else 0)
            msg = Message().varint(1, lid).varint(2, self.mapping(outer.module)).varint(3, address)
            for f in group:   # inlined callees first, the enclosing function last
                line = Message().varint(1, self.function(frame_name(f), f.file, f.symbol)).varint(2, f.line)
                msg.message(4, line)
            self.locations.append(msg)
        return lid


def encode(stacks: Iterable[WeightedStack], modules: Sequence[Module] = (),
           time_nanos: int = 0, comments: Sequence[str] = (), value: str = "count") -> bytes:
    """The uncompressed profile.proto message; `value` ("count" or "bytes") chooses the
    sample type pprof shows unless told otherwise (alloc_objects or alloc_space)."""
    b = _Builder(modules)
    profile = Message()
    profile.message(P_SAMPLE_TYPE, _value_type(b.s, "alloc_objects", "count"))
    profile.message(P_SAMPLE_TYPE, _value_type(b.s, "alloc_space", "bytes"))
    region_key, bytes_key, bytes_unit = b.s("region"), b.s("bytes"), b.s("bytes")
    for st in stacks:
        ids = [b.location(group) for group in physical_frames(st.frames)]
        sample = Message().packed(1, ids).packed(2, [st.count, st.bytes])
        sample.message(3, Message().varint(1, region_key).varint(2, b.s(st.region or "(none)")))
        sample.message(3, Message().varint(1, bytes_key).varint(3, st.size).varint(4, bytes_unit))
        profile.message(P_SAMPLE, sample)
    for field, messages in ((P_MAPPING, b.mappings), (P_LOCATION, b.locations),
                            (P_FUNCTION, b.functions)):
        for msg in messages:
            profile.message(field, msg)
    profile.varint(P_TIME_NANOS, time_nanos)
    profile.message(P_PERIOD_TYPE, _value_type(b.s, "space", "bytes"))
    profile.varint(P_PERIOD, 1)
    profile.packed(P_COMMENT, [b.s(c) for c in comments])
    profile.varint(P_DEFAULT_SAMPLE_TYPE, b.s("alloc_space" if value == "bytes" else "alloc_objects"))
    for text in b.s.table:
        profile.string(P_STRINGS, text)
    return profile.bytes()


def write_pprof(stacks: Iterable[WeightedStack], path: str, modules: Sequence[Module] = (),
                time_nanos: int = 0, comments: Sequence[str] = (), value: str = "count") -> None:
    """Write the gzip-compressed profile to `path` (atomically: a temporary file renamed)."""
    write_atomic(path, gzip.compress(encode(stacks, modules, time_nanos, comments, value),
                                     mtime=0))


def comments(profiles: Sequence[Profile], sizes, region) -> List[str]:
    """The profile's comments: which files, which sizes and region."""
    return [f"heapscope export of {', '.join(p.path for p in profiles)}",
            f"{sizes}" + (f", region {region}" if region else "")]

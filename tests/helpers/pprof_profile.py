"""Reads the parts of a pprof profile (profile.proto, gzip-compressed) that the export
tests check: mappings, locations with their lines, functions, samples. Written from the
protobuf wire format, independent of heapscope's encoder."""
import gzip
from dataclasses import dataclass, field
from typing import Dict, List, Tuple


def _fields(data: bytes):
    """(field number, value) pairs of one message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            n, i = _varint(data, i)
            value, i = data[i:i + n], i + n
        elif wire == 1:
            value, i = int.from_bytes(data[i:i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(data[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, value


def _varint(data: bytes, i: int) -> Tuple[int, int]:
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _packed(value) -> List[int]:
    if isinstance(value, int):
        return [value]
    out, i = [], 0
    while i < len(value):
        v, i = _varint(value, i)
        out.append(v)
    return out


@dataclass
class Mapping:
    start: int = 0
    limit: int = 0
    offset: int = 0
    filename: str = ""


@dataclass
class Location:
    mapping: int = 0
    address: int = 0
    lines: List[Tuple[str, int]] = field(default_factory=list)   # (function, line), inlined first


@dataclass
class Sample:
    locations: List[int]
    values: List[int]


@dataclass
class PprofProfile:
    mappings: Dict[int, Mapping]
    locations: Dict[int, Location]
    samples: List[Sample]
    system_names: Dict[str, str] = field(default_factory=dict)   # function name -> system name


def read_pprof(path) -> PprofProfile:
    with open(path, "rb") as f:
        data = gzip.decompress(f.read())
    strings: List[str] = []
    raw = {1: [], 2: [], 3: [], 4: [], 5: []}
    for number, value in _fields(data):
        if number == 6:
            strings.append(value.decode())
        elif number in raw:
            raw[number].append(value)
    functions, system_names = {}, {}
    for msg in raw[5]:
        f = dict(_fields(msg))
        functions[f[1]] = strings[f.get(2, 0)]
        system_names[functions[f[1]]] = strings[f.get(3, 0)]
    mappings = {}
    for msg in raw[3]:
        f = dict(_fields(msg))
        mappings[f[1]] = Mapping(f.get(2, 0), f.get(3, 0), f.get(4, 0), strings[f.get(5, 0)])
    locations = {}
    for msg in raw[4]:
        loc, lid = Location(), 0
        for number, value in _fields(msg):
            if number == 1:
                lid = value
            elif number == 2:
                loc.mapping = value
            elif number == 3:
                loc.address = value
            elif number == 4:
                line = dict(_fields(value))
                loc.lines.append((functions[line.get(1, 0)], line.get(2, 0)))
        locations[lid] = loc
    samples = []
    for msg in raw[2]:
        ids, values = [], []
        for number, value in _fields(msg):
            if number == 1:
                ids += _packed(value)
            elif number == 2:
                values += _packed(value)
        samples.append(Sample(ids, values))
    return PprofProfile(mappings, locations, samples, system_names)

"""Test-only writer of synthetic heapscope profile files.

Every payload is encoded from its layout in the format table
(src/format/profile_format.table, through heapscope.profile.format.CODECS): no layout
is written out here. Lets reader and report tests build exactly the file they need:
known counts, several snapshots, a cut-short tail, a corrupted crc, unknown chunk
types, tracking, event trace and timeline chunks.

    b = ProfileBuilder(pid=42)
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, 12, 100)], apis=[(1, API["malloc"], 100)])
    path = b.write(tmp_path / "x.hsp")
"""
import struct
import zlib
from pathlib import Path

from heapscope.profile import format as fmt

MAGIC = fmt.MAGIC
VERSION = fmt.FORMAT_VERSION
NO_PARENT = fmt.NO_PARENT
PROCESS, SETTINGS, SNAPSHOT_BEGIN, MODULES, REGIONS, SIZE_COUNTS, API_COUNTS, STACK_TYPES, \
    SNAPSHOT_END = (fmt.TABLE.chunk(name).id for name in (
        "PROCESS", "SETTINGS", "SNAPSHOT_BEGIN", "MODULES", "REGIONS", "SIZE_COUNTS",
        "API_COUNTS", "STACK_TYPES", "SNAPSHOT_END"))
REASONS = {label: value for value, label in enumerate(fmt.REASON_NAMES)}
API = {label: value for value, label in enumerate(fmt.API_NAMES)}
START_REAL_NS = 1_700_000_000_000_000_000


def payload(name: str, **fields) -> bytes:
    """The payload of chunk type `name` ("PROCESS", "TIMELINE" ...) from its fields by
    name; a count field left out is the length of what it counts, reserved fields are 0."""
    return fmt.CODECS[fmt.TABLE.chunk(name).id].encode(fields)


def string(s) -> bytes:
    """A str as the format writes it (u32 length, bytes)."""
    b = s.encode() if isinstance(s, str) else bytes(s)
    return len(b).to_bytes(4, "little") + b


def chunk_crc(ctype: int, data: bytes) -> int:
    """Version 2's chunk crc: of type and payload_len (u32, u64) then the payload."""
    return zlib.crc32(data, zlib.crc32(struct.pack("<IQ", ctype, len(data))))


def chunk(ctype, data: bytes, crc=None, version=VERSION, length=None) -> bytes:
    """A framed chunk; ctype is a type number or a chunk name. crc: a wrong one on
    purpose; length: a payload_len that is not the payload's (the head's crc matches
    it: a crafted chunk)."""
    if isinstance(ctype, str):
        ctype = fmt.TABLE.chunk(ctype).id
    length = len(data) if length is None else length
    if version == 1:
        return fmt.CHUNK_HEADER_V1.encode(dict(type=ctype, crc=zlib.crc32(data) if crc is None else crc,
                                               payload_len=length)) + data
    crc = chunk_crc(ctype, data) if crc is None else crc
    head = struct.pack("<IIQ", ctype, crc, length)
    return head + struct.pack("<II", zlib.crc32(head), 0) + data


def header(version=VERSION, header_size=None, start_real_ns=START_REAL_NS, flags=0,
           write_errno=0, lost_at=0) -> bytes:
    if version == 1:
        return fmt.HEADER_V1.encode(dict(magic=MAGIC, version=1, start_real_ns=start_real_ns,
                                         header_size=header_size or fmt.HEADER_SIZE_V1))
    fields = dict(magic=MAGIC, version=version, start_real_ns=start_real_ns,
                  header_size=header_size or fmt.HEADER_SIZE, flags=flags,
                  write_errno=write_errno, lost_at=lost_at, header_crc=0)
    data = fmt.HEADER.encode(fields)
    return fmt.HEADER.encode(dict(fields, header_crc=zlib.crc32(data[:40])))


def types_crc(types) -> int:
    """SNAPSHOT_END.types_crc: crc32 of the types (u32) of every chunk before it."""
    return zlib.crc32(b"".join(struct.pack("<I", t) for t in types))


def chunks_of(data: bytes):
    """(type, offset, payload) of every chunk of a whole, well-framed file (either version)."""
    version, pos = struct.unpack_from("<II", data, 8)
    head = fmt.CHUNK_HEADER_V1.fixed if version == 1 else fmt.CHUNK_HEADER.fixed
    out = []
    while pos + head.size <= len(data):
        ctype, _crc, length = head.unpack_from(data, pos)[:3]
        out.append((ctype, pos, data[pos + head.size:pos + head.size + length]))
        pos += head.size + length
    return out


def reframe(data: bytes, change=lambda ctype, payload: payload) -> bytes:
    """A file's bytes with each payload replaced by change(type, payload), crcs redone
    (the types stay: SNAPSHOT_END.types_crc still holds)."""
    version, header_size = struct.unpack_from("<II", data, 8)
    return data[:header_size] + b"".join(chunk(t, change(t, p), version=version)
                                         for t, _offset, p in chunks_of(data))


def stack_types_payload(stacks) -> bytes:
    """STACK_TYPES payload from (region, size, count, bytes, frames) rows."""
    return payload("STACK_TYPES", types=[dict(region=r, depth=len(frames), size=size, count=count,
                                              bytes=nbytes, frames=tuple(frames))
                                         for r, size, count, nbytes, frames in stacks])


def regions_rows(regions):
    return [dict(id=rid, parent_id=parent, name=name) for rid, parent, name in regions]


class ProfileBuilder:
    def __init__(self, pid=4242, ppid=1, rank=-1, host="node01", exe="/usr/bin/prog",
                 cmdline=("prog", "--n", "3"), job_id="", stack_sizes="", stack_regions="",
                 max_depth=64, unwinder=0, version=VERSION, recorder_version="test-builder"):
        self.version = version
        self.parts = [header(version=version)]
        self.parts.append(self.chunk(PROCESS, payload(
            "PROCESS", pid=pid, ppid=ppid, rank=rank, start_real_ns=START_REAL_NS, host=host,
            exe=exe, cmdline="\0".join(cmdline), job_id=job_id, recorder_version=recorder_version)))
        self.parts.append(self.chunk(SETTINGS, payload(
            "SETTINGS", stack_sizes=stack_sizes, stack_regions=stack_regions,
            max_depth=max_depth, unwinder=unwinder)))
        self.seq = 0

    def chunk(self, ctype, data: bytes, **kw) -> bytes:
        """A chunk framed in this file's version."""
        return chunk(ctype, data, version=self.version, **kw)

    def raw(self, data: bytes) -> "ProfileBuilder":
        self.parts.append(data)
        return self

    def add(self, name: str, **fields) -> "ProfileBuilder":
        """One chunk of type `name` from its fields (see payload())."""
        return self.raw(self.chunk(name, payload(name, **fields)))

    def snapshot(self, regions=(), sizes=(), apis=(), stacks=(), modules=(), reason="exit",
                 lost=0, threads=1, extra=(), end=True, mono_ns=None) -> "ProfileBuilder":
        """regions: (id, parent, name) besides region 0; sizes: (region, size, count);
        apis: (region, api_index, calls); stacks: (region, size, count, bytes, frames);
        modules: (path, bias, build_id_bytes, [(lo, hi)]); extra: (type, payload) chunks."""
        self.add("SNAPSHOT_BEGIN", seq=self.seq, reason=REASONS[reason],
                 mono_ns=1000 * (self.seq + 1) if mono_ns is None else mono_ns)
        self.add("MODULES", modules=[
            dict(bias=bias, build_id=build_id, path=path, ranges=[dict(lo=lo, hi=hi) for lo, hi in ranges])
            for path, bias, build_id, ranges in modules])
        self.add("REGIONS", regions=regions_rows([(0, NO_PARENT, "")] + list(regions)))
        self.add("SIZE_COUNTS", rows=[dict(region=r, size=size, count=count) for r, size, count in sizes])
        self.add("API_COUNTS", rows=[dict(region=r, api=api, calls=calls) for r, api, calls in apis])
        if stacks:
            self.raw(self.chunk(STACK_TYPES, stack_types_payload(stacks)))
        for ctype, data in extra:
            self.raw(self.chunk(ctype, data))
        if end:
            types = [t for t, _o, _p in chunks_of(b"".join(self.parts))] if self.version >= 2 else []
            self.add("SNAPSHOT_END", seq=self.seq, lost_stacks=lost, total_threads=threads,
                     types_crc=types_crc(types) if types else 0)
        self.seq += 1
        return self

    def data(self) -> bytes:
        return b"".join(self.parts)

    def write(self, path, data=None) -> Path:
        path = Path(path)
        path.write_bytes(self.data() if data is None else data)
        return path


# ---- the event trace's encoding (profile_format.h, TRACE_EVENTS): varints, deltas ----
def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 63) if value < 0 else value << 1


def trace_events(events) -> bytes:
    """The events of one TRACE_EVENTS chunk from tuples:
    ("alloc", seq, ns, addr, size, stack_id, region, extra), ("free", seq, ns, addr),
    ("stack", id, region, size, frames)."""
    out = bytearray()
    seq = ns = addr = 0
    for e in events:
        if e[0] == "stack":
            _kind, sid, region, size, frames = e
            out += varint(fmt.EVENT_STACK) + varint(sid) + varint(region) + varint(size)
            out += varint(len(frames)) + b"".join(f.to_bytes(8, "little") for f in frames)
            continue
        tag = fmt.EVENT_ALLOC if e[0] == "alloc" else fmt.EVENT_FREE
        out += varint((e[1] - seq) << 2 | tag) + varint(e[2] - ns) + varint(zigzag(e[3] - addr))
        seq, ns, addr = e[1], e[2], e[3]
        if e[0] == "alloc":
            out += b"".join(varint(v) for v in e[4:8])
    return bytes(out)

"""Decoders of chunk payloads (layouts in src/format/profile_format.h).

Each decoder takes a payload and returns plain values; a payload that does not
match its layout raises Malformed, which the reader turns into a one-line error
naming the chunk and its offset. Big tables are decoded with struct.iter_unpack.
"""
import struct
from typing import Dict, List, Tuple

from heapscope.profile import format as fmt
from heapscope.profile.model import Module


class Malformed(Exception):
    pass


class Cursor:
    """Reads little-endian fields from a payload, checking bounds."""

    def __init__(self, payload: memoryview):
        self.buf = payload
        self.pos = 0

    def take(self, st: struct.Struct) -> tuple:
        if self.pos + st.size > len(self.buf):
            raise Malformed(f"payload ends at byte {len(self.buf)}, needed {self.pos + st.size}")
        values = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return values

    def u32(self) -> int:
        return self.take(_U32)[0]

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise Malformed(f"payload ends at byte {len(self.buf)}, needed {self.pos + n}")
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def string(self) -> str:
        return self.raw(self.u32()).decode("utf-8", errors="surrogateescape")

    def rows(self, st: struct.Struct, count: int) -> memoryview:
        """The next `count` fixed-size rows, as a view for struct.iter_unpack."""
        n = st.size * count
        if self.pos + n > len(self.buf):
            raise Malformed(f"{count} rows of {st.size} bytes do not fit in {len(self.buf)} bytes")
        view = self.buf[self.pos:self.pos + n]
        self.pos += n
        return view


_U32 = struct.Struct("<I")
_PROCESS = struct.Struct("<IIiIQ")
_SETTINGS_TAIL = struct.Struct("<II")
_SNAPSHOT_BEGIN = struct.Struct("<IIQ")
_SNAPSHOT_END = struct.Struct("<IIQQ")
_MODULE_HEAD = struct.Struct("<QII")
_RANGE = struct.Struct("<QQ")
_REGION_HEAD = struct.Struct("<II")
_SIZE_ROW = struct.Struct("<IIQQ")
_API_ROW = struct.Struct("<IIQ")
_STACK_HEAD = struct.Struct("<IIQQQ")


def process(payload) -> dict:
    c = Cursor(payload)
    pid, ppid, rank, _reserved, start_real_ns = c.take(_PROCESS)
    host, exe, cmdline, job_id, version = (c.string() for _ in range(5))
    args = cmdline.split("\0") if cmdline else []
    if args and args[-1] == "":
        args.pop()
    return dict(pid=pid, ppid=ppid, rank=rank, start_real_ns=start_real_ns, host=host,
                exe=exe, cmdline=args, job_id=job_id, recorder_version=version)


def settings(payload) -> dict:
    c = Cursor(payload)
    stack_sizes = c.string()
    stack_regions = c.string()
    max_depth, unwinder = c.take(_SETTINGS_TAIL)
    name = fmt.UNWINDER_NAMES[unwinder] if unwinder < len(fmt.UNWINDER_NAMES) else f"unwinder-{unwinder}"
    return dict(stack_sizes=stack_sizes, stack_regions=stack_regions,
                max_depth=max_depth, unwinder=name)


def snapshot_begin(payload) -> Tuple[int, int, int]:
    """(seq, reason, mono_ns)"""
    return Cursor(payload).take(_SNAPSHOT_BEGIN)


def snapshot_end(payload) -> Tuple[int, int, int]:
    """(seq, lost_stacks, total_threads)"""
    seq, _reserved, lost, threads = Cursor(payload).take(_SNAPSHOT_END)
    return seq, lost, threads


def modules(payload) -> List[Module]:
    c = Cursor(payload)
    out = []
    for _ in range(c.u32()):
        bias, nranges, build_id_len = c.take(_MODULE_HEAD)
        build_id = c.raw(build_id_len).hex()
        path = c.string()
        ranges = tuple(_RANGE.iter_unpack(c.rows(_RANGE, nranges)))
        out.append(Module(path, bias, build_id, ranges))
    return out


def regions(payload) -> List[Tuple[int, int, str]]:
    """[(id, parent_id, name)]"""
    c = Cursor(payload)
    out = []
    for _ in range(c.u32()):
        rid, parent = c.take(_REGION_HEAD)
        out.append((rid, parent, c.string()))
    return out


def size_rows(payload):
    """Iterator of (region_id, reserved, size, count)."""
    c = Cursor(payload)
    return _SIZE_ROW.iter_unpack(c.rows(_SIZE_ROW, c.u32()))


def api_rows(payload):
    """Iterator of (region_id, api, calls)."""
    c = Cursor(payload)
    return _API_ROW.iter_unpack(c.rows(_API_ROW, c.u32()))


def stack_rows(payload) -> List[Tuple[int, int, int, int, Tuple[int, ...]]]:
    """[(region_id, size, count, bytes, frames)]"""
    c = Cursor(payload)
    out = []
    for _ in range(c.u32()):
        region, depth, size, count, nbytes = c.take(_STACK_HEAD)
        frames = struct.unpack_from(f"<{depth}Q", c.rows(_U64, depth)) if depth else ()
        out.append((region, size, count, nbytes, frames))
    return out


_U64 = struct.Struct("<Q")


def region_paths(rows: List[Tuple[int, int, str]]) -> Dict[int, str]:
    """id -> path ("(none)", "split", "split/local") from (id, parent, name) rows."""
    by_id = {rid: (parent, name) for rid, parent, name in rows}
    paths: Dict[int, str] = {}

    def path_of(rid: int, depth: int = 0) -> str:
        if rid in paths:
            return paths[rid]
        if depth > len(by_id):
            raise Malformed(f"region {rid} is its own ancestor")
        if rid not in by_id:
            raise Malformed(f"region {rid} is referenced but not defined")
        parent, name = by_id[rid]
        if rid == 0 or parent == fmt.NO_PARENT:
            result = "(none)" if rid == 0 else name
        elif parent == 0:
            result = name
        else:
            result = path_of(parent, depth + 1) + "/" + name
        paths[rid] = result
        return result

    for rid in by_id:
        path_of(rid)
    return paths

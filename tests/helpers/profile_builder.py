"""Test-only writer of synthetic heapscope profile files (layout: src/format/profile_format.h).

Lets reader and report tests build exactly the file they need: known counts,
several snapshots, a cut-short tail, a corrupted crc, unknown chunk types.

    b = ProfileBuilder(pid=42)
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, 12, 100)], apis=[(1, API["malloc"], 100)])
    path = b.write(tmp_path / "x.hsp")
"""
import struct
import zlib
from pathlib import Path

MAGIC = b"HEAPSCPE"
VERSION = 1
NO_PARENT = 0xFFFFFFFF
PROCESS, SETTINGS, SNAPSHOT_BEGIN, MODULES, REGIONS, SIZE_COUNTS, API_COUNTS, STACK_TYPES, \
    SNAPSHOT_END = range(1, 10)
REASONS = {"exit": 0, "api": 1, "sigterm": 2, "sigint": 3, "sigusr1": 4, "exec": 5, "periodic": 6}
API = {name: i for i, name in enumerate(
    ["malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
     "valloc", "pvalloc", "free", "failed", "operator_new", "operator_delete"])}


def string(s) -> bytes:
    b = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("<I", len(b)) + b


def chunk(ctype: int, payload: bytes, crc=None) -> bytes:
    if crc is None:
        crc = zlib.crc32(payload)
    return struct.pack("<IIQ", ctype, crc, len(payload)) + payload


def header(version=VERSION, header_size=32, start_real_ns=1_700_000_000_000_000_000) -> bytes:
    return struct.pack("<8sIIQQ", MAGIC, version, header_size, start_real_ns, 0)


def stack_types_payload(stacks) -> bytes:
    """STACK_TYPES payload from (region, size, count, bytes, frames) rows."""
    body = struct.pack("<I", len(stacks))
    for r, size, count, nbytes, frames in stacks:
        body += struct.pack("<IIQQQ", r, len(frames), size, count, nbytes)
        body += struct.pack(f"<{len(frames)}Q", *frames)
    return body


class ProfileBuilder:
    def __init__(self, pid=4242, ppid=1, rank=-1, host="node01", exe="/usr/bin/prog",
                 cmdline=("prog", "--n", "3"), job_id="", stack_sizes="", stack_regions="",
                 max_depth=64, unwinder=0, version=VERSION):
        self.parts = [header(version=version)]
        self.parts.append(chunk(PROCESS, struct.pack("<IIiIQ", pid, ppid, rank, 0, 1_700_000_000_000_000_000)
                                + string(host) + string(exe) + string("\0".join(cmdline))
                                + string(job_id) + string("test-builder")))
        self.parts.append(chunk(SETTINGS, string(stack_sizes) + string(stack_regions)
                                + struct.pack("<II", max_depth, unwinder)))
        self.seq = 0

    def raw(self, data: bytes) -> "ProfileBuilder":
        self.parts.append(data)
        return self

    def snapshot(self, regions=(), sizes=(), apis=(), stacks=(), modules=(), reason="exit",
                 lost=0, threads=1, extra=(), end=True) -> "ProfileBuilder":
        """regions: (id, parent, name) besides region 0; sizes: (region, size, count);
        apis: (region, api_index, calls); stacks: (region, size, count, bytes, frames);
        modules: (path, bias, build_id_bytes, [(lo, hi)]); extra: (type, payload) chunks."""
        p = self.parts
        p.append(chunk(SNAPSHOT_BEGIN, struct.pack("<IIQ", self.seq, REASONS[reason], 1000 * (self.seq + 1))))
        mods = struct.pack("<I", len(modules))
        for path, bias, build_id, ranges in modules:
            mods += struct.pack("<QII", bias, len(ranges), len(build_id)) + build_id + string(path)
            mods += b"".join(struct.pack("<QQ", lo, hi) for lo, hi in ranges)
        p.append(chunk(MODULES, mods))
        all_regions = [(0, NO_PARENT, "")] + list(regions)
        p.append(chunk(REGIONS, struct.pack("<I", len(all_regions)) + b"".join(
            struct.pack("<II", rid, parent) + string(name) for rid, parent, name in all_regions)))
        p.append(chunk(SIZE_COUNTS, struct.pack("<I", len(sizes)) + b"".join(
            struct.pack("<IIQQ", r, 0, size, count) for r, size, count in sizes)))
        p.append(chunk(API_COUNTS, struct.pack("<I", len(apis)) + b"".join(
            struct.pack("<IIQ", r, api, calls) for r, api, calls in apis)))
        if stacks:
            p.append(chunk(STACK_TYPES, stack_types_payload(stacks)))
        for ctype, payload in extra:
            p.append(chunk(ctype, payload))
        if end:
            p.append(chunk(SNAPSHOT_END, struct.pack("<IIQQ", self.seq, 0, lost, threads)))
        self.seq += 1
        return self

    def data(self) -> bytes:
        return b"".join(self.parts)

    def write(self, path, data=None) -> Path:
        path = Path(path)
        path.write_bytes(self.data() if data is None else data)
        return path

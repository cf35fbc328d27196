"""Replay the event trace of a profile (record --trace) into a Tracking.

Layouts: src/format/profile_format.h, TRACE_START (12) and TRACE_EVENTS (13).
The file is read as a stream: a first pass reads only chunk headers (and the few
bytes that say which thread and which event numbers a chunk holds); the replay
then decompresses one chunk per thread at a time and merges the threads' streams
by event number. Memory: the live blocks and one chunk per thread, never the
whole event list.

What the replay computes is what tracking mode computes in the recorder (see
tracking.c): allocations, frees, temporaries, lifetime histograms, blocks live at
the heap peak and at the end, extra bytes; per stack trace type where the event
names one, per (region, size) otherwise.
"""
import heapq
import struct
import zlib
from typing import Dict, Iterator, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile import tracking
from heapscope.profile.model import LIFETIME_BINS, Tracking, lifetime_bin

TRACE_START = tracking.TRACE_START
TRACE_EVENTS = tracking.TRACE_EVENTS
ALLOC, FREE, STACK = 1, 2, 3

_CHUNK_HEAD = struct.Struct("<IIQ")
_START = struct.Struct("<IIQQ")
_EVENTS_HEAD = struct.Struct("<IIQQIIQ")


class _Chunk:
    __slots__ = ("offset", "length", "crc", "thread", "events", "first_seq", "last_seq",
                 "codec", "raw_len")


def scan(path: str) -> Tuple[Optional[tuple], List[_Chunk]]:
    """(TRACE_START fields or None, TRACE_EVENTS chunks) of the file, headers only."""
    start = None
    chunks: List[_Chunk] = []
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        fh.seek(fmt.HEADER_SIZE)
        while True:
            head = fh.read(fmt.CHUNK_HEADER_SIZE)
            if len(head) < fmt.CHUNK_HEADER_SIZE:
                break
            ctype, crc, length = _CHUNK_HEAD.unpack(head)
            offset = fh.tell()
            if ctype == TRACE_START and length >= _START.size:
                start = _START.unpack(fh.read(_START.size))
            elif ctype == TRACE_EVENTS and length >= _EVENTS_HEAD.size:
                c = _Chunk()
                (c.thread, c.events, c.first_seq, c.last_seq, c.codec, _reserved,
                 c.raw_len) = _EVENTS_HEAD.unpack(fh.read(_EVENTS_HEAD.size))
                c.offset, c.length, c.crc = offset, length, crc
                chunks.append(c)
            fh.seek(offset + length)
            if fh.tell() != offset + length or offset + length > _size(fh):
                if chunks and chunks[-1].offset == offset:
                    chunks.pop()   # cut short by the end of the process: not readable
                break
    return start, chunks


def _size(fh) -> int:
    here = fh.tell()
    end = fh.seek(0, 2)
    fh.seek(here)
    return end


def _payload(fh, path: str, c: _Chunk) -> bytes:
    fh.seek(c.offset)
    payload = fh.read(c.length)
    if zlib.crc32(payload) != c.crc:
        raise HeapscopeError(f"{path}: TRACE_EVENTS chunk at byte {c.offset - fmt.CHUNK_HEADER_SIZE} "
                             f"is corrupt (crc mismatch)")
    data = payload[_EVENTS_HEAD.size:]
    if c.codec == 2:
        data = _unzstd(data, c, path)
    elif c.codec == 1:
        try:
            data = zlib.decompress(data, -15)   # raw deflate
        except zlib.error as exc:
            raise HeapscopeError(f"{path}: TRACE_EVENTS chunk at byte {c.offset}: {exc}") from None
    elif c.codec != 0:
        raise HeapscopeError(f"{path}: TRACE_EVENTS chunk at byte {c.offset}: unknown codec {c.codec}")
    if len(data) != c.raw_len:
        raise HeapscopeError(f"{path}: TRACE_EVENTS chunk at byte {c.offset}: "
                             f"{len(data)} bytes, its header says {c.raw_len}")
    return data


_zstd = None


def _unzstd(data: bytes, c: _Chunk, path: str) -> bytes:
    """A zstd frame (codec 2) of c.raw_len bytes; a broken one is one HeapscopeError."""
    global _zstd
    where = f"{path}: TRACE_EVENTS chunk at byte {c.offset}"
    if _zstd is None:
        try:
            import zstandard
        except ImportError:
            raise HeapscopeError(f"{where}: zstd-compressed (codec 2): reading it needs the "
                                 f"Python package zstandard (pip install zstandard)") from None
        _zstd = zstandard
    try:
        # the frame says its size: a corrupt one must not make us allocate it
        size = _zstd.frame_content_size(data)
        if size != c.raw_len:
            raise HeapscopeError(f"{where}: zstd frame of {size} bytes, its header says {c.raw_len}")
        return _zstd.ZstdDecompressor().decompress(data, max_output_size=c.raw_len)
    except _zstd.ZstdError as exc:
        raise HeapscopeError(f"{where}: zstd: {exc}") from None


def _decode(data: bytes, thread: int, stacks: Dict[int, tuple], where: str) -> List[tuple]:
    """Events of one chunk as (seq, kind, ns, addr, size, stack_id, region, extra, thread);
    stack definitions go into `stacks` as they are met."""
    out = []
    pos, n = 0, len(data)
    seq = ns = addr = 0

    def varint():
        nonlocal pos
        shift = value = 0
        while True:
            if pos >= n:
                raise HeapscopeError(f"{where}: event data ends inside a number")
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    while pos < n:
        head = varint()
        kind = head & 3
        if kind == STACK:
            sid, region, size, depth = varint(), varint(), varint(), varint()
            if pos + 8 * depth > n:
                raise HeapscopeError(f"{where}: stack definition runs past the chunk")
            stacks[sid] = (region, size, struct.unpack_from(f"<{depth}Q", data, pos))
            pos += 8 * depth
            continue
        if kind not in (ALLOC, FREE):
            raise HeapscopeError(f"{where}: unknown event tag {kind} at byte {pos - 1}")
        seq += head >> 2
        ns += varint()
        z = varint()
        addr = (addr + ((z >> 1) ^ -(z & 1))) & 0xFFFFFFFFFFFFFFFF
        if kind == ALLOC:
            size, sid, region, extra = varint(), varint(), varint(), varint()
            out.append((seq, ALLOC, ns, addr, size, sid, region, extra, thread))
        else:
            out.append((seq, FREE, ns, addr, 0, 0, 0, 0, thread))
    return out


def events(path: str, chunks: List[_Chunk], stacks: Dict[int, tuple]) -> Iterator[tuple]:
    """Every event of the file in sequence order (a generator per thread, merged)."""
    by_thread: Dict[int, List[_Chunk]] = {}
    for c in chunks:
        by_thread.setdefault(c.thread, []).append(c)

    def stream(mine: List[_Chunk]) -> Iterator[tuple]:
        mine.sort(key=lambda c: c.first_seq)
        with open(path, "rb") as fh:
            for c in mine:
                yield from _decode(_payload(fh, path, c), c.thread, stacks,
                                   f"{path}: TRACE_EVENTS chunk at byte {c.offset}")

    return heapq.merge(*(stream(m) for m in by_thread.values()))


class _Group:
    __slots__ = ("allocs", "frees", "temps", "live", "at_peak", "extra", "time", "between")

    def __init__(self):
        self.allocs = self.frees = self.temps = self.live = self.at_peak = self.extra = 0
        self.time = [0] * LIFETIME_BINS
        self.between = [0] * LIFETIME_BINS


def replay(profile) -> Optional[Tracking]:
    """Profile.tracking from the trace of profile.path (source "trace"); None without one."""
    path = profile.path
    start, chunks = scan(path)
    if start is None and not chunks:
        return None
    _version, max_between, max_ns, start_mono = start if start else (1, 0, 0, 0)
    stacks: Dict[int, tuple] = {}
    groups: Dict[tuple, _Group] = {}
    live: Dict[int, tuple] = {}          # addr -> (group, size, born_ns, thread, thread_seq)
    thread_allocs: Dict[int, int] = {}
    cur = peak = peak_ns = 0
    pending = False
    for seq, kind, ns, addr, size, sid, region, extra, thread in events(path, chunks, stacks):
        if kind == ALLOC:
            n = thread_allocs.get(thread, 0) + 1
            thread_allocs[thread] = n
            key = (region, size, sid if sid else 0)
            g = groups.get(key)
            if g is None:
                g = groups[key] = _Group()
            g.allocs += 1
            g.live += 1
            g.extra += extra
            old = live.get(addr)
            if old is not None:      # an address handed out twice: keep the newer block
                old[0].live -= 1
                cur -= old[1]
            live[addr] = (g, size, ns, thread, n)
            cur += size
            if cur > peak:
                peak, peak_ns, pending = cur, ns, True
        else:
            block = live.pop(addr, None)
            if block is None:
                continue             # allocated before the trace began
            if pending:
                for grp in groups.values():
                    grp.at_peak = grp.live
                pending = False
            g, size, born_ns, thread_of, n = block
            lifetime = max(ns - born_ns, 0)
            between = thread_allocs.get(thread_of, n) - n
            g.frees += 1
            g.live -= 1
            g.time[lifetime_bin(lifetime)] += 1
            g.between[lifetime_bin(between)] += 1
            if between <= max_between and (not max_ns or lifetime <= max_ns):
                g.temps += 1
            cur -= size
    if pending:
        for grp in groups.values():
            grp.at_peak = grp.live

    rows = []
    for (region, size, sid), g in groups.items():
        frames = ()
        if sid:
            if sid not in stacks:
                raise HeapscopeError(f"{path}: trace refers to stack type {sid}, never defined")
            region, size, frames = stacks[sid]
        rows.append((region, size, tuple(frames),
                     [g.allocs, g.frees, g.temps, g.at_peak, g.live, g.extra,
                      tuple(g.time), tuple(g.between)]))

    def region_path(rid: int) -> str:
        region = profile.regions.get(rid)
        return region.path if region else f"(region {rid})"

    summary = dict(temporary_max_between=max_between, temporary_max_ns=max_ns,
                   peak_bytes=peak, peak_mono_ns=max(peak_ns - start_mono, 0) if peak else 0,
                   end_bytes=cur, untracked=0, table_bytes=0)
    result = tracking.build(summary, rows, region_path)
    result.source = "trace"
    return result

"""Replay the event trace of a profile (record --trace) into a Tracking.

Layouts: the format table, TRACE_START and TRACE_EVENTS; the event encoding:
src/format/profile_format.h. Framing (crc, truncation): framing.py.
The file is read as a stream: a first pass reads only chunk headers (and the few
bytes that say which thread and which event numbers a chunk holds); the replay
then decompresses one chunk per thread at a time and merges the threads' streams
by event number. Memory: the live blocks and a chunk or two per thread, never the
whole event list. The replay runs in C (replay_native.py, src/replay/replay.c);
the Python one here is the reference, and the fallback without the library. Its
result is kept (replay_cache.py, keyed by the file's content) for the next report.

What the replay computes is what tracking mode computes in the recorder (see
src/recorder/track/): allocations, frees, temporaries, lifetime histograms, blocks live at
the heap peak and at the end, extra bytes; per stack trace type where the event
names one, per (region, size) otherwise.
"""
import heapq
import os
import struct
import zlib
from typing import Dict, Iterator, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile import framing, replay_cache, replay_native
from heapscope.profile.layout import Malformed
from heapscope.profile.model import LIFETIME_BINS, Tracking, lifetime_bin
from heapscope.profile.tracking import build, region_namer

TRACE_START, TRACE_EVENTS = fmt.TRACE_START, fmt.TRACE_EVENTS
ALLOC, FREE, STACK = fmt.EVENT_ALLOC, fmt.EVENT_FREE, fmt.EVENT_STACK
_EVENTS = fmt.CODECS[TRACE_EVENTS]     # its prefix: the fields before the events


class _Chunk:
    __slots__ = ("head", "offset", "length", "crc", "thread", "events", "first_seq", "last_seq",
                 "codec", "raw_len")

    @property
    def where(self) -> str:
        return f"TRACE_EVENTS chunk at byte {self.head.offset}"


def scan(path: str) -> Tuple[Optional[tuple], List[_Chunk]]:
    """(TRACE_START record or None, TRACE_EVENTS chunks) of the file: for the events,
    only the fields before them are read (offset: of the payload)."""
    start = None
    chunks: List[_Chunk] = []
    with framing.open_regular(path) as fh:
        for head in framing.scan(fh, path):
            try:
                if head.type == TRACE_START:
                    start = fmt.CODECS[TRACE_START].decode(framing.read_payload(fh, head, path))
                elif head.type == TRACE_EVENTS:
                    fh.seek(head.payload_offset)
                    fields = _EVENTS.decode_prefix(fh.read(min(_EVENTS.prefix.size, head.length)))
                    c = _Chunk()
                    for name in ("thread", "events", "first_seq", "last_seq", "codec", "raw_len"):
                        setattr(c, name, fields[name])
                    c.head, c.offset, c.length, c.crc = head, head.payload_offset, head.length, head.crc
                    chunks.append(c)
            except Malformed as exc:
                raise HeapscopeError(f"{path}: malformed {fmt.chunk_name(head.type)} chunk at "
                                     f"byte {head.offset}: {exc}") from None
    return start, chunks


def _payload(fh, path: str, c: _Chunk) -> bytes:
    """The events of a chunk, decompressed and checked against its header."""
    data = framing.read_payload(fh, c.head, path)[_EVENTS.prefix.size:]
    if c.codec == fmt.CODEC_ZSTD:
        data = _unzstd(data, c, path)
    elif c.codec == fmt.CODEC_DEFLATE:
        try:
            data = zlib.decompress(data, -15)   # raw deflate
        except zlib.error as exc:
            raise HeapscopeError(f"{path}: {c.where}: {exc}") from None
    elif c.codec != fmt.CODEC_NONE:
        raise HeapscopeError(f"{path}: {c.where}: unknown codec {c.codec}")
    if len(data) != c.raw_len:
        raise HeapscopeError(f"{path}: {c.where}: {len(data)} bytes, its header says {c.raw_len}")
    return data


_zstd = None


def _unzstd(data: bytes, c: _Chunk, path: str) -> bytes:
    """A zstd frame (codec 2) of c.raw_len bytes; a broken one is one HeapscopeError."""
    global _zstd
    where = f"{path}: {c.where}"
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
                yield from _decode(_payload(fh, path, c), c.thread, stacks, f"{path}: {c.where}")

    return heapq.merge(*(stream(m) for m in by_thread.values()))


class _Group:
    __slots__ = ("allocs", "frees", "temps", "live", "at_peak", "extra", "time", "between")

    def __init__(self):
        self.allocs = self.frees = self.temps = self.live = self.at_peak = self.extra = 0
        self.time = [0] * LIFETIME_BINS
        self.between = [0] * LIFETIME_BINS


def replay(profile) -> Optional[Tracking]:
    """Profile.tracking from the trace of profile.path (source "trace"); None without one.
    In C (replay_native) when the library is there, else in Python (_replay_python, the
    reference; HEAPSCOPE_REPLAY=python chooses it)."""
    path = profile.path
    reference = os.environ.get("HEAPSCOPE_REPLAY") == "python"
    start = _start(profile)
    bounds = ((start.temporary_max_between, start.temporary_max_ns) if start else (0, 0))
    key = None if reference else replay_cache.content_key(path, bounds)
    cached = replay_cache.load(path, key)
    if cached is not None:
        groups, (peak, peak_ns, cur, _), stacks = cached
    else:
        start, chunks = scan(path)
        if start is None and not chunks:
            return None
        if replay_native.available() and not reference:
            groups, figures, stacks = replay_native.replay_chunks(
                path, chunks, lambda fh, c: _payload(fh, path, c), *bounds)
            replay_cache.store(path, key, groups, figures, stacks)
        else:
            groups, figures, stacks = _replay_python(path, chunks, *bounds)
        peak, peak_ns, cur, _ = figures
    max_between, max_ns = bounds
    start_mono = start.start_mono_ns if start else 0

    rows = []
    for region, size, sid, counts in groups:
        frames = ()
        if sid:
            if sid not in stacks:
                raise HeapscopeError(f"{path}: trace refers to stack type {sid}, never defined")
            region, size, frames = stacks[sid]
        rows.append((region, size, tuple(frames), counts))
    summary = dict(temporary_max_between=max_between, temporary_max_ns=max_ns,
                   peak_bytes=peak, peak_mono_ns=max(peak_ns - start_mono, 0) if peak else 0,
                   end_bytes=cur, untracked=0, table_bytes=0)
    result = build(summary, rows, region_namer(profile))
    result.source = "trace"
    return result


def _start(profile):
    """The TRACE_START record the reader kept (profile.file_chunks), or None."""
    payloads = profile.file_chunks.get(TRACE_START)
    if not payloads:
        return None
    try:
        return fmt.CODECS[TRACE_START].decode(payloads[0])
    except Malformed as exc:
        raise HeapscopeError(f"{profile.path}: malformed TRACE_START chunk: {exc}") from None


def _replay_python(path: str, chunks: List[_Chunk], max_between: int, max_ns: int):
    """The replay event by event: ([(region, size, stack_id, counts)], (peak bytes, its
    time, bytes live at the end, allocations and frees replayed), {stack_id: (region,
    size, frames)})."""
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
    rows = [(region, size, sid, [g.allocs, g.frees, g.temps, g.at_peak, g.live, g.extra,
                                 tuple(g.time), tuple(g.between)])
            for (region, size, sid), g in groups.items()]
    events_seen = sum(g.allocs + g.frees for g in groups.values())
    return rows, (peak, peak_ns, cur, events_seen), stacks

"""The event trace's replay in C (src/replay/replay.c, libheapscope_replay.so through
ctypes): this module feeds it the chunks, one decompressed chunk per thread at a time
(the next one read ahead by a helper thread), merging the threads' streams by event
number, and reads back the groups' figures.

    rows, figures = replay_chunks(path, chunks, payload, max_between, max_ns)

rows: [(region, size, stack_id, counts)] with counts as tracking.build wants them
(allocs, frees, temporaries, live at the peak, live at the end, extra bytes, two
histograms); figures: peak bytes, its time (ns), bytes live at the end, events;
stacks: {id: (region, size, frames)}. available() is False when the library is not
there (a source checkout without a build): trace.py then replays in Python.
"""
import ctypes
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError

GROUP_WORDS = 137          # replay.c: 9 figures, then 2 x 64 histogram bins
BINS = 64
_END = (1 << 64) - 1
_ERRORS = {1: "event data ends inside a number", 2: "stack definition runs past the chunk",
           3: "unknown event tag", 4: "out of memory replaying the trace"}


class _Cursor(ctypes.Structure):
    _fields_ = [("pos", ctypes.c_uint64), ("seq", ctypes.c_uint64), ("ns", ctypes.c_uint64),
                ("addr", ctypes.c_uint64), ("next_seq", ctypes.c_uint64),
                ("thread", ctypes.c_uint32), ("error_at", ctypes.c_uint32)]


_lib = None
_tried = False


def _load():
    global _lib, _tried
    if _tried:
        return _lib
    _tried = True
    try:
        from heapscope.native import library
        lib = ctypes.CDLL(str(library("heapscope_replay")))
    except (HeapscopeError, OSError):
        return None
    u64, vp = ctypes.c_uint64, ctypes.c_void_p
    lib.hsrp_new.restype, lib.hsrp_new.argtypes = vp, [u64, u64]
    lib.hsrp_free.restype, lib.hsrp_free.argtypes = None, [vp]
    lib.hsrp_feed.restype = ctypes.c_int
    lib.hsrp_feed.argtypes = [vp, ctypes.POINTER(_Cursor), ctypes.c_char_p, u64, u64]
    lib.hsrp_finish.restype, lib.hsrp_finish.argtypes = None, [vp, vp]
    lib.hsrp_group_count.restype, lib.hsrp_group_count.argtypes = u64, [vp]
    lib.hsrp_groups.restype, lib.hsrp_groups.argtypes = None, [vp, vp]
    lib.hsrp_stack_words.restype, lib.hsrp_stack_words.argtypes = u64, [vp]
    lib.hsrp_stacks.restype, lib.hsrp_stacks.argtypes = None, [vp, vp]
    _lib = lib
    return lib


def available() -> bool:
    return _load() is not None


class _Stream:
    """One thread's chunks in order, the current one decompressed."""
    __slots__ = ("chunks", "index", "data", "cursor")

    def __init__(self, chunks):
        self.chunks = sorted(chunks, key=lambda c: c.first_seq)
        self.index = 0
        self.data: Optional[bytes] = None
        self.cursor = _Cursor()

    def next_seq(self) -> int:
        if self.data is not None:
            return self.cursor.next_seq
        return self.chunks[self.index].first_seq if self.index < len(self.chunks) else _END


def replay_chunks(path: str, chunks: list, payload: Callable, max_between: int,
                  max_ns: int) -> Tuple[List[tuple], Tuple[int, int, int, int], Dict[int, tuple]]:
    """Replay every event of `chunks` (trace.scan's) in event-number order; payload(fh,
    chunk) gives a chunk's decompressed events (crc and size checked)."""
    import numpy as np      # here: reading a profile without replaying needs no numpy
    lib = _load()
    by_thread: Dict[int, list] = {}
    for c in chunks:
        by_thread.setdefault(c.thread, []).append(c)
    streams = [_Stream(mine) for mine in by_thread.values()]
    state = lib.hsrp_new(min(max_between, _END), min(max_ns, _END))
    if not state:
        raise HeapscopeError(f"{path}: out of memory replaying the trace")
    try:
        _merge(lib, state, streams, path, payload)
        figures = (ctypes.c_uint64 * 4)()
        lib.hsrp_finish(state, figures)
        groups = np.empty((lib.hsrp_group_count(state), GROUP_WORDS), dtype=np.uint64)
        if len(groups):
            lib.hsrp_groups(state, groups.ctypes.data)
        words = np.empty(lib.hsrp_stack_words(state), dtype=np.uint64)
        if len(words):
            lib.hsrp_stacks(state, words.ctypes.data)
    finally:
        lib.hsrp_free(state)
    return _rows(groups), tuple(int(x) for x in figures), _stacks(words.tolist())


def _merge(lib, state, streams: List[_Stream], path: str, payload: Callable) -> None:
    # The next chunk of a stream is read and decompressed by a helper thread while this
    # one replays the current (zstd, crc32 and the C replay all run without the GIL): on
    # two cores the decompression is hidden. Its own file handle: no shared position.
    with ThreadPoolExecutor(max_workers=1) as pool:
        def fetch(c):
            with open(path, "rb") as own:
                return payload(own, c)

        ahead: Dict[int, Future] = {}
        _merge_streams(lib, state, streams, path, pool, fetch, ahead)


def _merge_streams(lib, state, streams: List[_Stream], path: str, pool, fetch, ahead) -> None:
    while True:
        nexts = [s.next_seq() for s in streams]
        first = min(range(len(streams)), key=nexts.__getitem__, default=None)
        if first is None or nexts[first] == _END:
            return
        limit = min((n for i, n in enumerate(nexts) if i != first), default=_END)
        s = streams[first]
        if s.data is None:
            c = s.chunks[s.index]
            pending = ahead.pop(first, None)
            s.data = pending.result() if pending is not None else fetch(c)
            s.cursor = _Cursor(thread=c.thread)
            if s.index + 1 < len(s.chunks):
                ahead[first] = pool.submit(fetch, s.chunks[s.index + 1])
        rc = lib.hsrp_feed(state, ctypes.byref(s.cursor), s.data, len(s.data), limit)
        if rc:
            c = s.chunks[s.index]
            raise HeapscopeError(f"{path}: {c.where}: {_ERRORS.get(rc, f'error {rc}')} "
                                 f"(byte {s.cursor.error_at} of its events)")
        if s.cursor.next_seq == _END:
            s.data = None
            s.index += 1


def _rows(groups) -> List[tuple]:
    rows = []
    for g in groups.tolist():
        rows.append((g[0], g[1], g[2], [g[3], g[4], g[5], g[6], g[7], g[8],
                                        tuple(g[9:9 + BINS]), tuple(g[9 + BINS:9 + 2 * BINS])]))
    return rows


def _stacks(words: List[int]) -> Dict[int, tuple]:
    out: Dict[int, tuple] = {}
    i = 0
    while i < len(words):
        sid, region, size, depth = words[i:i + 4]
        out[sid] = (region, size, tuple(words[i + 4:i + 4 + depth]))
        i += 4 + depth
    return out

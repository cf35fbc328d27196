"""Decoders of the snapshot chunks' payloads (layouts: the format table, format.CODECS).

Each decoder takes a payload and returns plain values; a payload shorter than its
layout raises Malformed, which the reader turns into a one-line error naming the
chunk and its offset.
"""
from typing import Dict, List, Tuple

from heapscope.profile import format as fmt, word_rows
from heapscope.profile.layout import Malformed
from heapscope.profile.model import Module

__all__ = ["Malformed", "process", "settings", "sampling", "snapshot_begin", "snapshot_end", "modules",
           "regions", "size_rows", "api_rows", "failed_rows", "stack_rows", "region_paths"]

_CODEC = fmt.CODECS


def process(payload) -> dict:
    r = _CODEC[fmt.CHUNK_PROCESS].decode(payload)
    args = r.cmdline.split("\0") if r.cmdline else []
    if args and args[-1] == "":
        args.pop()
    return dict(pid=r.pid, ppid=r.ppid, rank=r.rank, start_real_ns=r.start_real_ns, host=r.host,
                exe=r.exe, cmdline=args, job_id=r.job_id, recorder_version=r.recorder_version)


def settings(payload) -> dict:
    r = _CODEC[fmt.CHUNK_SETTINGS].decode(payload)
    return dict(stack_sizes=r.stack_sizes, stack_regions=r.stack_regions,
                max_depth=r.max_depth, unwinder=fmt.unwinder_name(r.unwinder))


def sampling(payload) -> int:
    """The mean bytes between sampled stacks (record --sample-bytes)."""
    return _CODEC[fmt.CHUNK_SAMPLING].decode(payload).mean_bytes


def snapshot_begin(payload) -> Tuple[int, int, int]:
    """(seq, reason, mono_ns)"""
    r = _CODEC[fmt.CHUNK_SNAPSHOT_BEGIN].decode(payload)
    return r.seq, r.reason, r.mono_ns


def snapshot_end(payload) -> Tuple[int, int, int]:
    """(seq, lost_stacks, total_threads)"""
    r = _CODEC[fmt.CHUNK_SNAPSHOT_END].decode(payload)
    return r.seq, r.lost_stacks, r.total_threads


def snapshot_types_crc(payload) -> int:
    return _CODEC[fmt.CHUNK_SNAPSHOT_END].decode(payload).types_crc


def modules(payload) -> List[Module]:
    return [Module(m.path, m.bias, m.build_id.hex(), tuple(m.ranges))   # ranges: (lo, hi) rows
            for m in _CODEC[fmt.CHUNK_MODULES].decode(payload).modules]


def regions(payload) -> List[Tuple[int, int, str]]:
    """[(id, parent_id, name)] of a REGIONS or TIMELINE_REGIONS chunk (one layout)."""
    return [(r.id, r.parent_id, r.name) for r in _CODEC[fmt.CHUNK_REGIONS].decode(payload).regions]


def size_rows(payload):
    """[(region_id, reserved, size, count)]"""
    return _CODEC[fmt.CHUNK_SIZE_COUNTS].decode(payload).rows


def api_rows(payload):
    """[(region_id, api, calls)]"""
    return _CODEC[fmt.CHUNK_API_COUNTS].decode(payload).rows


def failed_rows(payload):
    """[(region_id, api, size, calls, size_known, reserved)]"""
    return _CODEC[fmt.FAILED_ALLOCS].decode(payload).rows


def stack_rows(payload) -> List[Tuple[int, int, int, int, Tuple[int, ...]]]:
    """[(region_id, size, count, bytes, frames)]"""
    rows = word_rows.stack_rows(payload)
    if rows is not None:
        return rows
    return [(t.region, t.size, t.count, t.bytes, t.frames)
            for t in _CODEC[fmt.CHUNK_STACK_TYPES].decode(payload).types]


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

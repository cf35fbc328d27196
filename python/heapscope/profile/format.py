"""Constants and payload codecs of the heapscope profile format, from its table
(src/format/profile_format.table; the prose is src/format/profile_format.h).

Nothing here is written out: every name is made from the table when the package is
imported. The Python name of a C constant is its C name without "HS_" (HS_CHUNK_PROCESS
-> CHUNK_PROCESS, HS_REASON_EXIT -> REASON_EXIT, HS_TRACE_EVENTS -> TRACE_EVENTS,
HS_MAGIC -> MAGIC, as bytes); tests/format/test_format_table.py compiles the C header
and checks every one. Parsing the table at import (about a millisecond) rather than
generating a Python file keeps `PYTHONPATH=python` working without a build step, and
leaves no generated copy in the source tree to go stale.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` several ms of start-up)
    from typing import Dict, FrozenSet, List

from heapscope.profile.layout import Codec
from heapscope.profile.table import load

TABLE = load()

globals().update({name[len("HS_"):]: value for name, value in TABLE.c_constants().items()})
MAGIC = TABLE.consts["MAGIC"].encode()

# chunk type -> name ("PROCESS", "TRACK_SUMMARY", "TIMELINE"), and its payload codec
CHUNK_NAMES: Dict[int, str] = {c.id: c.name for c in TABLE.chunks}


class _Codecs(dict):
    """Each chunk type's codec, made on first use: a reader needs a few of them, and
    `record`, which reads file headers only, none (a few ms of start-up)."""

    def __missing__(self, chunk_type: int) -> Codec:
        for c in TABLE.chunks:
            if c.id == chunk_type:
                codec = self[chunk_type] = Codec(c.layout)
                return codec
        raise KeyError(chunk_type)


CODECS: Dict[int, Codec] = _Codecs()
HEADER = Codec(TABLE.layouts["header"])
CHUNK_HEADER = Codec(TABLE.layouts["chunk_header"])
HEADER_V1 = Codec(TABLE.layouts["header_v1"])               # version 1 files, still read
CHUNK_HEADER_V1 = Codec(TABLE.layouts["chunk_header_v1"])
# The chunk types every reader must know (enum hs_chunk_type): inside a snapshot, the
# reader keeps any other type raw in Profile.extra_chunks, outside in file_chunks.
CORE_CHUNKS: FrozenSet[int] = frozenset(c.id for c in TABLE.chunks if c.c_enum == TABLE.c_enums[0])


def _labels(enum: str) -> List[str]:
    return TABLE.enums[enum].labels()


# Labels indexed by value: what reports print.
REASON_NAMES = _labels("snapshot_reason")
API_NAMES = _labels("api")
UNWINDER_NAMES = _labels("unwinder")
SAMPLE_KINDS = _labels("sample_kind")
HEAP_MEASURES = _labels("heap_measure")


def _name(labels: List[str], value: int, fallback: str) -> str:
    return labels[value] if 0 <= value < len(labels) and labels[value] else f"{fallback}-{value}"


def chunk_name(chunk_type: int) -> str:
    return CHUNK_NAMES.get(chunk_type, f"type-{chunk_type}")


def reason_name(reason: int) -> str:
    return _name(REASON_NAMES, reason, "reason")


def api_name(api: int) -> str:
    return _name(API_NAMES, api, "api")


def unwinder_name(unwinder: int) -> str:
    return _name(UNWINDER_NAMES, unwinder, "unwinder")


def sample_kind_name(kind: int) -> str:
    return _name(SAMPLE_KINDS, kind, "kind")


def heap_measure_name(measure: int) -> str:
    return _name(HEAP_MEASURES, measure, "measure")

"""Framing of a profile file: the header, then the chunks, with crc and truncation checks.

Knows nothing of what chunks mean (decode.py does) nor of snapshots (reader.py does).
"""
import struct
import zlib
from dataclasses import dataclass
from typing import List, Optional

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt

_HEADER = struct.Struct("<8sIIQQ")
_CHUNK = struct.Struct("<IIQ")


@dataclass
class Chunk:
    type: int
    offset: int            # of the chunk header in the file
    payload: memoryview


@dataclass
class Framing:
    start_real_ns: int
    chunks: List[Chunk]
    truncated_at: Optional[int]   # offset of the first chunk cut short, None if the file is whole


def parse(data: bytes, path: str) -> Framing:
    """Split a whole file's bytes into chunks. Raises HeapscopeError on corruption."""
    if len(data) < len(fmt.MAGIC) or data[:len(fmt.MAGIC)] != fmt.MAGIC:
        if len(data) < len(fmt.MAGIC) and fmt.MAGIC.startswith(bytes(data)) and data:
            raise HeapscopeError(f"{path}: file too short for a heapscope header "
                                 f"({len(data)} of {fmt.HEADER_SIZE} bytes)")
        raise HeapscopeError(f"{path}: not a heapscope profile (bad magic)")
    if len(data) < _HEADER.size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({len(data)} of {fmt.HEADER_SIZE} bytes)")
    _magic, version, header_size, start_real_ns, _reserved = _HEADER.unpack_from(data, 0)
    if version != fmt.FORMAT_VERSION:
        raise HeapscopeError(f"{path}: unsupported profile format version {version} "
                             f"(this heapscope reads version {fmt.FORMAT_VERSION})")
    if header_size < fmt.HEADER_SIZE:
        raise HeapscopeError(f"{path}: corrupt header (header size {header_size} < {fmt.HEADER_SIZE})")
    if len(data) < header_size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({len(data)} of {header_size} bytes)")

    view = memoryview(data)
    chunks: List[Chunk] = []
    offset = header_size
    end = len(data)
    truncated_at = None
    while offset < end:
        if offset + _CHUNK.size > end:
            truncated_at = offset
            break
        ctype, crc, length = _CHUNK.unpack_from(data, offset)
        start = offset + _CHUNK.size
        if length > end - start:
            truncated_at = offset
            break
        payload = view[start:start + length]
        if zlib.crc32(payload) != crc:
            raise HeapscopeError(f"{path}: corrupt profile: crc mismatch in "
                                 f"{fmt.chunk_name(ctype)} chunk at byte {offset}")
        chunks.append(Chunk(ctype, offset, payload))
        offset = start + length
    return Framing(start_real_ns, chunks, truncated_at)

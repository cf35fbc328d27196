"""Framing of a profile file, for every reader: the header, then chunks, each with its
crc; a chunk cut short by the end of the file ends the readable part (the process died
while writing it). Rules: src/format/profile_format.h; layouts: the format table.

Two ways over the same rules: parse() splits a whole file held in memory (the snapshot
and timeline readers), scan() walks a file's chunk headers without reading payloads
(the event trace, streamed chunk by chunk). Knows nothing of what chunks mean.
"""
import mmap
import os
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, List, NamedTuple, Optional

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt

_HEAD = fmt.CHUNK_HEADER.fixed       # type, crc, payload_len (the table's chunk_header)
_HEAD_FIELDS = fmt.CHUNK_HEADER.record


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


class ChunkHead(NamedTuple):
    type: int
    crc: int
    offset: int            # of the chunk header in the file
    length: int            # of the payload

    @property
    def payload_offset(self) -> int:
        return self.offset + _HEAD.size


def read_file(path: str):
    """A whole profile file, mapped (pages of chunks never looked at, such as an event
    trace's, are never read); a missing or unreadable one is one HeapscopeError."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return b""
            try:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):    # a file that cannot be mapped (a pipe)
                return fh.read()
    except FileNotFoundError:
        raise HeapscopeError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HeapscopeError(f"{path}: is a directory, expected a profile file") from None
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot read: {exc.strerror}") from None


def check_header(data: bytes, path: str, file_size: Optional[int] = None):
    """The header record of a file of file_size bytes (default: len(data)) that starts
    with `data`. Raises HeapscopeError for a bad magic, version or size."""
    file_size = len(data) if file_size is None else file_size
    magic, size = fmt.MAGIC, fmt.HEADER_SIZE
    if len(data) < len(magic) or data[:len(magic)] != magic:
        if data and len(data) < len(magic) and magic.startswith(bytes(data)):
            raise HeapscopeError(f"{path}: file too short for a heapscope header "
                                 f"({len(data)} of {size} bytes)")
        raise HeapscopeError(f"{path}: not a heapscope profile (bad magic)")
    if len(data) < size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header ({len(data)} of {size} bytes)")
    header = fmt.HEADER.decode(memoryview(data)[:size])
    if header.version != fmt.FORMAT_VERSION:
        raise HeapscopeError(f"{path}: unsupported profile format version {header.version} "
                             f"(this heapscope reads version {fmt.FORMAT_VERSION})")
    if header.header_size < size:
        raise HeapscopeError(f"{path}: corrupt header (header size {header.header_size} < {size})")
    if file_size < header.header_size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({file_size} of {header.header_size} bytes)")
    return header


class _Walk:
    """The whole chunks from `offset` to `end`; then truncated_at says where the first
    chunk cut short begins (None when the file ends on a chunk boundary)."""

    def __init__(self, read_head: Callable[[int], bytes], offset: int, end: int):
        self.read_head, self.offset, self.end = read_head, offset, end
        self.truncated_at: Optional[int] = None

    def __iter__(self) -> Iterator[ChunkHead]:
        offset, end = self.offset, self.end
        while offset < end:
            if offset + _HEAD.size > end:
                self.truncated_at = offset
                return
            head = _HEAD_FIELDS._make(_HEAD.unpack(self.read_head(offset)))
            if head.payload_len > end - offset - _HEAD.size:
                self.truncated_at = offset
                return
            yield ChunkHead(head.type, head.crc, offset, head.payload_len)
            offset += _HEAD.size + head.payload_len


def check_crc(payload, head: ChunkHead, path: str) -> None:
    if zlib.crc32(payload) != head.crc:
        raise HeapscopeError(f"{path}: corrupt profile: crc mismatch in "
                             f"{fmt.chunk_name(head.type)} chunk at byte {head.offset}")


def parse(data: bytes, path: str, unchecked=frozenset()) -> Framing:
    """Split a whole file's bytes into chunks, every crc checked but those of the chunk
    types `unchecked` (their reader checks them, read_payload). Raises HeapscopeError
    on corruption."""
    header = check_header(data, path)
    view = memoryview(data)
    walk = _Walk(lambda offset: view[offset:offset + _HEAD.size], header.header_size, len(data))
    chunks: List[Chunk] = []
    for head in walk:
        payload = view[head.payload_offset:head.payload_offset + head.length]
        if head.type not in unchecked:
            check_crc(payload, head, path)
        chunks.append(Chunk(head.type, head.offset, payload))
    return Framing(header.start_real_ns, chunks, walk.truncated_at)


def scan(fh: BinaryIO, path: str) -> List[ChunkHead]:
    """The whole chunks of an open file, headers only (payloads are not read, so crcs
    are checked by read_payload)."""
    end = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    header = check_header(fh.read(fmt.HEADER_SIZE), path, end)

    def read_head(offset: int) -> bytes:
        fh.seek(offset)
        return fh.read(_HEAD.size)

    return list(_Walk(read_head, header.header_size, end))


def read_payload(fh: BinaryIO, head: ChunkHead, path: str) -> bytes:
    """A chunk's payload, crc checked."""
    fh.seek(head.payload_offset)
    payload = fh.read(head.length)
    check_crc(payload, head, path)
    return payload

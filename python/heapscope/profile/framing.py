"""Framing of a profile file, for every reader: the header, then chunks, each with its
crcs. Rules: src/format/profile_format.h; layouts: the format table (header and
chunk_header for version 2, header_v1 and chunk_header_v1 for version 1).

What ends the readable part of a file, chunks before it standing:
  - a chunk cut short by the end of the file (the process died while writing it):
    Framing.truncated_at;
  - a corrupt chunk (version 2: its header's crc, or its crc over type, length and
    payload, does not match; version 1: the payload's crc): Framing.corrupt_at and
    Framing.corrupt, "corrupt chunk at byte N (type T)". Version 1's crc does not cover
    the chunk header, so there a damaged length may only look like a cut.

Two ways over the same rules: parse() splits a whole file held in memory (the snapshot
and timeline readers), scan() walks a file's chunk headers without reading payloads
(the event trace, streamed chunk by chunk). Knows nothing of what chunks mean.
"""
import mmap
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, List, NamedTuple, Optional

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile.header import (_HEAD, Header, check_header, open_regular,  # noqa: F401
                                      write_failure)

_TYPE_LEN = struct.Struct("<IQ")     # what version 2's crc covers before the payload
_V2_HEAD_CRC_SPAN = 16               # head_crc covers type, crc, payload_len


@dataclass
class Chunk:
    type: int
    offset: int            # of the chunk header in the file
    payload: memoryview


@dataclass
class Framing:
    header: Header
    chunks: List[Chunk]
    truncated_at: Optional[int]   # offset of the first chunk cut short, None if the file is whole
    corrupt_at: Optional[int] = None   # offset of the first corrupt chunk
    corrupt: str = ""                  # "corrupt chunk at byte N (type T): why"
    cut: str = ""                      # the reader's: why it cut the chunks short (reader.py)

    @property
    def start_real_ns(self) -> int:
        return self.header.start_real_ns

    @property
    def end(self) -> Optional[int]:
        """Where the readable part ends early (cut or corrupt), None if it does not."""
        return self.corrupt_at if self.corrupt_at is not None else self.truncated_at


class ChunkHead(NamedTuple):
    type: int
    crc: int
    offset: int            # of the chunk header in the file
    length: int            # of the payload
    head_size: int         # of the chunk header (version 1: 16, version 2: 24)

    @property
    def payload_offset(self) -> int:
        return self.offset + self.head_size


class Corrupt(Exception):
    """A corrupt chunk; str() is the reader's line: "corrupt chunk at byte N (type T): ..."."""

    def __init__(self, offset: int, ctype: int, why: str):
        self.offset = offset
        super().__init__(f"corrupt chunk at byte {offset} (type {ctype}, {fmt.chunk_name(ctype)}): {why}")


def read_file(path: str):
    """A whole profile file, mapped (pages of chunks never looked at, such as an event
    trace's, are never read); a missing, unreadable or not regular one is one
    HeapscopeError."""
    try:
        with open_regular(path) as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return b""
            try:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):    # a file that cannot be mapped
                return fh.read()
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot read: {exc.strerror}") from None


class _Walk:
    """The whole chunks from `offset` to `end`; then truncated_at says where the first
    chunk cut short begins (None when the file ends on a chunk boundary). A corrupt
    chunk header (version 2) raises Corrupt."""

    def __init__(self, read_head: Callable[[int, int], bytes], header: Header, end: int):
        self.read_head, self.header, self.end = read_head, header, end
        self.truncated_at: Optional[int] = None

    def __iter__(self) -> Iterator[ChunkHead]:
        offset, end = self.header.header_size, self.end
        head = _HEAD[self.header.version]
        v2 = self.header.version == 2
        while offset < end:
            if offset + head.size > end:
                self.truncated_at = offset
                return
            raw = self.read_head(offset, head.size)
            fields = head.unpack(raw)
            ctype, crc, length = fields[:3]
            if v2 and (zlib.crc32(raw[:_V2_HEAD_CRC_SPAN]) != fields[3] or fields[4] != 0):
                raise Corrupt(offset, ctype, "chunk header crc mismatch (type and length not to "
                                             "be trusted)")
            if length > end - offset - head.size:
                self.truncated_at = offset
                return
            yield ChunkHead(ctype, crc, offset, length, head.size)
            offset += head.size + length


def crc_ok(payload, head: ChunkHead) -> bool:
    if head.head_size == _HEAD[1].size:
        return zlib.crc32(payload) == head.crc
    return zlib.crc32(payload, zlib.crc32(_TYPE_LEN.pack(head.type, head.length))) == head.crc


def _bad_crc(head: ChunkHead) -> Corrupt:
    return Corrupt(head.offset, head.type, "crc mismatch")


def parse(data: bytes, path: str, unchecked=frozenset()) -> Framing:
    """Split a whole file's bytes into chunks, every crc checked but the payload crcs of
    the chunk types `unchecked` (their reader checks them when it reads them: the event
    trace's replay). A corrupt chunk ends the chunks read (Framing.corrupt says which);
    a bad header raises HeapscopeError."""
    header = check_header(data, path)
    view = memoryview(data)
    walk = _Walk(lambda offset, n: bytes(view[offset:offset + n]), header, len(data))
    frame = Framing(header, [], None)
    try:
        for head in walk:
            payload = view[head.payload_offset:head.payload_offset + head.length]
            if head.type not in unchecked and not crc_ok(payload, head):
                raise _bad_crc(head)
            frame.chunks.append(Chunk(head.type, head.offset, payload))
    except Corrupt as exc:
        frame.corrupt_at, frame.corrupt = exc.offset, str(exc)
    frame.truncated_at = walk.truncated_at
    return frame


def scan(fh: BinaryIO, path: str) -> List[ChunkHead]:
    """The whole chunks of an open file, headers only (payloads are not read, so their
    crcs are checked by read_payload), up to the first corrupt chunk header."""
    end = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    header = check_header(fh.read(fmt.HEADER_SIZE), path, end)

    def read_head(offset: int, n: int) -> bytes:
        fh.seek(offset)
        return fh.read(n)

    heads: List[ChunkHead] = []
    try:
        heads.extend(_Walk(read_head, header, end))
    except Corrupt:
        pass   # parse() reports it; the chunks before it stand
    return heads


def read_payload(fh: BinaryIO, head: ChunkHead, path: str) -> bytes:
    """A chunk's payload, crc checked (a mismatch is one HeapscopeError)."""
    fh.seek(head.payload_offset)
    payload = fh.read(head.length)
    if not crc_ok(payload, head):
        raise HeapscopeError(f"{path}: {_bad_crc(head)}")
    return payload

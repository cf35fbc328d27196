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

_HEAD = {2: fmt.CHUNK_HEADER.fixed, 1: fmt.CHUNK_HEADER_V1.fixed}   # by version
_TYPE_LEN = struct.Struct("<IQ")     # what version 2's crc covers before the payload
_V2_HEAD_CRC_SPAN = 16               # head_crc covers type, crc, payload_len
_V2_HEADER_CRC_SPAN = 40             # the file header's crc covers the bytes before it


@dataclass
class Header:
    version: int
    header_size: int
    start_real_ns: int
    flags: int = 0
    write_errno: int = 0     # the recorder's first failed write (version 2)
    lost_at: int = 0

    @property
    def chunk_head_size(self) -> int:
        return _HEAD[self.version].size

    @property
    def write_failed(self) -> bool:
        return bool(self.flags & fmt.HEADER_WRITE_FAILED)

    def unknown_flags(self) -> str:
        """A warning for header flags this reader does not know (a later recorder's, or
        damage the header's crc was redone over), or ""."""
        unknown = self.flags & ~fmt.HEADER_WRITE_FAILED
        return f"header flags 0x{unknown:x} unknown to this reader: ignored" if unknown else ""

    def write_failure(self) -> str:
        """What the recorder said of its failed write, as a reader warning."""
        why = os.strerror(self.write_errno) if self.write_errno else "unknown error"
        return (f"incomplete: a write of the recorder failed at byte {self.lost_at:,} "
                f"({why}): some of the run's data is not in this file")


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


def open_regular(path: str, what: str = "a profile file") -> BinaryIO:
    """The file at path, open for reading, when it is a regular file; else one
    HeapscopeError. Opened without blocking first: a FIFO named as a profile would wait
    for a writer forever (every command hung), a device would be read without end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise HeapscopeError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HeapscopeError(f"{path}: is a directory, expected {what}") from None
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot read: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device")
        raise HeapscopeError(f"{path}: is {kind}, not a regular file: expected {what}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


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


def check_header(data: bytes, path: str, file_size: Optional[int] = None) -> Header:
    """The header of a file of file_size bytes (default: len(data)) that starts with
    `data` (at least HEADER_SIZE bytes of it when the file has them). Raises
    HeapscopeError for a bad magic, version or size."""
    file_size = len(data) if file_size is None else file_size
    magic = fmt.MAGIC
    if not data:
        raise HeapscopeError(f"{path}: empty file: incomplete (the recorder could not write "
                             f"even its header; a full disk?)")
    if data[:len(magic)] != magic:
        if len(data) < len(magic) and magic.startswith(bytes(data)):
            raise HeapscopeError(f"{path}: file too short for a heapscope header "
                                 f"({len(data)} of {fmt.HEADER_SIZE} bytes): incomplete")
        raise HeapscopeError(f"{path}: not a heapscope profile (bad magic)")
    if len(data) < 16:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({len(data)} of {fmt.HEADER_SIZE} bytes): incomplete")
    version, header_size = struct.unpack_from("<II", data, len(magic))
    if version not in _HEAD:
        raise HeapscopeError(f"{path}: unsupported profile format version {version} "
                             f"(this heapscope reads versions {fmt.OLDEST_VERSION} to "
                             f"{fmt.FORMAT_VERSION})")
    layout = fmt.HEADER if version == 2 else fmt.HEADER_V1
    size = layout.fixed.size
    if len(data) < size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({len(data)} of {size} bytes): incomplete")
    if header_size < size:
        raise HeapscopeError(f"{path}: corrupt header (header size {header_size} < {size})")
    if file_size < header_size:
        raise HeapscopeError(f"{path}: file too short for a heapscope header "
                             f"({file_size} of {header_size} bytes): incomplete")
    h = layout.decode(memoryview(data)[:size])
    if version == 2 and (zlib.crc32(bytes(data[:_V2_HEADER_CRC_SPAN])) != h.header_crc or h.reserved):
        raise HeapscopeError(f"{path}: corrupt header (crc mismatch)")
    if version == 1:
        return Header(1, h.header_size, h.start_real_ns)
    return Header(2, h.header_size, h.start_real_ns, h.flags, h.write_errno, h.lost_at)


def write_failure(path) -> Optional[str]:
    """Why the recorder left this file incomplete, from its header alone: empty or
    shorter than its header (it could not write even that), or its header's
    HEADER_WRITE_FAILED flag (a write failed: the byte and the errno's text). None for a
    file the recorder wrote whole; what a reader of the whole file finds (a cut, a
    corrupt chunk) is not looked for here."""
    try:
        with open_regular(str(path)) as fh:
            data = fh.read(fmt.HEADER_SIZE)
            size = os.fstat(fh.fileno()).st_size
    except HeapscopeError as exc:
        return str(exc).split(": ", 1)[-1]
    except OSError as exc:
        return f"cannot read it: {exc.strerror}"
    if not data:
        return "empty: the recorder could not write even its header"
    try:
        header = check_header(data, str(path), size)
    except HeapscopeError as exc:
        return str(exc).split(": ", 1)[-1]
    if header.write_failed:
        why = os.strerror(header.write_errno) if header.write_errno else "unknown error"
        return f"a write failed at byte {header.lost_at:,} ({why})"
    return None


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

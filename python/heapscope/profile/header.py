"""The file header of a profile (layouts: the format table's header and header_v1),
apart from the chunks' framing (framing.py), so that `record`, which reads the headers
of the files it leaves, loads nothing else: no dataclass, no typing (start-up time).
"""
import os
import stat
import struct
import zlib
from collections import namedtuple

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt

_HEAD = {2: fmt.CHUNK_HEADER.fixed, 1: fmt.CHUNK_HEADER_V1.fixed}   # by version
_V2_HEADER_CRC_SPAN = 40             # the file header's crc covers the bytes before it


class Header(namedtuple("Header", "version header_size start_real_ns flags write_errno lost_at",
                        defaults=(0, 0, 0))):
    """write_errno, lost_at: the recorder's first failed write (version 2)."""
    __slots__ = ()

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


def open_regular(path: str, what: str = "a profile file") :
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


def check_header(data: bytes, path: str, file_size=None) -> Header:
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


def write_failure(path):
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



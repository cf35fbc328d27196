"""Damaged copies of a heapscope file for the readers' fuzz tests (tests/format/test_fuzz.py,
test_fuzz_job.py): what a crash, a disk, a buggy writer or a crafted file does."""
import random
import struct
import zlib

from heapscope.profile import format as fmt
from helpers.profile_builder import chunk_crc, chunks_of

HEAD = fmt.CHUNK_HEADER_SIZE


def redo_crcs(buf: bytearray, at: int, length: int) -> None:
    """The chunk at `at` framed anew: payload_len, crc and head_crc from its bytes."""
    ctype = struct.unpack_from("<I", buf, at)[0]
    body = bytes(buf[at + HEAD:at + HEAD + length])
    struct.pack_into("<IIQ", buf, at, ctype, chunk_crc(ctype, body), length)
    struct.pack_into("<II", buf, at + 16, zlib.crc32(bytes(buf[at:at + 16])), 0)


def with_u32(data: bytes, at: int, length: int, offset: int, value: int) -> bytes:
    """The chunk at `at` with the u32 at `offset` of its payload set, crcs redone."""
    buf = bytearray(data)
    struct.pack_into("<I", buf, at + HEAD + offset, value)
    redo_crcs(buf, at, length)
    return bytes(buf)


def framing_mutants(data: bytes, types, seed: int, flips: int):
    """(kind, bytes): truncations every 3 bytes ("cut"), `flips` random flips of 1, 2
    or 8 bits ("flip"), each chunk retyped to each of `types` ("type") and with its
    length changed ("length"), crcs redone for those two."""
    rng = random.Random(seed)
    for cut in range(0, len(data), 3):
        yield "cut", data[:cut]
    for _ in range(flips):
        buf = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        yield "flip", bytes(buf)
    for ctype, at, body in chunks_of(data):
        for other in types:
            if other != ctype:
                buf = bytearray(data)
                struct.pack_into("<I", buf, at, other)
                redo_crcs(buf, at, len(body))
                yield "type", bytes(buf)
        for delta in (-24, -8, -1, 1, 8, 24, 1000):
            length = len(body) + delta
            if 0 <= length and at + HEAD + length <= len(data):
                buf = bytearray(data)
                redo_crcs(buf, at, length)
                yield "length", bytes(buf)


def outcomes(mutants, check, path) -> dict:
    """{(kind, what check(path, mutant) returned): how many}; a mutant that fails its
    check is kept beside `path` as failing.<suffix> and named in the failure."""
    seen: dict = {}
    for kind, mutant in mutants:
        try:
            result = check(path, mutant)
        except AssertionError as exc:
            failing = path.with_name("failing" + path.suffix)
            failing.write_bytes(mutant)
            raise AssertionError(f"{kind} mutant ({failing}): {exc}") from None
        seen[(kind, result)] = seen.get((kind, result), 0) + 1
    return seen


def read_or_error(read, path, data):
    """`data` written to `path` and read with read(path): what it returns, or None when it
    raises the readers' one-line error (exit status 2, naming the file)."""
    from heapscope.errors import HeapscopeError
    path.write_bytes(data)
    try:
        return read(path)
    except HeapscopeError as exc:
        message = str(exc)
        assert exc.exit_code == 2 and "\n" not in message and message.startswith(str(path)), message
        return None

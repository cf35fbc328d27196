"""A minimal protocol-buffers wire-format writer (only what profile.proto needs).

Wire types: 0 varint, 2 length-delimited. Negative int64 values are written as
ten-byte varints (two's complement), as protobuf does for int64 fields.

    m = Message()
    m.varint(1, 42).string(2, "x").message(3, other).packed(4, [1, 2, 3])
    data = m.bytes()
"""
from typing import Iterable

VARINT = 0
LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    if value < 0:
        value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


class Message:
    def __init__(self):
        self._parts = []

    def varint(self, field: int, value: int, keep_zero: bool = False) -> "Message":
        """An int64/uint64/bool field; zero (the default) is left out unless keep_zero."""
        if value or keep_zero:
            self._parts.append(key(field, VARINT) + varint(int(value)))
        return self

    def raw(self, field: int, data: bytes) -> "Message":
        self._parts.append(key(field, LENGTH_DELIMITED) + varint(len(data)) + data)
        return self

    def string(self, field: int, text: str) -> "Message":
        """A string field, always written (string tables need their empty entry 0)."""
        return self.raw(field, text.encode("utf-8", "surrogateescape"))

    def message(self, field: int, sub: "Message") -> "Message":
        return self.raw(field, sub.bytes())

    def packed(self, field: int, values: Iterable[int]) -> "Message":
        """A packed repeated varint field."""
        body = b"".join(varint(int(v)) for v in values)
        if body:
            self.raw(field, body)
        return self

    def bytes(self) -> bytes:
        return b"".join(self._parts)

"""Decode and encode a payload by its layout in the format table (table.py).

A Codec turns a payload into a record (a namedtuple named after the chunk, fields in
table order, reserved fields included) and back. Consecutive fixed-size fields are one
struct.Struct. The rows of a repeat of fixed-size fields are plain tuples (fields in
table order) read with struct.iter_unpack: big tables (SIZE_COUNTS, TIMELINE samples)
cost one C loop, where a namedtuple per row would double the time of reading a file. A payload shorter than its
layout raises Malformed. Bytes after the last field are ignored (a later version may
append fields) when the layout ends with fixed fields; a layout that ends with counted
rows (SIZE_COUNTS, MODULES, TIMELINE ...) must end with its last row, or its count
disagrees with its payload (Malformed): rows are never silently dropped.
"""
from __future__ import annotations

import struct
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` several ms of start-up)
    from typing import List, Mapping, Optional, Tuple

from heapscope.profile.table import SCALARS, Field, Layout


class Malformed(Exception):
    pass


_U32 = struct.Struct("<I")
_RUN, _STR, _BYTES, _ARRAY, _STRS, _REPEAT = range(6)


class Codec:
    def __init__(self, layout: Layout, typename: Optional[str] = None):
        self.name = typename or layout.name
        self.fields = layout.fields
        self.record = namedtuple(self.name, [f.name for f in self.fields], rename=True)
        self._index = {}
        self._bodies = {}
        for i, f in enumerate(self.fields):
            self._index.setdefault(f.name, i)
        self._steps = self._compile()
        # the leading fixed-size fields as one Struct (what a reader can take without
        # reading the rest), and the whole layout's Struct when every field is fixed
        first = self._steps[0] if self._steps else None
        self.prefix = first[1] if first and first[0] == _RUN else struct.Struct("<")
        self.fixed = self.prefix if len(self._steps) == 1 and first[0] == _RUN else None
        self._prefix_names = [f.name for f in self.fields[:len(self.prefix.unpack(bytes(self.prefix.size)))]]
        last = self.fields[-1] if self.fields else None
        # ends with rows or values counted by a field: the payload must end there
        self.ends_counted = bool(last and last.count is not None and last.count != "rest"
                                 and not isinstance(last.count, int))

    def _compile(self) -> list:
        steps: list = []
        run = ""
        for f in self.fields:
            fixed_char = _fixed_char(f)
            if fixed_char:
                run += fixed_char
                continue
            if run:
                steps.append((_RUN, struct.Struct("<" + run)))
                run = ""
            count = self._count_of(f)
            if f.type == "repeat":
                body = self._bodies[f.name] = Codec(Layout(f.name, f.body), f"{self.name}_{f.name}")
                steps.append((_REPEAT, count, body))
            elif f.type == "str":
                steps.append((_STRS, count) if count is not None else (_STR,))
            elif f.type == "bytes":
                steps.append((_BYTES, count))
            else:
                steps.append((_ARRAY, count, SCALARS[f.type], int(f.type[1:]) // 8))
        if run:
            steps.append((_RUN, struct.Struct("<" + run)))
        return steps

    def _count_of(self, f: Field):
        """A count as (kind, value): ("n", int), ("field", index), ("popcount", index), ("rest",)."""
        c = f.count
        if c is None:
            return None
        if isinstance(c, int):
            return ("n", c)
        if c == "rest":
            return ("rest",)
        if isinstance(c, tuple):
            return ("popcount", self._index[c[1]])
        return ("field", self._index[c])

    # ---- decoding ----
    def decode(self, payload, whole: bool = False):
        buf = payload if isinstance(payload, memoryview) else memoryview(payload)
        values, pos = self._decode(buf, 0)
        if pos != len(buf) and (whole or self.ends_counted):
            raise Malformed(f"{len(buf) - pos} bytes left after the last field"
                            + (f" (its count of {self.fields[-1].name} disagrees with the payload)"
                               if self.ends_counted else ""))
        return self.record._make(values)

    def _decode(self, buf: memoryview, pos: int) -> Tuple[list, int]:
        values: list = []
        end = len(buf)
        for step in self._steps:
            kind = step[0]
            if kind == _RUN:
                st = step[1]
                _need(pos + st.size, end, self.name)
                values.extend(st.unpack_from(buf, pos))
                pos += st.size
                continue
            if kind == _STR:
                value, pos = _string(buf, pos, end, self.name)
                values.append(value)
                continue
            n = _resolve(step[1], values, end - pos)
            if kind == _BYTES:
                _need(pos + n, end, self.name)
                values.append(bytes(buf[pos:pos + n]))
                pos += n
            elif kind == _ARRAY:
                size = n * step[3]
                _need(pos + size, end, self.name)
                values.append(struct.unpack_from(f"<{n}{step[2]}", buf, pos) if n else ())
                pos += size
            elif kind == _STRS:
                strings = []
                for _ in range(n):
                    value, pos = _string(buf, pos, end, self.name)
                    strings.append(value)
                values.append(tuple(strings))
            else:
                body: Codec = step[2]
                if body.fixed is not None:
                    size = n * body.fixed.size
                    if pos + size > end:
                        raise Malformed(f"{n} {body.name} rows of {body.fixed.size} bytes do not "
                                        f"fit in {end - pos} bytes")
                    values.append(list(body.fixed.iter_unpack(buf[pos:pos + size])))
                    pos += size
                else:
                    rows = []
                    for _ in range(n):
                        row, pos = body._decode(buf, pos)
                        rows.append(body.record._make(row))
                    values.append(rows)
        return values, pos

    def decode_prefix(self, data) -> dict:
        """The leading fixed-size fields by name, from at least prefix.size bytes."""
        if len(data) < self.prefix.size:
            raise Malformed(f"payload of {len(data)} bytes, its first fields take {self.prefix.size}")
        return dict(zip(self._prefix_names, self.prefix.unpack_from(data)))

    def as_dict(self, record) -> dict:
        """A decoded record as nested dicts by field name, reserved fields left out."""
        out = {}
        for f, value in zip(self.fields, record):
            if f.reserved:
                continue
            if f.type == "repeat":
                value = [self._bodies[f.name].as_dict(row) for row in value]
            out[f.name] = value
        return out

    # ---- encoding (the test writer of synthetic files; checks every count) ----
    def encode(self, values) -> bytes:
        out = bytearray()
        self._encode(values, out)
        return bytes(out)

    def _encode(self, values, out: bytearray) -> None:
        if isinstance(values, tuple):      # a decoded record or row
            values = self.as_dict(values)
        given = dict(values)
        for f in self.fields:   # a count field left out is the length of what it counts
            if isinstance(f.count, str) and f.count != "rest" and f.count not in given:
                given[f.count] = len(given[f.name])
        known = {f.name for f in self.fields}
        unknown = set(given) - known
        if unknown:
            raise KeyError(f"{self.name}: no field {', '.join(sorted(unknown))}")
        written: list = []
        for f in self.fields:
            value = 0 if f.reserved else given[f.name]
            count = f.count
            if isinstance(count, str) and count != "rest":
                expect = written[self._index[count]]
            elif isinstance(count, tuple):
                expect = bin(written[self._index[count[1]]]).count("1")
            elif isinstance(count, int):
                expect = count
            else:
                expect = None
            if expect is not None and len(value) != expect:
                raise ValueError(f"{self.name}.{f.name}: {len(value)} values, count says {expect}")
            if f.type in SCALARS:
                char = SCALARS[f.type]
                out += struct.pack(f"<{len(value)}{char}", *value) if count is not None else struct.pack("<" + char, value)
            elif f.type == "bytes":
                out += bytes(value)
            elif f.type == "str":
                for s in (value if count is not None else [value]):
                    b = s.encode("utf-8", errors="surrogateescape") if isinstance(s, str) else bytes(s)
                    out += _U32.pack(len(b)) + b
            else:
                for row in value:
                    self._bodies[f.name]._encode(row, out)
            written.append(value)


def _fixed_char(f: Field) -> str:
    if f.type in SCALARS and f.count is None:
        return SCALARS[f.type]
    if f.type == "bytes" and isinstance(f.count, int):
        return f"{f.count}s"
    return ""


def _need(upto: int, end: int, name: str) -> None:
    if upto > end:
        raise Malformed(f"payload ends at byte {end}, needed {upto}")


def _string(buf: memoryview, pos: int, end: int, name: str):
    _need(pos + 4, end, name)
    (n,) = _U32.unpack_from(buf, pos)
    pos += 4
    _need(pos + n, end, name)
    return bytes(buf[pos:pos + n]).decode("utf-8", errors="surrogateescape"), pos + n


def _resolve(count, values: List, left: int) -> int:
    kind = count[0]
    if kind == "n":
        return count[1]
    if kind == "rest":
        return left
    if kind == "field":
        return values[count[1]]
    return bin(values[count[1]]).count("1")

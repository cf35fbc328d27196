"""The profile format's table (src/format/profile_format.table): constants, enums,
chunk types and payload layouts, parsed into plain data.

The same file generates the C header at build time (src/format/gen_profile_format.py
loads this module by path), so this module imports nothing from heapscope. The table is
read when the package is imported, from the package (installed: CMake copies it there)
or else from the source tree (PYTHONPATH=python, no build step).
"""
from __future__ import annotations

import os
import re
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` several ms of start-up)
    from typing import Dict, List, Optional, Tuple, Union

TABLE_NAME = "profile_format.table"
SCALARS = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i", "i64": "q"}
TYPES = set(SCALARS) | {"str", "bytes"}
PLACES = ("file", "snapshot", "stream")

# A count (Field.count): None (one value), a number, an earlier field's name,
# ("popcount", field) or "rest".


class TableError(Exception):
    pass


class Field(namedtuple("Field", "type name count enum body", defaults=(None, None, ()))):
    """type: a SCALARS key, "str", "bytes" or "repeat"; count: None for one value;
    body: the fields of a repeat."""
    __slots__ = ()

    @property
    def reserved(self) -> bool:
        return self.name == "reserved"


Layout = namedtuple("Layout", "name fields")
# name: the C member name without the prefix ("SIGTERM"); label: what reports print
Member = namedtuple("Member", "value name label")
ChunkType = namedtuple("ChunkType", "id name c_name c_enum place layout")   # place: PLACES


class Enum(namedtuple("Enum", "name c_enum c_prefix members count_name")):
    """count_name: a last C member = number of members ("COUNT"), or None."""
    __slots__ = ()

    def labels(self) -> List[Optional[str]]:
        """Labels indexed by value (values are 0..n-1, or gaps hold None)."""
        out: List[Optional[str]] = [None] * (max(m.value for m in self.members) + 1)
        for m in self.members:
            out[m.value] = m.label
        return out


class Table:
    """consts; enums by name; layouts: the non-chunk ones (header, chunk_header); chunks
    in table order; c_enums: the chunk C enums, in order."""

    def __init__(self, consts: Dict[str, Union[int, str]], enums: Dict[str, Enum],
                 layouts: Dict[str, Layout], chunks: List[ChunkType], c_enums: List[str]):
        self.consts, self.enums, self.layouts = consts, enums, layouts
        self.chunks, self.c_enums = chunks, c_enums

    def chunk(self, name: str) -> ChunkType:
        for c in self.chunks:
            if c.name == name:
                return c
        raise KeyError(name)

    def c_constants(self) -> Dict[str, Union[int, str]]:
        """Every name the C header defines -> its value."""
        out: Dict[str, Union[int, str]] = {"HS_" + k: v for k, v in self.consts.items()}
        for e in self.enums.values():
            for m in e.members:
                out[e.c_prefix + m.name] = m.value
            if e.count_name:
                out[e.c_prefix + e.count_name] = len(e.members)
        for c in self.chunks:
            out[c.c_name] = c.id
        return out


def _count(text: str):
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        return int(text)
    if text == "rest":
        return "rest"
    m = re.fullmatch(r"popcount\s+(\w+)", text)
    if m:
        return ("popcount", m.group(1))
    if re.fullmatch(r"\w+", text):
        return text
    raise TableError(f"bad count [{text}]")


_FIELD = re.compile(r"(\w+)\s+(\w+)(?:\s*\[([^\]]+)\])?(?:\s+enum\s+(\w+))?$")


def parse(text: str) -> Table:
    consts: Dict[str, Union[int, str]] = {}
    enums: Dict[str, Enum] = {}
    layouts: Dict[str, Layout] = {}
    chunks: List[ChunkType] = []
    c_enums: List[str] = []
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if line.strip():
            lines.append((number, len(line) - len(line.lstrip()), line.strip()))

    pos = 0

    def block(indent: int) -> List[tuple]:
        """The lines indented deeper than `indent` that follow."""
        nonlocal pos
        out = []
        while pos < len(lines) and lines[pos][1] > indent:
            out.append(lines[pos])
            pos += 1
        return out

    def fields(body: List[tuple], where: str) -> Tuple[Field, ...]:
        out: List[Field] = []
        i = 0
        while i < len(body):
            number, indent, line = body[i]
            m = _FIELD.match(line)
            if not m:
                raise TableError(f"line {number}: bad field: {line}")
            ftype, name, count, enum = m.group(1), m.group(2), m.group(3), m.group(4)
            j = i + 1
            while j < len(body) and body[j][1] > indent:
                j += 1
            inner = body[i + 1:j]
            if ftype == "repeat":
                if not inner or count is None:
                    raise TableError(f"line {number}: repeat needs [COUNT] and indented fields")
                out.append(Field("repeat", name, _count(count), None, fields(inner, where)))
            else:
                if ftype not in TYPES or inner:
                    raise TableError(f"line {number}: unknown type {ftype!r}")
                if ftype == "bytes" and count is None:
                    raise TableError(f"line {number}: bytes needs [COUNT]")
                out.append(Field(ftype, name, None if count is None else _count(count), enum))
            i = j
        _check_fields(out, where, enums)
        return tuple(out)

    while pos < len(lines):
        number, indent, line = lines[pos]
        pos += 1
        words = line.split()
        if indent:
            raise TableError(f"line {number}: unexpected indentation")
        if words[0] == "const" and len(words) == 3:
            value = words[2]
            consts[words[1]] = value.strip('"') if value.startswith('"') else int(value, 0)
        elif words[0] == "enum" and len(words) in (4, 6):
            count_name = words[5] if len(words) == 6 and words[4] == "count" else None
            members = []
            for n, _i, member in block(0):
                parts = member.split()
                if len(parts) != 3:
                    raise TableError(f"line {n}: enum member is VALUE NAME label")
                members.append(Member(int(parts[0], 0), parts[1], parts[2]))
            enums[words[1]] = Enum(words[1], words[2], words[3], tuple(members), count_name)
        elif words[0] == "layout" and len(words) == 2:
            layouts[words[1]] = Layout(words[1], fields(block(0), words[1]))
        elif words[0] == "chunks" and len(words) == 2:
            c_enums.append(words[1])
        elif words[0] == "chunk" and len(words) in (6, 8) and words[4] == "in":
            if not c_enums:
                raise TableError(f"line {number}: chunk before any 'chunks C_ENUM' line")
            place = words[5]
            if place not in PLACES:
                raise TableError(f"line {number}: place must be one of {', '.join(PLACES)}")
            name = words[2]
            body = block(0)
            if len(words) == 8 and words[6] == "like":
                if body:
                    raise TableError(f"line {number}: a 'like' chunk has no fields of its own")
                layout = Layout(name, _find(chunks, words[7], number).layout.fields)
            else:
                layout = Layout(name, fields(body, name))
            chunks.append(ChunkType(int(words[1]), name, words[3], c_enums[-1], place, layout))
        else:
            raise TableError(f"line {number}: cannot read: {line}")
    table = Table(consts, enums, layouts, chunks, c_enums)
    _check_table(table)
    return table


def _find(chunks: List[ChunkType], name: str, number: int) -> ChunkType:
    for c in chunks:
        if c.name == name:
            return c
    raise TableError(f"line {number}: no chunk {name} above")


def _check_fields(fields: List[Field], where: str, enums: Dict[str, Enum]) -> None:
    """Counts name earlier integer fields of the same record; enums exist."""
    seen: Dict[str, Field] = {}
    for i, f in enumerate(fields):
        count = f.count
        ref = count[1] if isinstance(count, tuple) else count if isinstance(count, str) else None
        if ref == "rest":
            if i != len(fields) - 1:
                raise TableError(f"{where}.{f.name}: [rest] must be the last field")
        elif ref is not None and (ref not in seen or seen[ref].type not in SCALARS):
            raise TableError(f"{where}.{f.name}: count {ref!r} is not an earlier integer field")
        if f.enum is not None and f.enum not in enums:
            raise TableError(f"{where}.{f.name}: no enum {f.enum!r}")
        if f.name in seen and not f.reserved:
            raise TableError(f"{where}: field {f.name!r} twice")
        seen[f.name] = f


def _check_table(table: Table) -> None:
    ids: Dict[int, str] = {}
    c_names: Dict[str, str] = {}
    for c in table.chunks:
        if c.id in ids:
            raise TableError(f"chunk id {c.id} is both {ids[c.id]} and {c.name}")
        ids[c.id] = c.name
    for name in table.c_constants():
        if name in c_names:
            raise TableError(f"C name {name} defined twice")
        c_names[name] = name
    for layout, const in (("header", "HEADER_SIZE"), ("chunk_header", "CHUNK_HEADER_SIZE"),
                          ("header_v1", "HEADER_SIZE_V1"), ("chunk_header_v1", "CHUNK_HEADER_SIZE_V1")):
        if layout.endswith("_v1") and layout not in table.layouts:
            continue   # the older version's layouts are optional (a table of one version)
        size = fixed_size(table.layouts[layout])
        if size != table.consts[const]:
            raise TableError(f"layout {layout} is {size} bytes, {const} says {table.consts[const]}")


def fixed_size(layout: Layout) -> Optional[int]:
    """Bytes of a layout whose fields all have fixed sizes, else None."""
    total = 0
    for f in layout.fields:
        if f.type in SCALARS and f.count is None:
            total += int(f.type[1:]) // 8
        elif f.type == "bytes" and isinstance(f.count, int):
            total += f.count
        else:
            return None
    return total


def locate() -> str:
    here = os.path.dirname(os.path.realpath(__file__))
    source = os.path.join(os.path.dirname(os.path.dirname(here)), "..", "src", "format")
    source = os.path.normpath(source)
    for candidate in (os.path.join(here, TABLE_NAME),       # installed
                      os.path.join(source, TABLE_NAME)):    # source tree
        if os.path.isfile(candidate):
            return candidate
    raise TableError(f"{TABLE_NAME} is missing: neither in {here} (installed package) nor in "
                     f"{source} (source tree); reinstall heapscope")


def load(path=None) -> Table:
    path = path or locate()
    try:
        with open(path, encoding="utf-8") as fh:
            return parse(fh.read())
    except TableError as exc:
        raise TableError(f"{path}: {exc}") from None

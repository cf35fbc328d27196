"""Just enough ELF reading to check a module before symbolizing it: its build-id,
whether it carries DWARF, and where its separate debug file is; and the source file
.symtab names for a symbol (a Fortran main program built without -g).

Separate debug files are looked up the way libdw does by default:
/usr/lib/debug/.build-id/xx/rest.debug, then the .gnu_debuglink name next to the
file, in its .debug/ subdirectory, and under /usr/lib/debug/<dir>/.
"""
import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional

DEBUG_ROOT = "/usr/lib/debug"
_SHT_NOTE = 7
_NT_GNU_BUILD_ID = 3
_SHT_SYMTAB = 2
_STT_FILE = 4


@dataclass
class ElfInfo:
    build_id: str        # hex, "" if none
    has_dwarf: bool      # a .debug_info section (possibly compressed)
    has_symtab: bool     # .symtab or .dynsym: function names without DWARF
    debuglink: str       # .gnu_debuglink file name, "" if none


def _sections(fh):
    """(section headers as tuples, name of a header, is64) of an open ELF file, or None
    when it is not a readable 64- or 32-bit little-endian ELF file; ([], None, is64)
    without sections. Header fields: name, type, flags, addr, offset, size, link, info,
    align, entsize."""
    ident = fh.read(64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[5] != 1:
        return None
    is64 = ident[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", ident, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
        sh = struct.Struct("<IIQQQQIIQQ")
    else:
        shoff, = struct.unpack_from("<I", ident, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x2E)
        sh = struct.Struct("<IIIIIIIIII")
    if shoff == 0 or shnum == 0 or shentsize < sh.size or shstrndx >= shnum:
        return [], None, is64
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)
    sections = [sh.unpack_from(table, i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx]
    fh.seek(strtab[4])
    names = fh.read(strtab[5])

    def name_of(sec):
        end = names.find(b"\0", sec[0])
        return names[sec[0]:end].decode("ascii", "replace")
    return sections, name_of, is64


def read_elf(path: str) -> Optional[ElfInfo]:
    """ElfInfo of the file, None if it is not a readable ELF file."""
    try:
        with open(path, "rb") as fh:
            found = _sections(fh)
            if found is None:
                return None
            sections, name_of, _ = found
            info = ElfInfo("", False, False, "")
            for sec in sections:
                name = name_of(sec)
                if name in (".debug_info", ".zdebug_info"):
                    info.has_dwarf = True
                elif name in (".symtab", ".dynsym"):
                    info.has_symtab = True
                elif name == ".gnu_debuglink":
                    fh.seek(sec[4])
                    raw = fh.read(sec[5])
                    info.debuglink = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
                if sec[1] == _SHT_NOTE and not info.build_id:
                    fh.seek(sec[4])
                    info.build_id = _build_id_in_notes(fh.read(sec[5]))
            return info
    except (OSError, struct.error):
        return None


@lru_cache(maxsize=64)
def source_file_of(path: str, symbol: str) -> str:
    """The source file a local symbol of `path` was compiled from: the STT_FILE entry
    before it in .symtab (what a program built without -g still says of its main
    program); "" when the file has no .symtab or no such symbol."""
    try:
        with open(path, "rb") as fh:
            found = _sections(fh)
            if not found or found[1] is None:
                return ""
            sections, _, is64 = found
            symtab = next((s for s in sections if s[1] == _SHT_SYMTAB), None)
            if symtab is None or symtab[6] >= len(sections):
                return ""
            strtab = sections[symtab[6]]
            fh.seek(strtab[4])
            strings = fh.read(strtab[5])
            fh.seek(symtab[4])
            raw = fh.read(symtab[5])
    except (OSError, struct.error):
        return ""
    entry = struct.Struct("<IBBHQQ" if is64 else "<IIIBBH")   # st_name first; st_info
    wanted = symbol.encode()
    current = ""
    for fields in entry.iter_unpack(raw[:len(raw) - len(raw) % entry.size]):
        name_off = fields[0]
        kind = (fields[1] if is64 else fields[3]) & 0xF
        if kind == _STT_FILE:
            end = strings.find(b"\0", name_off)
            current = strings[name_off:end].decode("utf-8", "replace")
        elif strings.startswith(wanted + b"\0", name_off):
            return current
    return ""


_DW_EH_PE_DATAREL_SDATA4 = 0x3b   # how every toolchain writes .eh_frame_hdr's table


def function_starts(path: str) -> List[int]:
    """Where each function of the file starts (link-time addresses, sorted), from the
    binary search table of .eh_frame_hdr: the call-frame information stripping keeps, so
    a stripped program's frames can still be told apart by function. [] when the file
    has none (or another table encoding)."""
    try:
        with open(path, "rb") as fh:
            found = _sections(fh)
            if not found or found[1] is None:
                return []
            sections, name_of, _ = found
            hdr = next((s for s in sections if name_of(s) == ".eh_frame_hdr"), None)
            if hdr is None:
                return []
            address, offset, size = hdr[3], hdr[4], hdr[5]
            fh.seek(offset)
            data = fh.read(size)
    except (OSError, struct.error):
        return []
    if len(data) < 12 or data[0] != 1 or data[2:4] != bytes([0x03, _DW_EH_PE_DATAREL_SDATA4]):
        return []   # version 1, fde_count as udata4, the table as datarel sdata4 pairs
    count, = struct.unpack_from("<I", data, 8)
    if 12 + 8 * count > len(data):
        return []
    starts = struct.unpack_from(f"<{2 * count}i", data, 12)[0::2]
    return sorted(address + s for s in starts)


def _build_id_in_notes(notes: bytes) -> str:
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, ntype = struct.unpack_from("<III", notes, pos)
        pos += 12
        name = notes[pos:pos + namesz]
        pos += (namesz + 3) & ~3
        desc = notes[pos:pos + descsz]
        pos += (descsz + 3) & ~3
        if ntype == _NT_GNU_BUILD_ID and name.rstrip(b"\0") == b"GNU":
            return desc.hex()
    return ""


def build_id_debug_file(build_id: str) -> Optional[str]:
    """/usr/lib/debug/.build-id/xx/rest.debug if installed (e.g. by a -dbgsym package)."""
    if len(build_id) < 4:
        return None
    path = os.path.join(DEBUG_ROOT, ".build-id", build_id[:2], build_id[2:] + ".debug")
    return path if os.path.isfile(path) else None


def separate_debug_file(path: str, info: ElfInfo) -> Optional[str]:
    """The separate debug file libdw would find for this module, or None."""
    found = build_id_debug_file(info.build_id)
    if found:
        return found
    if info.debuglink:
        directory = os.path.dirname(os.path.realpath(path))
        for candidate in (os.path.join(directory, info.debuglink),
                          os.path.join(directory, ".debug", info.debuglink),
                          os.path.join(DEBUG_ROOT, directory.lstrip("/"), info.debuglink)):
            if os.path.isfile(candidate) and os.path.realpath(candidate) != os.path.realpath(path):
                return candidate
    return None

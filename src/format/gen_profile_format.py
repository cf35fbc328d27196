#!/usr/bin/env python3
"""Generate profile_format_table.h (the C #defines and enums) from profile_format.table.

    gen_profile_format.py TABLE OUTPUT

The table's parser is the Python reader's own (python/heapscope/profile/table.py,
loaded by path: it imports nothing else), so C and Python read one table one way.
OUTPUT is rewritten only when its text changes (no needless rebuilds).
"""
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

PARSER = Path(__file__).resolve().parents[2] / "python" / "heapscope" / "profile" / "table.py"


def load_parser():
    spec = importlib.util.spec_from_file_location("heapscope_profile_table", PARSER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module      # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def layout_text(fields) -> str:
    """A layout on one line: "u32 count | count x { u32 region | ... }"."""
    parts = []
    for f in fields:
        count = f"{f.count[0]}({f.count[1]})" if isinstance(f.count, tuple) else f.count
        if f.type == "repeat":
            parts.append(f"{count} x {{ {layout_text(f.body)} }}")
        elif count is not None:
            parts.append(f"{f.type} {f.name}[{count}]")
        else:
            parts.append(f"{f.type} {f.name}")
    return " | ".join(parts)


def c_literal(value) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    return f"0x{value:X}u" if value > 0xFFFF else f"{value}u"


def render(table) -> str:
    lines = ["/* Generated from profile_format.table by gen_profile_format.py: do not edit.",
             " * Included by profile_format.h (the prose); the table holds every layout. */",
             "#ifndef HEAPSCOPE_PROFILE_FORMAT_TABLE_H",
             "#define HEAPSCOPE_PROFILE_FORMAT_TABLE_H", ""]
    for name, value in table.consts.items():
        lines.append(f"#define HS_{name} {c_literal(value)}")
    for c_enum in table.c_enums:
        lines += ["", f"enum {c_enum} {{"]
        for c in (c for c in table.chunks if c.c_enum == c_enum):
            # wrapped between fields only: a field's words are held by NUL, then restored
            glued = re.sub(r"(\w+) (\w+(?:\[[^]]*\])?)", "\\1\0\\2", layout_text(c.layout.fields))
            text = textwrap.wrap(f"{c.name} ({c.place}): {glued}", 88, subsequent_indent="    ",
                                 break_on_hyphens=False)
            lines.append("    /* " + "\n     * ".join(text).replace("\0", " ") + " */")
            lines.append(f"    {c.c_name} = {c.id},")
        lines.append("};")
    for e in table.enums.values():
        lines += ["", f"enum {e.c_enum} {{"]
        lines += [f"    {e.c_prefix}{m.name} = {m.value},   /* \"{m.label}\" */" for m in e.members]
        if e.count_name:
            lines.append(f"    {e.c_prefix}{e.count_name} = {len(e.members)},")
        lines.append("};")
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv) -> int:
    if len(argv) != 3:
        print("usage: gen_profile_format.py TABLE OUTPUT", file=sys.stderr)
        return 2
    parser = load_parser()
    try:
        text = render(parser.load(Path(argv[1])))
    except parser.TableError as exc:
        print(f"gen_profile_format.py: {exc}", file=sys.stderr)
        return 1
    out = Path(argv[2])
    if not out.exists() or out.read_text() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

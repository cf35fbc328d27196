"""The format described once: the C constants (compiled from src/format/), the Python
ones and the chunk list in profile_format.h's prose all agree with the table."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from heapscope.native import native_dir
from heapscope.profile import format as fmt
from heapscope.profile import table as tablemod

FORMAT_DIR = Path(__file__).resolve().parents[2] / "src" / "format"
PROSE = FORMAT_DIR / "profile_format.h"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """profile_format_table.h, generated as the build generates it."""
    out = tmp_path_factory.mktemp("format") / "profile_format_table.h"
    subprocess.run([sys.executable, str(FORMAT_DIR / "gen_profile_format.py"),
                    str(FORMAT_DIR / "profile_format.table"), str(out)], check=True)
    return out


def defined_names(*headers: Path):
    """Every HS_ name the headers define (#define or enum member), comments removed."""
    names = []
    for h in headers:
        text = re.sub(r"/\*.*?\*/", "", h.read_text(), flags=re.S)
        names += re.findall(r"#define\s+(HS_\w+)\s+\S", text)
        names += re.findall(r"\b(HS_\w+)\s*=", text)
    return names


@pytest.fixture(scope="module")
def c_values(generated, tmp_path_factory):
    """name -> value of every constant, as a C program that includes profile_format.h prints it."""
    names = defined_names(PROSE, generated)
    assert len(names) == len(set(names)), "a name defined twice"
    lines = ["#include <stdio.h>", '#include "profile_format.h"', "int main(void) {"]
    for name in names:
        if name == "HS_MAGIC":
            lines.append(f'    printf("{name} %s\\n", {name});')
        else:
            lines.append(f'    printf("{name} %llu\\n", (unsigned long long){name});')
    lines += ["    return 0;", "}"]
    d = tmp_path_factory.mktemp("format-c")
    (d / "print.c").write_text("\n".join(lines) + "\n")
    res = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
                          "-I", str(FORMAT_DIR), "-I", str(generated.parent),
                          "-o", str(d / "print"), str(d / "print.c")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = subprocess.run([str(d / "print")], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        name, value = line.split(" ", 1)
        values[name] = value if name == "HS_MAGIC" else int(value)
    return values


def test_every_c_constant_has_its_python_twin(c_values):
    assert set(c_values) == set(fmt.TABLE.c_constants())
    for name, value in c_values.items():
        python = getattr(fmt, name[len("HS_"):])
        assert (python.decode() if isinstance(python, bytes) else python) == value, name


def test_the_names_the_recorder_uses_are_all_there(c_values):
    """The C names profile_format.h defined before the table, which the recorder uses."""
    kept = {"HS_MAGIC", "HS_FORMAT_VERSION", "HS_HEADER_SIZE", "HS_CHUNK_HEADER_SIZE",
            "HS_NO_PARENT", "HS_API_COUNT", "HS_TRACK_SUMMARY", "HS_TRACK_TYPES",
            "HS_TRACE_START", "HS_TRACE_EVENTS", "HS_TIMELINE_SAMPLES", "HS_TIMELINE_REGIONS"}
    kept |= {f"HS_CHUNK_{n}" for n in ("PROCESS", "SETTINGS", "SNAPSHOT_BEGIN", "MODULES", "REGIONS",
                                       "SIZE_COUNTS", "API_COUNTS", "STACK_TYPES", "SNAPSHOT_END")}
    kept |= {f"HS_REASON_{n}" for n in ("EXIT", "API", "SIGTERM", "SIGINT", "SIGUSR1", "EXEC", "PERIODIC")}
    kept |= {f"HS_SAMPLE_{n}" for n in ("PERIODIC", "REGION_BEGIN", "REGION_END", "MPI_BEFORE",
                                        "MPI_AFTER", "FINAL")}
    kept |= {f"HS_API_{n.upper()}" for n in fmt.API_NAMES}
    assert kept <= set(c_values)
    assert (c_values["HS_MAGIC"], c_values["HS_HEADER_SIZE"], c_values["HS_NO_PARENT"]) == \
        ("HEAPSCPE", 48, 0xFFFFFFFF)


def test_the_build_uses_the_same_generated_header(generated):
    """The header a build tree holds is today's table's (no stale generation)."""
    built = native_dir().parent / "src" / "format" / "generated" / "profile_format_table.h"
    if built.exists():
        assert built.read_text() == generated.read_text()


def test_prose_lists_every_chunk_type():
    rows = re.findall(r"^ \*\s+(\d+)\s+([A-Z_]+)\s+(file|snapshot|stream)\s", PROSE.read_text(), flags=re.M)
    assert {int(i): (name, place) for i, name, place in rows} == {
        c.id: (c.name, c.place) for c in fmt.TABLE.chunks}
    assert len(rows) == len(fmt.TABLE.chunks)


def test_labels_spell_their_c_names():
    """What reports print is the C member name in lower case ("frame-pointers" for
    FRAME_POINTERS), so a label cannot drift from its constant."""
    for enum in fmt.TABLE.enums.values():
        for m in enum.members:
            assert m.label.replace("-", "_") == m.name.lower(), (enum.name, m)


def test_chunk_ids_sizes_and_core_set():
    assert fmt.CHUNK_NAMES == {c.id: c.name for c in fmt.TABLE.chunks}
    assert fmt.CORE_CHUNKS == set(range(1, 10))
    assert fmt.HEADER.fixed.size == fmt.HEADER_SIZE and fmt.CHUNK_HEADER.fixed.size == fmt.CHUNK_HEADER_SIZE
    assert fmt.chunk_name(fmt.TRACK_TYPES) == "TRACK_TYPES" and fmt.chunk_name(99) == "type-99"


TABLE_OK = """
const MAGIC "HEAPSCPE"
const HEADER_SIZE 8
const CHUNK_HEADER_SIZE 4
layout header
  u64 a
layout chunk_header
  u32 type
chunks hs_chunk_type
chunk 1 ONE HS_CHUNK_ONE in file
  u32 n
  u64 values [n]
"""


@pytest.mark.parametrize("change, message", [
    (("u64 values [n]", "u64 values [m]"), "count 'm' is not an earlier integer field"),
    (("  u32 n\n  u64 values [n]", "  u64 values [n]\n  u32 n"), "count 'n' is not an earlier"),
    (("u32 n", "str n"), "count 'n' is not an earlier integer field"),
    (("u32 n", "u24 n"), "unknown type 'u24'"),
    (("HEADER_SIZE 8", "HEADER_SIZE 16"), "layout header is 8 bytes, HEADER_SIZE says 16"),
    (("chunk 1 ONE HS_CHUNK_ONE in file", "chunk 1 ONE HS_CHUNK_ONE in heap"), "place must be one of"),
    (("in file\n", "in file\n  u32 m\n  bytes rest_of [rest]\n  u32 after\n"), "[rest] must be the last field"),
])
def test_table_mistakes_are_refused(change, message):
    assert tablemod.parse(TABLE_OK).chunk("ONE").id == 1
    with pytest.raises(tablemod.TableError, match=re.escape(message)):
        tablemod.parse(TABLE_OK.replace(*change))


def test_table_refuses_a_chunk_id_twice():
    twice = TABLE_OK + "chunk 1 TWO HS_CHUNK_TWO in file\n  u32 n\n"
    with pytest.raises(tablemod.TableError, match="chunk id 1 is both ONE and TWO"):
        tablemod.parse(twice)

"""The reader's constants agree with the format contract, src/format/profile_format.h."""
import re
from pathlib import Path

from heapscope.profile import format as fmt

HEADER = Path(__file__).resolve().parents[2] / "src" / "format" / "profile_format.h"


def c_constants():
    text = HEADER.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    values = {}
    for name, value in re.findall(r"#define\s+(HS_\w+)\s+(\"[^\"]*\"|0x[0-9A-Fa-f]+u?|\d+u?)", text):
        if value.startswith('"'):
            values[name] = value.strip('"')
        else:
            values[name] = int(value.rstrip("u"), 0)
    for name, value in re.findall(r"\b(HS_\w+)\s*=\s*(\d+)\s*,", text):
        values[name] = int(value)
    return values


def test_header_constants_match():
    c = c_constants()
    assert c["HS_MAGIC"].encode() == fmt.MAGIC
    assert c["HS_FORMAT_VERSION"] == fmt.FORMAT_VERSION
    assert c["HS_HEADER_SIZE"] == fmt.HEADER_SIZE
    assert c["HS_CHUNK_HEADER_SIZE"] == fmt.CHUNK_HEADER_SIZE
    assert c["HS_NO_PARENT"] == fmt.NO_PARENT


def test_chunk_types_match():
    c = c_constants()
    chunks = {k[len("HS_CHUNK_"):]: v for k, v in c.items()
              if k.startswith("HS_CHUNK_") and k != "HS_CHUNK_HEADER_SIZE"}
    assert len(chunks) == 9
    for name, value in chunks.items():
        assert getattr(fmt, "CHUNK_" + name) == value, name
        assert fmt.CHUNK_NAMES[value] == name
    assert fmt.FIRST_EXTENSION_CHUNK == max(chunks.values()) + 1


def test_reasons_match():
    c = c_constants()
    reasons = {k[len("HS_REASON_"):]: v for k, v in c.items() if k.startswith("HS_REASON_")}
    assert len(reasons) == len(fmt.REASON_NAMES) == 7
    for name, value in reasons.items():
        assert getattr(fmt, "REASON_" + name) == value
        assert fmt.REASON_NAMES[value] == name.lower()


def test_api_functions_match():
    c = c_constants()
    apis = {k[len("HS_API_"):]: v for k, v in c.items() if k.startswith("HS_API_")}
    assert apis.pop("COUNT") == fmt.API_COUNT == len(fmt.API_NAMES)
    assert len(apis) == fmt.API_COUNT
    for name, value in apis.items():
        assert getattr(fmt, "API_" + name) == value
        assert fmt.API_NAMES[value] == name.lower()

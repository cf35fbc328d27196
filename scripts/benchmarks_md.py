"""BENCHMARKS.md sections a benchmark script writes itself: the text between its
BEGIN and END marker lines is replaced, or the section is appended when the file has
none yet. Shared by the scripts that regenerate their own table (`--update FILE`)."""
import re
from pathlib import Path


def update_section(path: str, begin: str, end: str, text: str) -> None:
    """Put `text` (which starts with `begin` and ends with `end`) into the file at `path`."""
    doc = Path(path).read_text()
    if begin in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: text, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + text + "\n"
    Path(path).write_text(doc)

"""scripts/bench_splice.py: generated tables go between their marker lines, nothing else changes."""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_splice.py"


def splice(doc, name, fragment):
    return subprocess.run([sys.executable, str(SCRIPT), str(doc), name, str(fragment)],
                          capture_output=True, text=True)


def test_replaces_only_between_markers(tmp_path):
    doc, frag = tmp_path / "B.md", tmp_path / "t.md"
    doc.write_text("# Bench\nintro\n<!-- bench:allocators:begin -->\nold table\n"
                   "<!-- bench:allocators:end -->\nafter\n<!-- bench:profilers:begin -->\nkeep\n"
                   "<!-- bench:profilers:end -->\n")
    frag.write_text("| a | b |\n|---|---|\n| 1 | 2 |\n\n")
    res = splice(doc, "allocators", frag)
    assert res.returncode == 0 and "updated" in res.stdout
    assert doc.read_text() == (
        "# Bench\nintro\n<!-- bench:allocators:begin -->\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        "<!-- bench:allocators:end -->\nafter\n<!-- bench:profilers:begin -->\nkeep\n"
        "<!-- bench:profilers:end -->\n")
    # idempotent
    splice(doc, "allocators", frag)
    assert doc.read_text().count("| 1 | 2 |") == 1


def test_without_markers_the_document_is_untouched(tmp_path):
    doc, frag = tmp_path / "B.md", tmp_path / "t.md"
    doc.write_text("# Bench\nno markers\n")
    frag.write_text("table\n")
    res = splice(doc, "allocators", frag)
    assert res.returncode == 0 and str(frag) in res.stdout
    assert doc.read_text() == "# Bench\nno markers\n"


def test_wrong_usage_exits_2(tmp_path):
    res = subprocess.run([sys.executable, str(SCRIPT), "only-one"], capture_output=True, text=True)
    assert res.returncode == 2 and "bench_splice.py DOC NAME FRAGMENT" in res.stderr

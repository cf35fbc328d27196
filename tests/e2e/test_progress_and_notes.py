"""Progress bars on a terminal only (a pseudo-terminal stands for one), never in a pipe or
with --quiet; repeated notes said once with a count, listed with --verbose
(commands/progress.py, render/notes.py)."""
import os
import pty
import subprocess
import sys

import pytest

from helpers.known_programs import quiet_libraries


@pytest.fixture(scope="module")
def three_libraries(native, heapscope, tmp_path_factory):
    """A recording whose 16-byte stacks pass through three libraries without debug info."""
    tmp = tmp_path_factory.mktemp("quiet")
    program = quiet_libraries(tmp)
    out = tmp / "prof"
    heapscope("record", "-o", out, "--sizes", "16", "--", program)
    heapscope("record", "-o", tmp / "tracked", "--track", "--sizes", "16", "--", program)
    return out


def on_terminal(*args):
    """Run heapscope with its standard error on a pseudo-terminal (stdout a pipe), bars
    shown at once; returns (exit status, stdout, everything written to the terminal)."""
    master, slave = pty.openpty()
    env = dict(os.environ, HEAPSCOPE_PROGRESS_DELAY="0", COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "heapscope", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:   # EIO: the other side closed
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read()
    rc = proc.wait(timeout=120)
    os.close(master)
    return rc, out.decode(), seen.decode(errors="replace")


def test_progress_shows_on_a_terminal(three_libraries):
    rc, out, terminal = on_terminal("stacks", three_libraries, "--size", "16")
    assert rc == 0 and "Stack trace types for size 16" in out
    assert "heapscope: reading" in terminal and "heapscope: symbolizing" in terminal
    # the bars are erased; the result on stdout has none of them
    assert "symbolizing" not in out and "\r" not in out


def test_no_progress_with_quiet_or_in_a_pipe(heapscope, three_libraries):
    rc, out, terminal = on_terminal("callgraph", three_libraries, "--size", "16", "--quiet")
    assert rc == 0 and "Fix targets" in out
    assert "heapscope: reading" not in terminal and "symbolizing" not in terminal
    piped = heapscope("callgraph", three_libraries, "--size", "16",
                      env={"HEAPSCOPE_PROGRESS_DELAY": "0"})
    assert "reading" not in piped.stderr and "symbolizing" not in piped.stderr
    assert "\r" not in piped.stderr


def test_repeated_notes_collapse_and_verbose_lists_them(heapscope, three_libraries):
    res = heapscope("callgraph", three_libraries, "--size", "16")
    notes = [line for line in res.stderr.splitlines() if "no debug info" in line]
    assert len(notes) == 1, res.stderr
    assert "no debug info for 3 libraries (libquiet1.so, libquiet2.so, libquiet3.so" in notes[0]
    assert "--verbose lists them" in notes[0]
    res = heapscope("callgraph", three_libraries, "--size", "16", "--verbose")
    listed = sorted(line for line in res.stderr.splitlines() if "no debug info" in line)
    assert len(listed) == 3 and all(f"libquiet{n}.so;" in listed[n - 1] for n in (1, 2, 3))
    # the stacks report's header too
    text = heapscope("stacks", three_libraries, "--size", "16").stdout
    assert sum("no debug info" in line for line in text.splitlines()) == 1
    text = heapscope("stacks", three_libraries, "--size", "16", "--verbose").stdout
    assert sum("no debug info" in line for line in text.splitlines()) == 3


@pytest.mark.parametrize("report", ["lifetimes", "temporaries", "peak", "leaks"])
def test_tracking_reports_say_one_line_per_kind_of_note(heapscope, three_libraries, report):
    tracked = three_libraries.parent / "tracked"
    text = heapscope(report, tracked).stdout
    notes = [line for line in text.splitlines() if "no debug info" in line]
    assert len(notes) == 1 and notes[0].lstrip().startswith(
        "note      no debug info for 3 libraries (libquiet1.so, libquiet2.so, libquiet3.so; "
        "--verbose lists them)"), text
    text = heapscope(report, tracked, "--verbose").stdout
    listed = sorted(line for line in text.splitlines() if "no debug info" in line)
    assert len(listed) == 3 and all(f"libquiet{n}.so;" in listed[n - 1] for n in (1, 2, 3))

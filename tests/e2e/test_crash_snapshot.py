"""A program that dies of a fatal signal leaves its counts: the recorder's crash handler
writes a final snapshot (reason "crash", the signal in its ENDING chunk), then the signal
does what it would have done, so the exit status is unchanged (tests/programs/crash.c:
5 blocks of 24 bytes and 3 of 1000 bytes before it dies)."""
import signal
import subprocess

import pytest

from heapscope.profile import format as fmt
from heapscope.profile import framing, read_profile

KNOWN = {24: 5, 1000: 3}


def _counts(p):
    return {size: n for (_region, size), n in p.size_counts.items() if size in KNOWN}


@pytest.mark.parametrize("mode,sig", [("segv", signal.SIGSEGV), ("abort", signal.SIGABRT),
                                      ("fpe", signal.SIGFPE), ("overflow", signal.SIGSEGV)])
def test_crash_leaves_a_snapshot_and_the_same_status(heapscope, build, tmp_path, mode, sig):
    program = build("crash.c")
    plain = subprocess.run([program, mode], capture_output=True)
    assert plain.returncode == -sig            # what the program does on its own
    res = heapscope("record", "-o", tmp_path, "--", program, mode, check=False)
    assert res.returncode == 128 + sig, res.stderr   # record: 128+N, as the shell says
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    assert p.snapshot_reason == "crash" and p.complete
    assert _counts(p) == KNOWN
    assert p.ending.kind == "crash" and p.ending.signal == sig
    assert p.ending.signal_name == sig.name
    if mode == "abort":
        assert p.ending.si_code <= 0 and p.ending.fault_address == 0   # raised, not a fault
    else:
        assert p.ending.si_code > 0
    if mode == "segv":
        assert p.ending.fault_address == 0     # the null pointer written through
    frame = framing.parse(path.read_bytes(), str(path))
    [ending] = [c for c in frame.chunks if c.type == fmt.ENDING]
    record = fmt.CODECS[fmt.ENDING].decode(ending.payload, whole=True)   # no byte left over
    assert fmt.CODECS[fmt.ENDING].encode(record) == bytes(ending.payload)
    report = heapscope("report", path).stdout
    assert f"crashed: {sig.name}" in report


def test_the_programs_own_handler_runs_after_the_snapshot(heapscope, build, tmp_path):
    program = build("crash.c")
    res = heapscope("record", "-o", tmp_path, "--", program, "handled", check=False)
    assert res.returncode == 42 and "own handler" in res.stderr   # its handler _exit(42)s
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    # its _exit wrote the last snapshot: still the crash's, with the counts
    assert p.snapshot_reason == "crash" and p.ending.signal == signal.SIGSEGV
    assert _counts(p) == KNOWN


def test_an_ignored_signal_sent_by_kill_is_no_crash(heapscope, build, tmp_path):
    program = build("crash.c")
    res = heapscope("record", "-o", tmp_path, "--", program, "ignored")
    assert res.returncode == 0 and res.stdout == "survived\n"
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    assert p.snapshot_reason == "exit" and p.ending is None


def test_a_program_that_recovers_from_its_faults_is_no_crash(heapscope, build, tmp_path):
    """A write barrier's 100 faults, each repaired by the program's handler: the program
    runs on and exits; one crash snapshot at the first fault, none after, and the last
    snapshot is the exit's, with no ENDING."""
    program = build("crash.c")
    res = heapscope("record", "-o", tmp_path, "--", program, "recovers")
    assert res.stdout == "faults 100\n"
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    assert p.snapshot_reason == "exit" and p.ending is None
    assert p.snapshot_seq == 1          # the first fault's snapshot (0), then the exit's
    assert _counts(p) == KNOWN

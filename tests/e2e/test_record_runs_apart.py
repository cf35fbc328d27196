"""Runs kept apart and signals to the right process: `record -o DIR` refuses a directory
that holds another run's profiles (unless --append); signals sent to `heapscope record`
reach the program (tests/programs/rec_signals.c "wait": 10010 bytes once, then waits);
a killed `record` does not leave the program running (PR_SET_PDEATHSIG: SIGTERM)."""
import os
import signal
import subprocess
import sys
import time

import pytest

from heapscope.profile import read_profile


def test_output_directory_with_profiles_is_refused(heapscope, build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path, "--", program, "_exit", check=False)
    [first] = tmp_path.glob("*.hsp")
    res = heapscope("record", "-o", tmp_path, "--", program, "_exit", check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "already holds 1 profile" in res.stderr and "--append" in res.stderr
    assert list(tmp_path.glob("*.hsp")) == [first]          # nothing was run
    res = heapscope("record", "--append", "-o", tmp_path, "--", program, "_exit", check=False)
    assert res.returncode == 3 and len(list(tmp_path.glob("*.hsp"))) == 2
    # one record per rank of a job (srun/mpirun heapscope record -o DIR): the ranks share DIR
    res = heapscope("record", "-o", tmp_path, "--", program, "_exit", check=False,
                    env={"PMI_RANK": "1"})
    assert res.returncode == 3 and len(list(tmp_path.glob("*.hsp"))) == 3
    # a directory with other files, or none yet, is fine
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    assert heapscope("record", "-o", other, "--", program, "_exit", check=False).returncode == 3


def _start(program, out):
    proc = subprocess.Popen([sys.executable, "-m", "heapscope", "record", "-o", str(out), "--",
                             str(program), "wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "ready\n"
    return proc


def _child_of(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        [child] = f.read().split()
    return int(child)


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM,
                                 signal.SIGINT])
def test_signals_to_record_reach_the_program(build, tmp_path, sig):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    proc = _start(program, tmp_path)
    if sig == signal.SIGUSR1:
        proc.send_signal(sig)              # the program dumps and goes on
        [path] = tmp_path.glob("*.hsp")
        for _ in range(500):
            if path.stat().st_size > 0 and _has_snapshot(path):
                break
            time.sleep(0.02)
        p = read_profile(path)
        assert p.snapshot_reason == "sigusr1" and p.size_counts[("(none)", 10010)] == 1
        assert proc.poll() is None         # record and the program go on
        sig = signal.SIGTERM
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err     # the program died of it, record says so
    if sig in (signal.SIGTERM, signal.SIGINT):   # the recorder's dump signals
        [path] = tmp_path.glob("*.hsp")
        assert read_profile(path).snapshot_reason == sig.name.lower()


def _has_snapshot(path):
    try:
        read_profile(path)
        return True
    except Exception:
        return False


def test_a_killed_record_does_not_leave_the_program_running(build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    proc = _start(program, tmp_path)
    child = _child_of(proc.pid)
    proc.kill()                                 # SIGKILL: record cannot forward anything
    proc.wait(timeout=30)
    for _ in range(500):
        if not os.path.exists(f"/proc/{child}") or _zombie(child):
            break
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{child}") or _zombie(child)
    [path] = tmp_path.glob("*.hsp")
    p = read_profile(path)                      # its recorder dumped on the SIGTERM
    assert p.snapshot_reason == "sigterm" and p.size_counts[("(none)", 10010)] == 1


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True

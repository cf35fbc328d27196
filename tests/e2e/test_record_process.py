"""The recorder across a process's life: fork + exec, dlopen, signals, exit codes,
and `heapscope record`'s own errors; real programs (python3, g++) under it."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from heapscope.profile import read_profile

from conftest import PROGRAMS, require


def profiles(out: Path):
    return {f.name: read_profile(f) for f in sorted(out.glob("heapscope.*.hsp"))}


def sizes(p):
    return {(r, s): n for (r, s), n in p.size_counts.items() if s >= 9000 and s < 11000}


@pytest.mark.parametrize("mode", ["inherit-env", "clean-env"])
def test_fork_and_exec_children_write_their_own_files(heapscope, build, tmp_path, mode):
    program = build("rec_forkexec.c")
    res = heapscope("record", "-o", tmp_path, "--", program, mode)
    assert "3 profiles" in res.stderr
    files = profiles(tmp_path)
    assert len(files) == 3
    child_pid = int(res.stdout.split()[1])  # "child <pid> exited 0"
    by_pid = {}
    for name, p in files.items():
        by_pid.setdefault(p.pid, []).append((name, p))
    assert sorted(len(v) for v in by_pid.values()) == [1, 2]
    [(_, parent)] = next(v for pid, v in by_pid.items() if pid != child_pid)
    assert sizes(parent) == {("(none)", 9009): 2}
    assert parent.snapshot_reason == "exit"
    # the forked child: only what it allocated after the fork, dumped before exec
    forked = next(p for _, p in by_pid[child_pid] if p.snapshot_reason == "exec")
    execd = next(p for _, p in by_pid[child_pid] if p.snapshot_reason == "exit")
    assert forked.ppid == parent.pid and execd.ppid == parent.pid
    assert sizes(forked) == {("(none)", 9119): 3}
    assert sizes(execd) == {("(none)", 9229): 4}
    assert execd.cmdline[1:] == ["exec"]
    assert execd.settings == parent.settings
    names = {name for name, _ in by_pid[child_pid]}
    assert any(name.endswith(f".{child_pid}.1.hsp") for name in names)  # same pid: next name


@pytest.mark.parametrize("close", [False, True])
def test_dlopened_library_is_counted_and_mapped(heapscope, build, tmp_path, close):
    program = build("rec_dlopen.c", "-ldl")
    lib = build("rec_dlib.c", "-shared", "-fPIC", name="librec_dlib.so")
    heapscope("record", "-o", tmp_path, "--sizes", "9339", "--", program, lib,
              *(["close"] if close else []))
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    assert sizes(p) == {("(none)", 9339): 5}
    [module] = [m for m in p.modules if m.path == str(lib)]  # also once unloaded
    assert len(module.build_id) == 40 and module.ranges
    res = heapscope("stacks", path, "--size", "9339", "--format", "json")
    [group] = json.loads(res.stdout)["groups"]
    [stack] = group["stack_types"]
    assert stack["count"] == 5 and stack["frames"][0]["function"] == "rec_dlib_work"


@pytest.mark.parametrize("mode,sig", [("term", signal.SIGTERM), ("int", signal.SIGINT)])
def test_kill_signal_leaves_a_readable_profile_and_the_signal_status(heapscope, build, tmp_path,
                                                                     mode, sig):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    res = heapscope("record", "-o", tmp_path, "--", program, mode, check=False)
    assert res.returncode == 128 + sig
    [p] = profiles(tmp_path).values()
    assert p.complete and p.snapshot_reason == "sig" + mode
    assert sizes(p) == {("(none)", 10010): 3}


def test_sigusr1_dumps_and_the_program_continues(heapscope, build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    res = heapscope("record", "-o", tmp_path, "--", program, "usr1", check=False)
    assert res.returncode == 128 + signal.SIGKILL  # no exit dump: the SIGUSR1 one is last
    [p] = profiles(tmp_path).values()
    assert p.snapshot_reason == "sigusr1" and sizes(p) == {("(none)", 10010): 3}


def test_programs_own_handler_wins(heapscope, build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    res = heapscope("record", "-o", tmp_path, "--", program, "handler", check=False)
    assert res.returncode == 7 and "handled=1" in res.stdout
    [p] = profiles(tmp_path).values()
    assert p.snapshot_reason == "exit" and sizes(p) == {("(none)", 10010): 2}


def test_heapscope_dump_writes_a_snapshot(heapscope, build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    res = heapscope("record", "-o", tmp_path, "--", program, "dump", check=False)
    assert res.returncode == 128 + signal.SIGKILL
    [p] = profiles(tmp_path).values()
    assert p.snapshot_reason == "api" and sizes(p) == {("(none)", 10010): 5}


def test_underscore_exit_dumps(heapscope, build, tmp_path):
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    res = heapscope("record", "-o", tmp_path, "--", program, "_exit", check=False)
    assert res.returncode == 3
    [p] = profiles(tmp_path).values()
    assert p.snapshot_reason == "exit" and sizes(p) == {("(none)", 10010): 6}


def test_sigterm_sent_to_heapscope_reaches_the_program(build, tmp_path):
    """A scheduler's SIGTERM to `heapscope record` is passed on; the program dumps."""
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    proc = subprocess.Popen([sys.executable, "-m", "heapscope", "record", "-o", str(tmp_path),
                             "--", str(program), "wait"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"  # the program waits in pause()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    [p] = profiles(tmp_path).values()
    assert p.snapshot_reason == "sigterm" and sizes(p) == {("(none)", 10010): 1}


def test_exit_code_is_the_programs(heapscope, tmp_path):
    res = heapscope("record", "-o", tmp_path, "--", "sh", "-c", "exit 42", check=False)
    assert res.returncode == 42
    [p] = profiles(tmp_path).values()  # dash's exit is _exit(): dumped all the same
    assert p.complete and p.cmdline == ["sh", "-c", "exit 42"]


def test_static_program_runs_and_is_reported_unrecorded(heapscope, build, tmp_path):
    program = build("rec_forkexec.c", "-static", name="rec_static")
    res = heapscope("record", "-o", tmp_path, "--", program, "exec", check=False)
    assert res.returncode == 0
    assert "no profile written" in res.stderr.splitlines()[-1]
    assert not list(tmp_path.glob("*.hsp"))


def test_default_output_directory_is_new_per_run(heapscope, tmp_path):
    heapscope("record", "--", "true", cwd=tmp_path)
    heapscope("record", "--", "true", cwd=tmp_path)
    assert len(profiles(tmp_path / "heapscope-true")) == 1
    assert len(profiles(tmp_path / "heapscope-true.1")) == 1


def one_line_error(res, code, text):
    assert res.returncode == code, res.stderr
    lines = res.stderr.strip().splitlines()
    assert text in lines[-1] and lines[-1].startswith("heapscope"), res.stderr
    assert "Traceback" not in res.stderr


def test_errors_are_one_clear_line(heapscope, tmp_path):
    one_line_error(heapscope("record", "--", "no-such-program-xyz", check=False),
                   127, "program not found in PATH: no-such-program-xyz")
    one_line_error(heapscope("record", "--", str(tmp_path / "missing"), check=False),
                   127, "program not found")
    one_line_error(heapscope("record", check=False), 2, "no program to record")
    one_line_error(heapscope("record", "--sizes", "12,x", "--", "true", check=False),
                   2, "bad --sizes '12,x'")
    one_line_error(heapscope("record", "--sizes", "20-10", "--", "true", check=False),
                   2, "bad --sizes range")
    one_line_error(heapscope("record", "--sizes", "1 2", "--", "true", check=False),
                   2, "bad --sizes '1 2'")   # not 12: record used to drop the blank
    one_line_error(heapscope("record", "--depth", "0", "--", "true", check=False),
                   2, "--depth must be 1..256")
    one_line_error(heapscope("record", "--bogus", "--", "true", check=False),
                   2, "unrecognized arguments: --bogus")
    one_line_error(heapscope("record", "--allocator", "nope", "--", "true", check=False),
                   2, "invalid choice: 'nope'")
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(heapscope("record", "-o", blocker / "sub", "--", "true", check=False),
                   2, "cannot create output directory")


def test_program_that_cannot_be_run_says_why(heapscope, tmp_path):
    """Something is there but cannot be run: the shell's 126 and what it is, not 127
    "not found"; nothing is recorded and no output directory is made."""
    plain = tmp_path / "data.txt"
    plain.write_text("not a program\n")
    plain.chmod(0o644)
    script = tmp_path / "no-interpreter"
    script.write_text("echo hello\n")   # executable, but no #! line: the kernel refuses it
    script.chmod(0o755)
    directory = tmp_path / "dir"
    directory.mkdir()
    fifo = tmp_path / "fifo"   # not /dev/null: a regular file in some containers
    os.mkfifo(fifo)
    cases = [(directory, 126, f"heapscope: error: {directory} is a directory, not a program"),
             (plain, 126, f"heapscope: error: program is not executable: {plain} (no execute permission)"),
             (fifo, 126, f"heapscope: error: {fifo} is not a regular file, not a program"),
             (tmp_path / "missing", 127, f"heapscope: error: program not found: {tmp_path / 'missing'}"),
             (script, 126, f"heapscope: error: cannot run {script}: Exec format error")]
    for program, code, line in cases:
        for cmd in (["record", "-o", tmp_path / "out"], ["run", "--allocator", "glibc"]):
            res = heapscope(*cmd, "--", program, check=False)
            assert (res.returncode, res.stderr.strip()) == (code, line), (cmd, program, res.stderr)
            assert res.stdout == ""
        if program != script:   # the exec itself fails only once record has made the directory
            assert not (tmp_path / "out").exists()


def test_unusable_output_dir_in_the_environment_warns_and_runs(native, tmp_path):
    """Without the CLI (LD_PRELOAD + HEAPSCOPE_OUTPUT_DIR): one warning, program unharmed."""
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(tmp_path / "no" / "such" / "dir"))
    res = subprocess.run(["sh", "-c", "echo hello; exit 5"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 5 and res.stdout == "hello\n"
    assert res.stderr.count("heapscope:") == 1 and "not recording" in res.stderr


def test_python_script_under_the_recorder(heapscope, tmp_path):
    script = tmp_path / "work.py"
    script.write_text("d = {i: str(i) * (i % 50) for i in range(20000)}\nprint(len(d))\n")
    res = heapscope("record", "-o", tmp_path / "out", "--", sys.executable, script)
    assert res.stdout.strip() == "20000"
    [p] = profiles(tmp_path / "out").values()
    assert p.complete
    assert sum(p.size_counts.values()) > 1000
    assert len({s for _, s in p.size_counts}) > 50
    assert p.api_counts[("(none)", "free")] > 1000


def test_gxx_compiles_under_the_recorder(heapscope, tmp_path):
    require("g++")
    src = tmp_path / "hello.cpp"
    src.write_text("#include <map>\n#include <string>\n#include <cstdio>\n"
                   "int main() { std::map<std::string, int> m; m[\"a\"] = 1;"
                   " std::printf(\"%zu\\n\", m.size()); }\n")
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", "g++", "-O1", "-o", tmp_path / "hello", src)
    assert subprocess.run([tmp_path / "hello"], capture_output=True, text=True).stdout == "1\n"
    files = profiles(out)
    assert len(files) >= 3  # g++ driver, cc1plus, as, collect2/ld ... each its own file
    exes = {Path(p.exe).name for p in files.values()}
    assert "cc1plus" in exes
    cc1 = next(p for p in files.values() if Path(p.exe).name == "cc1plus")
    assert cc1.complete and sum(cc1.size_counts.values()) > 10000
    assert len({s for _, s in cc1.size_counts}) > 100


def test_vfork_child_leaves_the_parents_file_alone(heapscope, build, tmp_path):
    program = build("rec_forkexec.c")
    res = heapscope("record", "-o", tmp_path, "--", program, "vfork")
    child_pid = int(res.stdout.split()[1])
    files = profiles(tmp_path)
    assert len(files) == 2
    [parent] = [p for p in files.values() if p.pid != child_pid]
    [execd] = [p for p in files.values() if p.pid == child_pid]
    assert parent.snapshot_seq == 0 and parent.snapshot_reason == "exit"  # its only snapshot
    assert sizes(parent) == {("(none)", 9009): 2}
    assert sizes(execd) == {("(none)", 9229): 4}


def test_forked_child_starts_with_empty_stack_tables(heapscope, build, tmp_path):
    program = build("rec_forkexec.c")
    heapscope("record", "-o", tmp_path, "--sizes", "9000-9300", "--", program, "inherit-env")
    stacks = {p.snapshot_reason + ("-parent" if any(s == 9009 for _, s in p.size_counts) else ""):
              sorted((t.size, t.count) for t in p.stack_types) for p in profiles(tmp_path).values()}
    assert stacks == {"exit-parent": [(9009, 2)], "exec": [(9119, 3)], "exit": [(9229, 4)]}


def test_mpi_ranks_write_rank_named_files(heapscope, tmp_path):
    require("mpicc", "mpirun")
    program = tmp_path / "rec_mpi"
    subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "rec_mpi.c"], check=True)
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", "mpirun", "--oversubscribe", "--allow-run-as-root",
              "-np", "2", program)
    files = profiles(out)
    ranks = {p.rank: (name, p) for name, p in files.items() if p.exe == str(program)}
    assert sorted(ranks) == [0, 1]
    for rank, (name, p) in ranks.items():
        assert f".r{rank}." in name and name.endswith(f".{p.pid}.hsp")
        assert p.size_counts[("(none)", 14014)] == rank + 1
    assert all(p.complete for p in files.values())  # launcher and its forks too


def test_file_cut_short_reads_up_to_the_last_complete_snapshot(heapscope, build, tmp_path):
    """A crash while dumping: the previous snapshot stands."""
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path, "--", program, "dump-exit")
    [path] = tmp_path.glob("heapscope.*.hsp")
    whole = read_profile(path)
    assert whole.snapshot_reason == "exit" and sizes(whole) == {("(none)", 10010): 6}
    data = path.read_bytes()
    path.write_bytes(data[:-20])  # the end of the exit snapshot is lost
    cut = read_profile(path)
    assert cut.snapshot_reason == "api" and sizes(cut) == {("(none)", 10010): 5}
    assert cut.warnings


def test_fork_leaves_the_parents_file_and_its_room_alone(heapscope, build, tmp_path):
    """A child let go of the parent's file with an ftruncate to the eof it inherited: the
    parent's reserved room was given back under it (its blocks), and with a parent that
    wrote after the fork its newer chunks were cut, then zeros put back by a later child
    (mpirun's profile under `record --track --sizes all`, one fork per rank)."""
    program = build("fork_room.c")
    res = heapscope("record", "-o", tmp_path, "--", program)
    size, blocks, size_after, blocks_after = map(int, res.stdout.split())
    assert blocks * 512 > size            # room is reserved ahead of the data
    assert (size_after, blocks_after) == (size, blocks)
    files = profiles(tmp_path)
    assert len(files) == 2 and all(p.complete for p in files.values())


def test_program_inherits_the_descriptors_record_was_given(tmp_path):
    """`record` hands the program its descriptors as they are, as the program would have
    them without heapscope: a launcher's (srun's PMI_FD), a shell's redirection (3>file)."""
    target = tmp_path / "fd3.txt"
    shell = 'exec 3>"$1"; exec "$2" -m heapscope record -o "$3" -- sh -c "echo through-fd-3 >&3"'
    res = subprocess.run(["sh", "-c", shell, "sh", target, sys.executable, tmp_path / "out"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert target.read_text() == "through-fd-3\n"

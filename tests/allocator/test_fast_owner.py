"""A thread pointer that glibc gives a later thread (`fast_owner.c`): free's fast path once
told a thread's own blocks by it (a page's fast owner); it now puts every block on the
freeing thread's cache, whoever owns it, and these programs check that a later thread on
the same pointer still frees another heap's blocks as that heap's (its remote frees, sent
home), and that every thread's frees are in its figures as they happen."""
import os
import subprocess

N, LATE = 1000, 10  # fast_owner.c: thread A's blocks of 48 bytes, its frees after its read


def run_lines(build, native, *mode):
    """fast_owner.c linked with libhsmalloc, in `mode`: its lines of output."""
    lib = str(native / "lib")
    exe = build("../allocator/fast_owner.c", "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="fast_owner")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    res = subprocess.run([str(exe), *mode], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    return res.stdout.splitlines()


def pairs(line, first):
    """The "name value" pairs of a line from word `first` on."""
    w = line.split()
    return {w[i]: int(w[i + 1]) for i in range(first, len(w), 2)}


def test_reused_thread_pointer_frees_another_heaps_blocks(build, native):
    lines = run_lines(build, native)
    got = pairs(lines[1], 0)
    # the case under test: B runs on A's thread pointer with another heap (S's)
    assert got["reused"] == 1, "glibc gave B another stack than A's: " + lines[1]
    assert got["b_id"] == got["s_id"] != got["a_id"]
    # A's own frees, read by A itself
    assert got["a_self"] == N // 2 - LATE
    rows = {int(line.split()[1]): pairs(line, 2) for line in lines[2:]}
    a, b = rows[got["a_id"]], rows[got["b_id"]]
    # after A's exit: exactly its own frees; B's frees of A's blocks are B's, sent home
    # (remote) when B's cache went home at its exit
    assert a == {"allocs": N, "frees": N // 2, "remote_frees": 0}
    # (S's two blocks, one of them kept, and B's own)
    assert b == {"allocs": 3, "frees": 2 + N // 2, "remote_frees": N // 2}


def test_fork_child_thread_on_a_parent_threads_pointer(build, native):
    """In a fork's child the parent's other threads' heaps are abandoned, and their
    stacks (so their thread pointers) go to the child's next threads."""
    lines = run_lines(build, native, "fork")
    got = pairs(lines[1], 1)
    assert got["reused"] == 1, "the child's thread got another stack than A's: " + lines[1]
    assert got["b_id"] == got["s_id"] != got["a_id"]
    b = pairs(lines[2], 2)
    assert b == {"allocs": 3, "frees": 2 + N // 2, "remote_frees": N // 2}


def test_another_live_threads_frees_are_in_its_figures_at_once(build, native):
    """A live thread's frees of its own blocks are in its row as soon as they are made:
    another thread reads all N - 1 of them while it lives (before the thread cache, only
    the N / 2 it had counted by reading its own figures: frees were counted on their
    pages and gathered later), N after its exit; no heap is ever behind."""
    got = pairs(run_lines(build, native, "live")[1], 0)
    assert got == {"live": N - 1, "after_read": N - 1, "after_exit": N,
                   "behind_live": 0, "behind_after": 0}

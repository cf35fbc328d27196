"""free's fast path tells the thread's own blocks by the thread pointer (a page's fast
owner), which glibc gives a later thread: `fast_owner.c`. The frees a thread makes through
the fast path are counted on their pages and must reach its heap's figures exactly."""
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
    # A's own frees, read by A itself (its pages' counts harvested for the read)
    assert got["a_self"] == N // 2 - LATE
    rows = {int(line.split()[1]): pairs(line, 2) for line in lines[2:]}
    a, b = rows[got["a_id"]], rows[got["b_id"]]
    # after A's exit: exactly its own frees (the last LATE counted when its heap was
    # abandoned); B's frees of A's blocks are B's (remote),
    # none of them taken for the owner's by A's pages
    assert a == {"allocs": N, "frees": N // 2, "remote_frees": 0}
    # (S's block and B's own)
    assert b == {"allocs": 2, "frees": 2 + N // 2, "remote_frees": N // 2}


def test_fork_child_thread_on_a_parent_threads_pointer(build, native):
    """In a fork's child the parent's other threads' heaps are abandoned, and their
    stacks (so their thread pointers) go to the child's next threads."""
    lines = run_lines(build, native, "fork")
    got = pairs(lines[1], 1)
    assert got["reused"] == 1, "the child's thread got another stack than A's: " + lines[1]
    assert got["b_id"] == got["s_id"] != got["a_id"]
    b = pairs(lines[2], 2)
    assert b == {"allocs": 2, "frees": 2 + N // 2, "remote_frees": N // 2}


def test_another_live_threads_frees_join_its_figures_when_it_counts_them(build, native):
    """A live thread's frees of its own blocks reach its row when it reads its figures
    and when it exits, each once; another thread reading in between sees the row as of
    its last count (docs/hsmalloc.md, "Statistics")."""
    got = pairs(run_lines(build, native, "live")[1], 0)
    assert got == {"live": N // 2, "after_read": N - 1, "after_exit": N,
                   "behind_live": 1, "behind_after": 0}

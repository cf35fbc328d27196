"""hsmalloc and the OS: fork while threads allocate, and memory given back
(decay, HSMALLOC_DECAY_MS=0, malloc_trim)."""
import os
import subprocess


def run(exe, *args, env=None, timeout=120):
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=full,
                          timeout=timeout)


def test_fork_while_threads_allocate(build, native):
    """100 forks while 4 threads churn small, large and huge blocks: every child
    allocates, runs a thread (which adopts a heap left by the parent's threads),
    frees the parent threads' blocks and exits 0; nothing deadlocks."""
    exe = build("../allocator/forks.c", "-O1", "-pthread", name="forks")
    res = run(exe, 100, env={"LD_PRELOAD": str(native / "lib" / "libhsmalloc.so")}, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok forks=100"


def release_figures(build, native, env):
    lib = str(native / "lib")
    exe = build("../allocator/release.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc",
                name="release")
    res = run(exe, env=env)
    assert res.returncode == 0, res.stderr
    words = res.stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def test_memory_returns_to_the_os(build, native):
    # ~680 MB touched, then everything freed
    default = release_figures(build, native, {})
    assert default["peak"] > 500_000                 # KiB
    # the default decay (1 s) has not passed yet: at most the cached segments stay
    assert default["freed"] < default["peak"] // 5
    # malloc_trim gives back everything free at once
    assert default["trimmed"] < 16_000 and default["purged_bytes"] > 0
    # HSMALLOC_DECAY_MS=0: empty segments are purged as soon as they are free
    eager = release_figures(build, native, {"HSMALLOC_DECAY_MS": "0"})
    assert eager["freed"] < eager["peak"] // 20
    assert eager["purged_bytes"] > 500_000_000

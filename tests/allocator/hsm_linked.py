"""Run a test program linked with libhsmalloc (no LD_PRELOAD, the default decay) and read
the "name value name value ..." figures it prints."""
import os
import subprocess


def program_figures(build, native, source, mode, env=None):
    lib = str(native / "lib")
    name = source.rsplit(".", 1)[0]
    exe = build(f"../allocator/{source}", "-O1", "-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc",
                name=name)
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.pop("HSMALLOC_DECAY_MS", None)
    full.update(env or {})
    res = subprocess.run([str(exe), mode], capture_output=True, text=True, env=full, timeout=120)
    assert res.returncode == 0, res.stderr
    words = res.stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}

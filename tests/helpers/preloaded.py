"""Running a test program with the recorder preloaded directly (no `heapscope record`),
for tests that signal the program themselves."""
import os
import signal
import subprocess


def sigterm_when_ready(native, exe, out_dir, *args, **variables):
    """Run exe with libheapscope.so preloaded, HEAPSCOPE_OUTPUT_DIR=out_dir and the
    given HEAPSCOPE_* variables; once it prints "ready", send SIGTERM and check that
    it died of it."""
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(out_dir), **variables)
    proc = subprocess.Popen([str(exe), *map(str, args)], env=env, stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM

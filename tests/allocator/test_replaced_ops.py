"""A program that replaces only operator new(size_t) and operator delete(void*) (FreeFem++
does): the sized, array and nothrow variants it calls must reach its two operators under
hsmalloc as under glibc (their standard defaults call them); hsmalloc defined them as
free/malloc, and the program saw 10 of its 50 news and none of its deletes."""
import os
import subprocess

import pytest


def run(exe, mode, preload=None):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = str(preload)
    return subprocess.run([str(exe), mode], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("mode", ["count", "pool"])
@pytest.mark.parametrize("lib", [None, "libhsmalloc.so"])
def test_replaced_new_and_delete_see_every_call(build, native, mode, lib):
    exe = build("replaced_ops.cpp", "-DHEAPSCOPE_WEAK")
    res = run(exe, mode, preload=native / "lib" / lib if lib else None)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout == "new 50 delete 50 live 0 foreign 0\n"
    assert res.stderr == ""

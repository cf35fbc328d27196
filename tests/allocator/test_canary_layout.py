"""Secure mode's canary layout (tests/allocator/canary_layout.c): the canary after a small
block's request is the block's last word itself, not a value derived from it
(docs/hsmalloc.md, "What secure mode costs"). Its instruction cost is a benchmark's
figure, not a test's: callgrind 97.3 instructions a malloc+free pair, 103.3 before."""
import os
import subprocess

import pytest


@pytest.fixture(scope="module")
def prog(build):
    return build("../allocator/canary_layout.c", "-O2", name="canary_layout")


def test_the_canary_is_the_last_word(prog, native):
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"), HSMALLOC_SECURE="1")
    res = subprocess.run([str(prog)], capture_output=True, text=True, env=env, timeout=60,
                         check=True)
    assert res.stdout.strip() == "same 56 of 56"

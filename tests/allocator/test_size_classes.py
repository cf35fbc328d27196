"""hsmalloc's size classes, exactly: the class sizes, the block size of every request
up to the largest small class, the stride of blocks carved from a fresh page, and the
small/large/huge boundaries (tests/allocator/size_classes.c). The C program derives
the expected classes from the rule docs/hsmalloc.md states; so does documented_classes
here, and the two must agree on how many classes there are and the largest one."""
import os
import subprocess

import pytest

SMALL_MAX = 128 * 1024


def documented_classes():
    """16 for 0-8 bytes; 16 to 128 by 8; then 8 classes per doubling up to 128 KiB."""
    sizes = [16, *range(16, 129, 8)]
    low = 128
    while low < SMALL_MAX:
        sizes += [low + k * low // 8 for k in range(1, 9)]
        low *= 2
    return sizes


@pytest.fixture(scope="module")
def size_classes(build):
    return build("../allocator/size_classes.c", "-O1", "-pthread", "-ldl", name="size_classes")


def run_mode(exe, native, mode, packed="1"):
    """packed: HSMALLOC_PACKED (1: malloc takes every class, so each one is reached)"""
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"),
               HSMALLOC_PACKED=packed)
    res = subprocess.run([str(exe), mode], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr[-2000:]}"
    fields = res.stdout.split()
    assert fields[:2] == ["ok", mode], res.stdout
    got = dict(f.split("=") for f in fields[2:])
    classes = documented_classes()
    assert int(got["classes"]) == len(classes)
    assert int(got["largest"]) == classes[-1] == SMALL_MAX
    return int(got["checks"])


def test_class_sizes_and_the_bin_each_class_counts_in(size_classes, native):
    # per class: its reported size, then two requests (size and previous size + 1)
    # with 4 checks each; the large and huge bins; the first large request
    assert run_mode(size_classes, native, "table") == 1 + len(documented_classes()) * 9 + 1 + 4


@pytest.mark.parametrize("packed", ["1", "new"])
def test_usable_size_of_every_small_request(size_classes, native, packed):
    # malloc and calloc of each n in 0..128 KiB + 1: two checks each; by default ("new")
    # 16k+1 .. 16k+8 take the class of 16k+16
    assert run_mode(size_classes, native, "usable", packed) == (SMALL_MAX + 2) * 4


def test_blocks_of_a_fresh_page_are_one_class_size_apart(size_classes, native):
    assert run_mode(size_classes, native, "stride") > 10000


def test_small_large_and_huge_boundaries(size_classes, native):
    assert run_mode(size_classes, native, "boundaries") > 3 * len(documented_classes()) * 4

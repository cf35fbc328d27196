"""A program that replaces only operator new(size_t) and operator delete(void*) (FreeFem++
does) under `heapscope record`: the recorder must not hook the variants whose standard
default calls them (sized delete, new[], nothrow ...), or the program's operators are
skipped. Its operators call malloc/free: those are what the profile counts, one per new
and one per delete; with its pool (no malloc), nothing."""
import pytest

from heapscope.allocators import find_allocator
from heapscope.profile import read_profile


def record(heapscope, out, exe, mode, allocator):
    res = heapscope("record", "-o", out, "--allocator", allocator, "--", exe, mode)
    [f] = sorted(out.glob("heapscope.*.hsp"))
    return res, read_profile(f)


def region(profile, table, name):
    return {k: n for (r, k), n in table.items() if r == name}


@pytest.mark.parametrize("allocator", ["glibc", "hsmalloc"])
def test_counts_of_a_program_with_its_own_new_and_delete(heapscope, build, tmp_path, allocator):
    assert allocator == "glibc" or find_allocator(allocator) is not None
    exe = build("replaced_ops.cpp", "-DHEAPSCOPE_WEAK")
    res, p = record(heapscope, tmp_path, exe, "count", allocator)
    assert res.stdout == "new 50 delete 50 live 0 foreign 0\n"
    assert p.complete and p.snapshot_reason == "exit"
    assert region(p, p.api_counts, "ops") == {"malloc": 50, "free": 50}
    assert region(p, p.size_counts, "ops") == {77: 20, 231: 10, 167: 10, 154: 10}


def test_a_pool_program_counts_nothing_and_frees_nothing_of_its_own(heapscope, build, tmp_path):
    exe = build("replaced_ops.cpp", "-DHEAPSCOPE_WEAK")
    res, p = record(heapscope, tmp_path, exe, "pool", "glibc")
    assert res.stdout == "new 50 delete 50 live 0 foreign 0\n"
    assert p.complete
    assert region(p, p.api_counts, "ops") == {}

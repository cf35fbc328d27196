"""The recorder at its limits: many short threads, more regions than it keeps,
deeper nesting than its stack; still exact, and saying so where it cannot be."""
from heapscope.profile import read_profile


def record(heapscope, build, out, mode, *options):
    program = build("rec_limits.c", "-DHEAPSCOPE_WEAK", "-pthread")
    res = heapscope("record", "-o", out, *options, "--", program, mode)
    [path] = out.glob("heapscope.*.hsp")
    return read_profile(path), res


def test_short_lived_threads_all_counted(heapscope, build, tmp_path):
    p, _ = record(heapscope, build, tmp_path, "threads")
    assert p.size_counts[("churn", 11011)] == 1500
    assert p.api_counts[("churn", "free")] >= 1500
    assert p.total_threads >= 301  # every thread that allocated, tables reused


def test_region_overflow_is_counted_and_said(heapscope, build, tmp_path):
    p, res = record(heapscope, build, tmp_path, "regions")
    assert res.stderr.count("(overflow)") == 1
    assert len(p.regions) == 4096  # (none), r0 .. r4093, (overflow)
    assert p.size_counts[("r0", 12012)] == 1 and p.size_counts[("r4093", 12012)] == 1
    assert p.size_counts[("(overflow)", 12012)] == 5000 - 4094
    assert sum(n for (_, s), n in p.size_counts.items() if s == 12012) == 5000


def test_nesting_deeper_than_the_stack(heapscope, build, tmp_path):
    p, _ = record(heapscope, build, tmp_path, "deep")
    deepest = "/".join(f"d{i}" for i in range(64))
    assert p.size_counts[(deepest, 13013)] == 1  # begins past 64 stay in the 64th
    assert p.size_counts[("(none)", 13013)] == 1  # and all 70 ends balance them


def test_full_stack_table_counts_lost_stacks(heapscope, build, tmp_path):
    p, _ = record(heapscope, build, tmp_path, "types", "--sizes", "all", "--unwind", "fp")
    assert p.lost_stacks > 0
    # every allocation has its stack stored or is counted lost: nothing vanishes
    assert sum(t.count for t in p.stack_types) + p.lost_stacks == sum(p.size_counts.values())
    mine = [t for t in p.stack_types if 100000 <= t.size < 250000]
    assert 120000 < len(mine) <= 2**17 and all(t.count == 1 for t in mine)  # 2**17 per thread


def test_program_closing_every_descriptor_is_still_recorded(heapscope, build, tmp_path):
    p, _ = record(heapscope, build, tmp_path, "closefds")
    assert p.complete and p.size_counts[("(none)", 15015)] == 2

"""The heap in use (`--timeline-heap on`) is exact block by block: over glibc the hooks
read each block's usable size from glibc's chunk header (count/heap.h, the heap fast
path), and every region's change equals what the program itself sums with
malloc_usable_size: malloc of every small size, a large and a mapped block, C++ new and
sized delete, calloc/realloc/posix_memalign/aligned_alloc (the general path), another
thread's blocks (the shared part of the figure), and the fall when all are freed."""
from heapscope.profile import read_profile


def region_changes(profile):
    marks = [s for s in profile.timeline.samples if s.kind in ("region-begin", "region-end")]
    assert [s.kind for s in marks] == ["region-begin", "region-end"] * (len(marks) // 2)
    return {begin.region: end.heap_bytes - begin.heap_bytes
            for begin, end in zip(marks[::2], marks[1::2])}


def test_heap_in_use_equals_the_programs_own_sum(heapscope, build, tmp_path):
    program = build("heap_usable.cpp", "-DHEAPSCOPE_WEAK", "-pthread")
    res = heapscope("record", "--timeline-heap", "on", "-o", tmp_path, "--", program)
    said = {name: int(value) for name, value in
            (line.split() for line in res.stdout.splitlines()[1:])}
    (path,) = tmp_path.glob("*.hsp")
    profile = read_profile(path)
    assert profile.timeline.heap_measure == "usable"
    changes = region_changes(profile)
    for region in ("small", "big", "cxx", "mixed", "gone"):
        assert changes[region] == said[region], region
    assert said["thread"] == 0 and changes["thread"] == said["worker"] > 0
    assert said["small"] > 250_000 and said["big"] > 200 * 1024   # the blocks were there
    # "gone" frees everything the main thread still held (the worker's blocks stay)
    assert -changes["gone"] == sum(said[r] for r in ("small", "big", "cxx", "mixed"))

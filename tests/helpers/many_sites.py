"""tests/programs/unw_many_sites.c's stacks, known in advance: path p (0..255) goes down
4 + p % 28 levels through level<k>_<(p >> 2k) & 3> at level k and allocates
16 + 8 * (p % 4) bytes, 40 times."""
import collections


def want_paths():
    """(size, functions from leaf to main) -> allocations."""
    want = collections.Counter()
    for p in range(256):
        depth = 4 + p % 28
        names = (("leaf",) + tuple(f"level{k}_{(p >> 2 * k) & 3}" for k in range(depth, -1, -1))
                 + ("rounds", "main"))
        want[(16 + 8 * (p % 4), names)] += 40
    return want


def leaf_paths(stack_types):
    """The same from (size, count, function names) of a recording's stack types."""
    got = collections.Counter()
    for size, count, names in stack_types:
        if names and names[0] == "leaf":
            cut = names.index("main") + 1 if "main" in names else len(names)
            got[(size, tuple(names[:cut]))] += count
    return got

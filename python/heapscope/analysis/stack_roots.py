"""Where each stack's trunk walk starts (analysis.fix_targets, docs/ranking.md rule 3).

The trunk is walked position by position from a root, so every stack of a root must
start at the same place:
- a worker thread's stack (its outermost frames pass a thread start, clone or
  start_thread, and no entry point) starts at its first user function: its own root;
- every other stack is the main thread's and starts just inside the program's entry
  (past _start, __libc_start_main, main, a stripped program's unnamed start and main):
  a stack that lost only `_start` to the depth limit lines up with the others;
- a stack cut short by the depth limit (HEAPSCOPE_STACK_DEPTH, 64 frames by default)
  has no entry point at all: an interpreter's startup, 70 calls deep, ends in the middle
  of `octave::interpreter::initialize`. It is completed with the outer frames of the
  heaviest whole stack through its outermost function, so that its allocations count on
  the trunk they were made under; otherwise 20% of Octave's allocations starting
  mid-way left its driver `interpreter::execute()` off the trunk and ranked first.
"""
from typing import Dict, List, Sequence, Tuple

from heapscope.analysis import classify as kinds

MAIN_ROOT = ("main",)


def roots(g, root_paths: Sequence[Sequence[tuple]],
          root_functions: Sequence[Sequence[tuple]]) -> List[Tuple[tuple, int, bool]]:
    """Each stack's (root, the depth its walk starts at, whether it is whole: it reaches
    an entry point or a thread start)."""
    out: List[Tuple[tuple, int, bool]] = []
    for path, functions in zip(root_paths, root_functions):
        root, start, worker, entered = MAIN_ROOT, 0, False, False
        for depth, (key, fkey) in enumerate(zip(path, functions)):
            kind = g.vertices[key].kind
            if kind == kinds.USER:
                if worker and not entered:
                    root, start = ("thread", fkey), depth
                break
            if kind == kinds.ENTRY or kinds.is_entry(fkey[1]):
                entered, start = True, depth + 1
            elif not entered:
                worker = worker or fkey[1] in kinds.THREAD_START_FUNCTIONS
        else:
            if worker and not entered:
                root, start = ("thread", None), len(path)
        out.append((root, start, entered or worker))
    return out


def aligned(g, root_paths: Sequence[Sequence[tuple]], root_functions: Sequence[Sequence[tuple]],
            weights: Sequence[int]) -> Tuple[List[tuple], List[list], List[list]]:
    """(each stack's root, its vertex keys and its function keys from where its walk
    starts), the main thread's stacks cut short completed (see the module's text)."""
    starts = roots(g, root_paths, root_functions)
    paths = [list(p[s:]) for p, (_, s, _) in zip(root_paths, starts)]
    functions = [list(f[s:]) for f, (_, s, _) in zip(root_functions, starts)]
    # the heaviest whole main-thread stack through each function, and where it is in it
    through: Dict[tuple, Tuple[int, int, int]] = {}
    for i, (root, _, whole) in enumerate(starts):
        if root != MAIN_ROOT or not whole:
            continue
        for depth, fkey in enumerate(functions[i]):
            if fkey not in through or weights[i] > through[fkey][0]:
                through[fkey] = (weights[i], i, depth)
    for i, (root, _, whole) in enumerate(starts):
        if whole or not functions[i] or functions[i][0] not in through:
            continue
        _, j, depth = through[functions[i][0]]
        paths[i] = paths[j][:depth] + paths[i]
        functions[i] = functions[j][:depth] + functions[i]
    return [root for root, _, _ in starts], paths, functions

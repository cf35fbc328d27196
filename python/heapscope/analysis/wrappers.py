"""Allocation wrappers: user functions that pass each call straight to one allocation
(docs/ranking.md, "Wrappers").

    void *app_malloc(size_t n, const char *what)        a NULL check, counters, a name
    static void *app_alloc(size_t s) { return malloc(s); }

From the user's point of view a wrapper is part of the allocator: nobody fixes an
anomaly there, the pattern is decided where it is called. The ranking sees through
wrappers (analysis.fix_targets) and every output labels them "wrapper".

A user function W is a wrapper when
  1. on every stack through W, the frames inside W are allocation functions (malloc,
     operator new ...) or wrappers found before: W calls the allocator itself, every
     time it allocates;
  2. W does so from one call site (one line; one return address without lines): it
     passes each call to one allocation. A function that makes several objects itself
     (a mesher creating the tetrahedra of a cavity from two lines) is not a wrapper;
  3. its name says it hands out memory or a new object (says_it_allocates: malloc,
     xcalloc, allocate, new, create, make, dup, clone, a constructor). The stacks
     cannot tell a wrapper from a function that allocates a temporary for itself and
     frees it (a kernel's work array): both call the allocator straight from one line,
     from any number of call sites. What differs is whether the block outlives the call,
     which a stack does not record, and the name, which is how programmers say it;
  4. a wrapper of a wrapper (W calls a wrapper, not the allocator) is also entered from
     at least two call sites: a function that calls app_malloc from one line and is
     called from one place (allocate() filling a table in a loop) is app_malloc's only
     user, where the allocation is decided, whatever its name;
  5. W is called from user code only: seen through, the ranking lands on its callers,
     and a wrapper called from main (an entry point) or from a runtime's callback would
     leave nothing to rank.
Repeated until nothing new is found, so a wrapper of a wrapper is one too.
"""
import re
from typing import Callable, Dict, List, Sequence, Set

from heapscope.analysis.runtime_patterns import is_allocation_function
from heapscope.analysis.stacks import WeightedStack
from heapscope.symbolize.names import short_name

WRAPPER = "wrapper"   # the kind every output shows for a wrapper
MIN_CALL_SITES = 2


def call_site(frame, key: tuple) -> tuple:
    """Where a frame calls on: its function and line, or its return address without lines."""
    return (key, frame.file, frame.line) if frame.file else (key, frame.offset)


def find(stacks: Sequence[WeightedStack], keyed: Sequence[Sequence[tuple]],
         is_user: Callable) -> Dict[tuple, int]:
    """The wrappers among the user frames (is_user(frame)) of `stacks`, as their function
    keys with the number of call sites they are entered from; keyed: each stack's frames
    as function keys, innermost first."""
    wrappers: Dict[tuple, int] = {}
    while True:
        inner: Dict[tuple, Set[tuple]] = {}
        outer: Dict[tuple, Set[tuple]] = {}
        not_straight: Set[tuple] = set()
        via_wrapper: Set[tuple] = set()
        for s, keys in zip(stacks, keyed):
            i, through = _straight_in(s.frames, keys, wrappers)
            if i is None:
                not_straight.update(keys)
                continue
            key = keys[i]
            if through:
                via_wrapper.add(key)
            inner.setdefault(key, set()).add(call_site(s.frames[i], key))
            if i + 1 < len(keys) and is_user(s.frames[i + 1]):
                outer.setdefault(key, set()).add(call_site(s.frames[i + 1], keys[i + 1]))
            else:   # called from an entry point, the runtime, or nothing: no caller to rank
                not_straight.add(key)
            not_straight.update(k for k in keys[i + 1:] if k != key)
        found = {key for key in inner
                 if key not in wrappers and key not in not_straight and len(inner[key]) == 1
                 and says_it_allocates(key[1])
                 and (key not in via_wrapper or len(outer[key]) >= MIN_CALL_SITES)}
        found = {key for key in found if _user(stacks, keyed, key, is_user)}
        if not found:
            return wrappers
        wrappers.update((key, len(outer[key])) for key in found)


def _straight_in(frames, keys, wrappers: Dict[tuple, int]):
    """(the index of the first frame past the allocation functions and the wrappers
    already found, innermost first, or None when there is none; whether a wrapper was
    passed)."""
    i = 0
    while i < len(frames) and is_allocation_function(frames[i].function):
        i += 1
    first = i
    while i < len(frames) and keys[i] in wrappers:
        i += 1
    return (i if i < len(frames) else None), i > first


def _user(stacks, keyed, key: tuple, is_user) -> bool:
    for s, keys in zip(stacks, keyed):
        if key in keys:
            return is_user(s.frames[keys.index(key)])
    return False



MAKING_WORDS = frozenset({"new", "create", "make", "dup", "clone"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(function: str) -> List[str]:
    """The words of a function's own name, lower case: `Array<double>::ArrayRep::allocate(long)`
    gives ["allocate"], `app_malloc` ["app", "malloc"], `newElement` ["new", "element"]."""
    parts = short_name(function).split("(")[0].replace("<...>", "").split("::")
    return [w.lower() for w in _WORD.findall(parts[-1])]


def says_it_allocates(function: str) -> bool:
    """Whether the name says the function hands out memory or a new object: a word with
    "alloc" (malloc, xcalloc, allocate; not dealloc), new, create, make, dup or clone, or a
    constructor (Class::Class)."""
    words = name_words(function)
    if any("alloc" in w and not w.startswith("dealloc") for w in words):
        return True
    if MAKING_WORDS.intersection(words):
        return True
    parts = short_name(function).split("(")[0].replace("<...>", "").split("::")
    return len(parts) >= 2 and parts[-1] == parts[-2] and bool(parts[-1])

"""Allocation wrappers: user functions that pass each call straight to the allocator
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
  2. its code, when it can be read and is small (symbolize.code: at most SMALL
     instructions), does not call the allocator from inside a loop (register_item: 8
     blocks a call) nor free or operator delete on its way back (make_residual, Octave's
     Matrix(r, c): a temporary for itself); then it is a wrapper when its name says it
     allocates, or when it has no loop, every call it makes on its way back is to the
     allocator and it is entered from two call sites at least (get_buffer, a NULL check
     and a counter; Octave's out-of-line dim_vector<>(long, long)). What tells a wrapper
     from a kernel is what it does with the block, which the stacks do not record and
     the code shows; a call of anything else (element_matrix passing its block on) makes
     it a kernel. Calls on error paths (ending in exit, abort ...) are checks, not work;
  3. a bigger function, or one whose code cannot be read (inlined: its code is its
     caller's), has a name that says it hands out memory or a new object
     (says_it_allocates: malloc, xcalloc, allocate, new, create, make, dup, clone, a
     constructor): one object a call, of one block or a fixed few (PETSc's PetscMallocA,
     151 instructions, a loop over up to eight blocks);
  4. such a function without a name (a stripped program's, told apart by where it
     starts) is a wrapper when it is entered from at least two call sites, and from more
     than it allocates from (a generic maker: CP2K's keyword_create, three calls of
     val_create, entered from 3,527 places; FoX's vs_str_alloc, one malloc, from 35). A
     function allocating from more places than it is called from (FoX's
     xml_AddAttribute_Ch: 37 and 15) does its own work;
  5. a wrapper of a wrapper (W calls a wrapper) is entered from at least two call
     sites, or from one, in a wrapper that qualifies itself (SUNDIALS' chain
     N_VClone -> N_VClone_Serial -> N_VCloneEmpty_Serial -> N_VNewEmpty, entered at
     N_VClone from everywhere): a function that calls app_malloc from one line and is
     called from one place (allocate() filling a table in a loop) is app_malloc's only
     user, where the allocation is decided, whatever its name;
  6. W is called from the application's code (named, or a stripped library's static
     function) somewhere: seen through, the ranking lands on those callers. A function
     only main (an entry point) or a runtime's callback calls would leave nothing to
     rank.
Repeated until nothing new is found, so a wrapper of a wrapper is one too.
"""
import re
from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence, Set

from heapscope.analysis.runtime_patterns import is_allocation_function
from heapscope.analysis.stacks import WeightedStack
from heapscope.symbolize.code import CodeFacts, function_code, in_loop
from heapscope.symbolize.names import short_name

WRAPPER = "wrapper"   # the kind every output shows for a wrapper
MIN_CALL_SITES = 2


def call_site(frame, key: tuple) -> tuple:
    """Where a frame calls on: its function and line, or its return address without lines."""
    return (key, frame.file, frame.line) if frame.file else (key, frame.offset)


def find(stacks: Sequence[WeightedStack], keyed: Sequence[Sequence[tuple]],
         is_user: Callable, is_application: Callable) -> Dict[tuple, int]:
    """The wrappers among the user frames (is_user(frame)) of `stacks`, as their function
    keys with the number of call sites they are entered from; keyed: each stack's frames
    as function keys, innermost first; is_application(frame): user code, or an unnamed
    frame of the application's own code (a stripped library's static function), which may
    call a wrapper.

    Each stack has a straight frame: the first past the allocation functions and the
    wrappers found so far. Rounds find the straight frames that qualify (on no stack
    further out), then move the stacks whose straight frame became a wrapper one step
    out; the figures of each function are kept up to date, not recounted."""
    wrappers: Dict[tuple, int] = {}
    callers: Dict[tuple, Set[tuple]] = {}      # a wrapper of a wrapper: its callers' functions
    inner: Dict[tuple, Set[tuple]] = {}        # call sites it allocates from
    outer: Dict[tuple, Set[tuple]] = {}        # application call sites it is entered from
    further_out: Counter = Counter()           # stacks on which it is past the straight frame
    frame_of: Dict[tuple, object] = {}
    allocating_at: Dict[tuple, Set[int]] = {}  # the offsets of its calls into the allocator
    at: Dict[tuple, List[int]] = {}            # function -> stacks it is the straight frame of
    position: List[int] = []

    def straighten(n: int, i: int, through: bool) -> None:
        frames, keys = stacks[n].frames, keyed[n]
        while i < len(keys) and keys[i] in wrappers:
            i, through = i + 1, True
        position[n] = i
        if i >= len(keys):
            return
        key = keys[i]
        further_out[key] -= 1          # counted as further out while a frame inside it was
        frame_of.setdefault(key, frames[i])
        allocating_at.setdefault(key, set()).add(frames[i].offset)
        at.setdefault(key, []).append(n)
        inner.setdefault(key, set()).add(call_site(frames[i], key))
        sites = outer.setdefault(key, set())
        if i + 1 < len(keys) and is_application(frames[i + 1]):
            sites.add(call_site(frames[i + 1], keys[i + 1]))
            if through:
                callers.setdefault(key, set()).add(keys[i + 1])

    for n, (s, keys) in enumerate(zip(stacks, keyed)):
        i = 0
        while i < len(keys) and is_allocation_function(s.frames[i].function):
            i += 1
        further_out.update(set(keys[i:]))
        position.append(i)
        straighten(n, i, False)
    candidates = set(at)
    while True:
        found = {key for key in candidates if further_out[key] <= 0 and outer[key]
                 and is_user(frame_of[key])
                 and _passes_calls_on(key[1], frame_of[key], allocating_at[key],
                                      len(inner[key]), len(outer[key]))}
        if not found:
            return _chains_entered_twice(wrappers, callers)
        wrappers.update((key, len(outer[key])) for key in found)
        candidates -= found
        for key in found:
            for n in at.pop(key):
                straighten(n, position[n] + 1, True)
        candidates |= set(at) - set(wrappers)


def _chains_entered_twice(wrappers: Dict[tuple, int],
                          callers: Dict[tuple, Set[tuple]]) -> Dict[tuple, int]:
    """Rule 5: a wrapper of a wrapper entered from one call site stays one only when its
    caller does (SUNDIALS' N_VCloneEmpty_Serial, called by N_VClone_Serial alone, called
    by N_VClone from everywhere); the top of the chain is entered from two call sites."""
    kept: Dict[tuple, bool] = {}

    def keep(key: tuple, visiting: frozenset) -> bool:
        if key not in kept:
            if key not in callers or wrappers[key] >= MIN_CALL_SITES or key[1].startswith("?? ("):
                kept[key] = True
            else:
                parent = next(iter(callers[key]))
                kept[key] = (parent in wrappers and parent not in visiting
                             and keep(parent, visiting | {key}))
        return kept[key]

    return {key: sites for key, sites in wrappers.items() if keep(key, frozenset())}


def code_of(frame) -> Optional[CodeFacts]:
    """The code facts of a frame's function, None when its code cannot be read (an
    inlined frame's code is its caller's)."""
    if frame.inlined or not frame.module:
        return None
    return function_code(frame.module, frame.offset)


def _passes_calls_on(function: str, frame, offsets: Set[int], allocating_sites: int,
                     call_sites: int) -> bool:
    """Rules 2 to 4, for a function straight into the allocator from `offsets`."""
    code = code_of(frame)
    if code is not None and code.small:   # rule 2: its code tells
        if any(in_loop(code, offset) for offset in offsets) or "free" in code.calls or any(
                c.startswith(("_ZdlPv", "_ZdaPv")) for c in code.calls):
            return False    # it repeats the allocation, or takes a temporary for itself
        if says_it_allocates(function):
            return True
        return (not code.loops and MIN_CALL_SITES <= call_sites
                and all(map(_hands_out, code.calls)))
    if function.startswith("?? ("):   # rule 4: no name to say what it does
        return MIN_CALL_SITES <= call_sites and allocating_sites < call_sites
    return says_it_allocates(function)   # rule 3


def _hands_out(symbol: str) -> bool:
    """A call a wrapper makes on its way back: the allocator, or clearing or copying the
    new block (calloc-like, strdup-like); never free (a kernel's own temporary)."""
    return symbol in ("memset", "memcpy") or symbol.startswith(("_Znw", "_Zna")) or (
        symbol != "free" and is_allocation_function(symbol))


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

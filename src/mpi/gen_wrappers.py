#!/usr/bin/env python3
"""Generate PMPI wrappers for every `int MPI_Xxx(...)` that mpi.h declares.

Usage: gen_wrappers.py OUTPUT.c COMPILER [-I... flags]
Runs `COMPILER -E` on `#include <mpi.h>`, parses the int-returning MPI_ prototypes
that have a PMPI_ twin, and writes one wrapper each:
    int MPI_X(args) { uint32_t *d = hsr_mpi_fast_enter(); if (!d) return hsr_slow_MPI_X(args);
                      int rc = PMPI_X(args); --*d; return rc; }
(hsr_slow_MPI_X: the full bracket, hsr_mpi_enter/hsr_mpi_leave, mpi_layer.h).
Varargs functions, those written by hand (mpi_layer.c) and anything whose parameters
cannot be parsed are skipped. Prints the wrapped/skipped counts.

Per function (what the bracket is for: the heap blocks an MPI call allocates count for
"[MPI]", and the calipers measure the memory a call maps besides them):
  CANNOT_ALLOCATE  local queries that read what the library already holds (ranks, sizes,
                   counts, extents, topology): no wrapper, the program calls the MPI
                   library directly and pays nothing. (An erroneous call's error handler
                   may allocate a message before the job aborts; it counts for the caller.)
  maps_memory()    where MPI libraries map their big segments (MPI_Init, MPI_Alloc_mem,
                   MPI_Win_allocate ...): every call measured, RSS and PSS (smaps_rollup).
  the others       may allocate (a point-to-point call may grow a free list, a collective
                   may set up its shared segment on first use): bracketed, and measured at
                   the calipers' rate limit from the cheap RSS counter (statm).
"""
import re
import subprocess
import sys

HAND_WRITTEN = {"MPI_Pcontrol", "MPI_Finalize", "MPI_Abort"}
CANNOT_ALLOCATE = {
    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Comm_remote_size", "MPI_Comm_test_inter",
    "MPI_Group_rank", "MPI_Group_size", "MPI_Initialized", "MPI_Finalized",
    "MPI_Query_thread", "MPI_Is_thread_main", "MPI_Get_version",
    "MPI_Get_count", "MPI_Get_count_c", "MPI_Get_elements", "MPI_Get_elements_x",
    "MPI_Get_elements_c", "MPI_Type_size", "MPI_Type_size_x", "MPI_Type_size_c",
    "MPI_Type_get_extent", "MPI_Type_get_extent_x", "MPI_Type_get_extent_c",
    "MPI_Type_get_true_extent", "MPI_Type_get_true_extent_x", "MPI_Type_get_true_extent_c",
    "MPI_Topo_test", "MPI_Cartdim_get", "MPI_Cart_get", "MPI_Cart_rank", "MPI_Cart_coords",
    "MPI_Cart_shift", "MPI_Graphdims_get", "MPI_Graph_neighbors_count",
    "MPI_Test_cancelled", "MPI_Status_set_cancelled", "MPI_Status_set_elements",
    "MPI_Status_set_elements_x", "MPI_Get_address", "MPI_Address", "MPI_Error_class",
}
PROTO = re.compile(r"^(?:extern\s+)?int\s+(P?MPI_\w+)\s*\((.*)\)$", re.S)
TYPE_WORDS = {"int", "char", "void", "const", "long", "short", "unsigned", "signed",
              "double", "float", "struct", "volatile", "restrict", "__restrict"}


def maps_memory(name):
    """Whether MPI libraries map memory in this call (their shared-memory segments, the
    memory they hand out): always measured, with PSS."""
    return name in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Alloc_mem",
                    "MPI_Session_init") or name.startswith("MPI_Win_allocate")


def wrapped(name, protos):
    """Whether the layer wraps MPI function `name` (the Fortran wrappers follow it)."""
    params = protos[name]
    return (("P" + name) in protos and name not in HAND_WRITTEN and name not in CANNOT_ALLOCATE
            and "..." not in params)


def wrapper(name, params, args, always):
    """The C wrapper of `name`: the full bracket out of line (hsr_slow_<name>: a thread's
    first call, a measured call), and the usual call inline (mpi_layer.h)."""
    slow = (f"static __attribute__((noinline)) int hsr_slow_{name}({params})\n{{\n"
            f"    hsr_mpi_enter(\"{name}\", {int(always)});\n    int rc = P{name}({args});\n"
            f"    hsr_mpi_leave(\"{name}\");\n    return rc;\n}}\n")
    if always:
        return slow + f"int {name}({params}) {{ return hsr_slow_{name}({args}); }}\n"
    return slow + (f"int {name}({params})\n{{\n    uint32_t *depth = hsr_mpi_fast_enter();\n"
                   f"    if (__builtin_expect(!depth, 0))\n        return hsr_slow_{name}({args});\n"
                   f"    int rc = P{name}({args});\n    --*depth;\n    return rc;\n}}\n")


def strip_attributes(text):
    out, i = [], 0
    while True:
        j = text.find("__attribute__", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.index("(", j)
        depth = 0
        while True:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = k


def split_params(params):
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def param_name(param):
    """The parameter's name, or None (unnamed, function pointer, unparsable)."""
    if "(" in param:
        return None
    m = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", param)
    if not m or m.group(1) in TYPE_WORDS or param.strip() == m.group(0).strip():
        return None
    return m.group(1)


def prototypes(source):
    text = "\n".join(l for l in source.splitlines() if not l.startswith("#"))
    text = re.sub(r"\s+", " ", strip_attributes(text))
    found = {}
    for stmt in re.split(r"[;{}]", text):
        m = PROTO.match(stmt.strip())
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def main():
    output, compiler, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    pre = subprocess.run([compiler, *flags, "-E", "-x", "c", "-"], input="#include <mpi.h>\n",
                         capture_output=True, text=True)
    if pre.returncode:
        sys.exit(f"gen_wrappers: preprocessing mpi.h failed: {pre.stderr.strip()}")
    protos = prototypes(pre.stdout)
    lines = ["/* Generated by gen_wrappers.py from mpi.h: do not edit. */",
             "#include <mpi.h>", '#include "mpi_layer.h"', ""]
    count, skipped = 0, []
    for name in sorted(n for n in protos if n.startswith("MPI_")):
        params = protos[name]
        parts = [] if params in ("", "void") else split_params(params)
        names = [param_name(p) for p in parts]
        if not wrapped(name, protos) or None in names:
            skipped.append(name)
            continue
        args = ", ".join(names)
        lines.append(wrapper(name, params or "void", args, maps_memory(name)))
        count += 1
    with open(output, "w") as f:
        f.write("\n".join(lines))
    print(f"heapscope MPI layer: {count} MPI functions wrapped, {len(skipped)} skipped "
          f"({', '.join(skipped[:12])}{' ...' if len(skipped) > 12 else ''})")


if __name__ == "__main__":
    main()

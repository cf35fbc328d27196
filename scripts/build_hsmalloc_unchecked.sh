#!/bin/sh
# The current hsmalloc with the default mode's misuse checks taken out, for measuring
# what they cost against the same tree (a revision from before the checks, such as
# 40a3a87, also lacks everything added since). Taken out: the block-start compare
# (hsm_block_ok passes everything; free's fast path only asks whether its page takes fast
# frees, a bound not 0), the double-free compares, the in-use test of the
# generic free, and malloc's clearing of the free mark. Kept: free's store of the free
# mark (calloc tells a fresh block by it, where free would otherwise clear a flag) and
# secure mode's paths (not taken in the default mode, beyond their one-flag tests).
#   scripts/build_hsmalloc_unchecked.sh OUT_DIR     -> OUT_DIR/native/lib/libhsmalloc.so
# Fails if a line it edits is not found (the sources changed: update the edits). Built
# with the flags of src/allocator/CMakeLists.txt.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:?usage: build_hsmalloc_unchecked.sh OUT_DIR}
rm -rf "$OUT" && mkdir -p "$OUT/src" "$OUT/native/lib"
cp -r src/allocator src/shared include "$OUT/src/"
A=$OUT/src/allocator
edit() { # FILE PATTERN REPLACEMENT: every line matching PATTERN, at least one
    grep -q -- "$2" "$A/$1" || { echo "build_hsmalloc_unchecked: '$2' not in $1" >&2; exit 1; }
    d=$(printf '\001') # a delimiter no pattern holds
    sed -i "s$d$2$d$3$d" "$A/$1"
}
edit check.h 'return hsm_block_index(pg, p) < limit;' '(void)pg; (void)p; (void)limit; return 1;'
edit check.h '__asm__("cmpq %2, %1" : "=@ccb"(below) : "r"(v), "m"(pg->free_limit));' \
    '(void)v; below = pg->free_limit != 0;'
edit free.c '|| b->mark == (uintptr_t)pg' ''
edit page.c 'if (HSM_UNLIKELY(b->mark == hsm_block_mark(pg, b)))' \
    'if (HSM_UNLIKELY(hsm_secure \&\& b->mark == hsm_block_mark(pg, b)))' # shared with secure mode
edit page.c 'if (HSM_UNLIKELY(!__atomic_load_n(&pg->in_use, __ATOMIC_RELAXED))) hsm_bad_free(fn, p);' ''
edit alloc.c 'b->mark = 0; /\* live' '/* live' # leaf_pop: both of malloc's leaves
edit internal.h '^  b->mark = 0;$' ''
edit cxx.c '^  b->mark = 0;$' ''
flags="-O2 -fvisibility=hidden -ftls-model=initial-exec -fno-builtin-malloc -fno-builtin-free
    -fno-stack-protector -Wno-missing-attributes -pthread"
inc="-I $OUT/src/include -I $A -I $OUT/src/shared"
for c in "$A"/*.c; do # the library's own sources and options (src/allocator/CMakeLists.txt)
    extra=; [ "$(basename "$c")" = cxx.c ] && extra=-fexceptions
    gcc -c -fPIC $flags $extra $inc -o "${c%.c}.o" "$c"
done
gcc -shared -pthread -o "$OUT/native/lib/libhsmalloc.so" "$A"/*.o -ldl
echo "$OUT/native/lib/libhsmalloc.so"

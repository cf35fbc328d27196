#!/usr/bin/env bash
# Instructions per malloc+free pair, counted by callgrind (not disturbed by other jobs
# on the machine): the inclusive cost of the allocator's exported malloc and free
# (everything they call) divided by the number of pairs the workload makes.
#   workloads/tools/callgrind_pairs.sh NATIVE_DIR PAIRS WORKLOAD [ARGS...]
#   e.g. ... build/native 1010000 small-churn --ops 1000000   (10000 slots + 1 M ops)
# Environment passes through (HSMALLOC_*); ALLOCATORS picks the allocators.
set -euo pipefail
native=$(cd "$1" && pwd)
pairs=$2
prog="$native/bin/hs-wl-$3"
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A lib=([glibc]="" [jemalloc]=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
  [tcmalloc]=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
  [mimalloc]=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 [hsmalloc]="$native/lib/libhsmalloc.so")
for a in ${ALLOCATORS:-glibc jemalloc tcmalloc mimalloc hsmalloc}; do
  LD_PRELOAD="${lib[$a]}" valgrind --tool=callgrind --callgrind-out-file="$tmp/$a.out" \
    "$prog" "$@" >/dev/null 2>"$tmp/$a.log"
  callgrind_annotate --inclusive=yes "$tmp/$a.out" 2>/dev/null |
    awk -v a="$a" -v pairs="$pairs" '
      / \[/ && $0 ~ /[:?](malloc|free|__libc_malloc|__libc_free|cfree|tc_malloc|tc_free) \[/ {
        cost = $1; gsub(",", "", cost); name = $0; sub(/ \[.*/, "", name); sub(/.*:/, "", name)
        if (!(name in seen)) { seen[name] = 1; sum += cost; if (ENVIRON["DEBUG"]) print cost, name } }
      END { printf "%-9s %6.1f instructions per malloc+free pair\n", a, sum / pairs }'
done

#!/usr/bin/env bash
# Instructions per malloc+free pair, counted by callgrind (not disturbed by other jobs
# on the machine): callgrind collects only inside the exported malloc and free (and
# what they call), and the total is divided by the number of pairs the workload makes.
#   workloads/tools/callgrind_pairs.sh NATIVE_DIR PAIRS WORKLOAD [ARGS...]
#   e.g. ... build/native 1010000 small-churn --ops 1000000   (10000 slots + 1 M ops)
# Environment passes through (HSMALLOC_*); ALLOCATORS picks the allocators.
set -euo pipefail
native=$(cd "$1" && pwd)
pairs=$2
prog="$native/bin/hs-wl-$3"
shift 3
declare -A lib=([glibc]="" [jemalloc]=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
  [tcmalloc]=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
  [mimalloc]=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 [hsmalloc]="$native/lib/libhsmalloc.so")
# the names callgrind gives the entry points (one name per address, alias chosen by it:
# hsmalloc's free is also every operator delete)
toggles=()
for f in malloc free __libc_malloc __libc_free cfree tc_malloc tc_free _ZdlPv _ZdaPv; do
  toggles+=("--toggle-collect=$f")
done
for a in ${ALLOCATORS:-glibc jemalloc tcmalloc mimalloc hsmalloc}; do
  refs=$(LD_PRELOAD="${lib[$a]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    --collect-atstart=no "${toggles[@]}" "$prog" "$@" 2>&1 >/dev/null |
    awk '/I +refs:/ { gsub(",", "", $NF); print $NF }')
  awk -v a="$a" -v r="$refs" -v p="$pairs" \
    'BEGIN { printf "%-9s %6.1f instructions per malloc+free pair\n", a, r / p }'
done

/* hsmalloc's one-instruction primitives: the counters and compares the fast paths are
 * built of, each written so that x86-64 gets a single instruction where the compiler
 * alone would emit two or three (part of internal.h, included there). */
#ifndef HSM_PRIMITIVES_H
#define HSM_PRIMITIVES_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"

/* Per-thread counters are written by their owner only; relaxed load+store (no lock
 * prefix) keeps them cheap and lets readers merge them without a data race. */
typedef _Atomic uint64_t hsm_counter_t;
#define HSM_READ(c) atomic_load_explicit(&(c), memory_order_relaxed)
#if defined(__x86_64__)
/* One `add` to memory: an aligned 8-byte store is never torn, and no other thread
 * writes the counter, so the lock prefix is not needed (the fast paths count with
 * one instruction instead of a load, an add and a store). */
static inline __attribute__((always_inline)) void hsm_count(hsm_counter_t *c, uint64_t n) {
  __asm__("addq %1, %0" : "+m"(*(uint64_t *)c) : "er"(n));
}
#define HSM_COUNT(c, n) hsm_count(&(c), (uint64_t)(n))
#else
#define HSM_COUNT(c, n)                                                               \
  atomic_store_explicit(&(c), atomic_load_explicit(&(c), memory_order_relaxed) + (n), \
                        memory_order_relaxed)
#endif
#define HSM_SET(c, v) atomic_store_explicit(&(c), (v), memory_order_relaxed)

/* --x, and whether it is now <= 0 as a signed number: on x86-64 one `sub` to memory
 * and a jump on its flags (the compiler would load, subtract, store and test). */
static inline __attribute__((always_inline)) int hsm_dec_le0(uint32_t *x) {
#if defined(__x86_64__)
  int le;
  __asm__("subl $1, %0" : "+m"(*x), "=@ccle"(le));
  return le;
#else
  return (int32_t)-- * x <= 0;
#endif
}

/* Whether *room is at most 1; if not, one taken from it: on x86-64 a compare with memory,
 * a jump and a `sub` to memory (the compiler would load, compare, subtract and store).
 * Nothing is written when the answer is yes (a shared sentinel's room stays 0). */
static inline __attribute__((always_inline)) int hsm_room_le1(uint32_t *room) {
#if defined(__x86_64__)
  /* (the room is an input changed by the asm: the memory clobber says so) */
  __asm__ goto("cmpl $1, %0\n\tjbe %l[full]\n\tsubl $1, %0" : : "m"(*room) : "cc", "memory" : full);
  return 0;
full:
  return 1;
#else
  if (*room <= 1) return 1;
  --*room;
  return 0;
#endif
}

/* *p == v, from a compare of the word in memory: the compiler loads an atomic (or an
 * atomic byte) into a register first, one instruction more on free's fast path. The
 * accesses stay single loads, as atomic relaxed loads are on x86-64. */
static inline __attribute__((always_inline)) int hsm_ptr_eq(void *const *p, const void *v) {
#if defined(__x86_64__)
  int eq;
  __asm__("cmpq %2, %1" : "=@ccz"(eq) : "m"(*p), "r"(v));
  return eq;
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED) == v;
#endif
}
static inline __attribute__((always_inline)) int hsm_byte_eq(const _Atomic(uint8_t) *base, size_t i,
                                                             uint8_t v) {
#if defined(__x86_64__)
  /* base and index in registers, and no memory operand (the compiler would compute its
   * address apart): the byte is only read, and no caller writes it just before */
  int eq;
  __asm__("cmpb %3, (%1,%2)" : "=@ccz"(eq) : "r"(base), "r"(i), "i"(v));
  return eq;
#else
  return atomic_load_explicit(&base[i], memory_order_relaxed) == v;
#endif
}

#endif

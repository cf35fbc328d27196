/*
 * cfi.h — how to step out of a frame, read from the DWARF call frame information
 * (.eh_frame) of the loaded object a return address lies in (cfi.c).
 */
#ifndef HSR_CFI_H
#define HSR_CFI_H

#include "common.h"

enum {
    HSR_CFI_SP,    /* the caller's CFA = its stack pointer (this frame's CFA) + cfa_off */
    HSR_CFI_RBP,   /* the caller's CFA = rbp + cfa_off */
    HSR_CFI_END,   /* the outermost frame: the return address or rbp is undefined */
    HSR_CFI_NONE,  /* no fixed rule (a signal frame, an expression...): ask libunwind */
    HSR_CFI_NOFDE, /* no FDE covers it (no CFI: start-up code, JIT): libunwind guesses from
                    * rbp, and ends the stack there when rbp is 0 */
};
#define HSR_CFI_RBP_SAME INT16_MIN /* rbp_off: the caller's rbp is the frame's own */

struct hsr_cfi_rule {
    uint8_t kind;
    int32_t cfa_off;
    int16_t rbp_off; /* the caller's rbp is saved at CFA + rbp_off, or HSR_CFI_RBP_SAME */
};

/* The rule of the frame that ret (a return address, not a signal frame's resume
 * address) returns into: the row of its FDE at the call, ret - 1. The return
 * address itself is always at CFA - 8 (else: HSR_CFI_NONE). Reads memory only
 * inside the object's loaded segment that holds its .eh_frame_hdr; no system
 * call, no lock. */
HSR_HIDDEN struct hsr_cfi_rule hsr_cfi_rule(uintptr_t ret);

#endif

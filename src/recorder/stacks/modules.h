/*
 * modules.h — the loaded objects, for a snapshot's MODULES chunk, and where the
 * recorder's own code lies (modules.c).
 */
#ifndef HSR_MODULES_H
#define HSR_MODULES_H

#include "common.h"

struct hsr_buf;
HSR_HIDDEN void hsr_modules_init(void);         /* our own text range */
HSR_HIDDEN int hsr_in_recorder(uintptr_t addr); /* addr in libheapscope.so's code */
HSR_HIDDEN void hsr_recorder_text(uintptr_t *lo, uintptr_t *hi); /* the span of that code */
HSR_HIDDEN void hsr_modules_write(struct hsr_buf *b);            /* MODULES payload */

#endif

/* The ops of one emulated stream that failed, by number. An event reports
 * a failure of any op since the stream's previous event, and several may
 * have failed before it is asked: the last alone kept lost the earlier
 * ones (their tasks were taken for done and their successors ran). */
#ifndef WEFT_EMU_FAILS_H
#define WEFT_EMU_FAILS_H

#include <stddef.h>
#include <stdint.h>

typedef struct emu_fails {
    uint64_t *op; /* ascending: ops end in stream order */
    size_t n, cap;
    int lost; /* one could not be kept: every event asked from then on fails */
} emu_fails_t;

/* Op number `op`, past every one kept, failed. */
void weft_emu__fails_add(emu_fails_t *f, uint64_t op);
/* Whether an op numbered in (prev, last] failed. */
int weft_emu__fails_between(const emu_fails_t *f, uint64_t prev, uint64_t last);
void weft_emu__fails_free(emu_fails_t *f);

#endif

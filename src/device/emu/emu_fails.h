/* The ops of one emulated stream that failed, by number. An event reports
 * a failure of any op since the stream's previous event, and several may
 * have failed before it is asked: the last alone kept lost the earlier
 * ones (their tasks were taken for done and their successors ran).
 *
 * The newest WEFT_EMU_FAILS_KEPT are kept: every failure kept for the
 * device's life grew the process by 8 bytes a failed task (a soak of 480k
 * failing bodies, 4 MB). An event whose range reaches back before the
 * failures dropped, which no caller asks after thousands of failures on
 * its stream (events are polled until they end), is answered failed: a
 * task taken for failed is said; one taken for done would not be. */
#ifndef WEFT_EMU_FAILS_H
#define WEFT_EMU_FAILS_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_EMU_FAILS_KEPT 4096

typedef struct emu_fails {
    uint64_t *op; /* ascending: ops end in stream order */
    size_t n, cap;
    uint64_t dropped_upto; /* the newest failure dropped (0: none) */
    int lost; /* one could not be kept: every event asked from then on fails */
} emu_fails_t;

/* Op number `op`, past every one kept, failed. */
void weft_emu__fails_add(emu_fails_t *f, uint64_t op);
/* Whether an op numbered in (prev, last] failed (1 too when failures that
 * range may hold were dropped). */
int weft_emu__fails_between(const emu_fails_t *f, uint64_t prev, uint64_t last);
void weft_emu__fails_free(emu_fails_t *f);

#endif

/* What the emu eviction and prefetch tests share: a gate task that holds
 * a device until the main thread has inserted the whole graph (so every
 * rank knows every next use before anything runs), a task that sums tiles
 * of NB x NB doubles into a token, and a device's counters. The including
 * test defines NB. */
#ifndef WEFT_TESTS_DEVGATE_H
#define WEFT_TESTS_DEVGATE_H

#include <sched.h>
#include <stdatomic.h>

#include "devtest.h"

static atomic_int devgate_open;

/* flow 0: a token (RW): spins until devgate_open is set. */
static inline int devgate_body(weft_task_t *t)
{
    (void)t;
    while (!atomic_load(&devgate_open)) sched_yield();
    return 0;
}

/* flows 0 .. n-2: X (R), flow n-1: T (RW): T += the X's. */
static inline int devgate_sum_body(weft_task_t *t)
{
    int n = weft_task_nflows(t);
    double *tok = weft_task_ptr(t, n - 1);
    int64_t lt = weft_task_ld(t, n - 1);
    for (int f = 0; f < n - 1; f++) {
        const double *x = weft_task_ptr(t, f);
        int64_t lx = weft_task_ld(t, f);
        for (int j = 0; j < NB; j++)
            for (int i = 0; i < NB; i++) tok[i + j * lt] += x[i + j * lx];
    }
    return 0;
}

static const weft_task_class_t devgate_gate = {.name = "gate",
                                               .body = {[WEFT_DEV_EMU] = devgate_body}};
static const weft_task_class_t devgate_use = {.name = "use",
                                              .body = {[WEFT_DEV_EMU] = devgate_sum_body}};

static inline weft_device_counters_t devgate_counters(weft_context_t *ctx, int dev)
{
    weft_device_counters_t c;
    REQUIRE(weft_device_counters_get(ctx, dev, &c) == WEFT_SUCCESS);
    return c;
}

#endif /* WEFT_TESTS_DEVGATE_H */

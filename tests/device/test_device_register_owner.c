/* weft_data_register_device with current=1 on a rank that does not own
 * the data: its memory (7) became the newest version on that rank alone,
 * a task there added 1, and the owner's 5 came back as 8, every call
 * returning 0. Now refused on that rank, named; current=0 is taken there
 * and the task reads the owner's version: 6. Rank 1 registers, the task
 * runs on rank 1's emu device, rank 0 checks its host memory. Rank 0's
 * device received nothing: its D2D count is 0 (the ipc transport's
 * warm-up copy at connect, 256 B, was counted there). */
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"
#include "weft/weft_stats.h"

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1.0;
    return 0;
}

static const weft_task_class_t bump_cls = {.name = "bump",
                                           .body = {[WEFT_DEV_CPU] = bump, [WEFT_DEV_EMU] = bump}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) < 2 || weft_ndevices(ctx) < 1) return 1;
    int me = weft_rank(ctx), ok = 1;
    double host = 5, mine = 7;
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, &host, 1, 1, 1, 0);
    if (me == 1) {
        ok &= weft_data_register_device(x, 1, &mine, 1, 1) == WEFT_ERR_INVALID;
        ok &= weft_data_register_device(x, 1, &mine, 1, 0) == 0;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "owner");
    ok &= weft_insert_task(tp, &bump_cls, WEFT_RW, x, WEFT_ON_RANK, 1, WEFT_DEVICE_HINT, 1, 0) == 0;
    ok &= weft_taskpool_wait(tp) == 0;
    weft_device_counters_t c;
    ok &= weft_device_counters_get(ctx, 1, &c) == 0;
    if (me == 0) ok &= host == 6.0 && c.bytes_d2d == 0;
    printf("test_device_register_owner rank %d: host %g: %s\n", me, host, ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    weft_data_release(x);
    ok &= weft_fini(ctx) == 0;
    return !ok;
}

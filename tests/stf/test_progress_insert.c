/* The progress line (parameter progress) during insertion: 3000 tasks of
 * 1 ms on 64 tiles (64 chains) with sched_window=2 keep the inserting
 * thread running tasks until the last insertion, so the run's seconds pass
 * before its wait. The lines were printed by the wait only: a long run printed none,
 * or only its last seconds'. A line printed before the last insertion
 * counts fewer than 3000 tasks of this rank (stf_progress_insert checks
 * one). Prints "test_progress_insert: PASSED" with the chain's sum. */
#include <stdio.h>
#include <time.h>

#include "weft/weft.h"

enum { NTASKS = 3000, NTILES = 64 };

static int bump(weft_task_t *t)
{
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    *(double *)weft_task_ptr(t, 0) += 1.0;
    return 0;
}

static const weft_task_class_t cls = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    static double x[NTILES];
    weft_data_t *tile[NTILES];
    for (int i = 0; i < NTILES; i++)
        tile[i] = weft_data_register(ctx, WEFT_DOUBLE, &x[i], 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "tiles");
    int rc = 0;
    for (int i = 0; i < NTASKS && rc == 0; i++)
        rc = weft_insert_task(tp, &cls, WEFT_RW, tile[i % NTILES], 0);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    double sum = 0;
    for (int i = 0; i < NTILES; i++) {
        weft_data_release(tile[i]);
        sum += x[i];
    }
    rc |= weft_fini(ctx);
    int ok = rc == 0 && sum == NTASKS;
    printf("test_progress_insert: %s (sum %g)\n", ok ? "PASSED" : "FAILED", sum);
    return !ok;
}

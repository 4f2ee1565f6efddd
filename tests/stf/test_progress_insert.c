/* The progress line (parameter progress) during insertion: 3000 tasks of
 * 1 ms on 64 tiles (64 chains) with sched_window=2 keep the inserting
 * thread running tasks until the last insertion, so the run's seconds pass
 * before its wait. Argument "slow": 700 insertions with the application's
 * own 2 ms between them, the tasks empty, the window left alone: the inserting thread
 * runs no task (the line was printed only while it did). The lines were printed by the wait only: a
 * long run printed none, or only its last seconds'. A line printed before the last insertion counts
 * fewer than 3000 tasks of this rank (stf_progress_insert checks one). Prints
 * "test_progress_insert: PASSED" with the chain's sum. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

enum { NTASKS = 3000, NTILES = 64 };

static long task_ns = 1000000, between_ns = 0;

static void pause_ns(long ns)
{
    struct timespec ts = {0, ns};
    if (ns > 0) nanosleep(&ts, NULL);
}

static int bump(weft_task_t *t)
{
    pause_ns(task_ns);
    *(double *)weft_task_ptr(t, 0) += 1.0;
    return 0;
}

static const weft_task_class_t cls = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int ntasks = NTASKS;
    if (argc > 1 && strcmp(argv[1], "slow") == 0) task_ns = 0, between_ns = 2000000, ntasks = 700;
    static double x[NTILES];
    weft_data_t *tile[NTILES];
    for (int i = 0; i < NTILES; i++)
        tile[i] = weft_data_register(ctx, WEFT_DOUBLE, &x[i], 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "tiles");
    int rc = 0;
    for (int i = 0; i < ntasks && rc == 0; i++) {
        pause_ns(between_ns);
        rc = weft_insert_task(tp, &cls, WEFT_RW, tile[i % NTILES], 0);
    }
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    double sum = 0;
    for (int i = 0; i < NTILES; i++) {
        weft_data_release(tile[i]);
        sum += x[i];
    }
    rc |= weft_fini(ctx);
    int ok = rc == 0 && sum == ntasks;
    printf("test_progress_insert: %s (sum %g)\n", ok ? "PASSED" : "FAILED", sum);
    return !ok;
}

/* Once the ranks are found apart, no body starts any more: rank 0 inserts
 * a chain of slow tasks on a value in its own memory, the other ranks
 * insert nothing, and each wait returns WEFT_ERR_MISMATCH. The value (and
 * the count of body calls) must not move after the wait returned: the
 * bodies of the chain went on writing the program's memory while it read
 * it, then later insertions were taken with 0 and never ran. Rank 0
 * enters its wait only once a body is running, so the wait must let that
 * body return first (the value then counts every body called). Checked
 * too: a later insertion returns WEFT_ERR_MISMATCH, and weft_fini does.
 * "stuck": rank 0's one body waits for what the program does after the
 * wait returns: the wait gives up on it after its bound, saying so, and
 * returns WEFT_ERR_MISMATCH (no hang).
 * "spread": every rank inserts the same 2000 tasks over 64 values of its
 * own memory (each rank's tasks on its own values, a batch body on emu
 * devices) and rank 0 one more at the end: with emu devices and host
 * workers both running the class, a host task's pull of a device's newest
 * version wrote the program's memory after the wait had returned. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

static atomic_int calls;

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int slow_inc(weft_task_t *t)
{
    atomic_fetch_add(&calls, 1);
    nap_ms(40);
    ((double *)weft_task_ptr(t, 0))[0] += 1;
    return 0;
}

static atomic_int released;

static int wait_released(weft_task_t *t)
{
    (void)t;
    atomic_fetch_add(&calls, 1);
    while (!atomic_load(&released)) nap_ms(1);
    return 0;
}

static const weft_task_class_t stuck_cls = {.name = "stuck",
                                            .body = {[WEFT_DEV_CPU] = wait_released}};

/* The stuck case: 0 when it held. */
static int stuck(weft_context_t *ctx)
{
    int rank = weft_rank(ctx), rc = 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stuck");
    if (rank == 0) rc = weft_insert_task(tp, &stuck_cls, WEFT_W, d, 0);
    while (rank == 0 && rc == 0 && atomic_load(&calls) == 0) nap_ms(1);
    int w = weft_taskpool_wait(tp);
    atomic_store(&released, 1);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    int ok = rc == 0 && w == WEFT_ERR_MISMATCH && f == WEFT_ERR_MISMATCH;
    printf("test_diverged_halt stuck rank %d: wait %d, fini %d: %s\n", rank, w, f,
           ok ? "PASSED" : "FAILED");
    return !ok;
}

static int fast_inc(weft_task_t *t)
{
    atomic_fetch_add(&calls, 1);
    nap_ms(1);
    ((double *)weft_task_ptr(t, 0))[0] += 1;
    return 0;
}

static int fast_inc_batch(weft_task_t *const *ts, int n)
{
    for (int i = 0; i < n; i++) fast_inc(ts[i]);
    return 0;
}

static const weft_task_class_t inc_cls = {.name = "slow_inc", .body = {[WEFT_DEV_CPU] = slow_inc}};
static const weft_task_class_t spread_cls = {
    .name = "fast_inc",
    .body = {[WEFT_DEV_CPU] = fast_inc, [WEFT_DEV_EMU] = fast_inc},
    .batch = {[WEFT_DEV_EMU] = fast_inc_batch}};

enum { NVALUES = 64 };
static double values[NVALUES];

static double values_sum(void)
{
    double s = 0;
    for (int i = 0; i < NVALUES; i++) s += values[i];
    return s;
}

/* The spread case: 0 when it held. */
static int spread(weft_context_t *ctx)
{
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx), rc = 0;
    weft_data_t *d[NVALUES * 8];
    int nd = NVALUES * nranks < NVALUES * 8 ? NVALUES * nranks : NVALUES * 8;
    for (int i = 0; i < nd; i++) {
        int owner = i / NVALUES;
        d[i] = weft_data_register(ctx, WEFT_DOUBLE, owner == rank ? &values[i % NVALUES] : NULL, 1,
                                  1, 1, owner);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "spread");
    for (int k = 0; k < 2000 + (rank == 0) && rc == 0; k++)
        rc = weft_insert_task(tp, &spread_cls, WEFT_RW | WEFT_AFFINITY, d[k % nd], 0);
    int w = weft_taskpool_wait(tp);
    double at_return = values_sum();
    int calls_at_return = atomic_load(&calls);
    int moved = 0;
    for (int i = 0; i < 60; i++) { /* sampled for 300 ms */
        nap_ms(5);
        moved |= values_sum() != at_return || atomic_load(&calls) != calls_at_return;
    }
    weft_taskpool_free(tp);
    for (int i = 0; i < nd; i++) weft_data_release(d[i]);
    int f = weft_fini(ctx);
    int ok = rc == 0 && w == WEFT_ERR_MISMATCH && !moved && f == WEFT_ERR_MISMATCH;
    printf("test_diverged_halt spread rank %d: wait %d, %d bodies called before it returned, sum "
           "%g then %g%s, fini %d: %s\n",
           rank, w, calls_at_return, at_return, values_sum(), moved ? " (moved meanwhile)" : "", f,
           ok ? "PASSED" : "FAILED");
    return !ok;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    if (argc > 1 && strcmp(argv[1], "spread") == 0) return spread(ctx);
    if (argc > 1 && strcmp(argv[1], "stuck") == 0) return stuck(ctx);
    int rank = weft_rank(ctx), n = 100, rc = 0;
    static double value;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? &value : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "apart");
    for (int k = 0; k < (rank == 0 ? n : 0) && rc == 0; k++)
        rc = weft_insert_task(tp, &inc_cls, WEFT_RW, d, 0);
    while (rank == 0 && rc == 0 && atomic_load(&calls) == 0) nap_ms(1);
    int w = weft_taskpool_wait(tp);
    double at_return = value;
    int calls_at_return = atomic_load(&calls);
    nap_ms(300);
    int still = value == at_return && atomic_load(&calls) == calls_at_return &&
                at_return == calls_at_return;
    int again = weft_insert_task(tp, &inc_cls, WEFT_RW, d, 0);
    int w2 = weft_taskpool_wait(tp);
    nap_ms(50);
    still = still && value == at_return && atomic_load(&calls) == calls_at_return;
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    int ok = rc == 0 && w == WEFT_ERR_MISMATCH && still && again == WEFT_ERR_MISMATCH &&
             w2 == WEFT_ERR_MISMATCH && f == WEFT_ERR_MISMATCH;
    printf("test_diverged_halt rank %d: wait %d, %d of %d bodies called before it returned, "
           "value %g then %g, later insertion %d, wait %d, fini %d: %s\n",
           rank, w, calls_at_return, rank == 0 ? n : 0, at_return, value, again, w2, f,
           ok ? "PASSED" : "FAILED");
    return !ok;
}

/* Once the ranks are found apart, no body starts any more: rank 0 inserts
 * a chain of slow tasks on a value in its own memory, the other ranks
 * insert nothing, and each wait returns WEFT_ERR_MISMATCH. The value (and
 * the count of body calls) must not move after the wait returned: the
 * bodies of the chain went on writing the program's memory while it read
 * it, then later insertions were taken with 0 and never ran. Checked too:
 * a later insertion returns WEFT_ERR_MISMATCH, and weft_fini does. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
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
    nap_ms(5);
    ((double *)weft_task_ptr(t, 0))[0] += 1;
    return 0;
}

static const weft_task_class_t inc_cls = {.name = "slow_inc", .body = {[WEFT_DEV_CPU] = slow_inc}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int rank = weft_rank(ctx), n = 400, rc = 0;
    static double value;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? &value : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "apart");
    for (int k = 0; k < (rank == 0 ? n : 0) && rc == 0; k++)
        rc = weft_insert_task(tp, &inc_cls, WEFT_RW, d, 0);
    int w = weft_taskpool_wait(tp);
    double at_return = value;
    int calls_at_return = atomic_load(&calls);
    nap_ms(300);
    int still = value == at_return && atomic_load(&calls) == calls_at_return;
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

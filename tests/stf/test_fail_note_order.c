/* The failure line names the task that failed, not a consequence of it
 * that a lower rank noted in its wait. 2 ranks: d, owned by rank 0, gets
 * +1 on rank 0 and +2 on rank 1; e, owned by rank 1, is written by a body
 * on rank 1 that fails; a last +100 of d on rank 0 reads e, so it is
 * cancelled and d's owner lost its final version. Rank 1 holds the good
 * v2 of d but cannot read it (fault_inject recover:1@1): bringing it home
 * fails, a note of the wait on both ranks. The line every rank logs named
 * "rank 0: bringing the last good versions home failed" (a note of the
 * lowest rank won) and the waits returned "internal error"; now it names
 * rank 1's task and every wait returns WEFT_ERR_TASK. */
#include <stdio.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    int v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    if (v < 0) return 5;
    double *x = weft_task_ptr(t, 0);
    x[0] += v;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && weft_nranks(ctx) == 2);
    int me = weft_rank(ctx);
    double dx = 0, ex = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &dx : NULL, 1, 1, 1, 0);
    weft_data_t *e = weft_data_register(ctx, WEFT_DOUBLE, me == 1 ? &ex : NULL, 1, 1, 1, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "order");
    int one = 1, two = 2, bad = -1, hundred = 100;
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &one, sizeof one, WEFT_ON_RANK,
                           0, 0) == 0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &two, sizeof two, WEFT_ON_RANK,
                           1, 0) == 0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, e, WEFT_VALUE, &bad, sizeof bad, WEFT_ON_RANK,
                           1, 0) == 0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_R, e, WEFT_VALUE, &hundred,
                           sizeof hundred, WEFT_ON_RANK, 0, 0) == 0);
    capture_begin();
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    CHECK(captured("taskpool order failed: rank 1: task add #2 returned 5"));
    CHECK(captured("could not come home after the failure"));
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(e);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_fail_note_order");
}

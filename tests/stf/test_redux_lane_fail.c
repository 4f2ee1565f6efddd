/* A failed contribution to a reduction, and a later task that reduces into
 * the same data on the same partial (lanes are dealt in turn, redux_lanes a
 * rank) and also writes another data: it runs (docs/SEMANTICS.md section
 * 3, Cancellation), and the reduced data keeps its value from before the
 * reduction. Before, that task read the lost partial and was cancelled,
 * its other write with it, where a task dealt another lane ran: which tasks
 * ran depended on the lane count and the ranks (a stranger's report).
 * BOOM (REDUX d, body fails) on rank argv[1], argv[3] FILL (REDUX d, +1)
 * on the same rank, then PUT (REDUX d +1, W x = 7) on rank argv[2]; d and
 * x are rank 0's, d = 100, x = 1. A second taskpool reduces +1 from each
 * rank. With argv[4] "again", the first taskpool then sets d = 1000 (W)
 * and reduces +1 five times more on BOOM's rank: that reduction's init
 * writes the partials anew, so it comes whole (d = 1005); the voided
 * partial stayed void until the wait and its combine was cancelled, d
 * 1000 (a fuzzer's finding). Prints "test_redux_lane_fail rank R: ok" or
 * what differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0;
    return 0;
}

static int add(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(const double *)weft_task_ptr(t, 1);
    return 0;
}

static int boom(weft_task_t *t)
{
    (void)t;
    return -42;
}

static int one(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static int put(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    *(double *)weft_task_ptr(t, 1) = 7;
    return 0;
}

static const weft_task_class_t zero_cls = {.name = "zero",
                                           .body = {[WEFT_DEV_CPU] = zero, [WEFT_DEV_EMU] = zero}};
static const weft_task_class_t add_cls = {.name = "add",
                                          .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};
static const weft_task_class_t boom_cls = {.name = "boom",
                                           .body = {[WEFT_DEV_CPU] = boom, [WEFT_DEV_EMU] = boom}};
static const weft_task_class_t one_cls = {.name = "one",
                                          .body = {[WEFT_DEV_CPU] = one, [WEFT_DEV_EMU] = one}};
static int set(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 1000;
    return 0;
}

static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set}};
static const weft_task_class_t put_cls = {.name = "put",
                                          .body = {[WEFT_DEV_CPU] = put, [WEFT_DEV_EMU] = put}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    CHECK(ctx != NULL);
    CHECK(argc == 4 || argc == 5);
    int again = argc == 5 && strcmp(argv[4], "again") == 0;
    int me = weft_rank(ctx), n = weft_nranks(ctx);
    int boom_rank = atoi(argv[1]), put_rank = atoi(argv[2]), nfill = atoi(argv[3]);
    CHECK(boom_rank < n && put_rank < n);
    double dm = 100, xm = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &dm : NULL, 1, 1, 1, 0);
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &xm : NULL, 1, 1, 1, 0);
    CHECK(d && x && weft_data_set_reduction(d, &zero_cls, &add_cls) == 0);

    weft_taskpool_t *tp = weft_taskpool_new(ctx, "lanes");
    CHECK(weft_insert_task(tp, &boom_cls, WEFT_REDUX, d, WEFT_ON_RANK, boom_rank, 0) == 0);
    for (int k = 0; k < nfill; k++)
        CHECK(weft_insert_task(tp, &one_cls, WEFT_REDUX, d, WEFT_ON_RANK, boom_rank, 0) == 0);
    CHECK(weft_insert_task(tp, &put_cls, WEFT_REDUX, d, WEFT_W, x, WEFT_ON_RANK, put_rank, 0) == 0);
    double base = 100;
    if (again) {
        CHECK(weft_insert_task(tp, &set_cls, WEFT_W, d, 0) == 0);
        for (int k = 0; k < 5; k++)
            CHECK(weft_insert_task(tp, &one_cls, WEFT_REDUX, d, WEFT_ON_RANK, boom_rank, 0) == 0);
        base = 1005;
    }
    int rc = weft_taskpool_wait(tp);
    int ok = rc == WEFT_ERR_TASK;
    if (me == 0) ok = ok && dm == base && xm == 7;
    if (!ok)
        printf("test_redux_lane_fail rank %d: wait %d (want %d); d = %g (want %g), x = %g "
               "(want 7)\n",
               me, rc, WEFT_ERR_TASK, dm, base, xm);

    /* The next taskpool starts from d = base: +1 from every rank. */
    for (int r = 0; r < n; r++)
        CHECK(weft_insert_task(tp, &one_cls, WEFT_REDUX, d, WEFT_ON_RANK, r, 0) == 0);
    rc = weft_taskpool_wait(tp);
    if (rc != WEFT_SUCCESS || (me == 0 && dm != base + n)) {
        printf("test_redux_lane_fail rank %d: then wait %d, d = %g (want %g)\n", me, rc, dm,
               base + n);
        ok = 0;
    }
    if (ok) printf("test_redux_lane_fail rank %d: ok\n", me);
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(x);
    weft_fini(ctx);
    return ok ? 0 : 1;
}

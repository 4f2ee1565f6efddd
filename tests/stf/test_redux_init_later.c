/* A reduction's init task failing in a later taskpool, where its partial
 * holds the last reduction's sum: the tasks dealt that partial are
 * cancelled there as in the first (nothing to add into), their other
 * writes with them. Before, they ran into the old sum (only the combine
 * was cancelled), so the same failure cancelled a task or not by the
 * taskpool it came in (a reviewer's probe). d = 100 and x = 1 are rank
 * 0's; one lane (run with --weft-redux_lanes=1 and fault_inject
 * task:zero:2@0, the init of rank 0's partial in the second taskpool).
 * Taskpool 1: ONE (REDUX d, +1) on every rank: d = 100 + ranks. Taskpool
 * 2: PUT (REDUX d +1, W x = 7) on rank 0: cancelled, the wait fails, d and
 * x keep their values. Prints "test_redux_init_later rank R: ok" or what
 * differs. */
#include <stdio.h>

#include "redux_classes.h"
#include "weft/weft.h"

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

static const weft_task_class_t one_cls = {.name = "one", .body = {[WEFT_DEV_CPU] = one}};
static const weft_task_class_t put_cls = {.name = "put", .body = {[WEFT_DEV_CPU] = put}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int me = weft_rank(ctx), n = weft_nranks(ctx);
    double dm = 100, xm = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &dm : NULL, 1, 1, 1, 0);
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &xm : NULL, 1, 1, 1, 0);
    int rc = weft_data_set_reduction(d, &redux_zero_class, &redux_combine_class);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "later");
    for (int r = 0; r < n; r++)
        rc |= weft_insert_task(tp, &one_cls, WEFT_REDUX, d, WEFT_ON_RANK, r, 0);
    int w1 = weft_taskpool_wait(tp);
    double d1 = dm;
    rc |= weft_insert_task(tp, &put_cls, WEFT_REDUX, d, WEFT_W, x, WEFT_ON_RANK, 0, 0);
    int w2 = weft_taskpool_wait(tp);
    int ok = rc == 0 && w1 == 0 && w2 == WEFT_ERR_TASK &&
             (me != 0 || (d1 == 100 + n && dm == 100 + n && xm == 1));
    if (ok)
        printf("test_redux_init_later rank %d: ok\n", me);
    else
        printf("test_redux_init_later rank %d: calls %d, waits %d %d (0 -9 wanted), d %g then %g "
               "(%d wanted), x %g (1 wanted)\n",
               me, rc, w1, w2, d1, dm, 100 + n, xm);
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(x);
    weft_fini(ctx);
    return !ok;
}

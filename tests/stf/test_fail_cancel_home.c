/* After a failure, a good version made away from its owner comes home even
 * when a later write of it on the same rank was cancelled (a cancelled
 * task never touches the bytes). 3 ranks, X owned by rank 2, Y by rank 0:
 * +1 of X on rank 2 (v1), +1 of X on rank 0 (v2, away from the owner), a
 * body that fails writing Y on rank 0, then +1 of X reading Y on rank R
 * (argument 1), cancelled. With R = 0 the rank holding v2 had its write of
 * X cancelled, so it offered nothing: X restarted from 1 without a word,
 * and the next taskpool's wait returned 0 with X = 2 instead of 3.
 * "destroyed" (2 ranks, X owned by rank 1): +1 of X on rank 0 (v1), then a
 * body that fails writing X on rank 0: v1 was held only where a failed
 * body may have changed it, so it is gone; every rank now says so, and X
 * restarts from 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int inc(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static int fails(weft_task_t *t)
{
    (void)t;
    return -7;
}

static const weft_task_class_t inc_class = {.name = "inc",
                                            .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};
static const weft_task_class_t fail_class = {
    .name = "fails", .body = {[WEFT_DEV_CPU] = fails, [WEFT_DEV_EMU] = fails}};

/* With devices, the tasks run on device 1 (the emu body), where a body's
 * own code was said as "a task failed (its body, its device or a transfer
 * of its data)" only. */
static int hint;

static int on(weft_taskpool_t *tp, const weft_task_class_t *c, weft_data_t *d, int rank)
{
    return weft_insert_task(tp, c, WEFT_RW, d, WEFT_ON_RANK, rank, WEFT_DEVICE_HINT, hint, 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int me = weft_rank(ctx), R = weft_nranks(ctx);
    hint = weft_ndevices(ctx) > 0;
    int destroyed = argc > 1 && strcmp(argv[1], "destroyed") == 0;
    int last = destroyed ? 0 : (argc > 1 ? atoi(argv[1]) : 0);
    REQUIRE(R == (destroyed ? 2 : 3) && last >= 0 && last < R);
    int owner = R - 1;
    double x = 0, y = 0;
    weft_data_t *X = weft_data_register(ctx, WEFT_DOUBLE, me == owner ? &x : NULL, 1, 1, 1, owner);
    weft_data_t *Y = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &y : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one");
    capture_begin(); /* the tasks may run as they are inserted */
    if (destroyed) {
        CHECK(on(tp, &inc_class, X, 0) == 0);
        CHECK(on(tp, &fail_class, X, 0) == 0);
    } else {
        CHECK(on(tp, &inc_class, X, owner) == 0);
        CHECK(on(tp, &inc_class, X, 0) == 0);
        CHECK(on(tp, &fail_class, Y, 0) == 0);
        CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, X, WEFT_R, Y, WEFT_ON_RANK, last, 0) == 0);
    }
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    if (me == 0)
        CHECK(captured(hint ? "weft[0.1] error: task fails #" : "weft[0] error: task fails #") &&
              captured(" failed: its body returned -7"));
    if (destroyed)
        CHECK(captured("its version v1 was held only where the task that wrote it next failed, "
                       "which may have changed its bytes: the next taskpool starts from v0"));
    if (me == owner) CHECK(x == (destroyed ? 0 : 2));
    CHECK(on(tp, &inc_class, X, owner) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    if (me == owner) CHECK(x == (destroyed ? 1 : 3));
    weft_taskpool_free(tp);
    weft_data_release(X);
    weft_data_release(Y);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_fail_cancel_home");
}

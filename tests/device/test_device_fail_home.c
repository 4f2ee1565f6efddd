/* A version made on a device that then fails, but read by another rank
 * before it did, is not lost: the wait brings it home from that rank
 * (docs/SEMANTICS.md section 3). On 2 ranks with an emu device each: x
 * (rank 0's, 1) gets +1 on rank 0's device (v1, 2); rank 1 adds x into b
 * on its host (it receives v1); a task on rank 0's device then kills the
 * device (fault_inject device_fail on its completion). The first wait
 * fails; x must hold 2 on rank 0 and a second taskpool's +1 on the host
 * gives 3, its wait succeeding. Before, x's version was said lost ("only
 * on device emu1") though rank 1 held it: x kept 1 and every later task
 * on x failed for the rest of the run. */
#include <stdio.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    double v = 1.0;
    if (weft_task_nflows(t) > 1) v = *(const double *)weft_task_ptr(t, 1);
    a[0] += v;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && weft_nranks(ctx) == 2 && weft_ndevices(ctx) == 1);
    int me = weft_rank(ctx);
    static double x[1] = {1}, b[1], y[1];
    weft_data_t *dx = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, 1, 1, 1, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, me == 1 ? b : NULL, 1, 1, 1, 1);
    weft_data_t *dy = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? y : NULL, 1, 1, 1, 0);
    REQUIRE(dx && db && dy);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "home");
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, dx, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, db, WEFT_R, dx, WEFT_DEVICE_HINT, 0, 0) == 0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, dy, WEFT_R, db, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    if (me == 0) CHECK(x[0] == 2.0);
    if (me == 1) CHECK(b[0] == 2.0);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, dx, WEFT_DEVICE_HINT, 0, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    if (me == 0) CHECK(x[0] == 3.0);
    printf("test_device_fail_home rank %d: x = %g\n", me, me == 0 ? x[0] : -1.0);
    weft_taskpool_free(tp);
    weft_data_release(dx);
    weft_data_release(db);
    weft_data_release(dy);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_device_fail_home");
}

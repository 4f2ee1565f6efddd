/* A NEW data whose only version was on a device that failed with the task
 * that wrote it next: the wait says no version is left, and that the data
 * has no contents until a WEFT_W write, rather than that the next taskpool
 * starts from the owner's copy (that copy was on the dead device, and
 * every reader failed on it). One rank, one emu device: x is set to 5
 * there (v1), +1 there fails with the device (fault_inject device_fail:2).
 * A later taskpool that writes x whole on the host and reads it back
 * works. */
#include <stdio.h>

#include "../check.h"
#include "weft/weft.h"

static int set(weft_task_t *t)
{
    double v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    *(double *)weft_task_ptr(t, 0) = v;
    return 0;
}

static int inc(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static int copy(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 1) = *(const double *)weft_task_ptr(t, 0);
    return 0;
}

static const weft_task_class_t set_class = {.name = "set",
                                            .body = {[WEFT_DEV_CPU] = set, [WEFT_DEV_EMU] = set}};
static const weft_task_class_t inc_class = {.name = "inc",
                                            .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};
static const weft_task_class_t copy_class = {.name = "copy", .body = {[WEFT_DEV_CPU] = copy}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && weft_ndevices(ctx) == 1);
    static double out[1];
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *o = weft_data_register(ctx, WEFT_DOUBLE, out, 1, 1, 1, 0);
    REQUIRE(x && o);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "none");
    double five = 5, seven = 7;
    CHECK(weft_insert_task(tp, &set_class, WEFT_W, x, WEFT_VALUE, &five, sizeof five,
                           WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, x, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    CHECK(weft_insert_task(tp, &set_class, WEFT_W, x, WEFT_VALUE, &seven, sizeof seven,
                           WEFT_DEVICE_HINT, 0, 0) == 0);
    CHECK(weft_insert_task(tp, &copy_class, WEFT_R, x, WEFT_W, o, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(out[0] == 7.0);
    printf("test_device_fail_none: out = %g\n", out[0]);
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(o);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_device_fail_none");
}

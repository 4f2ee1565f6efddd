/* A task whose input never reached its device (the stage-in copy fails:
 * fault_inject device_copy:1) ran no body: weft_stats_get's tasks_run and
 * weft_taskpool_ntasks_run do not count it (they did, while the device's
 * own counter did not), tasks_failed does, and the other tasks count.
 * Argument "injected" (fault_inject task:inc:1): the failure injected in
 * place of the body runs none either (the rank counted it, the device did
 * not); "body": a body that runs and fails counts on both (the device
 * counted only the tasks that succeeded). The rank's count and the
 * device's agree in every case. */
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
    return -4;
}

static const weft_task_class_t inc_class = {.name = "inc", .body = {[WEFT_DEV_EMU] = inc}};
static const weft_task_class_t fail_class = {.name = "fails", .body = {[WEFT_DEV_EMU] = fails}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int body = argc > 1 && strcmp(argv[1], "body") == 0;
    double a = 0, b = 0;
    weft_data_t *da = weft_data_register(ctx, WEFT_DOUBLE, &a, 1, 1, 1, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, &b, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "count");
    /* Its stage-in fails, or the failure injected in its place; or it runs and fails. */
    CHECK(weft_insert_task(tp, body ? &fail_class : &inc_class, WEFT_RW, da, 0) == 0);
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, db, 0) == 0);
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, db, 0) == 0);
    capture_begin();
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    int64_t ran = body ? 3 : 2;
    CHECK(st.tasks_run == ran && st.tasks_failed == 1 && st.tasks_cancelled == 0);
    CHECK(weft_taskpool_ntasks_run(tp) == ran);
    weft_device_counters_t c;
    CHECK(weft_device_counters_get(ctx, 1, &c) == 0 && c.tasks == ran);
    weft_taskpool_free(tp);
    weft_data_release(da);
    weft_data_release(db);
    CHECK(weft_fini(ctx) != WEFT_SUCCESS); /* the run had a failed task */
    CHECK(a == 0 && b == 2);
    return check_report("test_device_run_count");
}

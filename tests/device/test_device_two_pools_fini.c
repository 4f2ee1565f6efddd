/* Registered data used by two taskpools open at once on a device, never
 * released: weft_fini returned WEFT_ERR_INVALID for "leaks", the stale
 * device copies of the first taskpool's data (its wait ran while the
 * other was open). A stale copy of a data on the user's memory is a cache
 * of a data the user kept, not weft's leak: fini returns 0, the values
 * are right. */
#include "../check.h"
#include "weft/weft.h"

static int inc(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t inc_class = {.name = "inc",
                                            .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    double v[4] = {0};
    weft_data_t *d[4];
    for (int i = 0; i < 4; i++) d[i] = weft_data_register(ctx, WEFT_DOUBLE, &v[i], 1, 1, 1, 0);
    weft_taskpool_t *tp[2] = {weft_taskpool_new(ctx, "A"), weft_taskpool_new(ctx, "B")};
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < 2; g++) {
            CHECK(weft_insert_task(tp[g], &inc_class, WEFT_RW, d[2 * g], WEFT_R, d[2 * g + 1],
                                   0) == 0);
            CHECK(weft_insert_task(tp[g], &inc_class, WEFT_RW, d[2 * g + 1], WEFT_R, d[2 * g],
                                   0) == 0);
        }
    CHECK(weft_taskpool_wait(tp[0]) == WEFT_SUCCESS);
    CHECK(weft_taskpool_wait(tp[1]) == WEFT_SUCCESS);
    weft_taskpool_free(tp[0]);
    weft_taskpool_free(tp[1]);
    capture_begin();
    CHECK(weft_fini(ctx) == WEFT_SUCCESS); /* the data are the user's to keep */
    capture_end();
    CHECK(!captured("leak at weft_fini"));
    for (int i = 0; i < 4; i++) CHECK(v[i] == 2);
    return check_report("test_device_two_pools_fini");
}

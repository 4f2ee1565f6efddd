/* A task class's flops estimate that is no finite number >= 0 (NaN, -1,
 * infinity) is the class's error: said, and the task fails as for a
 * misused accessor. It was taken silently: weft_taskpool_gflops gave NaN
 * or -inf, and the devices got a tenth of the tasks. A valid estimate
 * counts. On the host and on emu devices (device selection reads it).
 * The failed tasks' writes are not published. */
#include <math.h>

#include "../check.h"
#include "weft/weft.h"

static double estimate;

static double flops(const weft_task_t *t)
{
    (void)t;
    return estimate;
}

static int one(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t cls = {
    .name = "one", .body = {[WEFT_DEV_CPU] = one, [WEFT_DEV_EMU] = one}, .flops = flops};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "flops");
    REQUIRE(d && tp && weft_data_set_init(d, NULL, NULL) == 0);
    const double bad[] = {NAN, -1.0, INFINITY, -INFINITY};
    for (int k = 0; k < 4; k++) {
        estimate = bad[k];
        capture_begin();
        CHECK(weft_insert_task(tp, &cls, WEFT_RW, d, 0) == 0);
        CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
        capture_end();
        CHECK(captured("its class's flops function returned "));
        CHECK(captured("an estimate is a finite number >= 0 (0: none); the task fails"));
        CHECK(isfinite(weft_taskpool_gflops(tp)));
    }
    estimate = -2.8e-17; /* 2/3 - 1/2 - 1/6 in doubles: a closed form's rounding, none */
    CHECK(weft_insert_task(tp, &cls, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_taskpool_gflops(tp) == 0);
    estimate = 1e6;
    CHECK(weft_insert_task(tp, &cls, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_rank(ctx) != 0 || weft_taskpool_gflops(tp) > 0); /* rank 0 ran it */
    double *v = NULL;
    if (weft_rank(ctx) == 0 && weft_data_host_acquire(d, WEFT_R, (void **)&v, NULL) == 0) {
        /* The two good tasks' +1 only: a task failed by its estimate
         * publishes no write (on the host it published its +1: 6). */
        CHECK(*v == 2);
        CHECK(weft_data_host_release(d) == 0);
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_flops_check");
}

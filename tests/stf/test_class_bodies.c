/* Task classes without a body that can run. A class with no body at all
 * is refused at insertion, on every rank alike (it used to be inserted
 * and fail at run time as an "internal error"). A class with a CUDA body
 * only, whose task lands on the host of a rank without CUDA, fails as a
 * task (WEFT_ERR_UNSUPPORTED in its line, WEFT_ERR_TASK from every rank's
 * wait), with a message saying what to give it. The task runs on the last
 * rank. */
#include "../check.h"
#include "weft/weft.h"

static int cuda_only(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t none_class = {.name = "none"};
static const weft_task_class_t cuda_class = {.name = "cuda_only",
                                             .body = {[WEFT_DEV_CUDA] = cuda_only}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int last = weft_nranks(ctx) - 1;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, last);
    REQUIRE(d != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "bodies");
    capture_begin();
    CHECK(weft_insert_task(tp, &none_class, WEFT_W, d, 0) == WEFT_ERR_INVALID);
    weft_arg_t arg = weft_arg_data(WEFT_W, d);
    CHECK(weft_insert_task_array(tp, &none_class, &arg, 1) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("argument 2 of weft_insert_task is task class none, which has no body"));
    CHECK(captured("argument 2 of weft_insert_task_array is task class none, which has no body"));
    CHECK(weft_taskpool_wait(tp) == 0); /* nothing was inserted */
    capture_begin();
    CHECK(weft_insert_task(tp, &cuda_class, WEFT_W, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    CHECK(captured("failed: rank "));
    CHECK(captured("task cuda_only #"));
    if (weft_rank(ctx) == last) {
        CHECK(captured("has no CPU body and runs on the host of rank"));
        CHECK(!captured("internal error"));
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("stf_class_bodies");
}

/* A data reduced into (WEFT_REDUX) and released before the wait: the
 * release is deferred until the tasks that use it are done (weft.h), so
 * the wait still combines the partial results, into the user's memory for
 * registered data. Before, the combine and init tasks weft inserts at the
 * wait went through the public insertion, which refused the released
 * handle ("argument 1 of insert zero is a released weft_data_t"): the wait
 * and weft_fini returned WEFT_ERR_INVALID on every rank and the user's
 * memory never got the sum. Checked for registered memory on rank 0 and
 * for a NEW data that nothing reads afterwards (combined, then freed:
 * no leak at weft_fini). */
#include "../check.h"
#include "weft/weft.h"

static int zero(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    p[0] = 0;
    return 0;
}

static int combine(weft_task_t *t)
{
    double *d = weft_task_ptr(t, 0);
    const double *s = weft_task_ptr(t, 1);
    d[0] += s[0];
    return 0;
}

static int add_one(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    p[0] += 1;
    return 0;
}

static const weft_task_class_t zero_class = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t combine_class = {.name = "combine",
                                                .body = {[WEFT_DEV_CPU] = combine}};
static const weft_task_class_t add_class = {.name = "add_one", .body = {[WEFT_DEV_CPU] = add_one}};

/* K tasks reduce into d over every rank (and device), then d is released
 * before the wait. */
static int reduce_then_release(weft_context_t *ctx, weft_data_t *d, int K)
{
    int n = weft_nranks(ctx), nd = weft_ndevices(ctx);
    CHECK(weft_data_set_reduction(d, &zero_class, &combine_class) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reduce");
    for (int k = 0; k < K; k++)
        CHECK(weft_insert_task(tp, &add_class, WEFT_REDUX, d, WEFT_ON_RANK, k % n, WEFT_DEVICE_HINT,
                               nd ? 1 + k % nd : 0, 0) == 0);
    weft_data_release(d);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx);
    double x = 100;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? &x : NULL, 1, 1, 1, 0);
    REQUIRE(d != NULL);
    CHECK(reduce_then_release(ctx, d, 25) == 0);
    CHECK(x == (rank == 0 ? 125 : 100));
    weft_data_t *fresh = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, weft_nranks(ctx) - 1);
    REQUIRE(fresh != NULL);
    CHECK(reduce_then_release(ctx, fresh, 7) == 0);
    CHECK(weft_fini(ctx) == 0);
    return check_report("stf_redux_release");
}

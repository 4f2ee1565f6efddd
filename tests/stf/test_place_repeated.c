/* Where a task with a repeated flow runs: on the owner of its first
 * written data in the order the flows were given (docs/GUIDE.md). A task
 * (R a, W b, RW a) ran on a's owner: the merge of a's two flows into one
 * read-write was done before the rank was chosen; adding a WEFT_REDUX
 * flow (REDUX r, R a, W b, RW a) moved it to b's owner, and with the
 * REDUX flow last (R a, W b, RW a, REDUX r) the partial of r was taken for b's owner while the task
 * ran on a's (a fuzzer's finding). 2 ranks: a on rank 1, b on rank 0.
 * Each task writes into b the rank it ran on; rank 0 checks 0, and r's
 * reduction's sum, 2. Prints "test_place_repeated rank R: ... PASSED". */
#include <stdio.h>

#include "weft/weft.h"

static int my_rank;

/* value 0: the flow of b, set to the rank the task runs on; value 1: the
 * flow of r's partial (-1: none), which gets 1 added. */
static int mark(weft_task_t *t)
{
    int at[2];
    if (weft_task_value_get(t, 0, &at[0], sizeof at[0]) != 0 ||
        weft_task_value_get(t, 1, &at[1], sizeof at[1]) != 0)
        return -1;
    *(double *)weft_task_ptr(t, at[0]) = my_rank;
    if (at[1] >= 0) *(double *)weft_task_ptr(t, at[1]) += 1;
    return 0;
}

static int zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0;
    return 0;
}

static int fold(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(const double *)weft_task_ptr(t, 1);
    return 0;
}

static const weft_task_class_t mark_cls = {.name = "mark", .body = {[WEFT_DEV_CPU] = mark}};
static const weft_task_class_t zero_cls = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t fold_cls = {.name = "fold", .body = {[WEFT_DEV_CPU] = fold}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2) return 2;
    my_rank = weft_rank(ctx);
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 1);
    weft_data_t *b1 = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *b2 = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *b3 = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *r = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 1);
    int rc = weft_data_set_init(a, NULL, NULL) | weft_data_set_reduction(r, &zero_cls, &fold_cls);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "place");
    int b_at[3] = {1, 2, 1}, r_at[3] = {-1, 0, 3};
    rc |= weft_insert_task(tp, &mark_cls, WEFT_R, a, WEFT_W, b1, WEFT_RW, a, WEFT_VALUE, &b_at[0],
                           sizeof(int), WEFT_VALUE, &r_at[0], sizeof(int), 0);
    rc |= weft_insert_task(tp, &mark_cls, WEFT_REDUX, r, WEFT_R, a, WEFT_W, b2, WEFT_RW, a,
                           WEFT_VALUE, &b_at[1], sizeof(int), WEFT_VALUE, &r_at[1], sizeof(int), 0);
    rc |= weft_insert_task(tp, &mark_cls, WEFT_R, a, WEFT_W, b3, WEFT_RW, a, WEFT_REDUX, r,
                           WEFT_VALUE, &b_at[2], sizeof(int), WEFT_VALUE, &r_at[2], sizeof(int), 0);
    rc |= weft_taskpool_wait(tp);
    double ran[3] = {-1, -1, -1}, sum = -1;
    weft_data_t *bs[3] = {b1, b2, b3};
    for (int k = 0; k < 3 && rc == 0 && my_rank == 0; k++) {
        const double *p = weft_data_host_ptr(bs[k], NULL);
        if (p) ran[k] = *p;
    }
    const double *pr = rc == 0 && my_rank == 1 ? weft_data_host_ptr(r, NULL) : NULL;
    if (pr) sum = *pr;
    weft_taskpool_free(tp);
    for (int k = 0; k < 3; k++) weft_data_release(bs[k]);
    weft_data_release(a);
    weft_data_release(r);
    rc |= weft_fini(ctx);
    int ok = rc == 0 && (my_rank == 0 ? ran[0] == 0 && ran[1] == 0 && ran[2] == 0 : sum == 2);
    if (my_rank == 0)
        printf("test_place_repeated rank 0: the three tasks ran on ranks %g %g %g (0 0 0 wanted): "
               "%s\n",
               ran[0], ran[1], ran[2], ok ? "PASSED" : "FAILED");
    else
        printf("test_place_repeated rank 1: r = %g (2 wanted): %s\n", sum,
               ok ? "PASSED" : "FAILED");
    return !ok;
}

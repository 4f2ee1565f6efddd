/* A reduction (WEFT_REDUX) one of whose contributions fails reaches its
 * data whole or not at all: the wait returns WEFT_ERR_TASK and the data
 * keeps its value from before the reduction, whatever the number of ranks
 * and lanes; the next taskpool's reduction starts from it. Before, the
 * partials were folded into the data rank by rank, so it kept the sum of
 * the ranks folded before the failed one's: 10 on 1 rank, 52 on 2, 40 on
 * 3, 34 on 4, for one reduction. Each rank reads the data in a task after
 * each wait and compares it with the sums computed here. Argument: the
 * contribution that fails (-1: none, the plain sum), or "init": an init
 * task of the first reduction fails (the run gives fault_inject task:zero),
 * whose contributions were then failed one by one, "no contents", where
 * they are cancelled: nothing to add into. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "redux_classes.h"
#include "weft/weft.h"

enum { K = 12 };
static int fail_k = -1;

/* flow 0: the partial; value 0: the contribution's index k, adding k. */
static int add(weft_task_t *t)
{
    int k;
    if (weft_task_value_get(t, 0, &k, sizeof k) != 0) return -1;
    if (k == fail_k) return -5;
    *(double *)weft_task_ptr(t, 0) += k;
    return 0;
}

static double seen;
static int look(weft_task_t *t)
{
    seen = *(const double *)weft_task_ptr(t, 0);
    return 0;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};
static const weft_task_class_t look_class = {.name = "look", .body = {[WEFT_DEV_CPU] = look}};

/* One taskpool: contributions k = first..first+K-1 on rank k % nranks. */
static int reduce(weft_context_t *ctx, weft_data_t *x, int first)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reduce");
    for (int k = first; k < first + K; k++)
        CHECK(weft_insert_task(tp, &add_class, WEFT_REDUX, x, WEFT_VALUE, &k, sizeof k,
                               WEFT_ON_RANK, k % weft_nranks(ctx), 0) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

/* What x holds, as a task on this rank reads it. */
static double read_here(weft_context_t *ctx, weft_data_t *x)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "look");
    seen = -1;
    for (int r = 0; r < weft_nranks(ctx); r++)
        CHECK(weft_insert_task(tp, &look_class, WEFT_R, x, WEFT_ON_RANK, r, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    return seen;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    CHECK(ctx != NULL);
    if (!ctx) return check_report("stf_redux_fail");
    int init_fails = argc > 1 && strcmp(argv[1], "init") == 0;
    fail_k = argc > 1 && !init_fails ? atoi(argv[1]) : -1;
    int me = weft_rank(ctx), owner = weft_nranks(ctx) - 1;
    double *mem = me == owner ? malloc(sizeof *mem) : NULL;
    if (mem) *mem = 10;
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, mem, 1, 1, 1, owner);
    CHECK(weft_data_set_reduction(x, &redux_zero_class, &redux_combine_class) == 0);

    double sum1 = 0, sum2 = 0;
    for (int k = 0; k < K; k++) sum1 += k, sum2 += K + k;
    int failing = init_fails || (fail_k >= 0 && fail_k < K);
    weft_stats_t before, after;
    CHECK(weft_stats_get(ctx, &before) == 0);
    CHECK(reduce(ctx, x, 0) == (failing ? WEFT_ERR_TASK : WEFT_SUCCESS));
    CHECK(weft_stats_get(ctx, &after) == 0);
    /* One failed task at most a rank: what follows a failure is cancelled. */
    int64_t failed = after.tasks_failed - before.tasks_failed;
    if (failed > 1) printf("rank %d: %lld tasks failed, one wanted\n", me, (long long)failed);
    CHECK(failed <= 1);
    double want = failing ? 10 : 10 + sum1;
    double got = read_here(ctx, x);
    if (got != want) printf("rank %d: after the first reduction x is %g, want %g\n", me, got, want);
    CHECK(got == want);
    CHECK(reduce(ctx, x, K) == WEFT_SUCCESS);
    want += sum2;
    got = read_here(ctx, x);
    if (got != want)
        printf("rank %d: after the second reduction x is %g, want %g\n", me, got, want);
    CHECK(got == want);
    if (mem) CHECK(*mem == want);
    weft_data_release(x);
    int frc = weft_fini(ctx);
    CHECK(frc == (failing ? WEFT_ERR_TASK : WEFT_SUCCESS));
    free(mem);
    return check_report("stf_redux_fail");
}

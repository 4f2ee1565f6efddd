/* A NEW data that a graph wrote, then read by insertions on every rank.
 * Its net version stayed 0, "never written", on every rank: without an
 * initialiser every later reader was refused ("reads NEW data before any
 * task wrote it"), and with one (`init`), every rank but the owner made
 * the initial contents itself and read zeros instead of what the graph
 * wrote, silently. The graph's one task (rank 0, the owner) writes 42 + j
 * into T; then each rank k inserts a copy of T into its own Y[k]; every
 * rank checks its Y, and a weft_data_set_init of T after the graph is
 * refused on every rank ("it has contents already"). Argument "sim", in a
 * simulation of rank 0 (no body runs, nothing to check in Y): the
 * simulated owner counted the graph's write too (it counted none, and
 * refused the readers as reading a NEW data no task wrote). */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "ptg_one_task.h"

#define N 5

static int fill(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = 42 + i;
    return 0;
}

static int copy(weft_task_t *t)
{
    double *y = weft_task_ptr(t, 0);
    const double *x = weft_task_ptr(t, 1);
    memcpy(y, x, sizeof *y * (size_t)weft_task_rows(t, 0));
    return 0;
}

static const weft_task_class_t fill_class = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = fill, [WEFT_DEV_EMU] = fill}};
static const weft_task_class_t copy_class = {
    .name = "copy", .body = {[WEFT_DEV_CPU] = copy, [WEFT_DEV_EMU] = copy}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int me = weft_rank(ctx), R = weft_nranks(ctx);
    int with_init = argc > 1 && strcmp(argv[1], "init") == 0;
    int sim = argc > 1 && strcmp(argv[1], "sim") == 0;
    ptg_one_data = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
    REQUIRE(ptg_one_data != NULL);
    if (with_init) CHECK(weft_data_set_init(ptg_one_data, NULL, NULL) == WEFT_SUCCESS);
    double y[N] = {0};
    weft_data_t *Y[16];
    REQUIRE(R <= 16);
    for (int k = 0; k < R; k++)
        Y[k] = weft_data_register(ctx, WEFT_DOUBLE, k == me ? y : NULL, N, 1, N, k);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "new-after");
    weft_ptg_class_t cls = PTG_ONE_CLASS(fill_class);
    weft_ptg_t g = {&cls, 1, NULL};
    CHECK(weft_ptg_insert(tp, &g) == WEFT_SUCCESS);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    capture_begin();
    CHECK(weft_data_set_init(ptg_one_data, NULL, NULL) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("it has contents already"));
    for (int k = 0; k < R; k++)
        CHECK(weft_insert_task(tp, &copy_class, WEFT_W, Y[k], WEFT_R, ptg_one_data, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N && !sim; i++) bad += y[i] != 42 + i;
    CHECK(bad == 0);
    weft_taskpool_free(tp);
    for (int k = 0; k < R; k++) weft_data_release(Y[k]);
    weft_data_release(ptg_one_data);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    printf("test_ptg_new_after rank %d: %s %s\n", me,
           sim         ? "sim"
           : with_init ? "init"
                       : "plain",
           bad ? "wrong" : "ok");
    return check_report("test_ptg_new_after");
}

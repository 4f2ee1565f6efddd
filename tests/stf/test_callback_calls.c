/* A function weft calls back that is not a body is held to the body's
 * rule: a data's init function (weft_data_set_init), which runs on the
 * main thread inside an insertion, and a distribution's rank function,
 * which runs inside the matrix's creation, may not call what belongs to
 * the main thread, and neither may a graph's functions (weft_ptg_class_t),
 * which run inside weft_ptg_insert. Before, such a call went through: a
 * wait or an insertion reentered the insertion running the init function,
 * a creation reentered the matrix's, and a wait from a graph's args
 * function on one rank hung both (weft_fini from its range function
 * crashed in MPI after MPI_Finalize). Now the call is refused, named, and what ran the
 * function fails (the insertion, the matrix's creation) on every rank by
 * the next agreement; the rank's next taskpool runs, and weft_fini returns
 * the run's first error. */
#include <string.h>

#include "../check.h"
#include "../ptg/ptg_one_task.h"

static weft_context_t *ctx;
static weft_taskpool_t *open_tp;
static int refused;

static int owner0(int i, int j, void *arg)
{
    (void)i, (void)j, (void)arg;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    if (d == NULL) refused++;
    return 0;
}

static void init_waits(void *ptr, int64_t ld, int rows, int cols, void *arg)
{
    (void)ld, (void)arg;
    memset(ptr, 0, sizeof(double) * (size_t)rows * (size_t)cols);
    if (weft_taskpool_wait(open_tp) == WEFT_ERR_INVALID) refused++;
}

static int bump(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    a[0] += 1.0;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

/* The rank function's call: no matrix, one refusal a tile per pass. */
static void rank_function(void)
{
    capture_begin();
    weft_dist_t dist = {.rank = owner0};
    weft_matrix_t *A = weft_matrix_new_dist(ctx, WEFT_DOUBLE, 4, 4, 2, 2, &dist);
    const char *text = capture_end();
    CHECK(A == NULL);
    CHECK(refused > 0);
    CHECK(strstr(text, "weft_data_new called from the rank or device function of a weft_dist_t: "
                       "a function weft calls back may only compute") != NULL);
    CHECK(strstr(text, "the matrix's creation fails") != NULL);
}

/* The init function's wait: refused, the insertion and the wait fail on
 * every rank (the task reads on rank 0 only: the others learn it at the
 * wait's agreement). */
static void init_function(void)
{
    refused = 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    CHECK(weft_data_set_init(d, init_waits, NULL) == WEFT_SUCCESS);
    open_tp = weft_taskpool_new(ctx, "init-waits");
    capture_begin();
    int irc = weft_insert_task(open_tp, &bump_class, WEFT_RW, d, WEFT_ON_RANK, 0, 0);
    int wrc = weft_taskpool_wait(open_tp);
    const char *text = capture_end();
    if (weft_rank(ctx) == 0) {
        CHECK(irc != WEFT_SUCCESS);
        CHECK(refused == 1);
        CHECK(strstr(text, "weft_taskpool_wait called from the init function of data") != NULL);
        CHECK(strstr(text, "the data's initialisation fails") != NULL);
    }
    CHECK(wrc != WEFT_SUCCESS);
    weft_taskpool_free(open_tp);
    weft_data_release(d);
}

/* ptg_one_task.h's graph (one task on rank 0, writing ptg_one_data) with
 * an args function that waits. Rank 0 alone runs the task, so rank 0
 * alone calls it: the other ranks learn the refusal at the agreement. */
static int args_wait(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    if (weft_taskpool_wait(open_tp) == WEFT_ERR_INVALID) refused++;
    return ptg_one_args(idx, a, max, arg);
}

static void graph_function(void)
{
    refused = 0;
    ptg_one_data = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    open_tp = weft_taskpool_new(ctx, "graph-waits");
    weft_ptg_class_t cls = {&bump_class,       1,         ptg_one_range,
                            ptg_one_rank,      args_wait, ptg_one_producer,
                            ptg_one_consumers, NULL};
    weft_ptg_t g = {&cls, 1, NULL};
    capture_begin();
    int rc = weft_ptg_insert(open_tp, &g);
    const char *text = capture_end();
    CHECK(rc != WEFT_SUCCESS);
    CHECK(strstr(text, "weft_taskpool_wait called from a function of the graph") != NULL);
    if (weft_rank(ctx) == 0) CHECK(refused > 0);
    CHECK(weft_taskpool_wait(open_tp) == WEFT_SUCCESS); /* nothing of the graph ran */
    weft_taskpool_free(open_tp);
    weft_data_release(ptg_one_data);
}

/* A class's flops function, called where its task ends (a worker, or the
 * main thread inside an insertion or a wait when the window is full),
 * waits: refused and its task fails, on every rank by the wait. It went
 * through before: a wait or weft_fini from the main thread's call hung,
 * and an ended context crashed the insertion it returned to. */
static double flops_waits(const weft_task_t *t)
{
    (void)t;
    if (weft_taskpool_wait(open_tp) == WEFT_ERR_INVALID) refused++;
    return 1.0;
}

static const weft_task_class_t waitflops_class = {
    .name = "waitflops", .body = {[WEFT_DEV_CPU] = bump}, .flops = flops_waits};

static void flops_function(void)
{
    refused = 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    CHECK(weft_data_set_init(d, NULL, NULL) == WEFT_SUCCESS);
    open_tp = weft_taskpool_new(ctx, "flops-waits");
    capture_begin();
    CHECK(weft_insert_task(open_tp, &waitflops_class, WEFT_RW, d, 0) == WEFT_SUCCESS);
    int wrc = weft_taskpool_wait(open_tp);
    const char *text = capture_end();
    CHECK(wrc != WEFT_SUCCESS);
    if (weft_rank(ctx) == 0) {
        CHECK(refused == 1);
        CHECK(strstr(text, "weft_taskpool_wait called from the flops function of task class "
                           "waitflops") != NULL);
    }
    weft_taskpool_free(open_tp);
    weft_data_release(d);
}

/* weft_task_error from the main thread, outside any body: refused (the
 * task it names may be gone, and its line would pass for another's
 * cause). */
static void task_error_outside(void)
{
    capture_begin();
    weft_task_error((const weft_task_t *)&refused, "not a body");
    capture_end();
    CHECK(captured("weft_task_error called outside a task body"));
}

/* Afterwards the rank runs taskpools as before. */
static void still_runs(void)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    CHECK(weft_data_set_init(d, NULL, NULL) == WEFT_SUCCESS);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "after");
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, 0) == WEFT_SUCCESS);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    if (weft_rank(ctx) == 0) {
        double *p = weft_data_host_ptr(d, NULL);
        CHECK(p != NULL && p[0] == 1.0);
    }
    weft_data_release(d);
}

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    rank_function();
    init_function();
    graph_function();
    flops_function();
    task_error_outside();
    still_runs();
    int fini = weft_fini(ctx);
    CHECK(fini == WEFT_ERR_TASK); /* the run's first error, on every rank */
    return check_report("stf_callback_calls");
}

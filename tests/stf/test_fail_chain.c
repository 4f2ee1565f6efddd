/* A failed task cancels what depends on it, on every rank (docs/SEMANTICS.md
 * section 3). Tiles: a (rank 0), b (rank 1), c[r] (rank r). Taskpool
 * "chain": set a = 1, b = 0, c[r] = 0; bump a (a += 1) FAILS (its body returns -42,
 * or fault_inject makes it); b += a and a += b are cancelled (on ranks 1
 * and 0); c[r] += 1 three times runs everywhere; b = 7 (write only: runs);
 * c[0] += b runs. Every rank's wait returns WEFT_ERR_TASK; a keeps 1,
 * b = 7, c[0] = 10, c[r] = 3. Then a second taskpool (a += 1, b += a)
 * runs correctly. argv[1]: "body" (the body fails) or "inject". With an
 * emu device the tiles live there and the bodies run on it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static atomic_int ok_runs, dev_runs;

static void counted(weft_task_t *t)
{
    atomic_fetch_add(&ok_runs, 1);
    if (weft_task_device(t) > 0) atomic_fetch_add(&dev_runs, 1);
}

static int set_body(weft_task_t *t)
{
    double v;
    weft_task_value(t, 0, &v);
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = v;
    counted(t);
    return 0;
}

/* x += 1, unless the value says fail. */
static int inc_body(weft_task_t *t)
{
    int fail;
    weft_task_value(t, 0, &fail);
    if (fail) return -42;
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] += 1;
    counted(t);
    return 0;
}

/* flow 1 += flow 0 */
static int add_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] += x[i];
    counted(t);
    return 0;
}

static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t inc_cls = {.name = "inc", .body = {[WEFT_DEV_CPU] = inc_body}};
/* The same as inc, for a alone: fault_inject names it (task:bump:1). */
static const weft_task_class_t bump_cls = {.name = "bump", .body = {[WEFT_DEV_CPU] = inc_body}};
static const weft_task_class_t add_cls = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

static int set(weft_taskpool_t *tp, weft_data_t *d, double v)
{
    return weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, d, WEFT_VALUE, &v, sizeof v, 0);
}

static double value(weft_data_t *d)
{
    const double *p = weft_data_host_ptr(d, NULL);
    return p ? p[0] : -1;
}

static int chain(weft_taskpool_t *tp, weft_data_t *a, weft_data_t *b, weft_data_t **c, int n,
                 int fail_in_body)
{
    int rc = set(tp, a, 1) | set(tp, b, 0), fail = fail_in_body;
    for (int r = 0; r < n; r++) rc |= set(tp, c[r], 0);
    rc |= weft_insert_task(tp, &bump_cls, WEFT_RW | WEFT_AFFINITY, a, WEFT_VALUE, &fail,
                           sizeof fail, 0);
    rc |= weft_insert_task(tp, &add_cls, WEFT_R, a, WEFT_RW | WEFT_AFFINITY, b, 0);
    rc |= weft_insert_task(tp, &add_cls, WEFT_R, b, WEFT_RW | WEFT_AFFINITY, a, 0);
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < n; r++)
            rc |= weft_insert_task(tp, &inc_cls, WEFT_RW | WEFT_AFFINITY, c[r], WEFT_VALUE,
                                   &(int){0}, sizeof(int), 0);
    rc |= set(tp, b, 7);
    rc |= weft_insert_task(tp, &add_cls, WEFT_R, b, WEFT_RW | WEFT_AFFINITY, c[0], 0);
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int fail_in_body = argc > 1 && strcmp(argv[1], "body") == 0;
    int rank = weft_rank(ctx), n = weft_nranks(ctx), rows = argc > 2 ? atoi(argv[2]) : 4;
    if (n < 2 || n > 16) return 1;
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
    weft_data_t *b = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
    weft_data_t *c[16];
    for (int r = 0; r < n; r++) c[r] = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, r);
    if (weft_ndevices(ctx) > 0) {
        CHECK(weft_data_set_device(a, 1) == 0);
        CHECK(weft_data_set_device(b, 1) == 0);
        for (int r = 0; r < n; r++) CHECK(weft_data_set_device(c[r], 1) == 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    CHECK(chain(tp, a, b, c, n, fail_in_body) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    /* Bodies that ran to success, and cancellations (transfers included):
     * rank 0 loses the SEND of a, the RECV of b and a += b; rank 1 the RECV
     * of a, b += a and the SEND of b. */
    int expect_runs = rank == 0 ? 6 : rank == 1 ? 6 : 4;
    int expect_cancelled = rank < 2 ? 3 : 0;
    CHECK(atomic_load(&ok_runs) == expect_runs);
    CHECK(st.tasks_cancelled == expect_cancelled);
    CHECK(st.tasks_failed == (rank == 0));
    if (rank == 0) CHECK(value(a) == 1 && value(c[0]) == 10);
    if (rank == 1) CHECK(value(b) == 7);
    if (rank > 0) CHECK(value(c[rank]) == 3);
    if (weft_ndevices(ctx) > 0) CHECK(atomic_load(&dev_runs) > 0);
    fprintf(stderr, "rank %d: %d bodies ran, %lld cancelled, %lld failed\n", rank,
            atomic_load(&ok_runs), (long long)st.tasks_cancelled, (long long)st.tasks_failed);

    /* The next taskpool runs as if nothing had failed: a = 2, b = 9. */
    int zero = 0;
    CHECK(weft_insert_task(tp, &bump_cls, WEFT_RW | WEFT_AFFINITY, a, WEFT_VALUE, &zero,
                           sizeof zero, 0) == 0);
    CHECK(weft_insert_task(tp, &add_cls, WEFT_R, a, WEFT_RW | WEFT_AFFINITY, b, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    if (rank == 0) CHECK(value(a) == 2);
    if (rank == 1) CHECK(value(b) == 9);
    weft_taskpool_free(tp);
    weft_data_release(a);
    weft_data_release(b);
    for (int r = 0; r < n; r++) weft_data_release(c[r]);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK); /* the context's first error */
    printf("test_fail_chain rank %d: %d checks, %d failed: %s\n", rank, checks, failures,
           failures ? "FAILED" : "PASSED");
    return failures != 0;
}

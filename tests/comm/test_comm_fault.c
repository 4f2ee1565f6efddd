/* A failure of the comm engine fails the taskpool on every rank without a
 * hang (docs/SEMANTICS.md section 3): rank 0 writes x, rank 1 adds it to
 * y. Run with fault_inject=comm_alloc:N@R or comm_post:N@R; argv[1] is the
 * tile's rows (4: eager, 20000: rendezvous), argv[2] "fail" when the rule
 * must hit (every rank's wait returns WEFT_ERR_TASK, y keeps 0) or "ok".
 * A second taskpool then moves the tile correctly: y = 2. A rendezvous
 * between host copies counts only the bytes of the moves that succeeded.
 * With argv[3] ("dev" or "host", on a run with an emu device) x lives on
 * rank 0's device or host and y on rank 1's device, so the move lands in
 * device memory (and leaves it, with "dev"): run with device_copy:N@R, the
 * comm engine's own device copies fail (an ipc pull that cannot be
 * enqueued falls back to staging: "ok").
 * argv[2] "again": the rule fails the first receive, and rank 0 writes x
 * a second time in the same taskpool for an add into z on rank 1: the
 * second receive lands in the copy the failed one was using (it was left
 * arriving for good, and that receive waited for ever) and z = 2.
 * argv[2] "first": the rule fails the first write of y (task:1@1): the
 * next taskpool's add, which reads y, is refused at insertion on both
 * ranks, named; once a task wrote y the move works (y = 5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int set_body(weft_task_t *t)
{
    double v;
    weft_task_value(t, 0, &v);
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = v;
    return 0;
}

static int add_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] += x[i];
    return 0;
}

static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t add_cls = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

static int move(weft_taskpool_t *tp, weft_data_t *x, weft_data_t *y, double v)
{
    int rc = weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, x, WEFT_VALUE, &v, sizeof v, 0);
    return rc | weft_insert_task(tp, &add_cls, WEFT_R, x, WEFT_RW | WEFT_AFFINITY, y, 0);
}

/* x moved twice in one taskpool, the first move failing (see the top). */
static int again(weft_context_t *ctx, weft_data_t *x, weft_data_t *y, int rows, int dev)
{
    int rank = weft_rank(ctx);
    weft_data_t *z = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
    if (dev) CHECK(weft_data_set_device(z, 1) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "again");
    double zero = 0;
    CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_VALUE, &zero, sizeof zero,
                           0) == 0);
    CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, z, WEFT_VALUE, &zero, sizeof zero,
                           0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(move(tp, x, y, 5) == 0 && move(tp, x, z, 2) == 0);
    int w = weft_taskpool_wait(tp);
    CHECK(w == WEFT_ERR_TASK);
    if (rank == 1) {
        const double *py = weft_data_host_ptr(y, NULL), *pz = weft_data_host_ptr(z, NULL);
        CHECK(py && py[0] == 0 && py[rows - 1] == 0);
        CHECK(pz && pz[0] == 2 && pz[rows - 1] == 2);
    }
    weft_taskpool_free(tp);
    weft_data_release(z);
    return w;
}

/* y's first writer failed (see the top). */
static void first_write(weft_context_t *ctx, weft_data_t *x, weft_data_t *y, int rows)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "moves");
    double zero = 0;
    CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_VALUE, &zero, sizeof zero,
                           0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    CHECK(move(tp, x, y, 5) == WEFT_ERR_INVALID);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_VALUE, &zero, sizeof zero,
                           0) == 0);
    CHECK(move(tp, x, y, 5) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    const double *py = weft_rank(ctx) == 1 ? weft_data_host_ptr(y, NULL) : NULL;
    CHECK(weft_rank(ctx) != 1 || (py && py[0] == 5 && py[rows - 1] == 5));
    weft_taskpool_free(tp);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2 || argc < 3) return 1;
    if (strcmp(argv[2], "again") == 0) {
        int rank = weft_rank(ctx), rows = atoi(argv[1]), dev = argc > 3 && !strcmp(argv[3], "dev");
        weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
        weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
        if (dev) CHECK(weft_data_set_device(x, 1) == 0 && weft_data_set_device(y, 1) == 0);
        int w = again(ctx, x, y, rows, dev);
        weft_data_release(x);
        weft_data_release(y);
        CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
        printf("test_comm_fault rank %d: again: wait returned '%s', %d checks, %d failed: %s\n",
               rank, weft_strerror(w), checks, failures, failures ? "FAILED" : "PASSED");
        return failures != 0;
    }
    int rank = weft_rank(ctx), rows = atoi(argv[1]), must_fail = strcmp(argv[2], "fail") == 0;
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
    if (argc > 3) {
        CHECK(weft_data_set_device(x, strcmp(argv[3], "dev") == 0 ? 1 : 0) == 0);
        CHECK(weft_data_set_device(y, 1) == 0);
    }
    if (strcmp(argv[2], "first") == 0) {
        first_write(ctx, x, y, rows);
        weft_data_release(x);
        weft_data_release(y);
        CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
        printf("test_comm_fault rank %d: first write: %d checks, %d failed: %s\n", rank, checks,
               failures, failures ? "FAILED" : "PASSED");
        return failures != 0;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "moves");
    double zero = 0;
    CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_VALUE, &zero, sizeof zero,
                           0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(move(tp, x, y, 5) == 0);
    int w = weft_taskpool_wait(tp);
    CHECK(w == (must_fail ? WEFT_ERR_TASK : 0));
    const double *py = rank == 1 ? weft_data_host_ptr(y, NULL) : NULL;
    double expect = must_fail ? 0 : 5;
    if (rank == 1) CHECK(py && py[0] == expect && py[rows - 1] == expect);
    /* The engine goes on: the next taskpool moves the tile. */
    CHECK(move(tp, x, y, 2) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    py = rank == 1 ? weft_data_host_ptr(y, NULL) : NULL;
    if (rank == 1) CHECK(py && py[0] == expect + 2 && py[rows - 1] == expect + 2);
    /* Host to host by rendezvous: a failed move sent and received no byte
     * (the sender counted its bytes when it started them). */
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    int64_t moved = (must_fail ? 1 : 2) * (int64_t)rows * (int64_t)sizeof(double);
    if (argc == 3 && rows * sizeof(double) > 65536) {
        CHECK(st.net_bytes_sent == (rank == 0 ? moved : 0));
        CHECK(st.net_bytes_received == (rank == 1 ? moved : 0));
    }
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    int f = weft_fini(ctx);
    CHECK(f == (must_fail ? WEFT_ERR_TASK : 0));
    printf("test_comm_fault rank %d: wait returned '%s', %d checks, %d failed: %s\n", rank,
           weft_strerror(w), checks, failures, failures ? "FAILED" : "PASSED");
    return failures != 0;
}

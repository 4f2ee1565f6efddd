/* check_reads: a body that writes through a flow it was given to read
 * (WEFT_R) fails, named, on every rank; nothing caught it before (a
 * stranger's REDUX body incremented its R tile, the waits returned 0 and
 * the reads were quietly changed). A chain on 1 or more ranks: x (owned by
 * rank 0) read by "add" tasks that sum it into y (owned by the last rank),
 * the second of them on the last rank also writing x[0] when its value
 * says so. Argument 1: "bad" (that write), "negate" (its two first
 * elements negated, a write the tile's hash missed) or "good"; argument 2: "set"
 * turns check_reads on with weft_param_set after weft_init (it is live).
 * Argument 1 "batch": one rank, a batched class on an emu device.
 * Prints "test_check_reads rank R: wait=W y=Y x=X" (run_expect.sh checks),
 * then the check report. */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    int bad;
    if (weft_task_value_get(t, 0, &bad, sizeof bad) != 0) return -1;
    double *x = weft_task_ptr(t, 0), *y = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] += x[i];
    if (bad == 1) x[0] += 1000; /* the mistake: flow 0 is WEFT_R */
    if (bad == 2) {             /* two sign bits flipped: cancelled in the hash before */
        x[0] = -x[0];
        x[1] = -x[1];
    }
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

/* The same body, batched on emu devices (a batch call skipped the check). */
static int add_batch(weft_task_t *const *tasks, int n)
{
    for (int i = 0; i < n; i++)
        if (add(tasks[i]) != 0) return -1;
    return 0;
}

static const weft_task_class_t batched_class = {
    .name = "addb", .body = {[WEFT_DEV_CPU] = add}, .batch = {[WEFT_DEV_EMU] = add_batch}};

/* "batch": 8 independent tasks on one rank, each reading x into its own
 * y, the fourth writing x: ready together on the emu device, they run in
 * batches. Returns the wait's status. */
static int batched(weft_context_t *ctx, double *x)
{
    double ys[8][5] = {{0}};
    weft_data_t *dx = weft_data_register(ctx, WEFT_DOUBLE, x, 5, 1, 5, 0), *dy[8];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reads");
    for (int k = 0; k < 8; k++) {
        int mine = k == 3;
        dy[k] = weft_data_register(ctx, WEFT_DOUBLE, ys[k], 5, 1, 5, 0);
        CHECK(weft_insert_task(tp, &batched_class, WEFT_R, dx, WEFT_RW, dy[k], WEFT_VALUE, &mine,
                               sizeof mine, WEFT_DEVICE_HINT, 1, 0) == 0);
    }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    for (int k = 0; k < 8; k++) weft_data_release(dy[k]);
    weft_data_release(dx);
    return w;
}

/* "acquire": the host writes through the pointer of a read acquire of x
 * (WEFT_R), a tile a task wrote on an emu device; a matrix tile alike.
 * Under check_reads both releases are refused; without it they return 0
 * and the write reaches the host copy only. Prints "acquire release=R
 * matrix=M". */
static int acquired_write(weft_context_t *ctx)
{
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
    weft_data_t *dx = weft_data_register(ctx, WEFT_DOUBLE, x, 5, 1, 5, 0);
    weft_data_t *dy = weft_data_register(ctx, WEFT_DOUBLE, y, 5, 1, 5, 0);
    double a[16] = {0};
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, 4, 4, 4, 4, 4, 1, 1);
    int zero = 0;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reads");
    CHECK(weft_insert_task(tp, &add_class, WEFT_R, dy, WEFT_RW, dx, WEFT_VALUE, &zero, sizeof zero,
                           WEFT_DEVICE_HINT, weft_ndevices(ctx) > 0 ? 1 : 0, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    void *p = NULL;
    CHECK(weft_data_host_acquire(dx, WEFT_R, &p, NULL) == 0);
    ((double *)p)[0] = 1000; /* the mistake: a read acquire */
    int release = weft_data_host_release(dx);
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == 0);
    a[1] = 7;
    int matrix = weft_matrix_host_release(A);
    printf("test_check_reads rank 0: acquire release=%d matrix=%d\n", release, matrix);
    weft_taskpool_free(tp);
    weft_data_release(dx);
    weft_data_release(dy);
    weft_matrix_free(A);
    return weft_fini(ctx);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int me = weft_rank(ctx), R = weft_nranks(ctx);
    int bad = argc > 1 && strcmp(argv[1], "bad") == 0      ? 1
              : argc > 1 && strcmp(argv[1], "negate") == 0 ? 2
                                                           : 0;
    if (argc > 2 && strcmp(argv[2], "set") == 0)
        CHECK(weft_param_set(ctx, "check_reads", "1") == WEFT_SUCCESS);
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
    if (argc > 1 && strcmp(argv[1], "acquire") == 0) {
        CHECK(acquired_write(ctx) == 0);
        return check_report("test_check_reads");
    }
    if (argc > 1 && strcmp(argv[1], "batch") == 0) {
        int w = batched(ctx, x);
        CHECK(weft_fini(ctx) == w);
        printf("test_check_reads rank %d: wait=%d\n", me, w);
        return check_report("test_check_reads");
    }
    weft_data_t *dx = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, 5, 1, 5, 0);
    weft_data_t *dy = weft_data_register(ctx, WEFT_DOUBLE, me == R - 1 ? y : NULL, 5, 1, 5, R - 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reads");
    for (int k = 0; k < 3; k++) {
        int mine = k == 1 ? bad : 0;
        /* On an emu device when the rank has one (its copies are host memory). */
        CHECK(weft_insert_task(tp, &add_class, WEFT_R, dx, WEFT_RW, dy, WEFT_VALUE, &mine,
                               sizeof mine, WEFT_ON_RANK, R - 1, WEFT_DEVICE_HINT,
                               weft_ndevices(ctx) > 0 ? 1 : 0, 0) == 0);
    }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(dx);
    weft_data_release(dy);
    CHECK(weft_fini(ctx) == (w == WEFT_SUCCESS ? WEFT_SUCCESS : w));
    printf("test_check_reads rank %d: wait=%d y=%g x=%g\n", me, w, me == R - 1 ? y[0] : -1.0,
           me == 0 ? x[0] : -1.0);
    return check_report("test_check_reads");
}

/* Handle checks (docs/SEMANTICS.md section 2): every public call refuses a
 * handle of the wrong kind, NULL, or a released handle, with a message
 * naming the argument and what it was, and returns an error: no crash, no
 * hang, nothing for AddressSanitizer to report. Regression of issue 13
 * item 4: use after weft_data_release was a double free in insert, and a
 * matrix passed for a tile hung. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

static int run_one(weft_context_t *ctx, weft_data_t *d)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one");
    int rc = weft_insert_task(tp, &bump_class, WEFT_RW, d, 0);
    int wrc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : wrc;
}

static void wrong_kind(weft_context_t *ctx)
{
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 4, 4, 2, 2, 1, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "wrong kind");
    capture_begin();
    int rc = weft_insert_task(tp, &bump_class, WEFT_RW, (weft_data_t *)A, 0);
    capture_end();
    CHECK(rc == WEFT_ERR_INVALID);
    CHECK(captured("argument 1 of insert bump is a weft_matrix_t, not a weft_data_t: pass "
                   "weft_tile(A, i, j)"));
    capture_begin();
    rc = weft_insert_task(tp, &bump_class, WEFT_R, weft_tile(A, 0, 0), WEFT_RW, (weft_data_t *)tp,
                          0);
    capture_end();
    CHECK(rc == WEFT_ERR_INVALID);
    CHECK(captured("argument 2 of insert bump is a weft_taskpool_t, not a weft_data_t"));
    capture_begin();
    CHECK(weft_taskpool_wait((weft_taskpool_t *)A) == WEFT_ERR_INVALID);
    CHECK(weft_rank((weft_context_t *)tp) == -1);
    CHECK(weft_data_host_ptr((weft_data_t *)ctx, NULL) == NULL);
    CHECK(weft_matrix_mt((weft_matrix_t *)weft_tile(A, 0, 0)) == -1);
    CHECK(weft_data_set_device(NULL, 0) == WEFT_ERR_INVALID);
    double not_a_handle[4] = {0};
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, (weft_data_t *)not_a_handle, 0) ==
          WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("argument 1 of weft_taskpool_wait is a weft_matrix_t, not a weft_taskpool_t"));
    CHECK(captured("argument 1 of weft_rank is a weft_taskpool_t, not a weft_context_t"));
    CHECK(captured("argument 1 of weft_data_host_ptr is a weft_context_t, not a weft_data_t"));
    CHECK(captured("argument 1 of weft_matrix_mt is a weft_data_t, not a weft_matrix_t"));
    CHECK(captured("argument 1 of weft_data_set_device is NULL, not a weft_data_t"));
    CHECK(captured("argument 1 of insert bump is not a weft handle"));
    /* An int where a handle or a value's address belongs (SIGSEGV on every
     * rank before, without a word). */
    int v = 5;
    capture_begin();
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, (weft_data_t *)(intptr_t)v, 0) ==
          WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, weft_tile(A, 0, 0), WEFT_VALUE,
                           (void *)(intptr_t)v, sizeof v, 0) == WEFT_ERR_INVALID);
    CHECK(weft_rank((weft_context_t *)(intptr_t)16) == -1);
    CHECK(weft_insert_task((weft_taskpool_t *)(intptr_t)v, &bump_class, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, (const weft_task_class_t *)(intptr_t)7, 0) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("argument 1 of weft_insert_task is the small integer 5 (no address), not a "
                   "weft_taskpool_t"));
    CHECK(captured("argument 2 of weft_insert_task is the small integer 7 (no address), not a "
                   "task class"));
    CHECK(captured("argument 1 of insert bump is the small integer 5 (no address), not a "
                   "weft_data_t"));
    CHECK(captured("insert bump: value argument 2: 5 is no address"));
    CHECK(captured("argument 1 of weft_rank is the small integer 16 (no address)"));
    /* Nothing was inserted: the taskpool waits for nothing and the matrix works. */
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_taskpool_ntasks_run(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(run_one(ctx, weft_tile(A, 1, 1)) == 0);
    weft_matrix_free(A);
}

/* The case: released once its tasks are done, then used again. */
static void use_after_release(weft_context_t *ctx)
{
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    CHECK(run_one(ctx, d) == 0 && x == 1);
    weft_data_release(d);
    capture_begin();
    CHECK(run_one(ctx, d) == WEFT_ERR_INVALID);
    weft_data_release(d); /* a second release */
    CHECK(weft_data_host_ptr(d, NULL) == NULL);
    CHECK(weft_data_set_device(d, 0) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(x == 1);
    CHECK(captured("argument 1 of insert bump is a released weft_data_t (weft_data_release or "
                   "weft_matrix_free gave it back"));
    CHECK(!captured("is a released weft_data_t, not a weft_data_t"));
    CHECK(captured("argument 1 of weft_data_release is a released weft_data_t"));
    CHECK(captured("argument 1 of weft_data_host_ptr is a released weft_data_t"));

    /* Released while its task may still run: the data lives on for the
     * task, the handle is dead for the user at once. */
    weft_data_t *n = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "pending");
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, n, 0) == 0);
    weft_data_release(n);
    capture_begin();
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, n, 0) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(weft_taskpool_wait(tp) == 0 && x == 2);
    weft_taskpool_free(tp);

    /* A freed matrix, a freed taskpool. */
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 2, 2, 1, 1, 1, 1);
    weft_data_t *tile = weft_tile(A, 0, 0);
    weft_matrix_free(A);
    tp = weft_taskpool_new(ctx, "freed");
    weft_taskpool_free(tp);
    capture_begin();
    CHECK(weft_tile(A, 0, 0) == NULL);
    CHECK(run_one(ctx, tile) == WEFT_ERR_INVALID);
    weft_matrix_free(A);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_INVALID);
    weft_taskpool_free(tp);
    capture_end();
    CHECK(captured("argument 1 of weft_tile is a released weft_matrix_t"));
    CHECK(captured("argument 1 of insert bump is a released weft_data_t"));
    CHECK(captured("argument 1 of weft_taskpool_wait is a released weft_taskpool_t"));
}

/* Output pointers and indices of the counter calls: refused with a
 * message (they used to return the error silently). */
static void counters(weft_context_t *ctx)
{
    weft_device_counters_t c;
    capture_begin();
    CHECK(weft_stats_get(ctx, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_device_counters_get(ctx, 0, &c) == WEFT_ERR_INVALID);
    CHECK(weft_device_counters_get(ctx, weft_ndevices(ctx) + 1, &c) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("argument 2 of weft_stats_get is NULL"));
    CHECK(captured("weft_device_counters_get: device 0 is not an accelerator of this rank"));
    if (weft_ndevices(ctx) > 0) {
        capture_begin();
        CHECK(weft_device_counters_get(ctx, 1, NULL) == WEFT_ERR_INVALID);
        capture_end();
        CHECK(captured("argument 3 of weft_device_counters_get is NULL"));
        CHECK(weft_device_counters_get(ctx, 1, &c) == 0);
    }
}

/* Every task accessor given a NULL task names it and answers "none" (some
 * answered silently). */
static void null_task(void)
{
    capture_begin();
    CHECK(weft_task_class(NULL) == NULL);
    CHECK(weft_task_device(NULL) == -1);
    CHECK(weft_task_stream(NULL) == NULL);
    CHECK(weft_task_blas_handle(NULL) == NULL);
    CHECK(weft_task_solver_handle(NULL) == NULL);
    CHECK(weft_task_workspace(NULL, 8) == NULL);
    CHECK(weft_task_nflows(NULL) == 0);
    CHECK(weft_task_nvalues(NULL) == 0);
    capture_end();
    const char *calls[] = {"weft_task_class",         "weft_task_device",
                           "weft_task_stream",        "weft_task_blas_handle",
                           "weft_task_solver_handle", "weft_task_workspace",
                           "weft_task_nflows",        "weft_task_nvalues"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "%s: NULL task", calls[i]);
        CHECK(captured(line));
    }
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    wrong_kind(ctx);
    use_after_release(ctx);
    counters(ctx);
    null_task();
    /* The refused calls that return nothing (a second weft_data_release,
     * weft_matrix_free, weft_taskpool_free) have weft_fini to fail. */
    CHECK(weft_fini(ctx) == WEFT_ERR_INVALID);
    return check_report("stf_handles");
}

/* A planted mismatch: rank 0 declares data 0 as 300 x 300 doubles, rank 1
 * as 100 x 100. The tile rank 0 sends is too large for what rank 1 holds:
 * it must be rejected with an error (counted), never written over rank 1's
 * smaller memory, and both ranks must return from the wait. The shapes
 * are part of the sequence the ranks agree on at the wait (SEMANTICS.md
 * section 4), so the agreement usually names the difference first
 * (WEFT_ERR_MISMATCH); a tile already sent before it is still rejected and
 * fails the taskpool everywhere (WEFT_ERR_TASK). */
#include <stdio.h>

#include "weft/weft.h"

static int fill(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0) * weft_task_cols(t, 0); i++) a[i] = i;
    return 0;
}

static int touch(weft_task_t *t) { return 0; }

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};
static const weft_task_class_t use_cls = {.name = "use", .body = {[WEFT_DEV_CPU] = touch}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2) return 1;
    int rank = weft_rank(ctx), n = rank == 0 ? 300 : 100;
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, n, n, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, 8, 8, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "mismatch");
    int rc = weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, x, 0);
    rc |= weft_insert_task(tp, &use_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, y, 0);
    int w = weft_taskpool_wait(tp);
    weft_stats_t st;
    rc |= weft_stats_get(ctx, &st);
    int ok = rc == 0 && (w == WEFT_ERR_MISMATCH ||
                         (w == WEFT_ERR_TASK && (rank == 0 || st.recv_rejected == 1)));
    printf("test_shape_mismatch rank %d: wait returned '%s', %lld rejected: %s\n", rank,
           weft_strerror(w), (long long)st.recv_rejected, ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    weft_fini(ctx);
    return !ok;
}

/* A tile written away from its owner is home after the wait: tile b of the
 * last rank is written by a task that runs on rank 0 (its AFFINITY is a
 * tile of rank 0); the wait sends the final version to b's owner and frees
 * rank 0's visiting copy. In the next taskpool every rank reads b: the
 * owner is the source now, so rank 0 sends 1 activation in all (b going
 * home) and the owner n - 1 (one to each other rank), and every reader gets
 * the value written. */
#include <stdio.h>

#include "weft/weft.h"

static int fill_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = 7.0 + i;
    return 0;
}

static int copy_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] = x[i];
    return 0;
}

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill_body}};
static const weft_task_class_t copy_cls = {.name = "copy", .body = {[WEFT_DEV_CPU] = copy_body}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int rank = weft_rank(ctx), n = weft_nranks(ctx), rows = 20000, rc = 0;
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
    weft_data_t *b = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, n - 1);
    weft_data_t *got[64];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "away");
    /* a is written on rank 0, then b, owned by rank n-1, on rank 0 too. */
    rc |= weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, a, 0);
    rc |= weft_insert_task(tp, &copy_cls, WEFT_R | WEFT_AFFINITY, a, WEFT_W, b, 0);
    rc |= weft_taskpool_wait(tp);
    for (int r = 0; r < n; r++) {
        got[r] = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, r);
        rc |= weft_insert_task(tp, &copy_cls, WEFT_R, b, WEFT_W | WEFT_AFFINITY, got[r], 0);
    }
    rc |= weft_taskpool_wait(tp);
    weft_stats_t st;
    rc |= weft_stats_get(ctx, &st);
    long expect = rank == 0 ? 1 : rank == n - 1 ? n - 1 : 0;
    const double *v = weft_data_host_ptr(got[rank], NULL);
    int bad = rc != 0 || st.activations_sent != expect || !v || v[5] != 12.0;
    printf("rank %d: sent %lld activations (expected %ld), read %g (expected 12)\n", rank,
           (long long)st.activations_sent, expect, v ? v[5] : -1.0);
    weft_taskpool_free(tp);
    for (int r = 0; r < n; r++) weft_data_release(got[r]);
    weft_data_release(a);
    weft_data_release(b);
    if (weft_fini(ctx) != 0) bad = 1;
    return bad;
}

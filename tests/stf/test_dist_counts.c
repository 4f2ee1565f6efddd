/* One message per tile version per destination rank: a tile of rank 0 is
 * written twice; after each write every other rank reads it in several
 * tasks. Rank 0 must send exactly 2 * (nranks - 1) activations, whatever
 * the number of readers, and each reader must receive the bytes. */
#include <stdio.h>

#include "weft/weft.h"

#define READS 5

static int write_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int v;
    weft_task_value(t, 0, &v);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = v + i;
    return 0;
}

/* acc += x, on the reader's own tile */
static int read_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *acc = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) acc[i] += x[i];
    return 0;
}

static const weft_task_class_t wcls = {.name = "write", .body = {[WEFT_DEV_CPU] = write_body}};
static const weft_task_class_t rcls = {.name = "read", .body = {[WEFT_DEV_CPU] = read_body}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int rank = weft_rank(ctx), n = weft_nranks(ctx);
    const int rows = 20000; /* 160 kB: rendezvous; eager is covered by the DAG test */
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
    weft_data_t *acc[64];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "counts");
    int rc = 0, zero = 0;
    for (int r = 0; r < n; r++) {
        acc[r] = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, r);
        rc |= weft_insert_task(tp, &wcls, WEFT_W | WEFT_AFFINITY, acc[r], WEFT_VALUE, &zero,
                               sizeof zero, 0);
    }
    /* The accumulators start at 0 + i: subtract that below. */
    for (int round = 1; round <= 2; round++) {
        rc |= weft_insert_task(tp, &wcls, WEFT_W | WEFT_AFFINITY, x, WEFT_VALUE, &round,
                               sizeof round, 0);
        for (int r = 1; r < n; r++)
            for (int k = 0; k < READS; k++)
                rc |= weft_insert_task(tp, &rcls, WEFT_R, x, WEFT_RW | WEFT_AFFINITY, acc[r], 0);
    }
    rc |= weft_taskpool_wait(tp);
    weft_stats_t st;
    rc |= weft_stats_get(ctx, &st);
    int bad = rc != 0;
    long expect = rank == 0 ? 2L * (n - 1) : 0;
    if (st.activations_sent != expect) {
        fprintf(stderr, "rank %d sent %lld activations, expected %ld\n", rank,
                (long long)st.activations_sent, expect);
        bad = 1;
    }
    long bytes_in = rank == 0 ? 0 : 2L * rows * 8;
    if (st.net_bytes_received != bytes_in) {
        fprintf(stderr, "rank %d received %lld bytes, expected %ld\n", rank,
                (long long)st.net_bytes_received, bytes_in);
        bad = 1;
    }
    if (rank > 0) {
        /* Each element i: i (start) + READS*(1+i) + READS*(2+i). */
        const double *a = weft_data_host_ptr(acc[rank], NULL);
        for (int i = 0; a && i < rows; i++)
            if (a[i] != i + READS * (1.0 + i) + READS * (2.0 + i)) {
                fprintf(stderr, "rank %d: element %d is %g\n", rank, i, a[i]);
                bad = 1;
                break;
            }
        if (!a) bad = 1;
    }
    weft_taskpool_free(tp);
    weft_data_release(x);
    for (int r = 0; r < n; r++) weft_data_release(acc[r]);
    if (weft_fini(ctx) != 0) bad = 1;
    printf("test_dist_counts rank %d/%d: %lld activations sent (expected %ld): %s\n", rank, n,
           (long long)st.activations_sent, expect, bad ? "FAILED" : "PASSED");
    return bad;
}

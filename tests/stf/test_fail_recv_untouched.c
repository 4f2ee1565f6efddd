/* What a failed receive leaves (docs/SEMANTICS.md section 3): X, 128 x 128
 * doubles in rank 0's memory, gets +1 on rank 0, +2 on rank 1, +100 on
 * rank 0, then, after a wait, +1000 on rank 1. The ctest injects two
 * allocation failures (comm_alloc:2): rank 1's receive of v1 fails (its +2
 * does not run) and so does rank 0's of v2, before any byte came. X holds
 * v1 whole: 1 after the first wait, 1001 after the second, every element.
 * Rank 0 prints both waits' status and X. */
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

#define B 128

static int add(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0), v = 0;
    if (weft_task_value_get(t, 0, &v, sizeof v) != WEFT_SUCCESS) return -1;
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < B; j++)
        for (int i = 0; i < B; i++) x[i + j * ld] += v;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

/* The value every element of x holds, or -1 when they differ. */
static double all_of(const double *x)
{
    for (int i = 1; i < B * B; i++)
        if (x[i] != x[0]) return -1;
    return x[0];
}

static int insert_add(weft_taskpool_t *tp, weft_data_t *d, double v, int rank)
{
    return weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &v, sizeof v, WEFT_ON_RANK,
                            rank, 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2) return 1;
    int me = weft_rank(ctx);
    double *x = calloc((size_t)B * B, sizeof *x);
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, B, B, B, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "untouched");
    int rc = insert_add(tp, d, 1, 0);
    if (rc == WEFT_SUCCESS) rc = insert_add(tp, d, 2, 1);
    if (rc == WEFT_SUCCESS) rc = insert_add(tp, d, 100, 0);
    int w1 = weft_taskpool_wait(tp);
    double x1 = all_of(x);
    if (rc == WEFT_SUCCESS) rc = insert_add(tp, d, 1000, 1);
    int w2 = weft_taskpool_wait(tp);
    double x2 = all_of(x);
    int ok =
        rc == WEFT_SUCCESS && w1 == WEFT_ERR_TASK && x1 == 1 && w2 == WEFT_SUCCESS && x2 == 1001;
    if (me == 0)
        printf("test_fail_recv_untouched rank 0: wait 1 status %d x=%g wait 2 status %d x=%g: %s\n",
               w1, x1, w2, x2, ok ? "ok" : "FAILED");
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_fini(ctx);
    free(x);
    return me == 0 && !ok;
}

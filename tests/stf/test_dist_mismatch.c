/* A rank that inserts a different sequence is reported, naming the first
 * divergent task, instead of a hang: rank 1 inserts task #3 with another
 * class, or with "swap" the same class with its two data swapped, or with
 * "redux" an extra task where rank 0's reader of a reduced data makes weft
 * add the reduction's own tasks (which the report must not pass for the
 * user's). Every rank must get WEFT_ERR_MISMATCH from the wait. */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static int nop(weft_task_t *t) { return 0; }

static const weft_task_class_t a_cls = {.name = "alpha", .body = {[WEFT_DEV_CPU] = nop}};
static const weft_task_class_t b_cls = {.name = "beta", .body = {[WEFT_DEV_CPU] = nop}};
static const weft_task_class_t zero_cls = {.name = "zero", .body = {[WEFT_DEV_CPU] = nop}};
static const weft_task_class_t plus_cls = {.name = "plus", .body = {[WEFT_DEV_CPU] = nop}};

/* Both ranks add into r; rank 1 then inserts an extra task where rank 0
 * reads r, whose partials weft combines first, with tasks of its own. */
static int insert_redux(weft_taskpool_t *tp, weft_data_t *r, weft_data_t *d, int rank)
{
    int rc = weft_data_set_reduction(r, &zero_cls, &plus_cls);
    for (int k = 0; k < 2 && !rc; k++) rc = weft_insert_task(tp, &a_cls, WEFT_REDUX, r, 0);
    if (!rc && rank == 1) rc = weft_insert_task(tp, &a_cls, WEFT_RW | WEFT_AFFINITY, d, 0);
    if (!rc) rc = weft_insert_task(tp, &b_cls, WEFT_R, r, WEFT_RW | WEFT_AFFINITY, d, 0);
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int rank = weft_rank(ctx), n = weft_nranks(ctx);
    int swap = argc > 1 && strcmp(argv[1], "swap") == 0;
    int redux = argc > 1 && strcmp(argv[1], "redux") == 0;
    weft_data_t *d[2] = {weft_data_new(ctx, WEFT_DOUBLE, 64, 64, 0),
                         weft_data_new(ctx, WEFT_DOUBLE, 64, 64, n - 1)};
    weft_data_t *r = weft_data_new(ctx, WEFT_DOUBLE, 4, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "mismatch");
    int rc = 0;
    for (int k = 0; k < 2; k++) rc |= weft_insert_task(tp, &a_cls, WEFT_W | WEFT_AFFINITY, d[k], 0);
    if (redux) rc |= insert_redux(tp, r, d[0], rank);
    for (int k = 2; k < 8 && !redux; k++) {
        int odd = k == 3 && rank == 1;
        const weft_task_class_t *c = odd && !swap ? &b_cls : &a_cls;
        int first = odd && swap ? (k + 1) % 2 : k % 2;
        rc |= weft_insert_task(tp, c, WEFT_RW | WEFT_AFFINITY, d[first], WEFT_R, d[1 - first], 0);
    }
    int w = weft_taskpool_wait(tp);
    int ok = rc == 0 && w == WEFT_ERR_MISMATCH;
    printf("test_dist_mismatch rank %d: wait returned '%s': %s\n", rank, weft_strerror(w),
           ok ? "PASSED" : "FAILED");
    fflush(stdout);
    weft_taskpool_free(tp);
    weft_data_release(d[0]);
    weft_data_release(d[1]);
    weft_data_release(r);
    weft_fini(ctx);
    return !ok;
}

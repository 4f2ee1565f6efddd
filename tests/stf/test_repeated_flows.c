/* One tile named in two flows of one task (the same data as input and as
 * output). weft keeps one copy of such a data for the task and publishes one
 * version, so the task reads the data when any of its flows reads it and
 * writes it when any writes it. Each tile of a column of NT tiles starts at
 * 5 and gets tasks of class "next" (flow 0 := flow 1 + 1):
 *   tile 0: (W | AFFINITY t, R t), then (RW | AFFINITY t, RW t)       -> 7
 *   tile 1: (W t, R t) run on rank 0 (WEFT_ON_RANK), then RW bump      -> 7
 *   tile 2: (RW t, R t) run on the last rank                           -> 6
 *   tile 3: (R | AFFINITY t, W t), then (R t, RW | AFFINITY t)          -> 7
 * On a device, the W flow before the R flow used to skip the stage-in (the
 * task read the uninitialised device copy: tile 0 held 2), and the R flow
 * before the W flow to drop the write (tile 3 kept 5). Each rank checks
 * the tiles it holds after the wait. */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "elapsed.h"
#include "weft/weft.h"

#define NT 4

/* flow 0 := flow 1 + 1, element by element (the flows may be one copy). */
static int next(weft_task_t *t)
{
    double *d = weft_task_ptr(t, 0), *s = weft_task_ptr(t, 1);
    int64_t ldd = weft_task_ld(t, 0), lds = weft_task_ld(t, 1);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) d[i + j * ldd] = s[i + j * lds] + 1;
    return 0;
}

static int bump(weft_task_t *t)
{
    double *d = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) d[i + j * ld] += 1;
    return 0;
}

static const weft_task_class_t next_class = {.name = "next", .body = {[WEFT_DEV_CPU] = next}};
static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

static void fill(weft_matrix_t *A, double v)
{
    for (int k = 0; k < weft_matrix_local_count(A); k++) {
        int i, j;
        int64_t ld;
        double *p = weft_data_host_ptr(weft_matrix_local_tile(A, k, &i, &j), &ld);
        REQUIRE(p != NULL);
        for (int c = 0; c < weft_matrix_tile_cols(A, j); c++)
            for (int r = 0; r < weft_matrix_tile_rows(A, i); r++) p[r + c * ld] = v;
    }
}

static int insert_all(weft_taskpool_t *tp, weft_matrix_t *A, int nranks)
{
    weft_data_t *t0 = weft_tile(A, 0, 0), *t1 = weft_tile(A, 1, 0);
    weft_data_t *t2 = weft_tile(A, 2, 0), *t3 = weft_tile(A, 3, 0);
    const weft_task_class_t *nc = &next_class;
    int rc = weft_insert_task(tp, nc, WEFT_W | WEFT_AFFINITY, t0, WEFT_R, t0, 0);
    rc |= weft_insert_task(tp, nc, WEFT_RW | WEFT_AFFINITY, t0, WEFT_RW, t0, 0);
    rc |= weft_insert_task(tp, nc, WEFT_W, t1, WEFT_R, t1, WEFT_ON_RANK, 0, 0);
    rc |= weft_insert_task(tp, &bump_class, WEFT_RW | WEFT_AFFINITY, t1, 0);
    rc |= weft_insert_task(tp, nc, WEFT_RW, t2, WEFT_R, t2, WEFT_ON_RANK, nranks - 1, 0);
    rc |= weft_insert_task(tp, nc, WEFT_R | WEFT_AFFINITY, t3, WEFT_W, t3, 0);
    rc |= weft_insert_task(tp, nc, WEFT_R, t3, WEFT_RW | WEFT_AFFINITY, t3, 0);
    return rc;
}

static int zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0;
    return 0;
}

static int add(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(const double *)weft_task_ptr(t, 1);
    return 0;
}

static const weft_task_class_t zero_class = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

/* A data a task reduces into (WEFT_REDUX) and names in another flow too:
 * the REDUX flow became a partial and the other flow the data itself, so
 * the task's write was lost. Refused on every rank, named. */
static void redux_twice(weft_context_t *ctx)
{
    weft_data_t *s = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(s != NULL);
    CHECK(weft_data_set_reduction(s, &zero_class, &add_class) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "redux twice");
    capture_begin();
    CHECK(weft_insert_task(tp, &next_class, WEFT_REDUX, s, WEFT_R, s, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &next_class, WEFT_W, s, WEFT_REDUX, s, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &bump_class, WEFT_REDUX, s, WEFT_REDUX, s, 0) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("is data argument 1 (WEFT_REDUX) and 2 too: a task that reduces into a data "
                   "names it once, in no other mode"));
    CHECK(captured("is data argument 2 (WEFT_REDUX) and 1 too"));
    CHECK(weft_taskpool_wait(tp) == 0); /* refused alike: the ranks stay in step */
    weft_taskpool_free(tp);
    weft_data_release(s);
}

/* --lanes-skew: the last rank sets redux_lanes after weft_init (a live
 * parameter) and the others do not: their partial tasks differ. The
 * divergence is named by the reductions' lanes on every rank. */
static int lanes_skew(weft_context_t *ctx, int rank, int nranks)
{
    if (rank == nranks - 1) CHECK(weft_param_set(ctx, "redux_lanes", "1") == 0);
    weft_data_t *s = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(s != NULL);
    CHECK(weft_data_set_reduction(s, &zero_class, &add_class) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "lanes");
    for (int k = 0; k < 4; k++) CHECK(weft_insert_task(tp, &bump_class, WEFT_REDUX, s, 0) == 0);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(s);
    int f = weft_fini(ctx);
    printf("test_repeated_flows rank %d: wait=%d fini=%d\n", rank, w, f);
    return w != 0; /* non-zero: the divergence was told */
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    if (argc > 1 && strcmp(argv[1], "--lanes-skew") == 0) return lanes_skew(ctx, rank, nranks);
    int nb = argc > 1 ? atoi(argv[1]) : 4; /* 100: rendezvous tiles */
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, (int64_t)NT * nb, nb, nb, nb, nranks, 1);
    REQUIRE(A != NULL);
    fill(A, 5);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "repeated");
    CHECK(insert_all(tp, A, nranks) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    const double want[NT] = {7, 7, 6, 7};
    for (int i = 0; i < NT; i++) {
        if (weft_matrix_tile_rank(A, i, 0) != rank) continue;
        void *p;
        int64_t ld;
        weft_data_t *t = weft_tile(A, i, 0);
        REQUIRE(weft_data_host_acquire(t, WEFT_R, &p, &ld) == 0);
        const double *x = p;
        int bad = 0;
        for (int c = 0; c < nb; c++)
            for (int r = 0; r < nb; r++) bad += x[r + c * ld] != want[i];
        if (bad) fprintf(stderr, "rank %d tile %d: %g, want %g\n", rank, i, x[0], want[i]);
        CHECK(bad == 0);
        CHECK(weft_data_host_release(t) == 0);
    }
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    redux_twice(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_repeated_flows");
}

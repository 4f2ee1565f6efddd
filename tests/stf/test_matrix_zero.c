/* A matrix made by weft_matrix_new holds zeros until written. Its tiles
 * come from the runtime's host slabs, which blocks of a freed matrix go
 * back to: a new matrix of the same shape held the freed one's bytes (42
 * here), on one rank and setup, and zeros on another (an emu device), and
 * an accumulator updated with WEFT_RW started from them without a word.
 * Each round fills a matrix with 42, frees it, makes a new one, checks
 * its tiles where they live, adds 1 three times by tasks and checks the
 * gathered matrix on rank 0. */
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

#define N 90
#define NB 16

static int fill(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int c = 0; c < weft_task_cols(t, 0); c++)
        for (int r = 0; r < weft_task_rows(t, 0); r++) a[r + c * ld] = 42;
    return 0;
}

static int add(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int c = 0; c < weft_task_cols(t, 0); c++)
        for (int r = 0; r < weft_task_rows(t, 0); r++) a[r + c * ld] += 1;
    return 0;
}

static const weft_task_class_t fill_class = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = fill, [WEFT_DEV_EMU] = fill}};
static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};

/* Every element of this rank's tiles of A equals v. */
static int local_all(weft_matrix_t *A, double v)
{
    int ok = 1;
    for (int k = 0; k < weft_matrix_local_count(A); k++) {
        int i, j;
        weft_data_t *d = weft_matrix_local_tile(A, k, &i, &j);
        double *p = NULL;
        int64_t ld = 0;
        if (weft_data_host_acquire(d, WEFT_R, (void **)&p, &ld) != 0) return 0;
        int rows = N - i * NB < NB ? N - i * NB : NB, cols = N - j * NB < NB ? N - j * NB : NB;
        for (int c = 0; c < cols; c++)
            for (int r = 0; r < rows; r++) ok &= p[r + c * ld] == v;
        ok &= weft_data_host_release(d) == 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx), n = weft_nranks(ctx), nt = (N + NB - 1) / NB;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "zero");
    double *g = malloc(sizeof *g * N * N);
    REQUIRE(tp && g);
    for (int round = 0; round < 3; round++) {
        weft_matrix_t *T = weft_matrix_new(ctx, WEFT_DOUBLE, N, N, NB, NB, 1, n);
        REQUIRE(T != NULL);
        for (int i = 0; i < nt; i++)
            for (int j = 0; j < nt; j++)
                CHECK(weft_insert_task(tp, &fill_class, WEFT_W, weft_tile(T, i, j), 0) == 0);
        CHECK(weft_taskpool_wait(tp) == 0);
        CHECK(local_all(T, 42));
        weft_matrix_free(T);
        weft_matrix_t *C = weft_matrix_new(ctx, WEFT_DOUBLE, N, N, NB, NB, 1, n);
        REQUIRE(C != NULL);
        CHECK(local_all(C, 0));
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < nt; i++)
                for (int j = 0; j < nt; j++)
                    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, weft_tile(C, i, j), 0) == 0);
        CHECK(weft_taskpool_wait(tp) == 0);
        CHECK(weft_matrix_gather(C, 0, g, N) == 0);
        int bad = 0;
        for (int e = 0; rank == 0 && e < N * N; e++) bad += g[e] != 3;
        CHECK(bad == 0);
        weft_matrix_free(C);
    }
    free(g);
    weft_taskpool_free(tp);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_matrix_zero");
}

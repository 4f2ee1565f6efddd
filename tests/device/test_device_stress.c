/* Stress: chains of GEMMs whose intermediate tiles are NEW (created on the
 * device that first writes them, with no host copy), next to a tiled GEMM
 * that accumulates into matrix tiles, over several waves. Every result is
 * compared with the same products computed directly with cblas. */
#include "devtest.h"

#define NB 48
#define T 6     /* tiles per dimension */
#define CHAIN 8 /* GEMMs per chain */
#define WAVES 2

static double *tile_of(weft_matrix_t *M, int i, int j)
{
    return weft_data_host_ptr(weft_tile(M, i, j), NULL);
}

/* The reference of chain j: A(k % T, (j + k) % T) applied CHAIN times. */
static void chain_reference(weft_matrix_t *A, weft_matrix_t *B, int j, double *out)
{
    double *x = malloc(sizeof(double) * NB * NB), *y = malloc(sizeof(double) * NB * NB);
    memcpy(x, tile_of(B, j, 0), sizeof(double) * NB * NB);
    for (int k = 0; k < CHAIN; k++) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, NB, NB, NB, 1.0,
                    tile_of(A, k % T, (j + k) % T), NB, x, NB, 0.0, y, NB);
        double *s = x;
        x = y;
        y = s;
    }
    memcpy(out, x, sizeof(double) * NB * NB);
    free(x);
    free(y);
}

static int insert_chain(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *A,
                        weft_matrix_t *B, weft_matrix_t *Out, int j)
{
    weft_data_t *x = weft_tile(B, j, 0);
    int rc = 0;
    for (int k = 0; k < CHAIN && rc == 0; k++) {
        weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
        rc = weft_insert_task(tp, &devtest_gemm_new_dev, WEFT_R, weft_tile(A, k % T, (j + k) % T),
                              WEFT_R, x, WEFT_W, y, 0);
        if (k > 0) weft_data_release(x); /* NEW tiles go once their readers ran */
        x = y;
    }
    if (rc == 0)
        rc = weft_insert_task(tp, &devtest_copy, WEFT_R, x, WEFT_W, weft_tile(Out, j, 0), 0);
    weft_data_release(x);
    return rc;
}

/* C(i, 0) += sum_k A(i, k) B(k, 0), the tiles placed by estimated time. */
static int insert_gemm(weft_taskpool_t *tp, weft_matrix_t *A, weft_matrix_t *B, weft_matrix_t *C)
{
    int rc = 0;
    for (int i = 0; i < T && rc == 0; i++)
        for (int k = 0; k < T && rc == 0; k++)
            rc = weft_insert_task(tp, &devtest_gemm, WEFT_R, weft_tile(A, i, k), WEFT_R,
                                  weft_tile(B, k, 0), WEFT_RW, weft_tile(C, i, 0), WEFT_PRIORITY,
                                  T - k, 0);
    return rc;
}

static void check_gemm(weft_matrix_t *A, weft_matrix_t *B, weft_matrix_t *C, int waves)
{
    double *ref = calloc(NB * NB, sizeof(double));
    for (int i = 0; i < T; i++) {
        memset(ref, 0, sizeof(double) * NB * NB);
        for (int w = 0; w < waves; w++)
            for (int k = 0; k < T; k++)
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, NB, NB, NB, 1.0,
                            tile_of(A, i, k), NB, tile_of(B, k, 0), NB, 1.0, ref, NB);
        CHECK(devtest_maxdiff(tile_of(C, i, 0), NB, ref, NB, NB, NB) < 1e-9 * NB * T);
    }
    free(ref);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    weft_matrix_t *B = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB, NB, NB, 1, 1);
    weft_matrix_t *C = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB, NB, NB, 1, 1);
    weft_matrix_t *Out = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB, NB, NB, 1, 1);
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < T; j++) devtest_fill_array(tile_of(A, i, j), NB, NB, NB, i + 10.0 * j);
        devtest_fill_array(tile_of(B, i, 0), NB, NB, NB, 100.0 + i);
        memset(tile_of(C, i, 0), 0, sizeof(double) * NB * NB);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stress");
    for (int w = 0; w < WAVES; w++) {
        int rc = 0;
        for (int j = 0; j < T && rc == 0; j++) rc = insert_chain(ctx, tp, A, B, Out, j);
        if (rc == 0) rc = insert_gemm(tp, A, B, C);
        CHECK(rc == 0);
        CHECK(weft_taskpool_wait(tp) == 0);
        double *ref = malloc(sizeof(double) * NB * NB);
        for (int j = 0; j < T; j++) {
            chain_reference(A, B, j, ref);
            double scale = fabs(ref[0]) + 1.0;
            CHECK(devtest_maxdiff(tile_of(Out, j, 0), NB, ref, NB, NB, NB) < 1e-10 * scale * NB);
        }
        free(ref);
        check_gemm(A, B, C, w + 1);
    }
    int64_t tasks = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) tasks += devtest_counters(ctx, d).tasks;
    CHECK(tasks >= WAVES * T * CHAIN); /* the chains can only run on devices */
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    weft_matrix_free(B);
    weft_matrix_free(C);
    weft_matrix_free(Out);
    for (int d = 1; d <= weft_ndevices(ctx); d++) {
        weft_device_counters_t c = devtest_counters(ctx, d);
        CHECK(c.copies == 0 && c.mem_used == 0); /* everything went back to the zone */
    }
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_stress");
}

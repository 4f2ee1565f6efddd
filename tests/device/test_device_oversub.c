/* Oversubscription: a tiled Cholesky factorization on emu devices whose
 * memory (device_memory_limit, set by the test's environment) holds about
 * a tenth of the matrix. Tiles are evicted (dirty ones written back first)
 * again and again; the factor must still be right: ||A - L L^T|| small. */
#include <lapacke.h>

#include "devtest.h"

#define NB 64
#define T 10

static int potrf_body(weft_task_t *t)
{
    int n = weft_task_rows(t, 0);
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0)) ==
                   0
               ? 0
               : -1;
}

/* flow 0: A_kk (R), flow 1: A_ik (RW): A_ik = A_ik L_kk^-T */
static int trsm_body(weft_task_t *t)
{
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                weft_task_rows(t, 1), weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A_ik (R), flow 1: A_ii (RW): A_ii -= A_ik A_ik^T */
static int syrk_body(weft_task_t *t)
{
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, weft_task_rows(t, 1), weft_task_cols(t, 0),
                -1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), 1.0, weft_task_ptr(t, 1),
                (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A_ik (R), flow 1: A_jk (R), flow 2: A_ij (RW): A_ij -= A_ik A_jk^T */
static int gemm_body(weft_task_t *t)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, weft_task_rows(t, 2), weft_task_cols(t, 2),
                weft_task_cols(t, 0), -1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0),
                weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0, weft_task_ptr(t, 2),
                (int)weft_task_ld(t, 2));
    return 0;
}

#ifdef WEFT_TEST_CUDA
static int gemm_cuda(weft_task_t *t) { return devtest_cuda_gemm3(t, CUBLAS_OP_T, -1.0, 1.0); }
#endif

static const weft_task_class_t potrf = {
    .name = "potrf",
    .body = {
        [WEFT_DEV_EMU] = potrf_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_cuda_potrf1)}};
static const weft_task_class_t trsm = {
    .name = "trsm",
    .body = {[WEFT_DEV_EMU] = trsm_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_cuda_trsm2)}};
static const weft_task_class_t syrk = {
    .name = "syrk",
    .body = {[WEFT_DEV_EMU] = syrk_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_cuda_syrk2)}};
static const weft_task_class_t gemm = {
    .name = "gemm",
    .body = {[WEFT_DEV_EMU] = gemm_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(gemm_cuda)}};

static int insert_cholesky(weft_taskpool_t *tp, weft_matrix_t *A)
{
    int rc = 0;
    for (int k = 0; k < T && rc == 0; k++) {
        weft_data_t *akk = weft_tile(A, k, k);
        rc = weft_insert_task(tp, &potrf, WEFT_RW | WEFT_AFFINITY, akk, WEFT_PRIORITY, 3 * T, 0);
        for (int i = k + 1; i < T && rc == 0; i++)
            rc = weft_insert_task(tp, &trsm, WEFT_R, akk, WEFT_RW | WEFT_AFFINITY,
                                  weft_tile(A, i, k), WEFT_PRIORITY, 2 * T - i, 0);
        for (int i = k + 1; i < T && rc == 0; i++) {
            weft_data_t *aik = weft_tile(A, i, k);
            rc = weft_insert_task(tp, &syrk, WEFT_R, aik, WEFT_RW | WEFT_AFFINITY,
                                  weft_tile(A, i, i), WEFT_PRIORITY, T - i, 0);
            for (int j = k + 1; j < i && rc == 0; j++)
                rc = weft_insert_task(tp, &gemm, WEFT_R, aik, WEFT_R, weft_tile(A, j, k),
                                      WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j), 0);
        }
    }
    return rc;
}

/* The SPD matrix, in a full array (n x n) and in the lower tiles. */
static void make_matrix(weft_matrix_t *A, double *full, int n)
{
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double v = sin(0.3 * i + 0.7 * j) * 0.5 + (i == j ? n : 0.0);
            full[i + (size_t)j * n] = full[j + (size_t)i * n] = v;
        }
    for (int j = 0; j < T; j++)
        for (int i = j; i < T; i++) {
            double *tile = weft_data_host_ptr(weft_tile(A, i, j), NULL);
            for (int c = 0; c < NB; c++)
                memcpy(tile + c * NB, full + (size_t)(j * NB + c) * n + i * NB,
                       sizeof(double) * NB);
        }
}

/* ||A - L L^T||_F / ||A||_F with L gathered from the tiles. */
static double residual(weft_matrix_t *A, const double *full, int n)
{
    double *l = calloc((size_t)n * n, sizeof(double)), *r = malloc(sizeof(double) * n * n);
    for (int j = 0; j < T; j++)
        for (int i = j; i < T; i++) {
            double *tile = weft_data_host_ptr(weft_tile(A, i, j), NULL);
            for (int c = 0; c < NB; c++)
                for (int e = 0; e < NB; e++)
                    if (i > j || e >= c)
                        l[(size_t)(j * NB + c) * n + i * NB + e] = tile[c * NB + e];
        }
    memcpy(r, full, sizeof(double) * n * n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, -1.0, l, n, l, n, 1.0, r, n);
    double num = 0, den = 0;
    for (size_t k = 0; k < (size_t)n * n; k++) {
        num += r[k] * r[k];
        den += full[k] * full[k];
    }
    free(l);
    free(r);
    return sqrt(num / den);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    int n = NB * T;
    int64_t limit = 0;
    CHECK(weft_param_get_int(ctx, "device_memory_limit", &limit) == 0);
    /* The premise: each device holds at most ~10% of the matrix. */
    CHECK(limit > 0 && limit <= (int64_t)n * n * 8 / 8);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, n, n, NB, NB, 1, 1);
    double *full = malloc(sizeof(double) * n * n);
    make_matrix(A, full, n);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "cholesky");
    CHECK(insert_cholesky(tp, A) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    double res = residual(A, full, n);
    printf("residual %.3e\n", res);
    CHECK(res < 1e-13);
    int64_t evictions = 0, writebacks = 0, tasks = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) {
        weft_device_counters_t c = devtest_counters(ctx, d);
        evictions += c.evictions;
        writebacks += c.writebacks;
        tasks += c.tasks;
        CHECK(c.mem_peak <= c.mem_capacity && c.mem_capacity <= limit);
    }
    printf("%lld tasks, %lld evictions, %lld write-backs\n", (long long)tasks, (long long)evictions,
           (long long)writebacks);
    CHECK(tasks == T * (T + 1) * (T + 2) / 6);
    CHECK(evictions > 0 && writebacks > 0);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    free(full);
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_oversub");
}

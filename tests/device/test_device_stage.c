/* Stage: a user matrix in LAPACK layout (lda > m, partial tiles) wrapped
 * with weft_matrix_wrap is used by device tasks. Its strided tiles move
 * with 2D copies: on the device every copy is contiguous (ld = rows), the
 * final versions land back in the user's array at the wait, and a host
 * task after device tasks reads the pushed-out version in place. */
#include "devtest.h"

#define M 150 /* rows: tiles of 64, 64, 22 */
#define N 100
#define NB 64
#define LDA 173

static atomic_int strided_on_device;

static void check_contiguous(weft_task_t *t)
{
    for (int i = 0; i < 3; i++)
        if (weft_task_ld(t, i) != weft_task_rows(t, i)) atomic_fetch_add(&strided_on_device, 1);
}

static int gemm_ldcheck(weft_task_t *t)
{
    check_contiguous(t);
    return devtest_gemm_body(t);
}

#ifdef WEFT_TEST_CUDA
static int gemm_ldcheck_cuda(weft_task_t *t)
{
    check_contiguous(t);
    return devtest_cuda_gemm3(t, CUBLAS_OP_N, 1.0, 1.0);
}
#endif

/* On the host: flow 0 (R) is a tile of the user's array (ld = LDA),
 * flow 1 (W): Y = 2 X. */
static atomic_int host_saw_lda;
static int scale_host(weft_task_t *t)
{
    if (weft_task_ld(t, 0) == LDA && weft_task_device(t) == 0) atomic_fetch_add(&host_saw_lda, 1);
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t lx = weft_task_ld(t, 0), ly = weft_task_ld(t, 1);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) y[i + j * ly] = 2.0 * x[i + j * lx];
    return 0;
}

static const weft_task_class_t gemm_dev = {
    .name = "gemm_ldcheck",
    .body = {
        [WEFT_DEV_EMU] = gemm_ldcheck, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(gemm_ldcheck_cuda)}};
static const weft_task_class_t scale_cpu = {.name = "scale", .body = {[WEFT_DEV_CPU] = scale_host}};

/* Every C(i,j) += A(i,k) B(k,j) on the devices, then a host task (its
 * affinity on a tile mapped to the host) that reads C(0,0) right after
 * them into y: its newest version comes home first, into the strided user
 * array. Returns the first insertion error. */
static int insert_tasks(weft_taskpool_t *tp, weft_matrix_t *A, weft_matrix_t *B, weft_matrix_t *C,
                        weft_data_t *yd)
{
    int rc = 0;
    int mt = weft_matrix_mt(C), nt = weft_matrix_nt(C), kt = weft_matrix_nt(A);
    for (int i = 0; i < mt; i++)
        for (int j = 0; j < nt; j++)
            for (int k = 0; k < kt && rc == 0; k++)
                rc = weft_insert_task(tp, &gemm_dev, WEFT_R, weft_tile(A, i, k), WEFT_R,
                                      weft_tile(B, k, j), WEFT_RW | WEFT_AFFINITY,
                                      weft_tile(C, i, j), 0);
    if (rc == 0)
        rc = weft_insert_task(tp, &scale_cpu, WEFT_R, weft_tile(C, 0, 0), WEFT_W | WEFT_AFFINITY,
                              yd, 0);
    return rc;
}

/* After the wait: the user's array c holds the final versions (and rows
 * past M inside the leading dimension were never touched), y is twice
 * C(0,0), and bytes went to the devices. */
static void check_results(weft_context_t *ctx, const double *c, const double *ref, const double *y)
{
    CHECK(devtest_maxdiff(c, LDA, ref, LDA, M, N) < 1e-10 * M);
    CHECK(atomic_load(&strided_on_device) == 0);
    CHECK(atomic_load(&host_saw_lda) == 1);
    double ydiff = 0;
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++)
            ydiff = fmax(ydiff, fabs(y[i + j * NB] - 2.0 * ref[i + j * LDA]));
    CHECK(ydiff < 1e-9 * M);
    int pad_ok = 1;
    for (int j = 0; j < N; j++)
        for (int i = M; i < LDA; i++) pad_ok &= c[i + j * LDA] == sin(3.0 + 0.37 * i + 0.11 * j);
    CHECK(pad_ok);
    int64_t h2d = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) h2d += devtest_counters(ctx, d).bytes_h2d;
    CHECK(h2d > 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    /* C (M x N) += A (M x M) B (M x N), all in LAPACK layout with LDA. */
    double *a = malloc(sizeof(double) * LDA * M), *b = malloc(sizeof(double) * LDA * N);
    double *c = malloc(sizeof(double) * LDA * N), *ref = malloc(sizeof(double) * LDA * N);
    double *y = malloc(sizeof(double) * NB * NB);
    devtest_fill_array(a, LDA, M, LDA, 1.0);
    devtest_fill_array(b, LDA, N, LDA, 2.0);
    devtest_fill_array(c, LDA, N, LDA, 3.0);
    memcpy(ref, c, sizeof(double) * LDA * N);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, M, 1.0, a, LDA, b, LDA, 1.0, ref,
                LDA);
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, LDA, M, M, NB, NB, 1, 1);
    weft_matrix_t *B = weft_matrix_wrap(ctx, WEFT_DOUBLE, b, LDA, M, N, NB, NB, 1, 1);
    weft_matrix_t *C = weft_matrix_wrap(ctx, WEFT_DOUBLE, c, LDA, M, N, NB, NB, 1, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stage");
    weft_data_t *yd = weft_data_register(ctx, WEFT_DOUBLE, y, NB, NB, NB, 0);
    CHECK(weft_data_set_device(yd, 0) == 0);
    CHECK(insert_tasks(tp, A, B, C, yd) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    check_results(ctx, c, ref, y);
    weft_data_release(yd);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    weft_matrix_free(B);
    weft_matrix_free(C);
    CHECK(weft_fini(ctx) == 0);
    free(a);
    free(b);
    free(c);
    free(ref);
    free(y);
    return check_report("device_stage");
}

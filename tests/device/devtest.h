/* Shared pieces of the device tests: device set-up, tile kernels whose CPU
 * bodies serve as emu kernels and whose CUDA bodies (cuBLAS, cuSOLVER and
 * copies on the stream weft hands the task) let the same programs run on
 * GPUs, and host helpers on plain arrays. Each test is its own program,
 * declared once in a topic file of tests/device (*.cmake, included by its
 * CMakeLists.txt) and run there on every device variant it supports; the
 * variant's environment opens the devices.
 * The CUDA bodies are compiled in with WEFT_TEST_CUDA (the cuda variant's
 * build); without it DEVTEST_CUDA_BODY(fn) is NULL. */
#ifndef WEFT_TESTS_DEVTEST_H
#define WEFT_TESTS_DEVTEST_H

#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

#include "../check.h"

/* ---- CUDA bodies (WEFT_TEST_CUDA) ---------------------------------------- */

#ifdef WEFT_TEST_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#define DEVTEST_CUDA_BODY(fn) fn

static inline cublasHandle_t devtest_blas(weft_task_t *t)
{
    return (cublasHandle_t)weft_task_blas_handle(t);
}

static inline int devtest_ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? 0 : -1; }

/* C = alpha op(A) op(B) + beta C on flows 0, 1, 2. */
static inline int devtest_cuda_gemm3(weft_task_t *t, cublasOperation_t tb, double alpha,
                                     double beta)
{
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    return devtest_ok(cublasDgemm(devtest_blas(t), CUBLAS_OP_N, tb, m, n, k, &alpha,
                                  weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), weft_task_ptr(t, 1),
                                  (int)weft_task_ld(t, 1), &beta, weft_task_ptr(t, 2),
                                  (int)weft_task_ld(t, 2)));
}

/* dst (flow 1) = src (flow 0), device to device on the task's stream. */
static inline int devtest_cuda_copy2(weft_task_t *t)
{
    size_t e = sizeof(double);
    return cudaMemcpy2DAsync(weft_task_ptr(t, 1), (size_t)weft_task_ld(t, 1) * e,
                             weft_task_ptr(t, 0), (size_t)weft_task_ld(t, 0) * e,
                             (size_t)weft_task_rows(t, 0) * e, (size_t)weft_task_cols(t, 0),
                             cudaMemcpyDeviceToDevice,
                             (cudaStream_t)weft_task_stream(t)) == cudaSuccess
               ? 0
               : -1;
}

/* X (flow 0) = the fill pattern of value 0's seed, made on the host and
 * copied from pageable memory (the copy has read it when the call returns). */
static inline int devtest_cuda_fill1(weft_task_t *t)
{
    double seed;
    weft_task_value(t, 0, &seed);
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0);
    double *h = malloc(sizeof(double) * (size_t)m * (size_t)n);
    if (!h) return -1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) h[i + (size_t)j * m] = sin(seed + 0.37 * i + 0.11 * j);
    size_t e = sizeof(double);
    cudaError_t err = cudaMemcpy2DAsync(weft_task_ptr(t, 0), (size_t)weft_task_ld(t, 0) * e, h,
                                        (size_t)m * e, (size_t)m * e, (size_t)n,
                                        cudaMemcpyHostToDevice, (cudaStream_t)weft_task_stream(t));
    free(h);
    return err == cudaSuccess ? 0 : -1;
}

/* Lower Cholesky of flow 0; devInfo in the workspace's first 256 bytes. */
static inline int devtest_cuda_potrf1(weft_task_t *t)
{
    cusolverDnHandle_t s = (cusolverDnHandle_t)weft_task_solver_handle(t);
    int n = weft_task_rows(t, 0), lda = (int)weft_task_ld(t, 0), lwork = 0;
    double *a = weft_task_ptr(t, 0);
    if (cusolverDnDpotrf_bufferSize(s, CUBLAS_FILL_MODE_LOWER, n, a, lda, &lwork) !=
        CUSOLVER_STATUS_SUCCESS)
        return -1;
    char *ws = weft_task_workspace(t, 256 + sizeof(double) * (size_t)lwork);
    if (!ws) return -1;
    return cusolverDnDpotrf(s, CUBLAS_FILL_MODE_LOWER, n, a, lda, (double *)(ws + 256), lwork,
                            (int *)ws) == CUSOLVER_STATUS_SUCCESS
               ? 0
               : -1;
}

/* A_ik (flow 1) = A_ik L_kk^-T (flow 0). */
static inline int devtest_cuda_trsm2(weft_task_t *t)
{
    double one = 1.0;
    return devtest_ok(cublasDtrsm(
        devtest_blas(t), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
        CUBLAS_DIAG_NON_UNIT, weft_task_rows(t, 1), weft_task_cols(t, 1), &one, weft_task_ptr(t, 0),
        (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1)));
}

/* A_ii (flow 1) -= A_ik A_ik^T (flow 0). */
static inline int devtest_cuda_syrk2(weft_task_t *t)
{
    double minus = -1.0, one = 1.0;
    return devtest_ok(cublasDsyrk(devtest_blas(t), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                  weft_task_rows(t, 1), weft_task_cols(t, 0), &minus,
                                  weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), &one,
                                  weft_task_ptr(t, 1), (int)weft_task_ld(t, 1)));
}

#else
#define DEVTEST_CUDA_BODY(fn) NULL
#endif

/* From a host body: polls the rank's statistics each millisecond, up to
 * ms_max times, until the rank has sent n activations (each send holds its
 * tile's copy until the peer fetches it); whether it had. A gate task that
 * calls it makes the tasks after it come while those copies are held. */
static inline int devtest_wait_sent(weft_context_t *ctx, long long n, int ms_max)
{
    weft_stats_t st = {0};
    for (int k = 0; k < ms_max; k++) {
        CHECK(weft_stats_get(ctx, &st) == 0);
        if (st.activations_sent >= n) break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return st.activations_sent >= n;
}

/* weft_init that insists on at least `want` devices: the test's
 * environment asks for them, so their absence is a setup error, except with
 * DEVTEST_SKIP_MISSING set (GPU variants on machines with fewer GPUs):
 * then the test is skipped (exit 77). */
static inline weft_context_t *devtest_init(int *argc, char ***argv, int want)
{
    int skip = getenv("DEVTEST_SKIP_MISSING") != NULL;
    weft_context_t *ctx = weft_init(argc, argv);
    if (!ctx) {
        fprintf(stderr, "weft_init failed\n");
        exit(skip ? 77 : 1);
    }
    if (weft_ndevices(ctx) < want) {
        fprintf(stderr, "this test needs %d devices, weft opened %d\n", want, weft_ndevices(ctx));
        int rc = weft_fini(ctx);
        (void)rc;
        exit(skip ? 77 : 1);
    }
    return ctx;
}

/* ---- kernels (column-major, ld from the task: partial and strided tiles
 * need no special case) ---------------------------------------------------- */

/* Which device each task ran on, for the placement checks. */
static atomic_int devtest_ran_on[17];

static inline void devtest_count(weft_task_t *t)
{
    int dev = weft_task_device(t);
    if (dev >= 0 && dev < 17) atomic_fetch_add(&devtest_ran_on[dev], 1);
}

/* flow 0: A (R), flow 1: B (R), flow 2: C (RW): C += A B */
static int devtest_gemm_body(weft_task_t *t)
{
    devtest_count(t);
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}

/* flow 0: A (R), flow 1: B (R), flow 2: C (W, NEW): C = A B */
static int devtest_gemm_new_body(weft_task_t *t)
{
    devtest_count(t);
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 0.0,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}

/* flow 0: src (R), flow 1: dst (W): dst = src */
static int devtest_copy_body(weft_task_t *t)
{
    devtest_count(t);
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0);
    const double *s = weft_task_ptr(t, 0);
    double *d = weft_task_ptr(t, 1);
    int64_t ls = weft_task_ld(t, 0), ld = weft_task_ld(t, 1);
    for (int j = 0; j < n; j++) memcpy(d + j * ld, s + j * ls, sizeof(double) * (size_t)m);
    return 0;
}

/* flow 0: X (W): X(i,j) = value(seed, i, j) with value 0 the seed */
static int devtest_fill_body(weft_task_t *t)
{
    devtest_count(t);
    double seed;
    weft_task_value(t, 0, &seed);
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0);
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) x[i + j * ld] = sin(seed + 0.37 * i + 0.11 * j);
    return 0;
}

static double devtest_flops_gemm(const weft_task_t *t)
{
    return 2.0 * weft_task_rows(t, 2) * weft_task_cols(t, 2) * weft_task_cols(t, 0);
}

#ifdef WEFT_TEST_CUDA
static int devtest_gemm_cuda(weft_task_t *t)
{
    devtest_count(t);
    return devtest_cuda_gemm3(t, CUBLAS_OP_N, 1.0, 1.0);
}

static int devtest_gemm_new_cuda(weft_task_t *t)
{
    devtest_count(t);
    return devtest_cuda_gemm3(t, CUBLAS_OP_N, 1.0, 0.0);
}

static int devtest_copy_cuda(weft_task_t *t)
{
    devtest_count(t);
    return devtest_cuda_copy2(t);
}

static int devtest_fill_cuda(weft_task_t *t)
{
    devtest_count(t);
    return devtest_cuda_fill1(t);
}
#endif

static const weft_task_class_t devtest_gemm = {
    .name = "gemm",
    .body = {[WEFT_DEV_CPU] = devtest_gemm_body,
             [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_gemm_cuda)},
    .flops = devtest_flops_gemm};
static const weft_task_class_t devtest_copy = {
    .name = "copy",
    .body = {[WEFT_DEV_CPU] = devtest_copy_body,
             [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_copy_cuda)}};
/* The same kernels for accelerators only: the host cannot take them. */
static const weft_task_class_t devtest_gemm_dev = {
    .name = "gemm_dev",
    .body = {[WEFT_DEV_EMU] = devtest_gemm_body,
             [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_gemm_cuda)},
    .flops = devtest_flops_gemm};
static const weft_task_class_t devtest_gemm_new_dev = {
    .name = "gemm_new_dev",
    .body = {[WEFT_DEV_EMU] = devtest_gemm_new_body,
             [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_gemm_new_cuda)},
    .flops = devtest_flops_gemm};
static const weft_task_class_t devtest_fill_dev = {
    .name = "fill_dev",
    .body = {[WEFT_DEV_EMU] = devtest_fill_body,
             [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(devtest_fill_cuda)}};

/* flow 0: G (W) on the host, written after a 50 ms pause: the tasks that
 * read G become ready together when it ends (a batch forms). */
static int devtest_gate_body(weft_task_t *t)
{
    double *g = weft_task_ptr(t, 0);
    g[0] = 1.0;
    nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    return 0;
}

static const weft_task_class_t devtest_gate = {.name = "gate",
                                               .body = {[WEFT_DEV_CPU] = devtest_gate_body}};

/* flow 0: A (RW): A *= 2 */
static int devtest_twice_body(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * ld] *= 2.0;
    return 0;
}

static const weft_task_class_t devtest_twice = {
    .name = "twice",
    .body = {[WEFT_DEV_EMU] = devtest_twice_body, [WEFT_DEV_CPU] = devtest_twice_body}};
/* The same for emu devices only: the host cannot take it. */
static const weft_task_class_t devtest_twice_dev = {.name = "twice",
                                                    .body = {[WEFT_DEV_EMU] = devtest_twice_body}};

/* ---- host side helpers ---------------------------------------------------- */

static inline void devtest_fill_array(double *x, int m, int n, int64_t ld, double seed)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) x[i + j * ld] = sin(seed + 0.37 * i + 0.11 * j);
}

/* Largest |a - b| over an m x n block. */
static inline double devtest_maxdiff(const double *a, int64_t lda, const double *b, int64_t ldb,
                                     int m, int n)
{
    double e = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) e = fmax(e, fabs(a[i + j * lda] - b[i + j * ldb]));
    return e;
}

static inline weft_device_counters_t devtest_counters(weft_context_t *ctx, int dev)
{
    weft_device_counters_t c;
    memset(&c, 0, sizeof c);
    if (weft_device_counters_get(ctx, dev, &c) != WEFT_SUCCESS)
        fprintf(stderr, "no counters for device %d\n", dev);
    return c;
}

#endif

/* Tile kernels and task classes of weft-gemm: C = alpha A B + beta C.
 *
 * Header-only (apps/CMakeLists.txt builds every .c file of apps/ as its own
 * program). Tiles are column-major with the shapes and leading dimensions
 * weft_task_rows/cols/ld give, so partial tiles need no special case.
 *
 * The GEMM class runs on the CPU (cblas_dgemm), on CUDA devices (cuBLAS on
 * the task's stream and handle, when built with WEFT_APP_HAVE_CUDA) and on
 * emu devices (the CPU body); small tiles go out in batches
 * (cublasDgemmBatched). The fill, prefetch and check classes are the
 * host's (an emu device, which runs CPU bodies, may run fill too). */
#ifndef WEFT_APPS_GEMM_KERNELS_H
#define WEFT_APPS_GEMM_KERNELS_H

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#include "dense_matrix.h"
#include "dense_tiles.h"

#ifdef WEFT_APP_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#define GEMM_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define GEMM_CUDA_BODY(fn)
#endif

/* The scalars of one GEMM task (value 0): beta is the caller's for the
 * first product into a C tile and 1 for the others. */
typedef struct gemm_scal {
    double alpha, beta;
} gemm_scal_t;

/* flow 0: A[m][k] R, flow 1: B[k][n] R, flow 2: C[m][n] RW; value 0:
 * gemm_scal_t. C := alpha A B + beta C. */
static int gemm_cpu_gemm(weft_task_t *t)
{
    gemm_scal_t s;
    if (weft_task_value_get(t, 0, &s, sizeof s) != 0) return -1;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, weft_task_rows(t, 2),
                weft_task_cols(t, 2), weft_task_cols(t, 0), s.alpha, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), s.beta,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}

/* A batch on an emulated device: one after the other (what the batch path
 * of the device manager needs to be exercised without a GPU). */
static int gemm_cpu_gemm_batch(weft_task_t *const *ts, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (gemm_cpu_gemm(ts[i]) != 0) rc = -1;
    return rc;
}

static double gemm_flops(const weft_task_t *t)
{
    return 2.0 * weft_task_rows(t, 2) * weft_task_cols(t, 2) * weft_task_cols(t, 0);
}

#ifdef WEFT_APP_HAVE_CUDA
static int gemm_cuda_ok(cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-gemm: %s failed: %s\n", call, cublasGetStatusString(st));
    return -1;
}

static int gemm_cuda_ld(const weft_task_t *t, int f)
{
    int64_t ld = weft_task_ld(t, f);
    return ld > INT_MAX ? -1 : (int)ld;
}

/* The CUDA body of gemm_cpu_gemm: enqueued on the task's stream. */
static int gemm_cuda_gemm(weft_task_t *t)
{
    gemm_scal_t s;
    if (weft_task_value_get(t, 0, &s, sizeof s) != 0) return -1;
    return gemm_cuda_ok(cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N,
                                    CUBLAS_OP_N, weft_task_rows(t, 2), weft_task_cols(t, 2),
                                    weft_task_cols(t, 0), &s.alpha, weft_task_ptr(t, 0),
                                    gemm_cuda_ld(t, 0), weft_task_ptr(t, 1), gemm_cuda_ld(t, 1),
                                    &s.beta, weft_task_ptr(t, 2), gemm_cuda_ld(t, 2)),
                        "cublasDgemm");
}

/* Tasks ts[0..n) of one shape whose scalars equal those of ts[0]: one
 * cublasDgemmBatched, its A, B and C pointer arrays copied from this stack
 * array into dev (workspace) on the stream. The driver takes a pageable
 * source before cudaMemcpyAsync returns, so the array may go out of scope
 * (as apps/potrf_cuda.h discusses for its GEMM batch). */
static int gemm_cuda_group(weft_task_t *const *ts, int n, const gemm_scal_t *s, double **dev)
{
    enum { MAX = 64 };
    double *ptrs[3 * MAX];
    weft_task_t *t = ts[0];
    for (int i = 0; i < n; i++)
        for (int f = 0; f < 3; f++) ptrs[f * n + i] = weft_task_ptr(ts[i], f);
    if (n > MAX ||
        cudaMemcpyAsync(dev, ptrs, 3 * (size_t)n * sizeof ptrs[0], cudaMemcpyHostToDevice,
                        (cudaStream_t)weft_task_stream(t)) != cudaSuccess) {
        weft_task_error(t, "copying the pointers of a batch of %d GEMMs failed", n);
        return -1;
    }
    return gemm_cuda_ok(cublasDgemmBatched((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N,
                                           CUBLAS_OP_N, weft_task_rows(t, 2), weft_task_cols(t, 2),
                                           weft_task_cols(t, 0), &s->alpha,
                                           (const double *const *)dev, gemm_cuda_ld(t, 0),
                                           (const double *const *)dev + n, gemm_cuda_ld(t, 1),
                                           &s->beta, dev + 2 * n, gemm_cuda_ld(t, 2), n),
                        "cublasDgemmBatched");
}

/* A batch: cublasDgemmBatched takes one alpha and beta, so the tasks go
 * out in runs of equal scalars (a first product into C has the user's
 * beta, the others 1), each run's pointers in its own part of the
 * workspace, which the stream's next task reuses only after them. */
static int gemm_cuda_gemm_batch(weft_task_t *const *ts, int n)
{
    size_t bytes = 3 * (size_t)n * sizeof(double *);
    double **dev = weft_task_workspace(ts[0], bytes);
    if (dev == NULL) {
        weft_task_error(ts[0], "a batch of %d GEMMs needs %zu bytes of workspace", n, bytes);
        return -1;
    }
    for (int i = 0; i < n;) {
        gemm_scal_t s, u;
        if (weft_task_value_get(ts[i], 0, &s, sizeof s) != 0) return -1;
        int j = i + 1;
        while (j < n && weft_task_value_get(ts[j], 0, &u, sizeof u) == 0 &&
               memcmp(&s, &u, sizeof s) == 0)
            j++;
        if (gemm_cuda_group(ts + i, j - i, &s, dev + 3 * i) != 0) return -1;
        i = j;
    }
    return 0;
}
#endif /* WEFT_APP_HAVE_CUDA */

/* flow 0: a tile R on its home accelerator: the task only brings it there
 * before the timing starts. */
static int gemm_nop(weft_task_t *t)
{
    (void)t;
    return 0;
}

/* Small GEMMs also go out in batches (device_batch, device_batch_elems). */
static const weft_task_class_t gemm_class_gemm = {
    .name = "gemm",
    .body = {[WEFT_DEV_CPU] = gemm_cpu_gemm,
             [WEFT_DEV_EMU] = gemm_cpu_gemm,
             GEMM_CUDA_BODY(gemm_cuda_gemm)},
    .flops = gemm_flops,
    .batch = {[WEFT_DEV_EMU] = gemm_cpu_gemm_batch, GEMM_CUDA_BODY(gemm_cuda_gemm_batch)}};
/* Inserted with accelerators only (-g > 0). Its CPU body does nothing
 * either: where the device cannot hold the tile (a small device_memory_limit)
 * the prefetch falls back to the host instead of failing the run, as the
 * compute classes do. */
static const weft_task_class_t gemm_class_prefetch = {
    .name = "prefetch",
    .body = {[WEFT_DEV_CPU] = gemm_nop, [WEFT_DEV_EMU] = gemm_nop, GEMM_CUDA_BODY(gemm_nop)},
    .flops = NULL};

/* ---- check: r = C x - (alpha A (B x) + beta C0 x), tile by tile ------- */

/* w (rows) += s T0 v, with T0 the rows x cols tile regenerated from a
 * element by element: the check does not trust a stored operand (a
 * generation whose write was lost would be read by the check too, and the
 * product would look right), and C0 is gone from C. */
static void gemm_gen_gemv(const dense_tile_arg_t *a, int rows, int cols, double s,
                          const double *v, double *w)
{
    for (int i = 0; i < rows; i++) {
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += dense_elem(a->seed, a->row0 + i, a->col0 + j) * v[j];
        w[i] += s * sum;
    }
}

/* flow 0: a matrix tile T R (it places the task), flow 1: vector tile v R,
 * flow 2: vector tile w RW; value 0: double s, value 1: the
 * dense_tile_arg_t T was generated from. w += s T0 v (gemm_gen_gemv). */
static int gemm_cpu_gemv(weft_task_t *t)
{
    double s;
    dense_tile_arg_t a;
    if (weft_task_value_get(t, 0, &s, sizeof s) != 0 ||
        weft_task_value_get(t, 1, &a, sizeof a) != 0)
        return -1;
    gemm_gen_gemv(&a, weft_task_rows(t, 0), weft_task_cols(t, 0), s, weft_task_ptr(t, 1),
                  weft_task_ptr(t, 2));
    return 0;
}

/* flow 0: C[m][n] R, flow 1: x[n] R, flow 2: r[m] RW; value 0: double
 * beta, value 1: dense_tile_arg_t of C0[m][n]. r += C x - beta C0 x, C0
 * regenerated element by element (the original C is gone). */
static int gemm_cpu_cdiff(weft_task_t *t)
{
    double beta;
    dense_tile_arg_t a;
    if (weft_task_value_get(t, 0, &beta, sizeof beta) != 0 ||
        weft_task_value_get(t, 1, &a, sizeof a) != 0)
        return -1;
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    const double *x = weft_task_ptr(t, 1);
    double *r = weft_task_ptr(t, 2);
    cblas_dgemv(CblasColMajor, CblasNoTrans, rows, cols, 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), x, 1, 1.0, r, 1);
    gemm_gen_gemv(&a, rows, cols, -beta, x, r);
    return 0;
}

/* flow 0: a sums tile RW; value 0: int column, value 1: dense_tile_arg_t,
 * value 2: int rows and cols. Adds the squared norm of a regenerated
 * operand tile: C0, whose tile in C now holds the result, and A0 and B0,
 * which the check does not trust in storage (gemm_gen_gemv). */
static int gemm_cpu_sqnorm_gen(weft_task_t *t)
{
    int c, shape[2];
    dense_tile_arg_t a;
    if (weft_task_value_get(t, 0, &c, sizeof c) != 0 ||
        weft_task_value_get(t, 1, &a, sizeof a) != 0 ||
        weft_task_value_get(t, 2, shape, sizeof shape) != 0)
        return -1;
    double s2 = 0.0;
    for (int j = 0; j < shape[1]; j++)
        for (int i = 0; i < shape[0]; i++) {
            double v = dense_elem(a.seed, a.row0 + i, a.col0 + j);
            s2 += v * v;
        }
    app_sums_put(t, 0, c, &s2, 1);
    return 0;
}

static const weft_task_class_t gemm_class_gemv = {
    .name = "check_gemv", .body = {[WEFT_DEV_CPU] = gemm_cpu_gemv}, .flops = NULL};
static const weft_task_class_t gemm_class_cdiff = {
    .name = "check_cdiff", .body = {[WEFT_DEV_CPU] = gemm_cpu_cdiff}, .flops = NULL};
static const weft_task_class_t gemm_class_sqnorm_gen = {
    .name = "check_sqnorm_gen", .body = {[WEFT_DEV_CPU] = gemm_cpu_sqnorm_gen}, .flops = NULL};

#endif /* WEFT_APPS_GEMM_KERNELS_H */

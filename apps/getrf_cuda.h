/* CUDA bodies of weft-getrf's factorization and check classes: cuSOLVER and
 * cuBLAS on the stream and handles weft gives the task. Public API and the
 * CUDA libraries only; compiled when apps/CMakeLists.txt found the CUDA
 * toolkit (WEFT_APP_HAVE_CUDA). Include before the task classes.
 *
 * A body only enqueues work on weft_task_stream(t) and never waits for it.
 * The diagonal tile's LU is cusolverDnDgetrf with devIpiv NULL (no
 * pivoting); its devInfo is written straight into the task's second flow,
 * the 4-byte info tile of that diagonal tile, so no body reads it back:
 * the driver brings the info tiles to the host after the timed run and a
 * host task per tile fails on a zero pivot (one small copy a diagonal tile
 * a run instead of a stream synchronization a task). */
#ifndef WEFT_APPS_GETRF_CUDA_H
#define WEFT_APPS_GETRF_CUDA_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

#include "app_cuda.h"

/* Needs GETRF_DIAG_L and GETRF_DIAG_U (getrf_kernels.h, included first). */

static int getrf_cuda_blas_ok(cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-getrf: %s failed: %s\n", call, cublasGetStatusString(st));
    return -1;
}

static int getrf_cuda_rt_ok(cudaError_t e, const char *call)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "weft-getrf: %s failed: %s\n", call, cudaGetErrorString(e));
    return -1;
}

/* The leading dimension of flow f as the int the CUDA libraries take. */
static int getrf_cuda_ld(const weft_task_t *t, int f)
{
    int64_t ld = weft_task_ld(t, f);
    return ld > INT_MAX ? -1 : (int)ld;
}

static cublasHandle_t getrf_cuda_blas(const weft_task_t *t)
{
    return (cublasHandle_t)weft_task_blas_handle(t);
}

static void *getrf_cuda_scratch(weft_task_t *t, size_t bytes, const char *what)
{
    return app_cuda_workspace("weft-getrf", t, bytes, what);
}

/* flow 0: A[k][k] RW, flow 1: info[k] W (an int on the device). */
static int getrf_cuda_getrf(weft_task_t *t)
{
    cusolverDnHandle_t h = (cusolverDnHandle_t)weft_task_solver_handle(t);
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0), lda = getrf_cuda_ld(t, 0), lwork = 0;
    double *a = weft_task_ptr(t, 0);
    cusolverStatus_t st = cusolverDnDgetrf_bufferSize(h, m, n, a, lda, &lwork);
    if (st != CUSOLVER_STATUS_SUCCESS) {
        fprintf(stderr, "weft-getrf: cusolverDnDgetrf_bufferSize failed: status %d\n", (int)st);
        return -1;
    }
    double *work = getrf_cuda_scratch(t, (size_t)lwork * sizeof(double), "cusolverDnDgetrf");
    if (work == NULL) return -1;
    st = cusolverDnDgetrf(h, m, n, a, lda, work, NULL, (int *)weft_task_ptr(t, 1));
    if (st == CUSOLVER_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-getrf: cusolverDnDgetrf failed: status %d\n", (int)st);
    return -1;
}

/* flow 0: A[k][k] R, flow 1: A[k][n] RW; A[k][n] := L[k][k]^-1 A[k][n]. */
static int getrf_cuda_trsm_row(weft_task_t *t)
{
    const double one = 1.0;
    return getrf_cuda_blas_ok(cublasDtrsm(getrf_cuda_blas(t), CUBLAS_SIDE_LEFT,
                                          CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                                          weft_task_rows(t, 1), weft_task_cols(t, 1), &one,
                                          weft_task_ptr(t, 0), getrf_cuda_ld(t, 0),
                                          weft_task_ptr(t, 1), getrf_cuda_ld(t, 1)),
                              "cublasDtrsm (row panel)");
}

/* flow 0: A[k][k] R, flow 1: A[m][k] RW; A[m][k] := A[m][k] U[k][k]^-1. */
static int getrf_cuda_trsm_col(weft_task_t *t)
{
    const double one = 1.0;
    return getrf_cuda_blas_ok(cublasDtrsm(getrf_cuda_blas(t), CUBLAS_SIDE_RIGHT,
                                          CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                                          weft_task_rows(t, 1), weft_task_cols(t, 1), &one,
                                          weft_task_ptr(t, 0), getrf_cuda_ld(t, 0),
                                          weft_task_ptr(t, 1), getrf_cuda_ld(t, 1)),
                              "cublasDtrsm (column panel)");
}

/* flow 0: A[m][k] R, flow 1: A[k][n] R, flow 2: A[m][n] RW;
 * A[m][n] -= L[m][k] U[k][n]. */
static int getrf_cuda_gemm(weft_task_t *t)
{
    const double mone = -1.0, one = 1.0;
    return getrf_cuda_blas_ok(
        cublasDgemm(getrf_cuda_blas(t), CUBLAS_OP_N, CUBLAS_OP_N, weft_task_rows(t, 2),
                    weft_task_cols(t, 2), weft_task_cols(t, 0), &mone, weft_task_ptr(t, 0),
                    getrf_cuda_ld(t, 0), weft_task_ptr(t, 1), getrf_cuda_ld(t, 1), &one,
                    weft_task_ptr(t, 2), getrf_cuda_ld(t, 2)),
        "cublasDgemm");
}

/* ---- the panels by inverted factors (--trsm-inv) ---------------------- */

/* flow 0: A[k][k] R, flow 1: X W (n x n). X := L[k][k]^-1 (unit lower)
 * when lower, else U[k][k]^-1, zeros in the other triangle; only the
 * triangle asked for is read (the tile holds both factors). */
static int getrf_cuda_inverse(weft_task_t *t, int lower)
{
    app_cuda_tri_t p = {.upper = !lower,
                        .unit = lower,
                        .n = weft_task_rows(t, 0),
                        .a = weft_task_ptr(t, 0),
                        .lda = getrf_cuda_ld(t, 0),
                        .x = weft_task_ptr(t, 1),
                        .ldx = getrf_cuda_ld(t, 1)};
    return app_cuda_tri_inverse("weft-getrf", getrf_cuda_blas(t),
                                (cudaStream_t)weft_task_stream(t), &p);
}

static int getrf_cuda_inv_l(weft_task_t *t) { return getrf_cuda_inverse(t, 1); }
static int getrf_cuda_inv_u(weft_task_t *t) { return getrf_cuda_inverse(t, 0); }

/* flow 0: X R (an inverted factor), flow 1: B RW. B := X B (row panel,
 * left) or B X (column panel): one GEMM, cuBLAS's TRSM of such tiles being
 * a fraction of its GEMM rate (docs/RESULTS.md, "What the GPUs allow"). */
static int getrf_cuda_by_inverse(weft_task_t *t, int left)
{
    int m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    double *x = getrf_cuda_scratch(t, (size_t)m * (size_t)n * sizeof(double),
                                   "the panel by an inverted factor");
    if (x == NULL) return -1;
    const double *inv = weft_task_ptr(t, 0), *b = weft_task_ptr(t, 1);
    int ldi = getrf_cuda_ld(t, 0), ldb = getrf_cuda_ld(t, 1);
    app_cuda_mul_t p = {.ta = CUBLAS_OP_N, .tb = CUBLAS_OP_N, .m = m, .n = n,
                        .k = left ? m : n, .a = left ? inv : b, .lda = left ? ldi : ldb,
                        .b = left ? b : inv, .ldb = left ? ldb : ldi,
                        .c = weft_task_ptr(t, 1), .ldc = ldb};
    return app_cuda_mul_back("weft-getrf", getrf_cuda_blas(t), (cudaStream_t)weft_task_stream(t),
                             &p, x);
}

static int getrf_cuda_row_inv(weft_task_t *t) { return getrf_cuda_by_inverse(t, 1); }
static int getrf_cuda_col_inv(weft_task_t *t) { return getrf_cuda_by_inverse(t, 0); }

/* ---- residual check (--check) on the GPU ------------------------------ */

/* x (m x n, ld m) := a, or only a's upper triangle (zeros below, through a
 * packed copy after x, which the caller's workspace holds) when upper. */
static int getrf_cuda_copy(weft_task_t *t, int m, int n, const double *a, int lda, double *x,
                           int upper)
{
    cudaStream_t s = (cudaStream_t)weft_task_stream(t);
    size_t col = (size_t)m * sizeof(double);
    if (!upper)
        return getrf_cuda_rt_ok(cudaMemcpy2DAsync(x, col, a, (size_t)lda * sizeof(double), col, n,
                                                  cudaMemcpyDeviceToDevice, s),
                                "cudaMemcpy2DAsync (check)");
    double *packed = x + (size_t)m * (size_t)n;
    if (getrf_cuda_rt_ok(cudaMemsetAsync(x, 0, col * (size_t)n, s), "cudaMemsetAsync (check)"))
        return -1;
    cublasHandle_t h = getrf_cuda_blas(t);
    if (getrf_cuda_blas_ok(cublasDtrttp(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, packed),
                           "cublasDtrttp"))
        return -1;
    return getrf_cuda_blas_ok(cublasDtpttr(h, CUBLAS_FILL_MODE_UPPER, n, packed, x, m),
                              "cublasDtpttr");
}

/* The product of a resid task's factor tiles into x when one of them is a
 * diagonal tile, as getrf_resid_product: a copy of one multiplied in place
 * by the other's triangle (cuBLAS's trmm is in place with C = B). */
static int getrf_cuda_product(weft_task_t *t, int diag, double *x)
{
    const double one = 1.0;
    int m = weft_task_rows(t, 0), k = weft_task_cols(t, 0), n = weft_task_cols(t, 1);
    const double *l = weft_task_ptr(t, 0), *u = weft_task_ptr(t, 1);
    int ldl = getrf_cuda_ld(t, 0), ldu = getrf_cuda_ld(t, 1);
    if (diag & GETRF_DIAG_L) { /* m == k */
        if (getrf_cuda_copy(t, k, n, u, ldu, x, diag & GETRF_DIAG_U) != 0) return -1;
        return getrf_cuda_blas_ok(cublasDtrmm(getrf_cuda_blas(t), CUBLAS_SIDE_LEFT,
                                              CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                                              k, n, &one, l, ldl, x, k, x, k),
                                  "cublasDtrmm (check)");
    }
    if (getrf_cuda_copy(t, m, k, l, ldl, x, 0) != 0) return -1;
    return getrf_cuda_blas_ok(cublasDtrmm(getrf_cuda_blas(t), CUBLAS_SIDE_RIGHT,
                                          CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                                          m, k, &one, u, ldu, x, m, x, m),
                              "cublasDtrmm (check)");
}

/* flow 0: A[m][k] (L) R, flow 1: A[k][n] (U) R, flow 2: R[m][n] RW; value
 * 0: int diag (GETRF_DIAG_*). R -= L U. The
 * workspace holds the product and, for a diagonal U, its packed triangle. */
static int getrf_cuda_resid(weft_task_t *t)
{
    const double mone = -1.0, one = 1.0;
    int diag;
    if (weft_task_value_get(t, 0, &diag, sizeof diag) != 0) return -1;
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), ldr = getrf_cuda_ld(t, 2);
    double *r = weft_task_ptr(t, 2);
    if (diag == 0)
        return getrf_cuda_blas_ok(cublasDgemm(getrf_cuda_blas(t), CUBLAS_OP_N, CUBLAS_OP_N, m, n,
                                              weft_task_cols(t, 0), &mone, weft_task_ptr(t, 0),
                                              getrf_cuda_ld(t, 0), weft_task_ptr(t, 1),
                                              getrf_cuda_ld(t, 1), &one, r, ldr),
                                  "cublasDgemm (check)");
    size_t elems = (size_t)m * (size_t)n + (size_t)n * ((size_t)n + 1) / 2;
    double *x = getrf_cuda_scratch(t, elems * sizeof(double), "the GPU residual check");
    if (x == NULL || getrf_cuda_product(t, diag, x) != 0) return -1;
    /* R := R - X; geam works in place with C = A. */
    return getrf_cuda_blas_ok(cublasDgeam(getrf_cuda_blas(t), CUBLAS_OP_N, CUBLAS_OP_N, m, n, &one,
                                          r, ldr, &mone, x, m, r, ldr),
                              "cublasDgeam (check)");
}

#endif /* WEFT_APP_HAVE_CUDA */
#endif /* WEFT_APPS_GETRF_CUDA_H */

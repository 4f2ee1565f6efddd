/* CUDA bodies of weft-potrf's factorization classes: cuSOLVER and cuBLAS on
 * the stream and handles weft hands the task. Public API + CUDA libraries
 * only; compiled when apps/CMakeLists.txt found the CUDA toolkit and
 * defined WEFT_APP_HAVE_CUDA. Include it before the task classes and set
 * .body[WEFT_DEV_CUDA] to the potrf_cuda_* functions.
 *
 * Each body only enqueues work on weft_task_stream(t) and never waits for
 * it (the one copy from host memory, a GEMM batch's pointer arrays, is
 * discussed at potrf_cuda_gemm_batch); tiles are column-major with the
 * shapes and leading dimensions that weft_task_rows/cols/ld give, as in the
 * CPU bodies.
 *
 * Workspace layout (potrf): weft_task_workspace(t, bytes) is scratch device
 * memory owned by the task's execution stream (parameter device_workspace,
 * per stream). The first POTRF_CUDA_INFO_BYTES hold cusolverDnDpotrf's
 * devInfo (an int), the cuSOLVER work array follows. devInfo is not read
 * back (that would synchronize the stream): a tile that is not positive
 * definite shows in --check, not as a failed task as on the CPU. */
#ifndef WEFT_APPS_POTRF_CUDA_H
#define WEFT_APPS_POTRF_CUDA_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

#include "app_cuda.h"

#define POTRF_CUDA_INFO_BYTES 256

static int potrf_cuda_blas_ok(cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-potrf: %s failed: %s\n", call, cublasGetStatusString(st));
    return -1;
}

static int potrf_cuda_solver_ok(cusolverStatus_t st, const char *call)
{
    if (st == CUSOLVER_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-potrf: %s failed: cusolverStatus_t %d\n", call, (int)st);
    return -1;
}

/* The leading dimension of flow f as the int the CUDA libraries take. */
static int potrf_cuda_ld(const weft_task_t *t, int f)
{
    int64_t ld = weft_task_ld(t, f);
    return ld > INT_MAX ? -1 : (int)ld;
}

/* Scratch of a body: weft_task_workspace(t, bytes), or NULL after saying
 * which step needs how much. */
static void *potrf_cuda_scratch(weft_task_t *t, size_t bytes, const char *what, int n)
{
    void *ws = weft_task_workspace(t, bytes);
    if (ws == NULL)
        fprintf(stderr,
                "weft-potrf: %s of %d x %d tiles needs %zu bytes of workspace; raise "
                "--weft-device_workspace\n",
                what, n, n, bytes);
    return ws;
}

/* flow 0: A[k][k] RW; its lower Cholesky factor in place. */
static int potrf_cuda_potrf(weft_task_t *t)
{
    cusolverDnHandle_t h = (cusolverDnHandle_t)weft_task_solver_handle(t);
    int n = weft_task_rows(t, 0), lda = potrf_cuda_ld(t, 0), lwork = 0;
    double *a = weft_task_ptr(t, 0);
    if (potrf_cuda_solver_ok(
            cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, &lwork),
            "cusolverDnDpotrf_bufferSize") != 0)
        return -1;
    size_t bytes = POTRF_CUDA_INFO_BYTES + (size_t)lwork * sizeof(double);
    unsigned char *ws = potrf_cuda_scratch(t, bytes, "cusolverDnDpotrf", n);
    if (ws == NULL) return -1;
    return potrf_cuda_solver_ok(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, lda,
                                                 (double *)(ws + POTRF_CUDA_INFO_BYTES), lwork,
                                                 (int *)ws),
                                "cusolverDnDpotrf");
}

/* flow 0: A[k][k] R, flow 1: A[m][k] RW; A[m][k] := A[m][k] L[k][k]^-T. */
static int potrf_cuda_trsm(weft_task_t *t)
{
    const double one = 1.0;
    return potrf_cuda_blas_ok(
        cublasDtrsm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_SIDE_RIGHT,
                    CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, weft_task_rows(t, 1),
                    weft_task_cols(t, 1), &one, weft_task_ptr(t, 0), potrf_cuda_ld(t, 0),
                    weft_task_ptr(t, 1), potrf_cuda_ld(t, 1)),
        "cublasDtrsm");
}

/* flow 0: L[k][k] R, flow 1: D[k] W; D[k] := L[k][k]^-1 (zeros above),
 * reading only L's lower triangle (cuSOLVER leaves A's upper one in the
 * tile): app_cuda_tri_inverse. */
static int potrf_cuda_trtri(weft_task_t *t)
{
    app_cuda_tri_t p = {.n = weft_task_rows(t, 0),
                        .a = weft_task_ptr(t, 0),
                        .lda = potrf_cuda_ld(t, 0),
                        .x = weft_task_ptr(t, 1),
                        .ldx = potrf_cuda_ld(t, 1)};
    return app_cuda_tri_inverse("weft-potrf", (cublasHandle_t)weft_task_blas_handle(t),
                                (cudaStream_t)weft_task_stream(t), &p);
}

/* flow 0: D[k] = L[k][k]^-1 R, flow 1: A[m][k] RW; A[m][k] := A[m][k] D^T.
 * One GEMM into the workspace and a copy back: cuBLAS's TRSM of such tiles
 * runs at a fraction of its GEMM rate (bench/cublas_tile_rate.c). */
static int potrf_cuda_trsm_inv(weft_task_t *t)
{
    int m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    double *x = potrf_cuda_scratch(t, (size_t)m * (size_t)n * sizeof(double),
                                   "the TRSM by an inverted factor", n);
    if (x == NULL) return -1;
    app_cuda_mul_t p = {.ta = CUBLAS_OP_N, .tb = CUBLAS_OP_T, .m = m, .n = n, .k = n,
                        .a = weft_task_ptr(t, 1), .lda = potrf_cuda_ld(t, 1),
                        .b = weft_task_ptr(t, 0), .ldb = potrf_cuda_ld(t, 0),
                        .c = weft_task_ptr(t, 1), .ldc = potrf_cuda_ld(t, 1)};
    return app_cuda_mul_back("weft-potrf", (cublasHandle_t)weft_task_blas_handle(t),
                             (cudaStream_t)weft_task_stream(t), &p, x);
}

/* flow 0: A[m][k] R, flow 1: A[m][m] RW; A[m][m] -= A[m][k] A[m][k]^T. */
static int potrf_cuda_syrk(weft_task_t *t)
{
    const double mone = -1.0, one = 1.0;
    return potrf_cuda_blas_ok(
        cublasDsyrk((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                    weft_task_rows(t, 1), weft_task_cols(t, 0), &mone, weft_task_ptr(t, 0),
                    potrf_cuda_ld(t, 0), &one, weft_task_ptr(t, 1), potrf_cuda_ld(t, 1)),
        "cublasDsyrk");
}

/* flow 0: A[m][k] R, flow 1: A[n][k] R, flow 2: A[m][n] RW;
 * A[m][n] -= A[m][k] A[n][k]^T. */
static int potrf_cuda_gemm(weft_task_t *t)
{
    const double mone = -1.0, one = 1.0;
    return potrf_cuda_blas_ok(
        cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_T,
                    weft_task_rows(t, 2), weft_task_cols(t, 2), weft_task_cols(t, 0), &mone,
                    weft_task_ptr(t, 0), potrf_cuda_ld(t, 0), weft_task_ptr(t, 1),
                    potrf_cuda_ld(t, 1), &one, weft_task_ptr(t, 2), potrf_cuda_ld(t, 2)),
        "cublasDgemm");
}

/* n GEMM tasks of one shape (weft batches them: device_batch): one
 * cublasDgemmBatched. Its pointer arrays (A, B, C of each task, 3 n
 * pointers) go to the stream's workspace by cudaMemcpyAsync from this
 * stack array: the driver takes a pageable source before returning, so the
 * array may go out of scope, and the next task of the stream reuses the
 * workspace only after this GEMM. CUDA's documentation allows such a copy
 * to wait for the stream first; with these few hundred bytes it measurably
 * does not (139k tasks a second a GPU at NB=512 with batches, docs/RESULTS.md). A
 * pinned ring recycled by completion would not depend on that. */
#define POTRF_CUDA_BATCH_MAX 64
static int potrf_cuda_gemm_batch(weft_task_t *const *ts, int n)
{
    const double mone = -1.0, one = 1.0;
    weft_task_t *t = ts[0];
    if (n > POTRF_CUDA_BATCH_MAX) {
        fprintf(stderr, "weft-potrf: a batch of %d GEMMs (at most %d)\n", n, POTRF_CUDA_BATCH_MAX);
        return -1;
    }
    double *ptrs[3 * POTRF_CUDA_BATCH_MAX];
    for (int i = 0; i < n; i++) {
        ptrs[i] = weft_task_ptr(ts[i], 0);
        ptrs[n + i] = weft_task_ptr(ts[i], 1);
        ptrs[2 * n + i] = weft_task_ptr(ts[i], 2);
    }
    size_t bytes = 3 * (size_t)n * sizeof ptrs[0];
    double **dev = potrf_cuda_scratch(t, bytes, "a batch of GEMMs", weft_task_rows(t, 2));
    if (dev == NULL) return -1;
    if (cudaMemcpyAsync(dev, ptrs, bytes, cudaMemcpyHostToDevice,
                        (cudaStream_t)weft_task_stream(t)) != cudaSuccess) {
        fprintf(stderr, "weft-potrf: copying a GEMM batch's pointers failed\n");
        return -1;
    }
    return potrf_cuda_blas_ok(
        cublasDgemmBatched((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_T,
                           weft_task_rows(t, 2), weft_task_cols(t, 2), weft_task_cols(t, 0), &mone,
                           (const double *const *)dev, potrf_cuda_ld(t, 0),
                           (const double *const *)dev + n, potrf_cuda_ld(t, 1), &one, dev + 2 * n,
                           potrf_cuda_ld(t, 2), n),
        "cublasDgemmBatched");
}

#endif /* WEFT_APP_HAVE_CUDA */
#endif /* WEFT_APPS_POTRF_CUDA_H */

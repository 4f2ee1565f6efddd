/* CUDA bodies of the device tests' kernels (cuBLAS, cuSOLVER and copies
 * on the stream weft hands the task), so that the same test programs run on
 * GPUs: tests/device/CMakeLists.txt builds them with WEFT_TEST_CUDA when the
 * toolkit is found. Without it, DEVTEST_CUDA_BODY(fn) is NULL. */
#ifndef WEFT_TESTS_DEVTEST_CUDA_H
#define WEFT_TESTS_DEVTEST_CUDA_H

#ifdef WEFT_TEST_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdlib.h>

#include "weft/weft.h"

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

#endif

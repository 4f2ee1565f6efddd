/* CUDA helpers the dense apps' bodies share: the task's workspace with a
 * message naming the need, the inverse of a triangle (a TRSM of the
 * identity), and a multiplication whose result replaces one of its
 * operands (the TRSM of a panel tile done as a GEMM by an inverted
 * factor). Both only enqueue work on the stream they are given.
 * Compiled with WEFT_APP_HAVE_CUDA; header-only like the apps. */
#ifndef WEFT_APPS_APP_CUDA_H
#define WEFT_APPS_APP_CUDA_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

/* d (n x n, ld ldd) := the identity, enqueued on stream: cleared, then
 * each non-zero byte of the double 1.0 written down the diagonal by a 2D
 * memset one byte wide whose pitch steps one column and one row. No kernel
 * of our own and no copy from host memory (which CUDA may make wait for the
 * stream). */
static inline int app_cuda_identity(double *d, int n, int ldd, cudaStream_t stream)
{
    const double one = 1.0;
    unsigned char bytes[sizeof one];
    memcpy(bytes, &one, sizeof one);
    size_t col = (size_t)ldd * sizeof(double);
    if (cudaMemset2DAsync(d, col, 0, (size_t)n * sizeof(double), n, stream) != cudaSuccess)
        return -1;
    for (size_t i = 0; i < sizeof one; i++)
        if (bytes[i] != 0 && cudaMemset2DAsync((unsigned char *)d + i, col + sizeof(double),
                                               bytes[i], 1, n, stream) != cudaSuccess)
            return -1;
    return 0;
}

/* weft_task_workspace(t, bytes), or NULL after naming what needs how much
 * and the parameter that gives more. */
static inline void *app_cuda_workspace(const char *prog, weft_task_t *t, size_t bytes,
                                       const char *what)
{
    void *ws = weft_task_workspace(t, bytes);
    if (ws == NULL)
        fprintf(stderr,
                "%s: %s needs %zu bytes of device workspace; raise --weft-device_workspace\n",
                prog, what, bytes);
    return ws;
}

/* x (n x n, ld ldx) := the inverse of the lower (or upper) triangle of a,
 * unit or not, with zeros in the other triangle: a TRSM of the identity,
 * which reads only the triangle it is told (the tile may hold more). For
 * 2048 tiles on an H200 that took 1.2 ms where cusolverDnXtrtri took 3.3,
 * and inverting by halves with TRMMs was slower still at 1024 (docs/RESULTS.md). */
typedef struct app_cuda_tri {
    int upper, unit, n;
    const double *a;
    int lda;
    double *x;
    int ldx;
} app_cuda_tri_t;

static inline int app_cuda_tri_inverse(const char *prog, cublasHandle_t h, cudaStream_t s,
                                       const app_cuda_tri_t *p)
{
    const double one = 1.0;
    if (app_cuda_identity(p->x, p->n, p->ldx, s) != 0) {
        fprintf(stderr, "%s: cudaMemset2DAsync of an inverse tile failed\n", prog);
        return -1;
    }
    cublasStatus_t st = cublasDtrsm(
        h, CUBLAS_SIDE_LEFT, p->upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
        CUBLAS_OP_N, p->unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, p->n, p->n, &one, p->a,
        p->lda, p->x, p->ldx);
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    fprintf(stderr, "%s: cublasDtrsm (inverse) failed: %s\n", prog, cublasGetStatusString(st));
    return -1;
}

/* c (m x n, ld ldc) := op(a) op(b), where c is one of the operands: the
 * product goes to the scratch x (m x n, ld m) by one GEMM, then back to c
 * by one copy. 0, or -1 after naming the failed call with prog. */
typedef struct app_cuda_mul {
    cublasOperation_t ta, tb;
    int m, n, k;
    const double *a, *b;
    int lda, ldb;
    double *c;
    int ldc;
} app_cuda_mul_t;

static inline int app_cuda_mul_back(const char *prog, cublasHandle_t h, cudaStream_t s,
                                    const app_cuda_mul_t *p, double *x)
{
    const double one = 1.0, zero = 0.0;
    cublasStatus_t st = cublasDgemm(h, p->ta, p->tb, p->m, p->n, p->k, &one, p->a, p->lda, p->b,
                                    p->ldb, &zero, x, p->m);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "%s: cublasDgemm (by an inverted factor) failed: %s\n", prog,
                cublasGetStatusString(st));
        return -1;
    }
    if (cudaMemcpy2DAsync(p->c, (size_t)p->ldc * sizeof(double), x, (size_t)p->m * sizeof(double),
                          (size_t)p->m * sizeof(double), p->n, cudaMemcpyDeviceToDevice,
                          s) != cudaSuccess) {
        fprintf(stderr, "%s: cudaMemcpy2DAsync of a product back to its tile failed\n", prog);
        return -1;
    }
    return 0;
}

#endif /* WEFT_APP_HAVE_CUDA */
#endif /* WEFT_APPS_APP_CUDA_H */

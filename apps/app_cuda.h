/* CUDA helpers the dense apps' bodies share: the identity tile that an
 * inversion by TRSM starts from, and a multiplication whose result
 * replaces one of its operands (the TRSM of a panel tile done as a GEMM by
 * an inverted factor). Both only enqueue work on the stream they are given.
 * Compiled with WEFT_APP_HAVE_CUDA; header-only like the apps. */
#ifndef WEFT_APPS_APP_CUDA_H
#define WEFT_APPS_APP_CUDA_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

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

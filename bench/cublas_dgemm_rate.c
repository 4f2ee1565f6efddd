/* cublas_dgemm_rate: the ceiling of a tiled Cholesky's trailing update on
 * one GPU. weft-potrf's GEMM tasks are C -= A B^T on nb x nb tiles, several
 * at once on a few streams; this times exactly that with cuBLAS alone (no
 * runtime), beside one large DGEMM, so that the GPU rate of weft-potrf can
 * be read against what its kernels could give.
 *
 * Usage: cublas_dgemm_rate [-t nb] [-n big] [-s maxstreams] [-c count]
 *   -t  tile size (default 2048)          -n  order of the large DGEMM (16384)
 *   -s  streams tried, 1..s (default 6)   -c  tile GEMMs a measurement (240)
 *
 * Each tile GEMM reads and writes its own tiles (a pool of 3 x 16 tiles
 * cycled through), so caches see a realistic working set. One line per
 * measurement:
 *   RESULT dgemm tiles nb=<nb> streams=<s> tflops=<r>
 *   RESULT dgemm big n=<n> tflops=<r>
 * Build: gcc -std=c11 -O2 -I<cuda>/include cublas_dgemm_rate.c
 *        -L<cuda>/lib64 -lcublas -lcudart */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define PEER_NAME "cublas_dgemm_rate"
#include "peer_util.h" /* CUDA_OK */

#define POOL 16
#define MAX_STREAMS 16

#define BLAS_OK(call)                                                                              \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, PEER_NAME ": %s failed: %s\n", #call, cublasGetStatusString(s_));      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

typedef struct rate_ctx {
    cudaStream_t stream[MAX_STREAMS];
    cublasHandle_t blas[MAX_STREAMS];
    double *tile[3 * POOL];
    int nb;
} rate_ctx_t;

/* count tile GEMMs dealt round robin over s streams, timed with events on
 * stream 0 after joining the others; the rate in *tflops. */
static int time_tiles(rate_ctx_t *r, int s, int count, double *tflops)
{
    const double mone = -1.0, one = 1.0;
    cudaEvent_t e0, e1, done[MAX_STREAMS];
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaEventRecord(e0, r->stream[0]));
    for (int k = 1; k < s; k++) CUDA_OK(cudaStreamWaitEvent(r->stream[k], e0, 0));
    for (int i = 0; i < count; i++) {
        int k = i % s, p = i % POOL;
        BLAS_OK(cublasDgemm(r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, r->nb, r->nb, r->nb, &mone,
                            r->tile[p], r->nb, r->tile[POOL + p], r->nb, &one,
                            r->tile[2 * POOL + p], r->nb));
    }
    for (int k = 1; k < s; k++) {
        CUDA_OK(cudaEventCreate(&done[k]));
        CUDA_OK(cudaEventRecord(done[k], r->stream[k]));
        CUDA_OK(cudaStreamWaitEvent(r->stream[0], done[k], 0));
    }
    CUDA_OK(cudaEventRecord(e1, r->stream[0]));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    double nb = r->nb;
    *tflops = 2.0 * nb * nb * nb * count / (ms * 1e-3) * 1e-12;
    for (int k = 1; k < s; k++) CUDA_OK(cudaEventDestroy(done[k]));
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    return 0;
}

/* One n x n x n DGEMM (after one untimed call), its rate in *tflops. */
static int time_big(cublasHandle_t h, cudaStream_t st, int n, double *tflops)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *a = NULL, *b = NULL, *c = NULL;
    const double one = 1.0;
    CUDA_OK(cudaMalloc((void **)&a, bytes));
    CUDA_OK(cudaMalloc((void **)&b, bytes));
    CUDA_OK(cudaMalloc((void **)&c, bytes));
    CUDA_OK(cudaMemsetAsync(a, 0, bytes, st));
    CUDA_OK(cudaMemsetAsync(b, 0, bytes, st));
    CUDA_OK(cudaMemsetAsync(c, 0, bytes, st));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int rep = 0; rep < 2; rep++) {
        CUDA_OK(cudaEventRecord(e0, st));
        BLAS_OK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, b, n, &one, c, n));
        CUDA_OK(cudaEventRecord(e1, st));
    }
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    *tflops = 2.0 * (double)n * n * n / (ms * 1e-3) * 1e-12;
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
    CUDA_OK(cudaFree(c));
    return 0;
}

/* Streams, handles and the tile pool (zeros: the rate does not depend on
 * the values). */
static int setup(rate_ctx_t *r, int nb, int smax)
{
    memset(r, 0, sizeof *r);
    r->nb = nb;
    size_t bytes = (size_t)nb * (size_t)nb * sizeof(double);
    for (int k = 0; k < smax; k++) {
        CUDA_OK(cudaStreamCreateWithFlags(&r->stream[k], cudaStreamNonBlocking));
        BLAS_OK(cublasCreate(&r->blas[k]));
        BLAS_OK(cublasSetStream(r->blas[k], r->stream[k]));
    }
    for (int i = 0; i < 3 * POOL; i++) {
        CUDA_OK(cudaMalloc((void **)&r->tile[i], bytes));
        CUDA_OK(cudaMemset(r->tile[i], 0, bytes));
    }
    return 0;
}

static int parse(int argc, char **argv, int *nb, int *big, int *smax, int *count)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "-t") == 0)
            *nb = v;
        else if (strcmp(argv[i], "-n") == 0)
            *big = v;
        else if (strcmp(argv[i], "-s") == 0)
            *smax = v;
        else if (strcmp(argv[i], "-c") == 0)
            *count = v;
        else
            return -1;
    }
    if (argc % 2 == 0 || *nb < 1 || *big < 1 || *smax < 1 || *smax > MAX_STREAMS || *count < 1)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int nb = 2048, big = 16384, smax = 6, count = 240;
    if (parse(argc, argv, &nb, &big, &smax, &count) != 0) {
        fprintf(stderr, "usage: %s [-t nb] [-n big] [-s maxstreams (1..%d)] [-c count]\n", argv[0],
                MAX_STREAMS);
        return 2;
    }
    rate_ctx_t r;
    if (setup(&r, nb, smax) != 0) return 1;
    double tf = 0.0;
    if (time_tiles(&r, 1, POOL, &tf) != 0) return 1; /* warm-up */
    for (int s = 1; s <= smax; s++) {
        if (time_tiles(&r, s, count, &tf) != 0) return 1;
        printf("RESULT dgemm tiles nb=%d streams=%d tflops=%.2f\n", nb, s, tf);
        fflush(stdout);
    }
    if (time_big(r.blas[0], r.stream[0], big, &tf) != 0) return 1;
    printf("RESULT dgemm big n=%d tflops=%.2f\n", big, tf);
    return 0;
}

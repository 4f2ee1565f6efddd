/* What bench/green_chain.c and bench/chain_kernels.c share: one step of a
 * tile Cholesky's diagonal chain (an nb SPD tile, its factor, the factor's
 * inverse) timed beside a background of 4 streams of nb-sized DGEMMs (the
 * trailing update). A lane is a stream with its cuBLAS and cuSOLVER
 * handles; the work holds the device buffers both programs use.
 * The including file defines CHAIN_BENCH_NAME (for messages) first. */
#ifndef WEFT_BENCH_CHAIN_BENCH_H
#define WEFT_BENCH_CHAIN_BENCH_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NGEMM_STREAMS 4
#define CHAINS 20

#define CK(x)                                                                                      \
    do {                                                                                           \
        int e_ = (int)(x);                                                                         \
        if (e_ != 0) {                                                                             \
            fprintf(stderr, CHAIN_BENCH_NAME ": %s failed (%d) at line %d\n", #x, e_, __LINE__);   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct lane {
    cudaStream_t s;
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
} lane_t;

/* The chain's buffers: spd (the tile it starts from each step), eye (the
 * identity), a (the factor), x (the inverse), tmp (scratch of a tile), the
 * factorization's workspace; ab[i] and c[i], background stream i's GEMM. */
typedef struct work {
    int nb, lwork;
    double *spd, *eye, *a, *x, *tmp, *ws, *ab[NGEMM_STREAMS], *c[NGEMM_STREAMS];
    int *info;
} work_t;

static void lane_make(lane_t *l, cudaStream_t s)
{
    l->s = s;
    CK(cublasCreate(&l->blas));
    CK(cublasSetStream(l->blas, s));
    CK(cusolverDnCreate(&l->solver));
    CK(cusolverDnSetStream(l->solver, s));
}

static void lane_free(lane_t *l)
{
    cublasDestroy(l->blas);
    cusolverDnDestroy(l->solver);
}

/* `count` GEMMs of background stream i, C -= A A^T. */
static void gemms(const lane_t *l, const work_t *w, int i, int count)
{
    const double one = 1.0, minus = -1.0;
    for (int k = 0; k < count; k++)
        CK(cublasDgemm(l->blas, CUBLAS_OP_N, CUBLAS_OP_T, w->nb, w->nb, w->nb, &minus, w->ab[i],
                       w->nb, w->ab[i], w->nb, &one, w->c[i], w->nb));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Random background tiles, a diagonally dominant SPD tile, the identity. */
static void work_make(work_t *w, int nb)
{
    size_t n2 = (size_t)nb * nb;
    double *h = malloc(n2 * sizeof(double));
    for (size_t i = 0; i < n2; i++) h[i] = (double)rand() / RAND_MAX - 0.5;
    w->nb = nb;
    double **bufs[] = {&w->spd, &w->eye, &w->a, &w->x, &w->tmp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CK(cudaMalloc((void **)bufs[i], n2 * sizeof(double)));
    CK(cudaMalloc((void **)&w->info, sizeof(int)));
    for (int i = 0; i < NGEMM_STREAMS; i++) {
        CK(cudaMalloc((void **)&w->ab[i], n2 * sizeof(double)));
        CK(cudaMalloc((void **)&w->c[i], n2 * sizeof(double)));
        CK(cudaMemcpy(w->ab[i], h, n2 * sizeof(double), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(w->c[i], h, n2 * sizeof(double), cudaMemcpyHostToDevice));
    }
    for (int i = 0; i < nb; i++)
        for (int j = 0; j <= i; j++) {
            double v = h[(size_t)i * nb + j];
            h[(size_t)j * nb + i] = v;
            h[(size_t)i * nb + j] = v + (i == j ? nb : 0.0);
        }
    CK(cudaMemcpy(w->spd, h, n2 * sizeof(double), cudaMemcpyHostToDevice));
    for (size_t i = 0; i < n2; i++) h[i] = i % ((size_t)nb + 1) == 0 ? 1.0 : 0.0;
    CK(cudaMemcpy(w->eye, h, n2 * sizeof(double), cudaMemcpyHostToDevice));
    free(h);
    cusolverDnHandle_t s;
    CK(cusolverDnCreate(&s));
    CK(cusolverDnDpotrf_bufferSize(s, CUBLAS_FILL_MODE_LOWER, nb, w->a, nb, &w->lwork));
    cusolverDnDestroy(s);
    CK(cudaMalloc((void **)&w->ws, (size_t)w->lwork * sizeof(double)));
}

/* The GEMM count a background stream runs in a case: about 600 of 1024. */
static int gemm_count(int nb) { return 600 * 1024 / nb * 1024 / nb * 1024 / nb; }

#endif

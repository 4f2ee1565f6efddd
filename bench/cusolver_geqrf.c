/* cusolver_geqrf: the one-GPU peer of weft-geqrf -g 1, cusolverDnDgeqrf.
 *
 * Usage: cusolver_geqrf [-M m] [-N n] [--seed s] [--nruns r] [--check]
 *
 * The matrix is the one weft-geqrf factorizes (apps/qr_matrix.h, matrix 0
 * of the seed), column-major, lda = M, generated on the host, copied to the
 * GPU once and to a pristine copy there, copied device to device before
 * each run. Timed with CUDA events around cusolverDnDgeqrf alone (weft's
 * timing also starts with the tiles on the device). One line a run:
 *   [****] TIME(s) <t> : cusolverDnDgeqrf M= <m> N= <n> : <gflops> gflops
 * with gflops = (2 M N^2 - 2 N^3 / 3) / t. --check, after the first run:
 * Q is orthogonal, so the Frobenius norm of R (the upper triangle) must
 * equal that of A: prints "check: | ||R|| - ||A|| | / ||A|| = <e> :
 * PASSED" (e < M * 1e-14) or FAILED (exit 1). Exit 1 on a CUDA error.
 *
 * Build: gcc -std=c11 -O2 -I<cuda>/include cusolver_geqrf.c
 *        -L<cuda>/lib64 -lcusolver -lcudart -lm */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "../apps/qr_matrix.h" /* the matrix weft-geqrf factorizes */
#define PEER_NAME "cusolver_geqrf"
#include "peer_util.h" /* CUDA_OK, SOLVER_OK, parse_u64 */

typedef struct geqrf_opts {
    int64_t m, n;
    uint64_t seed;
    int nruns, check;
} geqrf_opts_t;

static int parse(int argc, char **argv, geqrf_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0) return -1;
        if (strcmp(argv[i], "-M") == 0)
            o->m = (int64_t)v;
        else if (strcmp(argv[i], "-N") == 0)
            o->n = (int64_t)v;
        else if (strcmp(argv[i], "--seed") == 0)
            o->seed = v;
        else if (strcmp(argv[i], "--nruns") == 0)
            o->nruns = (int)v;
        else
            return -1;
        i++;
    }
    if (o->m < 0) o->m = o->n;
    return o->n >= 1 && o->m >= o->n && o->m <= INT32_MAX / 2 && o->nruns >= 1 ? 0 : -1;
}

/* Frobenius norm of the upper triangle (upper = 1) or of all of h. */
static double fro(const double *h, int64_t m, int64_t n, int upper)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m && (!upper || i <= j); i++) s += h[i + j * m] * h[i + j * m];
    return sqrt(s);
}

typedef struct geqrf_dev {
    cusolverDnHandle_t solver;
    cudaStream_t stream;
    double *d, *d0, *tau, *work;
    int *dinfo, lwork;
    cudaEvent_t e0, e1;
} geqrf_dev_t;

static int setup(geqrf_dev_t *p, const double *h, int64_t m, int64_t n)
{
    size_t bytes = sizeof(double) * (size_t)m * (size_t)n;
    CUDA_OK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    SOLVER_OK(cusolverDnCreate(&p->solver));
    SOLVER_OK(cusolverDnSetStream(p->solver, p->stream));
    CUDA_OK(cudaMalloc((void **)&p->d, bytes));
    CUDA_OK(cudaMalloc((void **)&p->d0, bytes));
    CUDA_OK(cudaMalloc((void **)&p->tau, sizeof(double) * (size_t)n));
    CUDA_OK(cudaMalloc((void **)&p->dinfo, sizeof(int)));
    SOLVER_OK(cusolverDnDgeqrf_bufferSize(p->solver, (int)m, (int)n, p->d, (int)m, &p->lwork));
    CUDA_OK(cudaMalloc((void **)&p->work, sizeof(double) * (size_t)p->lwork));
    CUDA_OK(cudaMemcpy(p->d0, h, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaEventCreate(&p->e0));
    CUDA_OK(cudaEventCreate(&p->e1));
    return 0;
}

/* One factorization of a fresh copy, its time in *t. */
static int one_run(const geqrf_dev_t *p, int64_t m, int64_t n, double *t)
{
    size_t bytes = sizeof(double) * (size_t)m * (size_t)n;
    int info = -1;
    float ms = 0.0f;
    CUDA_OK(cudaMemcpyAsync(p->d, p->d0, bytes, cudaMemcpyDeviceToDevice, p->stream));
    CUDA_OK(cudaEventRecord(p->e0, p->stream));
    SOLVER_OK(cusolverDnDgeqrf(p->solver, (int)m, (int)n, p->d, (int)m, p->tau, p->work, p->lwork,
                               p->dinfo));
    CUDA_OK(cudaEventRecord(p->e1, p->stream));
    CUDA_OK(cudaMemcpyAsync(&info, p->dinfo, sizeof info, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    CUDA_OK(cudaEventElapsedTime(&ms, p->e0, p->e1));
    if (info != 0) {
        fprintf(stderr, PEER_NAME ": cusolverDnDgeqrf info = %d\n", info);
        return 1;
    }
    *t = ms * 1e-3;
    return 0;
}

static int runs(const geqrf_dev_t *p, double *h, const geqrf_opts_t *o)
{
    double m = (double)o->m, n = (double)o->n, a = fro(h, o->m, o->n, 0);
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (one_run(p, o->m, o->n, &t) != 0) return 1;
        printf("[****] TIME(s) %.6f : cusolverDnDgeqrf M= %lld N= %lld : %.2f gflops\n", t,
               (long long)o->m, (long long)o->n, (2 * m * n * n - 2 * n * n * n / 3) / t * 1e-9);
        fflush(stdout);
        if (r > 0 || !o->check) continue;
        CUDA_OK(cudaMemcpy(h, p->d, sizeof(double) * (size_t)o->m * (size_t)o->n,
                           cudaMemcpyDeviceToHost));
        double e = fabs(fro(h, o->m, o->n, 1) - a) / a;
        int passed = e < m * 1e-14;
        printf("check: | ||R|| - ||A|| | / ||A|| = %.3e : %s\n", e, passed ? "PASSED" : "FAILED");
        if (!passed) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    geqrf_opts_t o = {.m = -1, .n = 8192, .seed = 42, .nruns = 3};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s [-M m >= n] [-N n] [--seed s] [--nruns r] [--check]\n", argv[0]);
        return 2;
    }
    double *h = malloc(sizeof(double) * (size_t)o.m * (size_t)o.n);
    if (h == NULL) return 1;
    for (int64_t j = 0; j < o.n; j++)
        for (int64_t i = 0; i < o.m; i++) h[i + j * o.m] = qr_elem(o.seed, 0, i, j);
    geqrf_dev_t p;
    memset(&p, 0, sizeof p);
    int rc = setup(&p, h, o.m, o.n);
    if (rc == 0) rc = runs(&p, h, &o);
    free(h);
    return rc;
}

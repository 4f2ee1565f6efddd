/* cusolver_getrf: the peer of weft-getrf -g 1, cusolverDnDgetrf WITHOUT
 * pivoting (devIpiv NULL) of the whole matrix on one GPU.
 *
 * Usage: cusolver_getrf [-N n] [--seed s] [--nruns r] [--device d] [--check]
 *
 * The matrix is weft-getrf's (apps/lu_matrix.h: random in [-0.5, 0.5) plus
 * N on the diagonal, diagonally dominant), column-major, lda = N, made on
 * the host by OpenMP threads, copied once to a pristine copy on the GPU and
 * from there, device to device, before each run. Each run is timed with
 * CUDA events around cusolverDnDgetrf alone (the matrix already on the
 * GPU, as weft-getrf's timing starts with its tiles on the devices); the
 * first run of the process is the cold one (CUDA loads the kernels then).
 * One line a run in weft-getrf's format, gflops = 2 N^3 / 3 / time:
 *   [****] TIME(s) <t> : cusolverDnDgetrf N= <n> : <gflops> gflops
 * Exit 1 on a CUDA error or info != 0.
 *
 * --check: after the first run the factors come to the host and, for a
 * random x, ||A x - L (U x)||_inf / (||A||_inf ||x||_inf N eps) is
 * computed in O(N^2) (A regenerated); "residual = <r> : PASSED" (r < 60)
 * or ": FAILED" (exit 1).
 *
 * Build: gcc -std=c11 -O2 -fopenmp -I<cuda>/include cusolver_getrf.c
 *        -L<cuda>/lib64 -lcusolver -lcudart -lm */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "../apps/lu_matrix.h" /* the matrix weft-getrf factorizes */
#define PEER_NAME "cusolver_getrf"
#include "peer_util.h" /* CUDA_OK, SOLVER_OK, parse_u64 */

typedef struct getrf_opts {
    int64_t n;
    uint64_t seed;
    int nruns, device, check;
} getrf_opts_t;

typedef struct getrf_dev {
    cusolverDnHandle_t solver;
    cudaStream_t stream;
    double *d, *d0, *work; /* matrix, pristine copy, cuSOLVER's workspace */
    int *dinfo, lwork;
    cudaEvent_t e0, e1;
} getrf_dev_t;

static void host_fill(double *h, int64_t n, uint64_t seed)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) h[i + j * n] = lu_elem(seed, n, i, j);
}

static int dev_setup(getrf_dev_t *p, int64_t n, int device)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    memset(p, 0, sizeof *p);
    CUDA_OK(cudaSetDevice(device));
    SOLVER_OK(cusolverDnCreate(&p->solver));
    CUDA_OK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    SOLVER_OK(cusolverDnSetStream(p->solver, p->stream));
    CUDA_OK(cudaMalloc((void **)&p->d, bytes));
    CUDA_OK(cudaMalloc((void **)&p->d0, bytes));
    SOLVER_OK(cusolverDnDgetrf_bufferSize(p->solver, (int)n, (int)n, p->d, (int)n, &p->lwork));
    CUDA_OK(cudaMalloc((void **)&p->work, (size_t)p->lwork * sizeof(double) + 256));
    CUDA_OK(cudaMalloc((void **)&p->dinfo, sizeof(int)));
    CUDA_OK(cudaEventCreate(&p->e0));
    CUDA_OK(cudaEventCreate(&p->e1));
    return 0;
}

static void dev_free(getrf_dev_t *p)
{
    if (p->e0 != NULL) cudaEventDestroy(p->e0);
    if (p->e1 != NULL) cudaEventDestroy(p->e1);
    cudaFree(p->dinfo);
    cudaFree(p->work);
    cudaFree(p->d0);
    cudaFree(p->d);
    if (p->solver != NULL) cusolverDnDestroy(p->solver);
    if (p->stream != NULL) cudaStreamDestroy(p->stream);
}

/* One factorization of a fresh copy, timed around cusolverDnDgetrf. */
static int one_run(const getrf_dev_t *p, int64_t n, double *t)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    CUDA_OK(cudaMemcpyAsync(p->d, p->d0, bytes, cudaMemcpyDeviceToDevice, p->stream));
    CUDA_OK(cudaEventRecord(p->e0, p->stream));
    SOLVER_OK(cusolverDnDgetrf(p->solver, (int)n, (int)n, p->d, (int)n, p->work, NULL, p->dinfo));
    CUDA_OK(cudaEventRecord(p->e1, p->stream));
    int info = -1;
    CUDA_OK(cudaMemcpyAsync(&info, p->dinfo, sizeof info, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    if (info != 0) {
        fprintf(stderr, "cusolver_getrf: cusolverDnDgetrf info = %d\n", info);
        return 1;
    }
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, p->e0, p->e1));
    *t = ms * 1e-3;
    return 0;
}

/* ||A x - L (U x)||_inf / (||A||_inf ||x||_inf N eps) for the factors in
 * f (host, lda n) and a random x in [0.5, 1.5). */
static double residual(const double *f, int64_t n, uint64_t seed)
{
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    double num = 0.0, anorm = 0.0;
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return INFINITY;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = 0.5 + (double)(potrf_mix64(seed + (uint64_t)i) >> 11) * 0x1.0p-53;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < n; i++) { /* y = U x, row by row */
        double s = 0.0;
        for (int64_t j = i; j < n; j++) s += f[i + j * n] * x[j];
        y[i] = s;
    }
#pragma omp parallel for schedule(dynamic, 64) reduction(max : num, anorm)
    for (int64_t i = 0; i < n; i++) { /* row i of A x - L y, and of |A| */
        double lu = y[i], ax = 0.0, arow = 0.0;
        for (int64_t j = 0; j < i; j++) lu += f[i + j * n] * y[j];
        for (int64_t j = 0; j < n; j++) {
            double a = lu_elem(seed, n, i, j);
            ax += a * x[j];
            arow += fabs(a);
        }
        num = fmax(num, fabs(ax - lu));
        anorm = fmax(anorm, arow);
    }
    free(x);
    free(y);
    return num / (anorm * 1.5 * (double)n * DBL_EPSILON);
}

static int check(const getrf_dev_t *p, double *h, int64_t n, uint64_t seed)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    CUDA_OK(cudaMemcpyAsync(h, p->d, bytes, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    double r = residual(h, n, seed);
    int passed = r < 60.0;
    printf("residual = %.6e : %s\n", r, passed ? "PASSED" : "FAILED");
    return !passed;
}

static int run_on(getrf_dev_t *p, double *h, const getrf_opts_t *o)
{
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, o->device));
    printf("cusolver_getrf: %s, N= %lld, lwork %d doubles, no pivoting\n", prop.name,
           (long long)o->n, p->lwork);
    size_t bytes = (size_t)o->n * (size_t)o->n * sizeof(double);
    CUDA_OK(cudaMemcpy(p->d0, h, bytes, cudaMemcpyHostToDevice));
    double nn = (double)o->n;
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (one_run(p, o->n, &t) != 0) return 1;
        printf("[****] TIME(s) %.6f : cusolverDnDgetrf N= %lld : %.2f gflops\n", t, (long long)o->n,
               2.0 * nn * nn * nn / 3.0 / t * 1e-9);
        fflush(stdout);
        if (r == 0 && o->check && check(p, h, o->n, o->seed) != 0) return 1;
    }
    return 0;
}

static int parse(int argc, char **argv, getrf_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0) return -1;
        if (strcmp(argv[i], "--seed") == 0)
            o->seed = v;
        else if (v > INT32_MAX)
            return -1; /* N, r and d are ints for CUDA */
        else if (strcmp(argv[i], "-N") == 0)
            o->n = (int64_t)v;
        else if (strcmp(argv[i], "--nruns") == 0)
            o->nruns = (int)v;
        else if (strcmp(argv[i], "--device") == 0)
            o->device = (int)v;
        else
            return -1;
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    getrf_opts_t o = {.n = 8192, .seed = 42, .nruns = 1, .device = 0, .check = 0};
    if (parse(argc, argv, &o) != 0 || o.n < 1 || o.nruns < 1) {
        fprintf(stderr, "usage: %s [-N n] [--seed s] [--nruns r] [--device d] [--check]\n",
                argv[0]);
        return 2;
    }
    double *h = malloc((size_t)o.n * (size_t)o.n * sizeof(double));
    if (h == NULL) {
        fprintf(stderr, "cusolver_getrf: no host memory for the matrix\n");
        return 1;
    }
    host_fill(h, o.n, o.seed);
    getrf_dev_t p;
    int rc = dev_setup(&p, o.n, o.device);
    if (rc == 0) rc = run_on(&p, h, &o);
    dev_free(&p);
    free(h);
    return rc;
}

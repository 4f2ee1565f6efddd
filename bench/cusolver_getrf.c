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
#include "peer_dn.h" /* command line, device state, timed runs */

static void host_fill(double *h, int64_t n, uint64_t seed)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) h[i + j * n] = lu_elem(seed, n, i, j);
}

/* The matrix, its pristine copy and cuSOLVER's workspace on the device. */
static int dev_setup(peer_dn_t *p, int64_t n, int device)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    if (peer_dn_setup(p, bytes, device) != 0) return 1;
    CUDA_OK(cudaMalloc((void **)&p->d0, bytes));
    SOLVER_OK(cusolverDnDgetrf_bufferSize(p->solver, (int)n, (int)n, p->d, (int)n, &p->lwork));
    return peer_dn_work(p);
}

/* No pivoting: devIpiv NULL. */
static cusolverStatus_t factorize(const peer_dn_t *p, const void *arg)
{
    int n = *(const int *)arg;
    return cusolverDnDgetrf(p->solver, n, n, p->d, n, p->work, NULL, p->dinfo);
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

static int check(const peer_dn_t *p, double *h, int64_t n, uint64_t seed)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    CUDA_OK(cudaMemcpyAsync(h, p->d, bytes, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    double r = residual(h, n, seed);
    int passed = r < 60.0;
    printf("residual = %.6e : %s\n", r, passed ? "PASSED" : "FAILED");
    return !passed;
}

static int run_on(peer_dn_t *p, double *h, const peer_dn_opts_t *o)
{
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, o->device));
    printf("cusolver_getrf: %s, N= %lld, lwork %d doubles, no pivoting\n", prop.name,
           (long long)o->n, p->lwork);
    size_t bytes = (size_t)o->n * (size_t)o->n * sizeof(double);
    CUDA_OK(cudaMemcpy(p->d0, h, bytes, cudaMemcpyHostToDevice));
    double nn = (double)o->n, t = 0.0;
    int n = (int)o->n;
    char dims[32];
    snprintf(dims, sizeof dims, " N= %lld", (long long)o->n);
    for (int r = 0; r < o->nruns; r++) {
        if (peer_dn_restore(p, bytes) != 0 ||
            peer_dn_timed(p, "cusolverDnDgetrf", factorize, &n, &t) != 0)
            return 1;
        peer_dn_report("cusolverDnDgetrf", dims, t, 2.0 * nn * nn * nn / 3.0);
        if (r == 0 && o->check && check(p, h, o->n, o->seed) != 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    peer_dn_opts_t o = {.n = 8192, .seed = 42, .nruns = 1, .device = 0, .check = 0};
    if (peer_dn_parse(argc, argv, PEER_DN_DEVICE, &o) != 0 || o.n < 1 || o.nruns < 1) {
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
    peer_dn_t p;
    int rc = dev_setup(&p, o.n, o.device);
    if (rc == 0) rc = run_on(&p, h, &o);
    peer_dn_free(&p);
    free(h);
    return rc;
}

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
#include "peer_dn.h" /* command line, device state, timed runs */

/* Frobenius norm of the upper triangle (upper = 1) or of all of h. */
static double fro(const double *h, int64_t m, int64_t n, int upper)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m && (!upper || i <= j); i++) s += h[i + j * m] * h[i + j * m];
    return sqrt(s);
}

/* The matrix (m x n) on the device, its pristine copy from h, tau and
 * cuSOLVER's workspace. */
static int setup(peer_dn_t *p, const double *h, int64_t m, int64_t n)
{
    size_t bytes = sizeof(double) * (size_t)m * (size_t)n;
    if (peer_dn_setup(p, bytes, 0) != 0) return 1;
    CUDA_OK(cudaMalloc((void **)&p->d0, bytes));
    CUDA_OK(cudaMalloc((void **)&p->tau, sizeof(double) * (size_t)n));
    SOLVER_OK(cusolverDnDgeqrf_bufferSize(p->solver, (int)m, (int)n, p->d, (int)m, &p->lwork));
    if (peer_dn_work(p) != 0) return 1;
    CUDA_OK(cudaMemcpy(p->d0, h, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static cusolverStatus_t factorize(const peer_dn_t *p, const void *arg)
{
    const int *mn = arg;
    return cusolverDnDgeqrf(p->solver, mn[0], mn[1], p->d, mn[0], p->tau, p->work, p->lwork,
                            p->dinfo);
}

static int runs(const peer_dn_t *p, double *h, const peer_dn_opts_t *o)
{
    double m = (double)o->m, n = (double)o->n, a = fro(h, o->m, o->n, 0);
    int mn[2] = {(int)o->m, (int)o->n};
    char dims[48];
    snprintf(dims, sizeof dims, " M= %lld N= %lld", (long long)o->m, (long long)o->n);
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (peer_dn_restore(p, sizeof(double) * (size_t)o->m * (size_t)o->n) != 0 ||
            peer_dn_timed(p, "cusolverDnDgeqrf", factorize, mn, &t) != 0)
            return 1;
        peer_dn_report("cusolverDnDgeqrf", dims, t, 2 * m * n * n - 2 * n * n * n / 3);
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
    peer_dn_opts_t o = {.m = -1, .n = 8192, .seed = 42, .nruns = 3};
    int bad = peer_dn_parse(argc, argv, PEER_DN_M, &o) != 0;
    if (o.m < 0) o.m = o.n;
    if (bad || o.n < 1 || o.m < o.n || o.m > INT32_MAX / 2 || o.nruns < 1) {
        fprintf(stderr, "usage: %s [-M m >= n] [-N n] [--seed s] [--nruns r] [--check]\n", argv[0]);
        return 2;
    }
    double *h = malloc(sizeof(double) * (size_t)o.m * (size_t)o.n);
    if (h == NULL) return 1;
    for (int64_t j = 0; j < o.n; j++)
        for (int64_t i = 0; i < o.m; i++) h[i + j * o.m] = qr_elem(o.seed, 0, i, j);
    peer_dn_t p;
    int rc = setup(&p, h, o.m, o.n);
    if (rc == 0) rc = runs(&p, h, &o);
    peer_dn_free(&p);
    free(h);
    return rc;
}

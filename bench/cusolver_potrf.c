/* cusolver_potrf: the peer of weft-potrf -g 1, cusolverDnDpotrf on one GPU.
 *
 * Usage: cusolver_potrf [-N n] [--seed s] [--nruns r] [--device d] [--check]
 *
 * The matrix is the one weft-potrf factorizes: element (i,j) a hash of
 * (seed, max(i,j), min(i,j)) in [-0.5, 0.5), plus N on the diagonal
 * (diagonally dominant, hence SPD); the generator is apps/potrf_matrix.h,
 * shared with weft-potrf. Lower Cholesky,
 * column-major, lda = N, generated once on the host (by OpenMP threads) and
 * copied once to the GPU, to a pristine copy there, copied device to device
 * before each run. When the GPU cannot hold the matrix twice (N = 98304
 * takes 77 GB), the matrix is uploaded again from the host before each run
 * instead, outside the timing, and a line says so.
 * Timed with CUDA events around cusolverDnDpotrf alone (the matrix already
 * in device memory, as weft-potrf's timing starts with its tiles on the
 * devices). One line a run in weft-potrf's format:
 *   [****] TIME(s) <t> : cusolverDnDpotrf N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t, then one line with the host-device copies of the
 * matrix (pageable memory) and the best figure counting them too. Exit 1 on
 * a CUDA error or info != 0.
 *
 * --check: after the first run, the factor is copied to the host and
 * checked with bench/potrf_vcheck.h, an O(N^2) test against a random
 * vector; prints "residual = <r> : PASSED" (r < 60) or ": FAILED" (exit 1).
 *
 * Build: gcc -std=c11 -O2 -fopenmp -I<cuda>/include cusolver_potrf.c
 *        -L<cuda>/lib64 -lcusolver -lcudart -lm (or nvcc -O2 -Xcompiler -fopenmp
 *        cusolver_potrf.c -lcusolver). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */
#include "potrf_vcheck.h"         /* the O(N^2) check of --check */
#define PEER_NAME "cusolver_potrf"
#include "peer_dn.h" /* command line, device state, timed runs */

/* The lower triangle of the test matrix into h, zeros above (dpotrf('L')
 * never reads them). A column a thread: N^2/2 hashes, over a minute on one
 * core at N = 98304. */
static void host_fill(double *h, int64_t n, uint64_t seed)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < j; i++) h[i + j * n] = 0.0;
        for (int64_t i = j; i < n; i++) h[i + j * n] = potrf_elem(seed, n, i, j);
    }
}

/* The test matrix in host memory; NULL after a message when memory is
 * short. */
static double *host_matrix(int64_t n, uint64_t seed)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *h = malloc(bytes);
    if (h == NULL) {
        fprintf(stderr, "cusolver_potrf: cannot allocate %zu bytes of host memory\n", bytes);
        return NULL;
    }
    host_fill(h, n, seed);
    return h;
}

/* The pristine copy d0 if the device has room for it, allocated last so
 * that it only takes what the run itself leaves; p->d0 = NULL otherwise,
 * after a line saying that the host copy will be uploaded before each run. */
static int alloc_pristine(peer_dn_t *p, size_t bytes)
{
    cudaError_t e = cudaMalloc((void **)&p->d0, bytes);
    if (e == cudaSuccess) return 0;
    if (e != cudaErrorMemoryAllocation) CUDA_OK(e);
    (void)cudaGetLastError(); /* clear the failed allocation's error */
    p->d0 = NULL;
    printf("cusolver_potrf: no room on the device for a pristine copy (%.1f GB): the matrix is "
           "uploaded from the host before each run (untimed)\n",
           (double)bytes * 1e-9);
    return 0;
}

/* Handle, stream, matrix, workspace, info, events, pristine copy. */
static int dev_setup(peer_dn_t *p, int64_t n, int device)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    if (peer_dn_setup(p, bytes, device) != 0) return 1;
    SOLVER_OK(cusolverDnDpotrf_bufferSize(p->solver, CUBLAS_FILL_MODE_LOWER, (int)n, p->d, (int)n,
                                          &p->lwork));
    if (peer_dn_work(p) != 0) return 1;
    return alloc_pristine(p, bytes);
}

/* The matrix to factorize into p->d before run r: from d0 on the device,
 * or, without d0, from the host (run 0 finds it there already). */
static int restore(const peer_dn_t *p, const double *h, size_t bytes, int r)
{
    if (p->d0 != NULL) return peer_dn_restore(p, bytes);
    if (r > 0) CUDA_OK(cudaMemcpyAsync(p->d, h, bytes, cudaMemcpyHostToDevice, p->stream));
    return 0;
}

static cusolverStatus_t factorize(const peer_dn_t *p, const void *arg)
{
    int n = *(const int *)arg;
    return cusolverDnDpotrf(p->solver, CUBLAS_FILL_MODE_LOWER, n, p->d, n, p->work, p->lwork,
                            p->dinfo);
}

/* --check: the factor in p->d against the matrix of seed, through h; h is
 * the only pristine copy without d0, so it is generated again then. */
static int check_factor(const peer_dn_t *p, double *h, int64_t n, uint64_t seed)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    CUDA_OK(cudaMemcpyAsync(h, p->d, bytes, cudaMemcpyDeviceToHost, p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    potrf_vcheck_dense_t l = {h, n};
    int rc = potrf_vcheck_report(PEER_NAME, potrf_vcheck(seed, n, potrf_vcheck_dense_col, &l));
    if (p->d0 == NULL) host_fill(h, n, seed);
    return rc;
}

/* nruns factorizations of a fresh copy of the matrix, the first one
 * checked with --check; the best time in *best. */
static int timed_runs(const peer_dn_t *p, double *h, const peer_dn_opts_t *o, double *best)
{
    int64_t n = o->n;
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double nn = (double)n, flops = nn * nn * nn / 3.0;
    int ni = (int)n;
    char dims[32];
    snprintf(dims, sizeof dims, " N= %lld", (long long)n);
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (restore(p, h, bytes, r) != 0 ||
            peer_dn_timed(p, "cusolverDnDpotrf", factorize, &ni, &t) != 0)
            return 1;
        if (t < *best) *best = t;
        peer_dn_report("cusolverDnDpotrf", dims, t, flops);
        if (r == 0 && o->check && check_factor(p, h, n, o->seed) != 0) return 1;
    }
    return 0;
}

/* One copy of bytes, host to device or back, timed between events a and
 * b; the time in *ms. */
static int timed_copy(const peer_dn_t *p, void *dst, const void *src, size_t bytes,
                      enum cudaMemcpyKind kind, int a, int b, float *ms)
{
    CUDA_OK(cudaEventRecord(p->e[a], p->stream));
    CUDA_OK(cudaMemcpyAsync(dst, src, bytes, kind, p->stream));
    CUDA_OK(cudaEventRecord(p->e[b], p->stream));
    CUDA_OK(cudaStreamSynchronize(p->stream));
    CUDA_OK(cudaEventElapsedTime(ms, p->e[a], p->e[b]));
    return 0;
}

static int run_on(peer_dn_t *p, double *h, const peer_dn_opts_t *o)
{
    int64_t n = o->n;
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, o->device));
    printf("cusolver_potrf: %s, N= %lld, lwork %d doubles\n", prop.name, (long long)n, p->lwork);
    float ms_h2d = 0.0f, ms_d2h = 0.0f;
    double *first = p->d0 != NULL ? p->d0 : p->d; /* where run 0 finds the matrix */
    if (timed_copy(p, first, h, bytes, cudaMemcpyHostToDevice, 0, 1, &ms_h2d) != 0) return 1;
    double nn = (double)n, flops = nn * nn * nn / 3.0, best = 1e300;
    if (timed_runs(p, h, o, &best) != 0) return 1;
    if (timed_copy(p, h, p->d, bytes, cudaMemcpyDeviceToHost, 2, 3, &ms_d2h) != 0) return 1;
    double t_all = best + (ms_h2d + ms_d2h) * 1e-3;
    printf("cusolver_potrf: copies H2D %.3f s, D2H %.3f s (%.1f GB/s each way); best run with "
           "them: %.6f s, %.2f gflops\n",
           ms_h2d * 1e-3, ms_d2h * 1e-3, (double)bytes * 2e-6 / (ms_h2d + ms_d2h), t_all,
           flops / t_all * 1e-9);
    return 0;
}

static int run(const peer_dn_opts_t *o)
{
    double *h = host_matrix(o->n, o->seed);
    if (h == NULL) return 1;
    peer_dn_t p;
    int rc = dev_setup(&p, o->n, o->device);
    if (rc == 0) rc = run_on(&p, h, o);
    peer_dn_free(&p);
    free(h);
    return rc;
}

int main(int argc, char **argv)
{
    peer_dn_opts_t o = {.n = 8192, .seed = 42, .nruns = 1, .device = 0, .check = 0};
    if (peer_dn_parse(argc, argv, PEER_DN_DEVICE, &o) != 0 || o.n < 1 || o.nruns < 1) {
        fprintf(stderr, "usage: %s [-N n] [--seed s] [--nruns r] [--device d] [--check]\n",
                argv[0]);
        return 2;
    }
    return run(&o);
}
